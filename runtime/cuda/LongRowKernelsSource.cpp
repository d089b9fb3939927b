//===- LongRowKernelsSource.cpp - CUDA C++ of softmax and norms by rows --===//
//
// The classifier's rows are a vocabulary long (GPT-2: 50304 logits per
// position, 16384 positions per step). The row composites of
// deviceKernelSource() give a row one warp and read it three times; here a
// row gets a block of 256 threads, is read with 16-byte loads where the
// row length and the pointers allow, and its max and sum of exponentials
// come from one online pass (the running sum is rescaled when the running
// max grows, in double), so softmax reads a row twice (cross-entropy, in
// f32, is CrossEntropySource.cpp). The norms' "rows" entries hold a row
// of up to 4 packs of 16 bytes per lane in registers (GPT-2's 768 bf16
// activations): one read of x, each element widened to double once.
// Appended to the device unit after deviceKernelSource() (whose
// helpers it uses: loadValue, storeValue, negativeInfinity, and the
// prelude's blockMaxSum). Chosen by DeviceKernels.cpp for contiguous rows
// of 1024 elements and more.
//
// Numerics: everything in double and one rounding to the result type, as
// the warp kernels and the CPU; only the order of the double operations
// differs (the online rescaling), which the rounding to f32 or bf16 hides
// but for rare last-bit ties (CudaKernelCase.LongRows states the bound).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceKernels.h"

