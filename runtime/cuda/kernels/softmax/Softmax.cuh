//===- Softmax.cuh - softmax along any dimension, a warp per row ----------===//
//
// Softmax along a dimension viewed as [outer, length, inner], a warp per row
// in double (contiguous rows of 1024 and more take SoftmaxLong.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_SOFTMAX_SOFTMAX_CUH
#define LLMC_CUDA_SOFTMAX_SOFTMAX_CUH

#include "common/Prelude.cuh"

// Softmax along a dimension viewed as [outer, length, inner]: row r is
// elements offset + s * inner.
// U is the result type: T, or f32 for bf16 input (a widening cast folded
// into the softmax by llmc-fuse).
template <typename T, typename U = T>
__device__ void softmax(const T *x, U *y, long long rows, long long length,
                        long long inner) {
  long long row = warpRow();
  if (row >= rows)
    return;
  long long offset = (row / inner) * length * inner + row % inner;
  double max = negativeInfinity();
  for (long long s = lane(); s < length; s += 32)
    max = fmax(max, (double)loadValue(x[offset + s * inner]));
  max = warpMax(max);
  double sum = 0.0;
  for (long long s = lane(); s < length; s += 32)
    sum += exp((double)loadValue(x[offset + s * inner]) - max);
  sum = warpSum(sum);
  for (long long s = lane(); s < length; s += 32)
    y[offset + s * inner] =
        storeValue<U>(exp((double)loadValue(x[offset + s * inner]) - max) / sum);
}

#define LLMC_COMPOSITE_KERNELS(T, SUFFIX)                                      \
  extern "C" __global__ void llmc_softmax_##SUFFIX(                            \
      const T *x, T *y, long long rows, long long length, long long inner) {   \
    softmax(x, y, rows, length, inner);                                        \
  }

LLMC_COMPOSITE_KERNELS(float, f32)
LLMC_COMPOSITE_KERNELS(Bf16, bf16)
LLMC_COMPOSITE_KERNELS(F16, f16)
extern "C" __global__ void llmc_softmax_bf16_f32(const Bf16 *x, float *y,
                                                 long long rows,
                                                 long long length,
                                                 long long inner) {
  softmax<Bf16, float>(x, y, rows, length, inner);
}
extern "C" __global__ void llmc_softmax_f16_f32(const F16 *x, float *y,
                                                long long rows,
                                                long long length,
                                                long long inner) {
  softmax<F16, float>(x, y, rows, length, inner);
}

#endif // LLMC_CUDA_SOFTMAX_SOFTMAX_CUH
