//===- RopeLaunch.cpp - the launch of llmc.rope on a GPU ------------------===//
//
// The rope family: planRopeLaunch (RopeLaunch.h) and the launch (the
// selection is codegen's, codegen/cuda/rope/RopeSelect.cpp): the cos/sin table of the positions into the scratch that
// prepare() reserved, then the rotation of every row from it, 16 bytes
// at a time where the shape and the pointers allow
// (rope/Rope.cuh). The two kernels run in order on `stream`, and
// the table is read only by the launch that filled it, as every user of
// the scratch.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/rope/RopeLaunch.h"
#include "runtime/cuda/kernels/KernelFamily.h"

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

Status family::launchRope(LaunchContext &context, const KernelCall &call,
                          const KernelChoice &choice) {
  // entries: the table, the general rotation, the packed rotation; the
  // table into the scratch, then the rotation of x (positions null:
  // 0..T-1) into out.
  const TensorRef &x = call.inputs[0], &out = call.outputs[0];
  const void *positions =
      call.inputs.size() == 2 ? call.inputs[1].data : nullptr;
  // attrs.floats: theta, then the per-pair inverse frequencies of a scaled
  // rope (none: theta^(-2i/D)).
  const std::vector<double> &floats = call.attrs.floats;
  double theta = floats.empty() ? 0.0 : floats[0];
  RopeFrequencies frequencies;
  frequencies.count = static_cast<long long>(floats.size()) - 1;
  if (frequencies.count < 0 || frequencies.count > RopeFrequencies::kMaxPairs ||
      (frequencies.count > 0 && frequencies.count != x.shape.back() / 2))
    return Status::error(StatusCode::InvalidArgument,
                         "rope: expected theta and 0 or " +
                             std::to_string(x.shape.back() / 2) +
                             " inverse frequencies (at most " +
                             std::to_string(RopeFrequencies::kMaxPairs) +
                             "), got " + std::to_string(floats.size()) +
                             " floats");
  std::copy(floats.begin() + 1, floats.end(), frequencies.inverse);
  const std::vector<std::string> &entries = choice.entries;
  RopeLaunch plan = planRopeLaunch(x.shape, x.dtype, x.data, out.data,
                                   context.multiprocessors());
  long long seq = plan.seq, headDim = plan.headDim, rows = plan.rows,
            heads = plan.heads, headsPerThread = plan.headsPerThread;
  double *cosTable = static_cast<double *>(context.scratch());
  double *sinTable = cosTable + seq * (headDim / 2);
  const void *source = x.data;
  void *result = out.data;

  // 1. The table: T * D/2 angles.
  std::vector<void *> tableArgs = {&positions, &cosTable, &sinTable, &seq,
                                   &headDim,   &theta,    &frequencies};
  LLMC_RETURN_IF_ERROR(context.launch(entries[0], plan.tableBlocks,
                                      RopeLaunch::kThreads, 0, tableArgs));
  // 2. The rotation, packed or a thread per pair.
  if (plan.packed) {
    std::vector<void *> args = {&source, &cosTable, &sinTable, &result,
                                &heads,  &seq,      &headDim,  &headsPerThread};
    return context.launch(entries[2], dim3(plan.rotateBlocks, plan.runs),
                          RopeLaunch::kPackedThreads, 0, args);
  }
  std::vector<void *> args = {&source, &cosTable, &sinTable, &result,
                              &rows,   &seq,      &headDim};
  return context.launch(entries[1], plan.rotateBlocks, RopeLaunch::kThreads, 0,
                        args);
}

} // namespace llmc::rt::cuda