namespace llmc::rt::cuda {

const char *longRowKernelSource() {
  return R"cuda(
// ---- Long rows: a block per row, one online pass --------------------------

#define LLMC_LONG_ROW_THREADS 256

// The running (max, sum of exp(x - max)) of a row takes element x. An
// element of -inf adds nothing (a masked logit), as exp(-inf - max) = 0.
__device__ __forceinline__ void takeElement(double &m, double &s, double x) {
  if (x == negativeInfinity())
    return;
  if (x > m) {
    s = s * exp(m - x) + 1.0;
    m = x;
  } else {
    s += exp(x - m);
  }
}

// Two partial (max, sum) pairs as one.
__device__ __forceinline__ void combineMaxSum(double &m, double &s, double m2,
                                              double s2) {
  double top = fmax(m, m2);
  double a = m == negativeInfinity() ? 0.0 : s * exp(m - top);
  double b = m2 == negativeInfinity() ? 0.0 : s2 * exp(m2 - top);
  m = top;
  s = a + b;
}

// The (max, sum) of one row of `length` elements.
template <typename T, int V>
__device__ void rowMaxSum(const T *in, long long length, double &m, double &s) {
  m = negativeInfinity();
  s = 0.0;
  const long long packs = length / V;
  const RowPack<T, V> *inPacks = (const RowPack<T, V> *)in;
  for (long long p = threadIdx.x; p < packs; p += blockDim.x) {
    RowPack<T, V> pack = inPacks[p];
#pragma unroll
    for (int k = 0; k < V; ++k)
      takeElement(m, s, (double)loadValue(pack.v[k]));
  }
  for (long long i = packs * V + threadIdx.x; i < length; i += blockDim.x)
    takeElement(m, s, (double)loadValue(in[i]));
  blockMaxSum<double, LLMC_LONG_ROW_THREADS / 32, combineMaxSum>(m, s);
}

// Softmax over contiguous rows: block r takes row r. U is the result type
// (T, or f32 for bf16 input).
template <typename T, typename U, int V>
__device__ void softmaxLongRows(const T *x, U *y, long long length) {
  const T *in = x + (long long)blockIdx.x * length;
  U *out = y + (long long)blockIdx.x * length;
  double m, s;
  rowMaxSum<T, V>(in, length, m, s);
  const long long packs = length / V;
  const RowPack<T, V> *inPacks = (const RowPack<T, V> *)in;
  RowPack<U, V> *outPacks = (RowPack<U, V> *)out;
  for (long long p = threadIdx.x; p < packs; p += blockDim.x) {
    RowPack<T, V> pack = inPacks[p];
    RowPack<U, V> result;
#pragma unroll
    for (int k = 0; k < V; ++k)
      result.v[k] = storeValue<U>(exp((double)loadValue(pack.v[k]) - m) / s);
    outPacks[p] = result;
  }
  for (long long i = packs * V + threadIdx.x; i < length; i += blockDim.x)
    out[i] = storeValue<U>(exp((double)loadValue(in[i]) - m) / s);
}

// ---- Norms with the row in registers: a warp per row ----------------------

// Packs of V elements a lane holds at most (GPT-2's 768 bf16: 3 of 8).
#define LLMC_NORM_PACKS 4

// y = (x - mean) * rstd * gamma + beta (beta may be null; rms: no mean)
// over rows of `dim` = V * packs elements, packs <= 32 * LLMC_NORM_PACKS,
// the formula of layerNorm() in deviceKernelSource(): everything in double
// until the one rounding to T. Lane l loads packs l, l + 32, ... once with
// 16-byte loads and keeps them as doubles, so each element is widened once
// (f32 -> f64 conversions run at a quarter of the f64 rate) and read from
// memory once; the mean and the centred squares are summed from the
// registers (only the order of the double additions differs from the warp
// kernel's). gamma and beta are read as packs of V (16 or 32 bytes).
template <typename T, typename P, int V>
__device__ void normRows(const T *x, const P *gamma, const P *beta, T *y,
                         long long rows, long long dim, double epsilon,
                         bool rms) {
  const long long row = warpRow();
  if (row >= rows)
    return;
  const int packs = (int)(dim / V);
  const RowPack<T, V> *in = (const RowPack<T, V> *)(x + row * dim);
  RowPack<T, V> *out = (RowPack<T, V> *)(y + row * dim);
  // 1. The row, widened once.
  RowPack<T, V> loaded[LLMC_NORM_PACKS];
#pragma unroll
  for (int k = 0; k < LLMC_NORM_PACKS; ++k)
    if (lane() + 32 * k < packs)
      loaded[k] = in[lane() + 32 * k];
  double held[LLMC_NORM_PACKS][V];
#pragma unroll
  for (int k = 0; k < LLMC_NORM_PACKS; ++k)
#pragma unroll
    for (int v = 0; v < V; ++v)
      held[k][v] = lane() + 32 * k < packs ? (double)loadValue(loaded[k].v[v])
                                           : 0.0;
  // 2. The mean (zero for rms), then the mean of the centred squares.
  double mean = 0.0;
  if (!rms) {
    double sum = 0.0;
#pragma unroll
    for (int k = 0; k < LLMC_NORM_PACKS; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v)
        sum += held[k][v];
    mean = warpSum(sum) / (double)dim;
  }
  double squares = 0.0;
#pragma unroll
  for (int k = 0; k < LLMC_NORM_PACKS; ++k)
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
  for (int k = 0; k < LLMC_NORM_PACKS; ++k) {
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

// llmc_layer_norm_rows_<x>_<gamma> and llmc_rms_norm_rows_<x>_<gamma>: V is
// 16 bytes of x (8 bf16, 4 f32).
#define LLMC_NORM_ROW_KERNELS(T, P, SUFFIX, V)                                 \
  extern "C" __global__ void __launch_bounds__(128)                           \
      llmc_layer_norm_rows_##SUFFIX(const T *x, const P *gamma,                \
                                    const P *beta, T *y, long long rows,       \
                                    long long dim, double epsilon) {           \
    normRows<T, P, V>(x, gamma, beta, y, rows, dim, epsilon, false);           \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(128)                           \
      llmc_rms_norm_rows_##SUFFIX(const T *x, const P *gamma, T *y,            \
                                  long long rows, long long dim,               \
                                  double epsilon) {                            \
    normRows<T, P, V>(x, gamma, (const P *)0, y, rows, dim, epsilon, true);    \
  }
LLMC_NORM_ROW_KERNELS(float, float, f32_f32, 4)
LLMC_NORM_ROW_KERNELS(Bf16, Bf16, bf16_bf16, 8)
LLMC_NORM_ROW_KERNELS(Bf16, float, bf16_f32, 8)
LLMC_NORM_ROW_KERNELS(float, Bf16, f32_bf16, 4)

#define LLMC_LONG_ROW_KERNELS(T, SUFFIX, V, VEC)                               \
  extern "C" __global__ void llmc_softmax_##SUFFIX##_long##VEC(                \
      const T *x, T *y, long long length) {                                    \
    softmaxLongRows<T, T, V>(x, y, length);                                    \
  }

LLMC_LONG_ROW_KERNELS(float, f32, 1, )
LLMC_LONG_ROW_KERNELS(float, f32, 4, _vec)
LLMC_LONG_ROW_KERNELS(Bf16, bf16, 1, )
LLMC_LONG_ROW_KERNELS(Bf16, bf16, 8, _vec)
extern "C" __global__ void llmc_softmax_bf16_f32_long(const Bf16 *x, float *y,
                                                      long long length) {
  softmaxLongRows<Bf16, float, 1>(x, y, length);
}
// 8 bf16 in (16 bytes), 8 f32 out (32 bytes: the result needs 32-byte
// alignment, which the launch checks).
extern "C" __global__ void llmc_softmax_bf16_f32_long_vec(const Bf16 *x,
                                                          float *y,
                                                          long long length) {
  softmaxLongRows<Bf16, float, 8>(x, y, length);
}
)cuda";
}

} // namespace llmc::rt::cuda
