//===- RopeLaunch.h - how llmc.rope runs on the GPU -------------*- C++ -*-===//
//
// The grids of rope's two kernels (rope/Rope.cuh), from the shape,
// the element type, the pointers' alignment and the multiprocessor count
// alone, so that the launch (RopeLaunch.cpp) and the CPU emulation of the
// kernels (test/runtime/cuda/RopeEmulationTest.cpp) run the same plan.
// docs/cuda.md, "Rope", says why and how fast.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_ROPELAUNCH_H
#define LLMC_RUNTIME_CUDA_ROPELAUNCH_H

#include "runtime/DType.h"

#include <cstddef>
#include <cstdint>

namespace llmc::rt::cuda {

/// The per-pair inverse frequencies of a scaled rope, passed to the table
/// kernel by value (a kernel parameter: nothing to copy to the device, and a
/// captured CUDA graph keeps it). `count` 0: theta^(-2i/D). The layout is the
/// CUDA source's `RopeFrequencies` (RopeKernelsSource.cpp).
struct RopeFrequencies {
  /// Pairs up to a head dimension of 512 (2 KiB of the 4 KiB of parameters).
  static constexpr int64_t kMaxPairs = 256;
  long long count = 0;
  double inverse[kMaxPairs] = {};
};

/// The launch of rope on x [..., T, D] (D even).
struct RopeLaunch {
  int64_t seq = 0, headDim = 0;
  /// rows = heads * seq rows of D elements; heads: the leading dimensions.
  int64_t rows = 0, heads = 0;
  /// The table kernel (llmc_rope_table_<index>): blocks of kThreads,
  /// grid-stride over T * D/2 entries.
  unsigned tableBlocks = 1;
  /// Whether the packed rotation runs (llmc_rope_rotate_vec_<type>):
  /// blocks [rotateBlocks, runs] of kPackedThreads, each thread rotating
  /// one pack of one position in a run of `headsPerThread` heads.
  /// Otherwise llmc_rope_rotate_<type>: rotateBlocks blocks of kThreads,
  /// grid-stride over the pairs.
  bool packed = false;
  unsigned rotateBlocks = 1, runs = 1;
  int64_t headsPerThread = 1;

  static constexpr unsigned kThreads = 256;
  static constexpr unsigned kPackedThreads = 128;
  /// The scratch the table needs: cos and sin [T, D/2] in double.
  size_t scratchBytes() const {
    return static_cast<size_t>(seq * headDim) * sizeof(double);
  }
};

/// The plan of rope on x of `shape` and `type` from `x` into `out` on a
/// GPU of `multiprocessors` SMs: packed where D/2 is a whole number of
/// 16-byte packs and both pointers are 16-byte aligned.
RopeLaunch planRopeLaunch(const Shape &shape, DType type, const void *x,
                          const void *out, unsigned multiprocessors);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_ROPELAUNCH_H
