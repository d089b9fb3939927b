//===- Norms.cuh - layer_norm and rms_norm, a warp per row ----------------===//
//
// The norms' forward for any row length: a warp per row, two passes as the
// CPU (mean, then the variance), double until the one rounding to x's type;
// gamma and beta may be wider than x. Rows of whole 16-byte packs take the
// rows-in-registers entries instead (NormRows4.cuh, NormRows8.cuh).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_NORMS_NORMS_CUH
#define LLMC_CUDA_NORMS_NORMS_CUH

#include "common/Prelude.cuh"

// ---- Row composites: one warp per row, double accumulation ----------------

// y = (x - mean) * rstd * gamma + beta over the last dimension; beta may
// be null. Two passes over the row as the CPU (mean, then the variance).
// gamma and beta (type P) may be wider than x (T): mixed precision keeps
// them f32; everything is double until the one rounding to T.
template <typename T, typename P>
__device__ void layerNorm(const T *x, const P *gamma, const P *beta, T *y,
                          long long rows, long long dim, double epsilon,
                          bool rms) {
  long long row = warpRow();
  if (row >= rows)
    return;
  const T *in = x + row * dim;
  double mean = 0.0;
  if (!rms) {
    double sum = 0.0;
    for (long long i = lane(); i < dim; i += 32)
      sum += (double)loadValue(in[i]);
    mean = warpSum(sum) / (double)dim;
  }
  double squares = 0.0;
  for (long long i = lane(); i < dim; i += 32) {
    double centered = (double)loadValue(in[i]) - mean;
    squares += centered * centered;
  }
  double variance = warpSum(squares) / (double)dim;
  double rstd = 1.0 / sqrt(variance + epsilon);
  for (long long i = lane(); i < dim; i += 32) {
    double value = ((double)loadValue(in[i]) - mean) * rstd *
                   (double)loadValue(gamma[i]);
    if (beta)
      value += (double)loadValue(beta[i]);
    y[row * dim + i] = storeValue<T>(value);
  }
}

// The norms per (input, gamma) type pair: llmc_layer_norm_<x>_<gamma>.
#define LLMC_NORM_KERNELS(T, P, SUFFIX)                                        \
  extern "C" __global__ void llmc_layer_norm_##SUFFIX(                         \
      const T *x, const P *gamma, const P *beta, T *y, long long rows,         \
      long long dim, double epsilon) {                                         \
    layerNorm(x, gamma, beta, y, rows, dim, epsilon, false);                   \
  }                                                                            \
  extern "C" __global__ void llmc_rms_norm_##SUFFIX(                           \
      const T *x, const P *gamma, T *y, long long rows, long long dim,         \
      double epsilon) {                                                        \
    layerNorm(x, gamma, (const P *)0, y, rows, dim, epsilon, true);            \
  }
LLMC_NORM_KERNELS(float, float, f32_f32)
LLMC_NORM_KERNELS(Bf16, Bf16, bf16_bf16)
LLMC_NORM_KERNELS(Bf16, float, bf16_f32)
LLMC_NORM_KERNELS(float, Bf16, f32_bf16)
LLMC_NORM_KERNELS(F16, F16, f16_f16)
LLMC_NORM_KERNELS(F16, float, f16_f32)

#endif // LLMC_CUDA_NORMS_NORMS_CUH
