//===- NormRows8.cuh - the norms rows8 entries: up to 8 packs per lane ----===//
//
// llmc_{layer,rms}_norm_rows8_<x>_<gamma>: normRows (NormRows.cuh) for rows
// of 5 to 8 packs of 16 bytes per lane (2048 bf16, 1024 f32), a unit of their
// own (units/NormRows8.cu): 64 doubles per lane take 156-163 registers.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_NORMS_NORMROWS8_CUH
#define LLMC_CUDA_NORMS_NORMROWS8_CUH

#include "norms/NormRows.cuh"

// llmc_layer_norm_rows8_<x>_<gamma> and llmc_rms_norm_rows8_<x>_<gamma>:
// rows of 5 to 8 packs of 16 bytes per lane (the launch takes the 4-pack
// entries below that).
#define LLMC_NORM_ROW8_KERNELS(T, P, SUFFIX, V)                                \
  extern "C" __global__ void __launch_bounds__(128)                           \
      llmc_layer_norm_rows8_##SUFFIX(const T *x, const P *gamma,               \
                                     const P *beta, T *y, long long rows,      \
                                     long long dim, double epsilon) {          \
    normRows<T, P, V, 8>(x, gamma, beta, y, rows, dim, epsilon, false);        \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(128)                           \
      llmc_rms_norm_rows8_##SUFFIX(const T *x, const P *gamma, T *y,           \
                                   long long rows, long long dim,              \
                                   double epsilon) {                           \
    normRows<T, P, V, 8>(x, gamma, (const P *)0, y, rows, dim, epsilon, true); \
  }
LLMC_NORM_ROW8_KERNELS(float, float, f32_f32, 4)
LLMC_NORM_ROW8_KERNELS(Bf16, Bf16, bf16_bf16, 8)
LLMC_NORM_ROW8_KERNELS(Bf16, float, bf16_f32, 8)
LLMC_NORM_ROW8_KERNELS(float, Bf16, f32_bf16, 4)
LLMC_NORM_ROW8_KERNELS(F16, F16, f16_f16, 8)
LLMC_NORM_ROW8_KERNELS(F16, float, f16_f32, 8)

#endif // LLMC_CUDA_NORMS_NORMROWS8_CUH
