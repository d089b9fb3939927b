//===- BlockMaxSum.cuh - a block's (max, sum of exponentials) -------------===//
//
// The block-wide reduction of per-thread (max, sum of exp(x - max)) pairs that
// cross-entropy and the long-row softmax share.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_COMMON_BLOCKMAXSUM_CUH
#define LLMC_CUDA_COMMON_BLOCKMAXSUM_CUH

#include "common/Prelude.cuh"

// ---- Block reductions ------------------------------------------------------

// The block's (max, sum of exp(x - max)) in every thread, from each
// thread's partial pair: the shuffle tree, then warp 0 over the block's
// warps (blockDim.x a multiple of 32, at most 32 * kMaxWarps). M is the
// max's type (the sums are double); combine merges two pairs. The order of
// the combinations is fixed, so results repeat run to run. Cross-entropy
// (f32 max) and the long-row softmax (double max) use it. Here rather than
// in the prelude: the prelude has no shared memory, so that the CPU
// emulations (test/runtime/cuda/*EmulationTest.cpp) can include it.
template <typename M, int kMaxWarps,
          void (*combine)(M &, double &, M, double)>
__device__ void blockMaxSum(M &m, double &s) {
  __shared__ M maxes[kMaxWarps];
  __shared__ double sums[kMaxWarps];
  for (int offset = 16; offset > 0; offset /= 2) {
    M m2 = __shfl_xor_sync(0xffffffffu, m, offset);
    double s2 = __shfl_xor_sync(0xffffffffu, s, offset);
    combine(m, s, m2, s2);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    maxes[warp] = m;
    sums[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / 32;
    m = lane < warps ? maxes[lane] : (M)negativeInfinity();
    s = lane < warps ? sums[lane] : 0.0;
    for (int offset = 16; offset > 0; offset /= 2) {
      M m2 = __shfl_xor_sync(0xffffffffu, m, offset);
      double s2 = __shfl_xor_sync(0xffffffffu, s, offset);
      combine(m, s, m2, s2);
    }
    if (lane == 0) {
      maxes[0] = m;
      sums[0] = s;
    }
  }
  __syncthreads();
  m = maxes[0];
  s = sums[0];
}

#endif // LLMC_CUDA_COMMON_BLOCKMAXSUM_CUH
