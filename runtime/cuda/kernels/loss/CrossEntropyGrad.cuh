//===- CrossEntropyGrad.cuh - llmc.cross_entropy_grad, a block per row ----===//
//
// The classifier's loss gradient in one kernel: a block per row (GPT-2:
// 50304 logits, 16384 rows per step) writes
// dlogits = (exp(x - lse) - onehot) * w with 16-byte loads and stores where
// the row length and the pointers allow (LLMC_CE_BATCH loads in flight per
// thread). With the forward's log-sum-exp of each row (llmc.cross_entropy's
// `lse` result, an operand of cross_entropy_grad) that is one read and one
// write of the logits' bytes, 256 threads per row; without it the block
// first computes the row's statistics as the forward does (lossRowStats of
// CrossEntropy.cuh), a second read, with 1024 threads so that at most
// two rows per SM are in flight (26 MB of bf16 GPT-2 rows on an H200) and
// the second read mostly hits the L2. No softmax, one-hot or f32 copy of
// the logits is stored. A first one-block kernel puts the weight of a
// `mean` or `sum` reduction (dloss / max(count, 1) or dloss) into the
// scratch. On CrossEntropy.cuh
// (whose helpers it uses: LossPack, lossRowStats, LLMC_CE_BATCH,
// LLMC_CE_ROW_TYPES, LLMC_CE_TARGET_TYPES) and the prelude (storeFloat:
// f32 to T, rounded once).
//
// Numerics (stated in docs/cuda.md, checked by CudaCrossEntropyGrad.*):
// expf(x - lse) in f32 (expf within 2 ulp; x - lse rounded once for f32
// logits, exact for bf16 ones near the lse) where lse is the operand;
// without it expf(x - max) * (1 / sum), the sum of the forward's row
// statistics (exp2f, double sums); the weight in double rounded once to
// f32, the products in f32, one rounding to the result type. Against the
// CPU's all-double reference (given the same f32 lse when it is an
// operand): bf16 results within one bf16 ulp; f32 results within 1e-5
// relative (plus 1e-7 |w|).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_LOSS_CROSSENTROPYGRAD_CUH
#define LLMC_CUDA_LOSS_CROSSENTROPYGRAD_CUH

#include "loss/CrossEntropy.cuh"

// ---- cross_entropy_grad: a block per row ----------------------------------

#define LLMC_CE_GRAD_THREADS 1024

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

// One pack of dlogits: (exp(x - shift) * scale - [column == target]) * w
// + poison, rounded once to T (shift = lse and scale = 1, or shift = max
// and scale = 1 / sum). `hot` is the target's index within the pack
// (outside [0, V) when the pack does not hold it). expf, not the forward's
// exp2f: its argument is not rounded again (x - lse is exact for bf16
// logits near the lse), so each value is within a few f32 ulp.
template <typename T, int V>
__device__ __forceinline__ LossPack<T, V>
gradPack(const LossPack<T, V> &pack, float shift, float scale, long long hot,
         float w, float poison) {
  const int column = hot >= 0 && hot < V ? (int)hot : -1;
  LossPack<T, V> result;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    float prob = expf(loadValue(pack.v[k]) - shift) * scale + poison;
    float onehot = k == column ? 1.0f : 0.0f;
    result.v[k] = storeFloat<T>((prob - onehot) * w);
  }
  return result;
}

