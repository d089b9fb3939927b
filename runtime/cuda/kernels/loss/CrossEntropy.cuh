//===- CrossEntropy.cuh - llmc.cross_entropy, a block per row -------------===//
//
// The classifier's loss in f32, one read of the logits: a block per row
// (GPT-2: 16384 rows of 50304 logits per step) keeps a per-thread running
// max (f32) and sum of exponentials while it streams the row with 16-byte
// loads (LLMC_CE_BATCH of them in flight per thread), then a fixed shuffle
// tree combines the threads (results repeat run to run). The exponentials
// are exp2f((x - max) * log2(e)): one multi-function-unit instruction per
// logit instead of the double exp of the other row composites, which made
// the forward loss bound by f64 arithmetic (2.33 ms per step for a 0.35 ms
// read). Pass 1 writes each position's loss (double) and, when asked, its
// log-sum-exp (f32; llmc.cross_entropy's optional `lse` result, which the
// gradient kernel reads instead of recomputing the row statistics); pass 2,
// one block, reduces the losses in a fixed order (mean, sum) or copies them
// (none). On the prelude (loadValue, Bf16) and BlockMaxSum.cuh;
// CrossEntropyGrad.cuh uses the row statistics
// below.
//
// Numerics (docs/cuda.md "The loss", CudaCrossEntropy.* tests): each
// exponential in f32 (exp2f within 2 ulp; the argument rounded twice, an
// error of about |x - max| 2^-24 relative to the term, which is largest for
// the smallest terms); the exponentials of one 16-byte pack (at most 8
// terms below 1) summed in f32, every other sum in double; the loss is
// (max - x[target]) + log(sum) in double, the lse (max + log(sum)) rounded
// once to f32. Against the CPU's all-double reference the loss of a row
// differs by a few 1e-7 of log(sum) (the sum's relative error), far below
// the f32 rounding of a loss of order 1-10 on the test data.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_LOSS_CROSSENTROPY_CUH
#define LLMC_CUDA_LOSS_CROSSENTROPY_CUH

#include "common/BlockMaxSum.cuh"

// ---- cross_entropy: a block per row, f32 exponentials ---------------------

// Packs each thread loads before it folds them (16 bytes each).
#define LLMC_CE_BATCH 4
#define LLMC_LOG2E 1.44269504088896340736f

// V consecutive elements moved by one 16-byte load or store.
template <typename T, int V> struct __align__(sizeof(T) * V) LossPack {
  T v[V];
};

__device__ __forceinline__ float lossNegInf() {
  return -__int_as_float(0x7f800000);
}

// exp(d) for d = x - max <= 0 (or -inf: 0).
__device__ __forceinline__ float lossExp(float d) {
  return exp2f(d * LLMC_LOG2E);
}

// The running (max m, sum s of exp(x - m)) takes a pack of V elements: the
// pack's max first (one rescale at most), then its V exponentials summed in
// f32 and added to the double sum. Elements of -inf add nothing; NaN
// propagates through the sum.
template <typename T, int V>
__device__ __forceinline__ void lossTakePack(float &m, double &s,
                                             const LossPack<T, V> &pack) {
  float x[V];
  float top = lossNegInf();
#pragma unroll
  for (int k = 0; k < V; ++k) {
    x[k] = loadValue(pack.v[k]);
    top = fmaxf(top, x[k]);
  }
  if (top > m) {
    s *= (double)lossExp(m - top);
    m = top;
  }
  if (m == lossNegInf())
    return; // every element so far is -inf
  float partial = 0.0f;
#pragma unroll
  for (int k = 0; k < V; ++k)
    partial += lossExp(x[k] - m);
  s += (double)partial;
}

__device__ __forceinline__ void lossCombine(float &m, double &s, float m2,
                                            double s2) {
  float top = fmaxf(m, m2);
  double a = m == lossNegInf() ? 0.0 : s * (double)lossExp(m - top);
  double b = m2 == lossNegInf() ? 0.0 : s2 * (double)lossExp(m2 - top);
  m = top;
  s = a + b;
}

// The (max, sum of exp(x - max)) of one row of `vocab` elements, in every
// thread of the block. Thread t folds packs t, t + blockDim.x, ... in
// order, LLMC_CE_BATCH loads issued before the first is folded; then the
// scalar tail (vocab not a multiple of V).
template <typename T, int V>
__device__ void lossRowStats(const T *in, long long vocab, float &m,
                             double &s) {
  m = lossNegInf();
  s = 0.0;
  const int packs = (int)(vocab / V);
  const int stride = blockDim.x;
  const LossPack<T, V> *inPacks = (const LossPack<T, V> *)in;
  int p = threadIdx.x;
  for (; p + (LLMC_CE_BATCH - 1) * stride < packs;
       p += LLMC_CE_BATCH * stride) {
    LossPack<T, V> batch[LLMC_CE_BATCH];
#pragma unroll
    for (int b = 0; b < LLMC_CE_BATCH; ++b)
      batch[b] = inPacks[p + b * stride];
#pragma unroll
    for (int b = 0; b < LLMC_CE_BATCH; ++b)
      lossTakePack<T, V>(m, s, batch[b]);
  }
  for (; p < packs; p += stride)
    lossTakePack<T, V>(m, s, inPacks[p]);
  for (long long i = (long long)packs * V + threadIdx.x; i < vocab;
       i += stride) {
    LossPack<T, 1> one;
    one.v[0] = in[i];
    lossTakePack<T, 1>(m, s, one);
  }
  // Room for 32 warps: the gradient's rows run 1024 threads.
  blockMaxSum<float, 32, lossCombine>(m, s);
}

