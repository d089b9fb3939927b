//===- NormGradRows.cuh - the norm gradients with the row in registers ----===//
//
// The rows-in-registers chunk kernel of the norm gradients (1'. of
// NormGrad.cuh), a unit of its own (units/NormGradRows.cu): in the device unit
// its eight entries took GPT-2's cold NVRTC from 24.8 to 42.6 s on the H200's
// host.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_NORMS_NORMGRADROWS_CUH
#define LLMC_CUDA_NORMS_NORMGRADROWS_CUH

#include "common/Prelude.cuh"
#include "norms/NormGradCommon.cuh"

// 1'. The rows in registers: the same chunk, results and partials as 1.,
//     for rows of dim = V * packs elements (V = 16 bytes of T, packs <=
//     32 * PACKS) with x, dy, dx and the addend 16-byte aligned.
//     Row step: warp w takes the chunk's rows w, w + 8, ...; it reads the
//     row's x and dy once with 16-byte loads (lane l holds packs l, l + 32,
//     ...) and computes the statistics and dx from registers. Column step:
//     as 1b, a thread per 8 bytes of columns walks the chunk's rows in order
//     (the CPU's order of the column sums), reading x and dy again from
//     L1/L2 (the block has just read them). gamma is widened once per block
//     into shared memory, laid out [pack][element][lane] so that a warp's
//     reads of it are 32 consecutive doubles (no bank conflicts).
//     dx must not alias x or dy: the column step reads them after the row
//     step has written dx (the buffer plan writes no result of this op in
//     place, ir/BufferPlan.cpp inPlaceOperands).
//     The widening to double (F2F, a quarter of the FP64 rate) is the
//     arithmetic's cost: x and dy are widened again in each pass rather
//     than held as doubles (which would take 4 * PACKS * V registers).
#define LLMC_NORM_GRAD_THREADS 256
template <typename T, typename P, int PACKS>
__device__ void normGradRows(const T *x, const P *gamma, const T *dy, T *dx,
                             const T *addend, double *partials,
                             long long rows, long long dim, double epsilon,
                             int centered) {
  constexpr int V = 16 / sizeof(T);
  constexpr int W = V / 2;
  __shared__ double gammaWide[PACKS * V * 32];
  __shared__ double rowMean[LLMC_NORM_GRAD_CHUNK];
  __shared__ double rowRstd[LLMC_NORM_GRAD_CHUNK];
  const long long chunk = blockIdx.x;
  const long long begin = chunk * LLMC_NORM_GRAD_CHUNK;
  const int count = (int)min((long long)LLMC_NORM_GRAD_CHUNK, rows - begin);
  const int packs = (int)(dim / V);
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  // 1. gamma widened once: gammaWide[(k * V + v) * 32 + l] is the element v
  //    of pack l + 32 k (0 past the row).
  for (int s = threadIdx.x; s < PACKS * V * 32; s += blockDim.x) {
    const int l = s % 32, k = s / 32 / V, v = s / 32 % V;
    const long long column = (long long)(l + 32 * k) * V + v;
    gammaWide[s] = column < dim ? (double)loadValue(gamma[column]) : 0.0;
  }
  __syncthreads();
  // 2. The row step.
  for (int local = warp; local < count; local += warps) {
    const long long row = begin + local;
    const RowPack<T, V> *xPacks = (const RowPack<T, V> *)(x + row * dim);
    const RowPack<T, V> *dyPacks = (const RowPack<T, V> *)(dy + row * dim);
    RowPack<T, V> xHeld[PACKS], dyHeld[PACKS];
#pragma unroll
    for (int k = 0; k < PACKS; ++k)
      if (lane() + 32 * k < packs) {
        xHeld[k] = xPacks[lane() + 32 * k];
        dyHeld[k] = dyPacks[lane() + 32 * k];
      }
    // 2a. The mean (layer_norm; 0 for rms_norm).
    double mean = 0.0;
    if (centered) {
      double sum = 0.0;
#pragma unroll
      for (int k = 0; k < PACKS; ++k)
        if (lane() + 32 * k < packs)
#pragma unroll
          for (int v = 0; v < V; ++v)
            sum += (double)loadValue(xHeld[k].v[v]);
      mean = warpSum(sum) / (double)dim;
    }
    // 2b. The squares about the mean, and the sums of g and g (x - mean).
    double squares = 0.0, gSum = 0.0, gxSum = 0.0;
#pragma unroll
    for (int k = 0; k < PACKS; ++k)
      if (lane() + 32 * k < packs)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const double shifted = (double)loadValue(xHeld[k].v[v]) - mean;
          const double g = (double)loadValue(dyHeld[k].v[v]) *
                           gammaWide[(k * V + v) * 32 + lane()];
          squares += shifted * shifted;
          gSum += g;
          gxSum += g * shifted;
        }
    const double rstd = 1.0 / sqrt(warpSum(squares) / (double)dim + epsilon);
    const double gMean = centered ? warpSum(gSum) / (double)dim : 0.0;
    const double gxMean = warpSum(gxSum) * rstd / (double)dim;
    if (lane() == 0) {
      rowMean[local] = mean;
      rowRstd[local] = rstd;
    }
    // 2c. dx (plus the addend), 16-byte stores.
    RowPack<T, V> *dxPacks = (RowPack<T, V> *)(dx + row * dim);
    RowPack<T, V> addendHeld[PACKS];
    if (addend) {
      const RowPack<T, V> *addendPacks =
          (const RowPack<T, V> *)(addend + row * dim);
#pragma unroll
      for (int k = 0; k < PACKS; ++k)
        if (lane() + 32 * k < packs)
          addendHeld[k] = addendPacks[lane() + 32 * k];
    }
#pragma unroll
    for (int k = 0; k < PACKS; ++k) {
      if (lane() + 32 * k >= packs)
        continue;
      RowPack<T, V> result;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const double xhat = ((double)loadValue(xHeld[k].v[v]) - mean) * rstd;
        const double d = (double)loadValue(dyHeld[k].v[v]);
        const double scale = gammaWide[(k * V + v) * 32 + lane()];
        result.v[v] = storeValue<T>(rstd * (d * scale - gMean - xhat * gxMean));
        if (addend)
          result.v[v] = storeFloat<T>(
              __fadd_rn(loadValue(result.v[v]), loadValue(addendHeld[k].v[v])));
      }
      dxPacks[lane() + 32 * k] = result;
    }
  }
  __syncthreads();
  // 3. The column step: 8 bytes of columns per thread, the chunk's rows in
  //    order; the loads of 8 rows are in flight at once.
  const long long vectors = dim / W;
  for (long long c = threadIdx.x; c < vectors; c += blockDim.x) {
    double dGamma[W], dBeta[W];
#pragma unroll
    for (int v = 0; v < W; ++v) {
      dGamma[v] = 0.0;
      dBeta[v] = 0.0;
    }
#pragma unroll 8
    for (int local = 0; local < count; ++local) {
      const long long at = (begin + local) * dim / W + c;
      const RowPack<T, W> xs = ((const RowPack<T, W> *)x)[at];
      const RowPack<T, W> ds = ((const RowPack<T, W> *)dy)[at];
      const double mean = rowMean[local], rstd = rowRstd[local];
#pragma unroll
      for (int v = 0; v < W; ++v) {
        const double xhat = ((double)loadValue(xs.v[v]) - mean) * rstd;
        const double d = (double)loadValue(ds.v[v]);
        dGamma[v] += d * xhat;
        dBeta[v] += d;
      }
    }
#pragma unroll
    for (int v = 0; v < W; ++v) {
      partials[(2 * chunk) * dim + c * W + v] = dGamma[v];
      partials[(2 * chunk + 1) * dim + c * W + v] = dBeta[v];
    }
  }
}

