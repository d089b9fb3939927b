//===- SoftmaxLong.cuh - softmax over long rows, a block per row ----------===//
//
// The classifier's rows are a vocabulary long (GPT-2: 50304 logits per
// position, 16384 positions per step). The warp-per-row softmax
// (Softmax.cuh) reads a row three times; here a row gets a block of 256
// threads, is read with 16-byte loads where the row length and the
// pointers allow, and its max and sum of exponentials come from one online
// pass (the running sum is rescaled when the running max grows, in double),
// so softmax reads a row twice (cross-entropy, in f32, is CrossEntropy.cuh).
// On the prelude (loadValue, storeValue, negativeInfinity) and
// BlockMaxSum.cuh. The launch takes these entries for contiguous rows of
// 1024 elements and more.
//
// Numerics: everything in double and one rounding to the result type, as
// the warp kernels and the CPU; only the order of the double operations
// differs (the online rescaling), which the rounding to f32 or bf16 hides
// but for rare last-bit ties (CudaKernelCase.LongRows states the bound).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_SOFTMAX_SOFTMAXLONG_CUH
#define LLMC_CUDA_SOFTMAX_SOFTMAXLONG_CUH

#include "common/BlockMaxSum.cuh"

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
LLMC_LONG_ROW_KERNELS(F16, f16, 1, )
LLMC_LONG_ROW_KERNELS(F16, f16, 8, _vec)
extern "C" __global__ void llmc_softmax_f16_f32_long(const F16 *x, float *y,
                                                     long long length) {
  softmaxLongRows<F16, float, 1>(x, y, length);
}
extern "C" __global__ void llmc_softmax_f16_f32_long_vec(const F16 *x,
                                                         float *y,
                                                         long long length) {
  softmaxLongRows<F16, float, 8>(x, y, length);
}

#endif // LLMC_CUDA_SOFTMAX_SOFTMAXLONG_CUH
