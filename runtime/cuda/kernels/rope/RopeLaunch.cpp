//===- RopeLaunch.cpp - the launch of llmc.rope on a GPU ------------------===//
//
// planRopeLaunch (RopeLaunch.h) and CudaKernels::launchRope: the cos/sin
// table of the positions into the scratch that prepare() reserved
// (KernelSelection.cpp), then the rotation of every row from it, 16 bytes
// at a time where the shape and the pointers allow
// (RopeKernelsSource.cpp). The two kernels run in order on `stream`, and
// the table is read only by the launch that filled it, as every user of
// the scratch.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/rope/RopeLaunch.h"
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <algorithm>
#include <cstdint>

namespace llmc::rt::cuda {

namespace {

/// Grid-stride kernels: at most 8 blocks of 256 per SM (as
/// CudaKernels::gridFor).
unsigned strideBlocks(int64_t items, unsigned multiprocessors) {
  int64_t blocks = (items + RopeLaunch::kThreads - 1) / RopeLaunch::kThreads;
  int64_t cap = static_cast<int64_t>(multiprocessors) * 8;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

/// Packed rotation blocks of 128 threads resident per multiprocessor, a
/// little below what fits: 68-72 registers (the pack's 8 or 4 pairs of
/// cos and sin in doubles, two heads' loads in flight) fit 7 in the 64 Ki
/// registers of an H100/H200 SM. The plan makes at most this many blocks
/// per SM, each rotating a run of heads, so that they all run in one wave
/// (no tail of a second) and read their table entries once per run (the
/// table is 16 bytes per pair against 8 of x moved per pair and head).
constexpr int64_t kPackedBlocksPerSm = 6;

} // namespace

RopeLaunch planRopeLaunch(const Shape &shape, DType type, const void *x,
                          const void *out, unsigned multiprocessors) {
  RopeLaunch plan;
  plan.seq = shape[shape.size() - 2];
  plan.headDim = shape.back();
  int64_t half = plan.headDim / 2;
  plan.rows = numElements(shape) / std::max<int64_t>(plan.headDim, 1);
  plan.heads = plan.seq > 0 ? plan.rows / plan.seq : 0;
  plan.tableBlocks = strideBlocks(plan.seq * half, multiprocessors);
  // Packed: D/2 whole 16-byte packs and 16-byte aligned x and out (then
  // every row's halves are aligned too). Blocks along x cover the
  // (position, pack) items; blocks along y split the heads into runs, as
  // many as one wave of blocks holds.
  int64_t perPack = 16 / static_cast<int64_t>(dtypeSize(type));
  int64_t items = plan.seq * (half / perPack);
  int64_t itemBlocks =
      (items + RopeLaunch::kPackedThreads - 1) / RopeLaunch::kPackedThreads;
  plan.packed = half % perPack == 0 && items > 0 && plan.heads > 0 &&
                itemBlocks <= 0x7fffffff &&
                reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(out) % 16 == 0;
  if (!plan.packed) {
    plan.rotateBlocks = strideBlocks(plan.rows * half, multiprocessors);
    return plan;
  }
  int64_t wanted = static_cast<int64_t>(multiprocessors) * kPackedBlocksPerSm;
  int64_t runs = std::clamp<int64_t>(wanted / itemBlocks, 1, plan.heads);
  plan.headsPerThread = (plan.heads + runs - 1) / runs;
  plan.rotateBlocks = static_cast<unsigned>(itemBlocks);
  plan.runs = static_cast<unsigned>((plan.heads + plan.headsPerThread - 1) /
                                    plan.headsPerThread);
  return plan;
}

Status CudaKernels::launchRope(const std::vector<std::string> &entries,
                               const TensorRef &x, const void *positions,
                               const TensorRef &out, double theta,
                               cudaStream_t stream) {
  // entries: the table, the general rotation, the packed rotation.
  RopeLaunch plan =
      planRopeLaunch(x.shape, x.dtype, x.data, out.data, multiprocessors_);
  long long seq = plan.seq, headDim = plan.headDim, rows = plan.rows,
            heads = plan.heads, headsPerThread = plan.headsPerThread;
  double *cosTable = static_cast<double *>(scratch_);
  double *sinTable = cosTable + seq * (headDim / 2);
  const void *source = x.data;
  void *result = out.data;

  // 1. The table: T * D/2 angles.
  std::vector<void *> tableArgs = {&positions, &cosTable, &sinTable,
                                   &seq,       &headDim,  &theta};
  LLMC_RETURN_IF_ERROR(launchPrimitive(entries[0], plan.tableBlocks,
                                       RopeLaunch::kThreads, 0, tableArgs,
                                       stream));
  // 2. The rotation, packed or a thread per pair.
  if (plan.packed) {
    std::vector<void *> args = {&source, &cosTable, &sinTable, &result,
                                &heads,  &seq,      &headDim,  &headsPerThread};
    return launchPrimitive(entries[2], dim3(plan.rotateBlocks, plan.runs),
                           RopeLaunch::kPackedThreads, 0, args, stream);
  }
  std::vector<void *> args = {&source, &cosTable, &sinTable, &result,
                              &rows,   &seq,      &headDim};
  return launchPrimitive(entries[1], plan.rotateBlocks, RopeLaunch::kThreads, 0,
                         args, stream);
}

} // namespace llmc::rt::cuda