// The rows-in-registers entries: PACKS 4 (bf16 rows up to 1024, GPT-2's
// 768) and 8 (up to 2048, LLaMA-1B's). The launch bounds ask for 3 (2)
// blocks of 256 per SM, 80 (128) registers: ptxas (CUDA 13, sm_90) spills
// 16 bytes for it, where 96 (148) registers would leave 2 (1).
#define LLMC_NORM_GRAD_ROWS_KERNEL(T, P, PACKS, SUFFIX)                        \
  extern "C" __global__ void __launch_bounds__(LLMC_NORM_GRAD_THREADS,       \
                                 PACKS == 4 ? 3 : 2)                          \
      llmc_norm_grad_rows##PACKS##_##SUFFIX(                                  \
          const T *x, const P *gamma, const T *dy, T *dx, const T *addend,    \
          double *partials, long long rows, long long dim, double epsilon,    \
          int centered) {                                                     \
    normGradRows<T, P, PACKS>(x, gamma, dy, dx, addend, partials, rows, dim,  \
                              epsilon, centered);                             \
  }
LLMC_NORM_GRAD_ROWS_KERNEL(float, float, 4, f32_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(Bf16, Bf16, 4, bf16_bf16)
LLMC_NORM_GRAD_ROWS_KERNEL(Bf16, float, 4, bf16_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(float, Bf16, 4, f32_bf16)
LLMC_NORM_GRAD_ROWS_KERNEL(F16, F16, 4, f16_f16)
LLMC_NORM_GRAD_ROWS_KERNEL(F16, float, 4, f16_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(float, float, 8, f32_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(Bf16, Bf16, 8, bf16_bf16)
LLMC_NORM_GRAD_ROWS_KERNEL(Bf16, float, 8, bf16_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(float, Bf16, 8, f32_bf16)
LLMC_NORM_GRAD_ROWS_KERNEL(F16, F16, 8, f16_f16)
LLMC_NORM_GRAD_ROWS_KERNEL(F16, float, 8, f16_f32)

#endif // LLMC_CUDA_NORMS_NORMGRADROWS_CUH