// Block r writes row r of dlogits. `weight` is the scalar of a mean or sum
// (the first kernel's), or null for `none` (dloss[r] per row). `lse` is
// the forward's log-sum-exp of every row, or null: then the block first
// computes it (lossRowStats, one more read of the row).
template <typename T, typename I, int V>
__device__ void crossEntropyGradRows(const T *logits, const I *targets,
                                     const float *dloss, const double *weight,
                                     const float *lse, T *dlogits,
                                     long long vocab, int hasIgnore,
                                     long long ignoreIndex) {
  const long long row = blockIdx.x;
  const long long target = (long long)targets[row];
  const T *in = logits + row * vocab;
  T *out = dlogits + row * vocab;
  const int packs = (int)(vocab / V);
  const int stride = blockDim.x;
  const LossPack<T, V> *inPacks = (const LossPack<T, V> *)in;
  LossPack<T, V> *outPacks = (LossPack<T, V> *)out;
  // 1. An ignored position: zeros, without reading the row.
  if (hasIgnore && target == ignoreIndex) {
    LossPack<T, V> zeros;
#pragma unroll
    for (int k = 0; k < V; ++k)
      zeros.v[k] = storeFloat<T>(0.0f);
    for (int p = threadIdx.x; p < packs; p += stride)
      outPacks[p] = zeros;
    for (long long i = (long long)packs * V + threadIdx.x; i < vocab;
         i += stride)
      out[i] = zeros.v[0];
    return;
  }
  // 2. The row's log-sum-exp: the forward's, or its max and sum from one
  //    pass over the row.
  float shift, scale = 1.0f;
  if (lse) {
    shift = lse[row];
  } else {
    double s;
    lossRowStats<T, V>(in, vocab, shift, s);
    scale = (float)(1.0 / s);
  }
  // 3. (exp(x - lse) - onehot) * w, LLMC_CE_BATCH packs loaded before the
  //    first is written. Each thread reads and writes the same packs, so
  //    dlogits may be the logits' buffer. A target outside [0, vocab) (the
  //    CPU reports it) poisons the row with NaN.
  const float w = (float)(weight ? *weight : (double)dloss[row]);
  const float poison =
      (target < 0 || target >= vocab) ? __int_as_float(0x7fc00000) : 0.0f;
  int p = threadIdx.x;
  for (; p + (LLMC_CE_BATCH - 1) * stride < packs;
       p += LLMC_CE_BATCH * stride) {
    LossPack<T, V> batch[LLMC_CE_BATCH];
#pragma unroll
    for (int b = 0; b < LLMC_CE_BATCH; ++b)
      batch[b] = inPacks[p + b * stride];
#pragma unroll
    for (int b = 0; b < LLMC_CE_BATCH; ++b) {
      const int q = p + b * stride;
      outPacks[q] = gradPack<T, V>(batch[b], shift, scale,
                                   target - (long long)q * V, w, poison);
    }
  }
  for (; p < packs; p += stride)
    outPacks[p] = gradPack<T, V>(inPacks[p], shift, scale,
                                 target - (long long)p * V, w, poison);
  for (long long i = (long long)packs * V + threadIdx.x; i < vocab;
       i += stride) {
    LossPack<T, 1> one;
    one.v[0] = in[i];
    out[i] = gradPack<T, 1>(one, shift, scale, target - i, w, poison).v[0];
  }
}

#define LLMC_CE_GRAD_ROWS(T, SUFFIX, I, ISUFFIX, V, VEC)                       \
  extern "C" __global__ void __launch_bounds__(LLMC_CE_GRAD_THREADS)           \
      llmc_cross_entropy_grad_##SUFFIX##_##ISUFFIX##VEC(                       \
          const T *logits, const I *targets, const float *dloss,               \
          const double *weight, const float *lse, T *dlogits,                  \
          long long vocab, int hasIgnore, long long ignoreIndex) {             \
    crossEntropyGradRows<T, I, V>(logits, targets, dloss, weight, lse,         \
                                  dlogits, vocab, hasIgnore, ignoreIndex);     \
  }

LLMC_CE_ROW_TYPES(LLMC_CE_GRAD_ROWS)

#define LLMC_CE_GRAD_WEIGHT(I, ISUFFIX)                                        \
  extern "C" __global__ void llmc_cross_entropy_grad_weight_##ISUFFIX(         \
      const I *targets, const float *dloss, double *weight, long long count,   \
      int reduction, int hasIgnore, long long ignoreIndex) {                   \
    crossEntropyGradWeight(targets, dloss, weight, count, reduction,           \
                           hasIgnore, ignoreIndex);                            \
  }

LLMC_CE_TARGET_TYPES(LLMC_CE_GRAD_WEIGHT)

#endif // LLMC_CUDA_LOSS_CROSSENTROPYGRAD_CUH
