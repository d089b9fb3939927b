//===- NormRows4.cuh - the norms rows entries: up to 4 packs per lane -----===//
//
// llmc_{layer,rms}_norm_rows_<x>_<gamma>: normRows (NormRows.cuh) for rows
// of up to 4 packs of 16 bytes per lane (1024 bf16, 512 f32: GPT-2's 768), in
// the device unit (units/DeviceKernels.cu).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_NORMS_NORMROWS4_CUH
#define LLMC_CUDA_NORMS_NORMROWS4_CUH

#include "norms/NormRows.cuh"

// ---- Norms with the row in registers: a warp per row ----------------------

// Packs of V elements a lane holds at most (GPT-2's 768 bf16: 3 of 8);
// rows up to 8 packs per lane take the entries of NormRows8.cuh, a unit
// of their own. normRows is NormRows.cuh's, before this file in the
// device unit.
#define LLMC_NORM_PACKS 4

// llmc_layer_norm_rows_<x>_<gamma> and llmc_rms_norm_rows_<x>_<gamma>: V is
// 16 bytes of x (8 bf16, 4 f32).
#define LLMC_NORM_ROW_KERNELS(T, P, SUFFIX, V)                                 \
  extern "C" __global__ void __launch_bounds__(128)                           \
      llmc_layer_norm_rows_##SUFFIX(const T *x, const P *gamma,                \
                                    const P *beta, T *y, long long rows,       \
                                    long long dim, double epsilon) {           \
    normRows<T, P, V, LLMC_NORM_PACKS>(x, gamma, beta, y, rows, dim, epsilon, \
                                       false);                                 \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(128)                           \
      llmc_rms_norm_rows_##SUFFIX(const T *x, const P *gamma, T *y,            \
                                  long long rows, long long dim,               \
                                  double epsilon) {                            \
    normRows<T, P, V, LLMC_NORM_PACKS>(x, gamma, (const P *)0, y, rows, dim,   \
                                       epsilon, true);                         \
  }
LLMC_NORM_ROW_KERNELS(float, float, f32_f32, 4)
LLMC_NORM_ROW_KERNELS(Bf16, Bf16, bf16_bf16, 8)
LLMC_NORM_ROW_KERNELS(Bf16, float, bf16_f32, 8)
LLMC_NORM_ROW_KERNELS(float, Bf16, f32_bf16, 4)
LLMC_NORM_ROW_KERNELS(F16, F16, f16_f16, 8)
LLMC_NORM_ROW_KERNELS(F16, float, f16_f32, 8)

#endif // LLMC_CUDA_NORMS_NORMROWS4_CUH