// Pass 1: block r takes row r. losses[r] = max + log(sum) - x[target] (0
// where ignored, NaN for a target outside [0, vocab), which the CPU
// reports); lse[r] = max + log(sum) for every row when lse is not null.
template <typename T, typename I, int V>
__device__ void crossEntropyRows(const T *logits, const I *targets,
                                 double *losses, float *lse, long long vocab,
                                 int hasIgnore, long long ignoreIndex) {
  const long long row = blockIdx.x;
  const long long target = (long long)targets[row];
  const bool ignored = hasIgnore && target == ignoreIndex;
  if (ignored && !lse) {
    if (threadIdx.x == 0)
      losses[row] = 0.0;
    return;
  }
  const T *in = logits + row * vocab;
  float m;
  double s;
  lossRowStats<T, V>(in, vocab, m, s);
  if (threadIdx.x != 0)
    return;
  const double logSum = log(s);
  if (lse)
    lse[row] = (float)((double)m + logSum);
  if (ignored)
    losses[row] = 0.0;
  else if (target < 0 || target >= vocab)
    losses[row] = __longlong_as_double(0x7ff8000000000000ll);
  else
    losses[row] = ((double)m - (double)loadValue(in[target])) + logSum;
}

// Pass 2 (one block of 256): reduction 0 mean over the positions not
// ignored (0 when none is), 1 sum, 2 none (each position's loss as f32).
// A fixed order: thread t sums positions t, t + 256, ..., then a tree.
template <typename I>
__device__ void crossEntropyFinish(const double *losses, const I *targets,
                                   float *out, long long count, int reduction,
                                   int hasIgnore, long long ignoreIndex) {
  if (reduction == 2) {
    for (long long n = threadIdx.x; n < count; n += blockDim.x)
      out[n] = (float)losses[n];
    return;
  }
  __shared__ double totals[256];
  __shared__ double counted[256];
  double total = 0.0;
  double kept = 0.0;
  // Unrolled so that several loads are in flight (GPT-2: 64 per thread);
  // the additions keep their order.
#pragma unroll 8
  for (long long n = threadIdx.x; n < count; n += blockDim.x) {
    total += losses[n];
    bool ignored = hasIgnore && (long long)targets[n] == ignoreIndex;
    kept += ignored ? 0.0 : 1.0;
  }
  totals[threadIdx.x] = total;
  counted[threadIdx.x] = kept;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      totals[threadIdx.x] += totals[threadIdx.x + half];
      counted[threadIdx.x] += counted[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double result = totals[0];
    if (reduction == 0)
      result = counted[0] > 0.0 ? result / counted[0] : 0.0;
    out[0] = (float)result;
  }
}

// The row entries' types, for this file's and CrossEntropyGrad.cuh's
// entry macros X(T, SUFFIX, I, ISUFFIX, V, VEC): f32 and bf16 logits, i32
// and i64 targets, one element or a 16-byte pack (V, suffix _vec) a load.
#define LLMC_CE_ROW_TYPES(X)                                                   \
  X(float, f32, int, i32, 1, )                                                 \
  X(float, f32, int, i32, 4, _vec)                                             \
  X(float, f32, long long, i64, 1, )                                           \
  X(float, f32, long long, i64, 4, _vec)                                       \
  X(Bf16, bf16, int, i32, 1, )                                                 \
  X(Bf16, bf16, int, i32, 8, _vec)                                             \
  X(Bf16, bf16, long long, i64, 1, )                                           \
  X(Bf16, bf16, long long, i64, 8, _vec)                                       \
  X(F16, f16, int, i32, 1, )                                                   \
  X(F16, f16, int, i32, 8, _vec)                                               \
  X(F16, f16, long long, i64, 1, )                                             \
  X(F16, f16, long long, i64, 8, _vec)

#define LLMC_CE_ROWS(T, SUFFIX, I, ISUFFIX, V, VEC)                            \
  extern "C" __global__ void __launch_bounds__(256)                            \
      llmc_cross_entropy_rows_##SUFFIX##_##ISUFFIX##VEC(                       \
          const T *logits, const I *targets, double *losses, float *lse,       \
          long long vocab, int hasIgnore, long long ignoreIndex) {             \
    crossEntropyRows<T, I, V>(logits, targets, losses, lse, vocab, hasIgnore,  \
                              ignoreIndex);                                    \
  }

LLMC_CE_ROW_TYPES(LLMC_CE_ROWS)

// The one-block entries' target types, for X(I, ISUFFIX) (here and in
// CrossEntropyGrad.cuh).
#define LLMC_CE_TARGET_TYPES(X)                                                \
  X(int, i32)                                                                  \
  X(long long, i64)

#define LLMC_CE_FINISH(I, ISUFFIX)                                             \
  extern "C" __global__ void llmc_cross_entropy_finish_##ISUFFIX(              \
      const double *losses, const I *targets, float *out, long long count,     \
      int reduction, int hasIgnore, long long ignoreIndex) {                   \
    crossEntropyFinish(losses, targets, out, count, reduction, hasIgnore,      \
                       ignoreIndex);                                           \
  }

LLMC_CE_TARGET_TYPES(LLMC_CE_FINISH)

#endif // LLMC_CUDA_LOSS_CROSSENTROPY_CUH
