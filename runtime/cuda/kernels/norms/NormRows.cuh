//===- NormRows.cuh - the norms with the row in registers (template) ------===//
//
// layer_norm and rms_norm forward for rows of whole 16-byte packs: a warp
// per row holds it in registers as doubles (docs/cuda.md, "Norms with the
// row in registers"). This file is the template, normRows<T, P, V,
// PACKS>, for rows of up to PACKS packs per lane; it is in the device unit,
// whose entries (NormRows4.cuh) take 4 packs per lane (1024
// bf16, 512 f32: GPT-2's 768), and in the unit "llmc_norm_rows8" with
// NormRows8.cuh's entries, 8 packs per lane (2048 bf16, 1024 f32:
// LLaMA-1B's rows of 2048). Holding 64 doubles per lane takes 156-163
// registers for bf16 x (no spills; 3 blocks of 128 per SM), so those
// entries are a unit of their own, compiled beside the device unit rather
// than lengthening its cold NVRTC compile.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_NORMS_NORMROWS_CUH
#define LLMC_CUDA_NORMS_NORMROWS_CUH

#include "common/Prelude.cuh"

// ---- Norms with the row in registers: a warp per row ----------------------

// y = (x - mean) * rstd * gamma + beta (beta may be null; rms: no mean)
// over rows of `dim` = V * packs elements, packs <= 32 * PACKS,
// the formula of layerNorm() in Norms.cuh: everything in double
// until the one rounding to T. Lane l loads packs l, l + 32, ... once with
// 16-byte loads and keeps them as doubles, so each element is widened once
// (f32 -> f64 conversions run at a quarter of the f64 rate) and read from
// memory once; the mean and the centred squares are summed from the
// registers (only the order of the double additions differs from the warp
// kernel's). gamma and beta are read as packs of V (16 or 32 bytes).
template <typename T, typename P, int V, int PACKS>
__device__ void normRows(const T *x, const P *gamma, const P *beta, T *y,
                         long long rows, long long dim, double epsilon,
                         bool rms) {
  // A warp per row (as the prelude's warpRow()).
  const long long row =
      ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= rows)
    return;
  const int packs = (int)(dim / V);
  const RowPack<T, V> *in = (const RowPack<T, V> *)(x + row * dim);
  RowPack<T, V> *out = (RowPack<T, V> *)(y + row * dim);
  // 1. The row, widened once.
  RowPack<T, V> loaded[PACKS];
#pragma unroll
  for (int k = 0; k < PACKS; ++k)
    if (lane() + 32 * k < packs)
      loaded[k] = in[lane() + 32 * k];
  double held[PACKS][V];
#pragma unroll
  for (int k = 0; k < PACKS; ++k)
#pragma unroll
    for (int v = 0; v < V; ++v)
      held[k][v] = lane() + 32 * k < packs ? (double)loadValue(loaded[k].v[v])
                                           : 0.0;
  // 2. The mean (zero for rms), then the mean of the centred squares.
  double mean = 0.0;
  if (!rms) {
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < PACKS; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v)
        sum += held[k][v];
    mean = warpSum(sum) / (double)dim;
  }
  double squares = 0.0;
#pragma unroll
  for (int k = 0; k < PACKS; ++k)
    if (lane() + 32 * k < packs)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        double centered = held[k][v] - mean;
        squares += centered * centered;
      }
  const double variance = warpSum(squares) / (double)dim;
  const double rstd = 1.0 / sqrt(variance + epsilon);
  // 3. The affine map, one rounding to T.
  const RowPack<P, V> *gammaPacks = (const RowPack<P, V> *)gamma;
  const RowPack<P, V> *betaPacks = (const RowPack<P, V> *)beta;
#pragma unroll
  for (int k = 0; k < PACKS; ++k) {
    const int p = lane() + 32 * k;
    if (p >= packs)
      continue;
    const RowPack<P, V> g = gammaPacks[p];
    RowPack<P, V> b;
    if (beta)
      b = betaPacks[p];
    RowPack<T, V> result;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      double value = (held[k][v] - mean) * rstd * (double)loadValue(g.v[v]);
      if (beta)
        value += (double)loadValue(b.v[v]);
      result.v[v] = storeValue<T>(value);
    }
    out[p] = result;
  }
}

#endif // LLMC_CUDA_NORMS_NORMROWS_CUH
