//===- CrossEntropyGradSource.cpp - CUDA C++ of llmc.cross_entropy_grad --===//
//
// The classifier's loss gradient in one kernel: a block of 1024 threads per
// row (GPT-2: 50304 logits, 16384 rows per step) reads the row once for its
// max and sum of exponentials (one online pass), then again to write
// dlogits = (exp(x - max) / sum - onehot) * w with 16-byte loads and
// stores where the row length and the pointers allow. No softmax, one-hot
// or f32 copy of the logits is stored: 2 reads and 1 write of the logits'
// bytes per step. With 1024 threads, at most two rows per SM are in
// flight (264 rows, 26 MB of bf16 GPT-2 rows on an H200), so the second
// read should mostly hit the L2 (not measured). A first one-block kernel
// puts the weight of a `mean` or `sum` reduction (dloss / max(count, 1) or
// dloss) into the scratch. Appended to the device unit after
// deviceKernelSource() (whose helpers it uses: loadValue, Bf16).
//
// Numerics (stated in docs/cuda.md, checked by CudaCrossEntropyGrad.*):
// the exponentials and the products in f32 (expf, a few ulp), the sums of
// exponentials in f32 over one 16-byte pack (at most 8 terms), then in
// double (per thread, then a fixed shuffle tree), the weight in double rounded once to f32, and one rounding
// to the result type. Against the CPU's all-double reference: bf16 results
// within one bf16 ulp; f32 results within 1e-5 relative (plus 1e-7 |w|;
// expf is within 2 ulp, so a few ulp are expected).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceKernels.h"

