//===- RopeLaunch.cpp - the launch of llmc.rope on a GPU ------------------===//
//
// CudaKernels::launchRope: the cos/sin table of the positions into the
// scratch that prepare() reserved (KernelSelection.cpp: T * D doubles),
// then the rotation of every row from it, 16 bytes at a time where the
// shape and the pointers allow (RopeKernelsSource.cpp). The kernels run in
// order on `stream`, and the scratch is only read by the launch that filled
// it, as every user of the scratch.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceKernels.h"

#include <algorithm>
#include <cstdint>

namespace llmc::rt::cuda {

namespace {

constexpr unsigned kTableThreads = 256;
/// Threads of a packed rotation block.
constexpr unsigned kRotateThreads = 128;
/// Packed rotation blocks of 128 threads resident per multiprocessor, a
/// little below what fits: 68-72 registers (the pack's 8 or 4 pairs of
/// cos and sin in doubles, two heads' loads in flight) fit 7 in the 64 Ki
/// registers of an H100/H200 SM. The launch makes at most this many
/// blocks per SM, each rotating a run of heads, so that they all run in
/// one wave (no tail of a second) and read their table entries once per
/// run (the table is 16 bytes per pair against 8 of x moved per pair and
/// head).
constexpr int64_t kRotateBlocksPerSm = 6;

} // namespace

Status CudaKernels::launchRope(const std::vector<std::string> &entries,
                               const TensorRef &x, const void *positions,
                               const TensorRef &out, double theta,
                               cudaStream_t stream) {
  // entries: the table, the general rotation, the packed rotation.
  long long seq = x.shape[x.rank() - 2], headDim = x.shape.back();
  long long half = headDim / 2;
  long long rows = x.numElements() / headDim;
  double *cosTable = static_cast<double *>(scratch_);
  double *sinTable = cosTable + seq * half;
  const void *source = x.data;
  void *result = out.data;

  // 1. The table: T * D/2 angles.
  std::vector<void *> tableArgs = {&positions, &cosTable, &sinTable,
                                   &seq,       &headDim,  &theta};
  LLMC_RETURN_IF_ERROR(launchPrimitive(entries[0],
                                       gridFor(seq * half, kTableThreads),
                                       kTableThreads, 0, tableArgs, stream));

  // 2a. Packed: D/2 whole 16-byte packs and 16-byte aligned x and out
  //     (then every row's halves are aligned too). Blocks along x cover the
  //     (position, pack) items; blocks along y split the heads into runs,
  //     as many runs as one wave of blocks holds (kRotateBlocksPerSm).
  long long perPack = 16 / static_cast<long long>(dtypeSize(x.dtype));
  bool packed = half % perPack == 0 &&
                reinterpret_cast<uintptr_t>(x.data) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(out.data) % 16 == 0;
  if (packed) {
    long long heads = rows / seq;
    long long items = seq * (half / perPack);
    long long itemBlocks = (items + kRotateThreads - 1) / kRotateThreads;
    long long wanted =
        static_cast<long long>(multiprocessors_) * kRotateBlocksPerSm;
    long long runs = std::clamp<long long>(wanted / itemBlocks, 1, heads);
    long long headsPerThread = (heads + runs - 1) / runs;
    runs = (heads + headsPerThread - 1) / headsPerThread;
    if (itemBlocks <= 0x7fffffffLL) {
      std::vector<void *> args = {&source, &cosTable, &sinTable, &result,
                                  &heads,  &seq,      &headDim,  &headsPerThread};
      return launchPrimitive(entries[2],
                             dim3(static_cast<unsigned>(itemBlocks),
                                  static_cast<unsigned>(runs)),
                             kRotateThreads, 0, args, stream);
    }
  }

  // 2b. Any shape: a thread per pair.
  std::vector<void *> args = {&source, &cosTable, &sinTable, &result,
                              &rows,   &seq,      &headDim};
  return launchPrimitive(entries[1], gridFor(rows * half, 256), 256, 0, args,
                         stream);
}

} // namespace llmc::rt::cuda