namespace llmc::rt::cuda {

const char *crossEntropyGradKernelSource() {
  return R"cuda(
// ---- cross_entropy_grad: a block per row ----------------------------------

#define LLMC_CE_GRAD_THREADS 1024

// V consecutive elements moved by one 16-byte load or store.
template <typename T, int V> struct __align__(sizeof(T) * V) GradPack {
  T v[V];
};

__device__ __forceinline__ float gradStore(float value, float) {
  return value;
}
// Round to nearest even, NaN kept quiet (as storeValue<Bf16>).
__device__ __forceinline__ Bf16 gradStore(float value, Bf16) {
  unsigned int word = __float_as_uint(value);
  Bf16 result;
  if ((word & 0x7fffffffu) > 0x7f800000u) {
    result.bits = (unsigned short)((word >> 16) | 0x40u);
    return result;
  }
  unsigned int rounding = 0x7fffu + ((word >> 16) & 1u);
  result.bits = (unsigned short)((word + rounding) >> 16);
  return result;
}

// The running (max, sum of exp(x - max)) takes x: f32 exponentials, a
// double sum. An element of -inf adds nothing.
__device__ __forceinline__ void gradTake(float &m, double &s, float x) {
  if (x == -__int_as_float(0x7f800000))
    return;
  if (x > m) {
    s = s * (double)expf(m - x) + 1.0;
    m = x;
  } else {
    s += (double)expf(x - m);
  }
}

// The running (max, sum) takes a pack of V elements: the pack's max first
// (one rescale at most), then its V exponentials summed in f32 (V <= 8
// terms below 1 each, a few f32 roundings) and added to the double sum,
// so that a pack costs one conversion to double, not V.
template <typename T, int V>
__device__ __forceinline__ void gradTakePack(float &m, double &s,
                                             const GradPack<T, V> &pack) {
  float x[V];
  float top = -__int_as_float(0x7f800000);
#pragma unroll
  for (int k = 0; k < V; ++k) {
    x[k] = loadValue(pack.v[k]);
    top = fmaxf(top, x[k]);
  }
  if (top > m) {
    s *= (double)expf(m - top);
    m = top;
  }
  if (m == -__int_as_float(0x7f800000))
    return; // every element so far is -inf
  float partial = 0.0f;
#pragma unroll
  for (int k = 0; k < V; ++k)
    partial += expf(x[k] - m);
  s += (double)partial;
}

__device__ __forceinline__ void gradCombine(float &m, double &s, float m2,
                                            double s2) {
  const float negInf = -__int_as_float(0x7f800000);
  float top = fmaxf(m, m2);
  double a = m == negInf ? 0.0 : s * (double)expf(m - top);
  double b = m2 == negInf ? 0.0 : s2 * (double)expf(m2 - top);
  m = top;
  s = a + b;
}

// The block's (max, sum) in every thread; a fixed combination order (the
// shuffle tree, then warp 0 over the 32 warps), so results repeat.
__device__ void gradBlockMaxSum(float &m, double &s) {
  __shared__ float maxes[32];
  __shared__ double sums[32];
  for (int offset = 16; offset > 0; offset /= 2) {
    float m2 = __shfl_xor_sync(0xffffffffu, m, offset);
    double s2 = __shfl_xor_sync(0xffffffffu, s, offset);
    gradCombine(m, s, m2, s2);
  }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    maxes[warp] = m;
    sums[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    int warps = blockDim.x / 32;
    m = lane < warps ? maxes[lane] : -__int_as_float(0x7f800000);
    s = lane < warps ? sums[lane] : 0.0;
    for (int offset = 16; offset > 0; offset /= 2) {
      float m2 = __shfl_xor_sync(0xffffffffu, m, offset);
      double s2 = __shfl_xor_sync(0xffffffffu, s, offset);
      gradCombine(m, s, m2, s2);
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

// The weight of a mean or sum reduction into *weight: dloss, divided for a
// mean by the number of positions not ignored (at least 1). One block.
template <typename I>
__device__ void crossEntropyGradWeight(const I *targets, const float *dloss,
                                       double *weight, long long count,
                                       int reduction, int hasIgnore,
                                       long long ignoreIndex) {
  __shared__ long long partial[32];
  long long counted = 0;
  for (long long n = threadIdx.x; n < count; n += blockDim.x)
    counted += (hasIgnore && (long long)targets[n] == ignoreIndex) ? 0 : 1;
  for (int offset = 16; offset > 0; offset /= 2)
    counted += __shfl_xor_sync(0xffffffffu, counted, offset);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    partial[warp] = counted;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long total = 0;
    for (int w = 0; w < (int)(blockDim.x / 32); ++w)
      total += partial[w];
    double value = (double)dloss[0];
    if (reduction == 0)
      value /= (double)(total > 0 ? total : 1);
    *weight = value;
  }
}

// Block r writes row r of dlogits. `weight` is the scalar of a mean or sum
// (the first kernel's), or null for `none` (dloss[r] per row).
template <typename T, typename I, int V>
__device__ void crossEntropyGradRows(const T *logits, const I *targets,
                                     const float *dloss, const double *weight,
                                     T *dlogits, long long vocab,
                                     int hasIgnore, long long ignoreIndex) {
  const long long row = blockIdx.x;
  const long long target = (long long)targets[row];
  const T *in = logits + row * vocab;
  T *out = dlogits + row * vocab;
  const long long packs = vocab / V;
  const GradPack<T, V> *inPacks = (const GradPack<T, V> *)in;
  GradPack<T, V> *outPacks = (GradPack<T, V> *)out;
  // 1. An ignored position: zeros, without reading the row.
  if (hasIgnore && target == ignoreIndex) {
    GradPack<T, V> zeros;
#pragma unroll
    for (int k = 0; k < V; ++k)
      zeros.v[k] = gradStore(0.0f, T());
    for (long long p = threadIdx.x; p < packs; p += blockDim.x)
      outPacks[p] = zeros;
    for (long long i = packs * V + threadIdx.x; i < vocab; i += blockDim.x)
      out[i] = zeros.v[0];
    return;
  }
  // 2. The row's max and sum of exponentials, one pass.
  float m = -__int_as_float(0x7f800000);
  double s = 0.0;
  for (long long p = threadIdx.x; p < packs; p += blockDim.x)
    gradTakePack<T, V>(m, s, inPacks[p]);
  for (long long i = packs * V + threadIdx.x; i < vocab; i += blockDim.x)
    gradTake(m, s, loadValue(in[i]));
  gradBlockMaxSum(m, s);
  // 3. (exp(x - max) / sum - onehot) * w. A target outside [0, vocab) (the
  //    CPU reports it) poisons the row with NaN.
  const float w = (float)(weight ? *weight : (double)dloss[row]);
  const float inverse = (float)(1.0 / s);
  const float poison = (target < 0 || target >= vocab)
                           ? __int_as_float(0x7fc00000)
                           : 0.0f;
  for (long long p = threadIdx.x; p < packs; p += blockDim.x) {
    GradPack<T, V> pack = inPacks[p];
    GradPack<T, V> result;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      long long column = p * V + k;
      float prob = expf(loadValue(pack.v[k]) - m) * inverse + poison;
      float hot = column == target ? 1.0f : 0.0f;
      result.v[k] = gradStore((prob - hot) * w, T());
    }
    outPacks[p] = result;
  }
  for (long long i = packs * V + threadIdx.x; i < vocab; i += blockDim.x) {
    float prob = expf(loadValue(in[i]) - m) * inverse + poison;
    float hot = i == target ? 1.0f : 0.0f;
    out[i] = gradStore((prob - hot) * w, T());
  }
}

#define LLMC_CE_GRAD_ROWS(T, SUFFIX, I, ISUFFIX, V, VEC)                       \
  extern "C" __global__ void __launch_bounds__(LLMC_CE_GRAD_THREADS)           \
      llmc_cross_entropy_grad_##SUFFIX##_##ISUFFIX##VEC(                       \
          const T *logits, const I *targets, const float *dloss,               \
          const double *weight, T *dlogits, long long vocab, int hasIgnore,    \
          long long ignoreIndex) {                                             \
    crossEntropyGradRows<T, I, V>(logits, targets, dloss, weight, dlogits,     \
                                  vocab, hasIgnore, ignoreIndex);              \
  }

LLMC_CE_GRAD_ROWS(float, f32, int, i32, 1, )
LLMC_CE_GRAD_ROWS(float, f32, int, i32, 4, _vec)
LLMC_CE_GRAD_ROWS(float, f32, long long, i64, 1, )
LLMC_CE_GRAD_ROWS(float, f32, long long, i64, 4, _vec)
LLMC_CE_GRAD_ROWS(Bf16, bf16, int, i32, 1, )
LLMC_CE_GRAD_ROWS(Bf16, bf16, int, i32, 8, _vec)
LLMC_CE_GRAD_ROWS(Bf16, bf16, long long, i64, 1, )
LLMC_CE_GRAD_ROWS(Bf16, bf16, long long, i64, 8, _vec)

extern "C" __global__ void llmc_cross_entropy_grad_weight_i32(
    const int *targets, const float *dloss, double *weight, long long count,
    int reduction, int hasIgnore, long long ignoreIndex) {
  crossEntropyGradWeight(targets, dloss, weight, count, reduction, hasIgnore,
                         ignoreIndex);
}
extern "C" __global__ void llmc_cross_entropy_grad_weight_i64(
    const long long *targets, const float *dloss, double *weight,
    long long count, int reduction, int hasIgnore, long long ignoreIndex) {
  crossEntropyGradWeight(targets, dloss, weight, count, reduction, hasIgnore,
                         ignoreIndex);
}
)cuda";
}

} // namespace llmc::rt::cuda
