//===- DeviceKernelsSource.cpp - CUDA C++ of the non-elementwise kernels --===//
//
// One translation unit, compiled once per process with NVRTC (and cached on
// disk), holding the CUDA kernels of Kernels.def that are not elementwise:
// data movement (broadcast, transpose, slice, concat, gather, embedding),
// reductions, scatter_add, iota, integer compare, and the composites (layer
// norm, rms norm, softmax, lr schedule; cross-entropy is in
// CrossEntropySource.cpp), after deviceKernelPrelude() (the types and
// helpers every hand-written unit starts with) in deviceKernelUnit(); the
// flash attention kernels and rope (RopeKernelsSource.cpp) are units of
// their own.
// DeviceKernels.cpp launches them.
//
// Numerics follow the CPU kernels: every reduction and every composite
// except attention accumulates in double, as the CPU reference does, so an f32 result differs
// from the CPU's by the summation order of doubles only (invisible after the
// rounding to f32, except in rare ties) and by the f64 libm (exp, log, cos)
// of the device. bf16 is raw 16-bit storage with the CPU's rounding.
// Scatter-add accumulates with f32 atomicAdd: its order, hence its last bit,
// varies between runs where indices repeat (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/DeviceKernels.h"

namespace llmc::rt::cuda {

const char *deviceKernelPrelude() {
  return R"cuda(// llmc: the hand-written kernels' types and helpers (runtime/cuda/kernels/common/DeviceKernelsSource.cpp).
#define LLMC_MAX_RANK 8

struct Bf16 {
  unsigned short bits;
};

__device__ __forceinline__ float loadValue(float value) { return value; }
__device__ __forceinline__ float loadValue(Bf16 value) {
  return __uint_as_float(((unsigned int)value.bits) << 16);
}

// An f32 value stored as T: bf16 rounds to nearest even, keeping NaN quiet
// (the CPU's floatToBf16).
template <typename T> __device__ __forceinline__ T storeFloat(float value);
template <> __device__ __forceinline__ float storeFloat<float>(float value) {
  return value;
}
template <> __device__ __forceinline__ Bf16 storeFloat<Bf16>(float value) {
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

// A double value stored as T: rounded to f32 once, then (bf16) as
// storeFloat.
template <typename T> __device__ __forceinline__ T storeValue(double value) {
  return storeFloat<T>((float)value);
}

__device__ __forceinline__ double negativeInfinity() {
  return -__longlong_as_double(0x7ff0000000000000ll);
}

__device__ __forceinline__ long long globalThread() {
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long gridThreads() {
  return (long long)gridDim.x * blockDim.x;
}

__device__ __forceinline__ double warpSum(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}
__device__ __forceinline__ double warpMax(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmax(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ int lane() { return threadIdx.x % 32; }

// V consecutive elements moved by one load (16 bytes when V * sizeof(T) is).
template <typename T, int V> struct __align__(sizeof(T) * V) RowPack {
  T v[V];
};
)cuda";
}

const char *deviceKernelSource() {
  return R"cuda(
// ---- Block reductions ------------------------------------------------------

// The block's (max, sum of exp(x - max)) in every thread, from each
// thread's partial pair: the shuffle tree, then warp 0 over the block's
// warps (blockDim.x a multiple of 32, at most 32 * kMaxWarps). M is the
// max's type (the sums are double); combine merges two pairs. The order of
// the combinations is fixed, so results repeat run to run. Cross-entropy
// (f32 max) and the long-row softmax (double max) use it. Here rather than
// in the prelude: the prelude has no shared memory, so that the CPU
// emulations (test/runtime/cuda/*_for_cpu.py) can take it whole.
template <typename M, int kMaxWarps,
          void (*combine)(M &, double &, M, double)>
__device__ void blockMaxSum(M &m, double &s) {
  __shared__ M maxes[kMaxWarps];
  __shared__ double sums[kMaxWarps];
  for (int offset = 16; offset > 0; offset /= 2) {
    M m2 = __shfl_xor_sync(0xffffffffu, m, offset);
    double s2 = __shfl_xor_sync(0xffffffffu, s, offset);
    combine(m, s, m2, s2);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    maxes[warp] = m;
    sums[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    const int warps = blockDim.x / 32;
    m = lane < warps ? maxes[lane] : (M)negativeInfinity();
    s = lane < warps ? sums[lane] : 0.0;
    for (int offset = 16; offset > 0; offset /= 2) {
      M m2 = __shfl_xor_sync(0xffffffffu, m, offset);
      double s2 = __shfl_xor_sync(0xffffffffu, s, offset);
      combine(m, s, m2, s2);
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

// ---- Data movement --------------------------------------------------------

// out[i] = in[base + sum_d index_d(i) * inStrides[d]] over the result's shape:
// broadcast (stride 0 on repeated dimensions), transpose (permuted strides)
// and slice (a base and scaled strides) are all this copy.
struct StridedMove {
  int rank;
  long long shape[LLMC_MAX_RANK];
  long long inStrides[LLMC_MAX_RANK];
  long long base;
  long long count;
};

// I is the index type: unsigned int when every index fits (the launch
// checks), so the per-dimension divisions are 32-bit ones.
template <typename T, typename I>
__device__ void stridedCopy(const T *in, T *out, const StridedMove &move) {
  const I count = (I)move.count;
  for (I i = (I)globalThread(); i < count; i += (I)gridThreads()) {
    I rest = i;
    I offset = (I)move.base;
    for (int d = move.rank - 1; d >= 0; --d) {
      const I size = (I)move.shape[d];
      const I next = rest / size;
      offset += (rest - next * size) * (I)move.inStrides[d];
      rest = next;
    }
    out[i] = in[offset];
  }
}

// One input of a concat: rows of inRow elements land at column `column` of
// the result's rows of outRow elements.
template <typename T, typename I>
__device__ void concatPart(const T *in, T *out, long long outer,
                           long long inRow, long long outRow,
                           long long column) {
  const I count = (I)(outer * inRow), row = (I)inRow;
  for (I i = (I)globalThread(); i < count; i += (I)gridThreads()) {
    const I r = i / row;
    out[r * (I)outRow + (I)column + (i - r * row)] = in[i];
  }
}

// Gather along a dimension viewed as [outer, size, inner]: the result is
// [outer, count, inner]; an index outside [0, size) gives zeros. Embedding
// is the outer = 1 case.
template <typename T, typename I>
__device__ void gatherRows(const T *in, const I *indices, T *out,
                           long long outer, long long size, long long count,
                           long long inner) {
  long long total = outer * count * inner;
  for (long long i = globalThread(); i < total; i += gridThreads()) {
    long long c = i % inner;
    long long row = i / inner;
    long long j = row % count;
    long long o = row / count;
    long long source = (long long)indices[j];
    if (source < 0 || source >= size) {
      out[i] = (T)0; // zero bits: +0.0 in every float format
    } else {
      out[i] = in[(o * size + source) * inner + c];
    }
  }
}

// Moves by element size. The launch views a move of contiguous runs as one
// of wider elements where sizes and alignment allow (b8, b16: 16 bytes per
// thread), and takes the `32` entries when every index fits in 32 bits.
#define LLMC_COPY_KERNELS(T, SUFFIX)                                           \
  extern "C" __global__ void llmc_strided_copy_##SUFFIX(                       \
      const T *in, T *out, StridedMove move) {                                 \
    stridedCopy<T, long long>(in, out, move);                                  \
  }                                                                            \
  extern "C" __global__ void llmc_strided_copy32_##SUFFIX(                     \
      const T *in, T *out, StridedMove move) {                                 \
    stridedCopy<T, unsigned int>(in, out, move);                               \
  }                                                                            \
  extern "C" __global__ void llmc_concat_part_##SUFFIX(                        \
      const T *in, T *out, long long outer, long long inRow,                   \
      long long outRow, long long column) {                                    \
    concatPart<T, long long>(in, out, outer, inRow, outRow, column);           \
  }                                                                            \
  extern "C" __global__ void llmc_concat_part32_##SUFFIX(                      \
      const T *in, T *out, long long outer, long long inRow,                   \
      long long outRow, long long column) {                                    \
    concatPart<T, unsigned int>(in, out, outer, inRow, outRow, column);        \
  }

#define LLMC_MOVE_KERNELS(T, SUFFIX)                                           \
  LLMC_COPY_KERNELS(T, SUFFIX)                                                 \
  extern "C" __global__ void llmc_gather_##SUFFIX##_i32(                       \
      const T *in, const int *indices, T *out, long long outer,                \
      long long size, long long count, long long inner) {                      \
    gatherRows(in, indices, out, outer, size, count, inner);                   \
  }                                                                            \
  extern "C" __global__ void llmc_gather_##SUFFIX##_i64(                       \
      const T *in, const long long *indices, T *out, long long outer,          \
      long long size, long long count, long long inner) {                      \
    gatherRows(in, indices, out, outer, size, count, inner);                   \
  }

LLMC_MOVE_KERNELS(unsigned char, b1)
LLMC_MOVE_KERNELS(unsigned short, b2)
LLMC_MOVE_KERNELS(unsigned int, b4)
LLMC_MOVE_KERNELS(unsigned long long, b8)
LLMC_COPY_KERNELS(uint4, b16)

// ---- Scatter-add, iota, integer compare -----------------------------------

// result (already a copy of dest, in f32) [outer, size, inner] += updates
// [outer, count, inner] at the indexed rows; indices outside [0, size) are
// skipped. f32 atomics: the order of colliding adds is not fixed. bf16
// updates are added to an f32 copy of a bf16 dest (widen, scatter, narrow:
// the CPU's f32 accumulation with one rounding at the end).
template <typename U, typename I>
__device__ void scatterAdd(float *out, const I *indices, const U *updates,
                           long long outer, long long size, long long count,
                           long long inner) {
  long long total = outer * count * inner;
  for (long long i = globalThread(); i < total; i += gridThreads()) {
    long long c = i % inner;
    long long row = i / inner;
    long long j = row % count;
    long long o = row / count;
    long long target = (long long)indices[j];
    if (target < 0 || target >= size)
      continue;
    atomicAdd(&out[(o * size + target) * inner + c], loadValue(updates[i]));
  }
}
#define LLMC_SCATTER_ADD_KERNEL(U, NAME, I, INDEX)                             \
  extern "C" __global__ void llmc_scatter_add_##NAME##_##INDEX(                \
      float *out, const I *indices, const U *updates, long long outer,         \
      long long size, long long count, long long inner) {                      \
    scatterAdd(out, indices, updates, outer, size, count, inner);              \
  }
LLMC_SCATTER_ADD_KERNEL(float, f32, int, i32)
LLMC_SCATTER_ADD_KERNEL(float, f32, long long, i64)
LLMC_SCATTER_ADD_KERNEL(Bf16, f32_bf16, int, i32)
LLMC_SCATTER_ADD_KERNEL(Bf16, f32_bf16, long long, i64)

extern "C" __global__ void llmc_widen_bf16_f32(const Bf16 *in, float *out,
                                               long long count) {
  for (long long i = globalThread(); i < count; i += gridThreads())
    out[i] = loadValue(in[i]);
}
extern "C" __global__ void llmc_narrow_f32_bf16(const float *in, Bf16 *out,
                                                long long count) {
  for (long long i = globalThread(); i < count; i += gridThreads())
    out[i] = storeValue<Bf16>((double)in[i]);
}

// out[i] = the index along the iota dimension, viewed as [outer, size, inner].
#define LLMC_IOTA_KERNEL(T, SUFFIX)                                            \
  extern "C" __global__ void llmc_iota_##SUFFIX(T *out, long long count,       \
                                                long long size,                \
                                                long long inner) {             \
    for (long long i = globalThread(); i < count; i += gridThreads()) {        \
      long long position = (i / inner) % size;                                 \
      out[i] = (T)position;                                                    \
    }                                                                          \
  }
LLMC_IOTA_KERNEL(float, f32)
LLMC_IOTA_KERNEL(int, i32)
LLMC_IOTA_KERNEL(long long, i64)
extern "C" __global__ void llmc_iota_bf16(Bf16 *out, long long count,
                                          long long size, long long inner) {
  for (long long i = globalThread(); i < count; i += gridThreads()) {
    long long position = (i / inner) % size;
    out[i] = storeValue<Bf16>((double)position);
  }
}

// Direction: eq=0 ne=1 lt=2 le=3 gt=4 ge=5; the result is i1 (one byte).
#define LLMC_COMPARE_KERNEL(T, SUFFIX)                                         \
  extern "C" __global__ void llmc_compare_##SUFFIX(                            \
      const T *lhs, const T *rhs, unsigned char *out, long long count,         \
      int direction) {                                                         \
    for (long long i = globalThread(); i < count; i += gridThreads()) {        \
      T a = lhs[i];                                                            \
      T b = rhs[i];                                                            \
      bool result;                                                             \
      switch (direction) {                                                     \
      case 0: result = a == b; break;                                          \
      case 1: result = a != b; break;                                          \
      case 2: result = a < b; break;                                           \
      case 3: result = a <= b; break;                                          \
      case 4: result = a > b; break;                                           \
      default: result = a >= b; break;                                         \
      }                                                                        \
      out[i] = result ? 1 : 0;                                                 \
    }                                                                          \
  }
LLMC_COMPARE_KERNEL(int, i32)
LLMC_COMPARE_KERNEL(long long, i64)

// ---- Reductions ------------------------------------------------------------

// Result element o (row-major over the kept dimensions) folds the input
// elements base(o) + offset(r) for r over the reduced dimensions. One block
// per result element; each thread folds a strided share in double (as the
// CPU), then the block combines the shares.
struct ReducePlan {
  int keptRank;
  long long keptSizes[LLMC_MAX_RANK];
  long long keptStrides[LLMC_MAX_RANK];
  int reducedRank;
  long long reducedSizes[LLMC_MAX_RANK];
  long long reducedStrides[LLMC_MAX_RANK];
  long long reduceCount;
  long long outputCount;
};

__device__ __forceinline__ long long decompose(long long index, int rank,
                                               const long long *sizes,
                                               const long long *strides) {
  long long offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (index % sizes[d]) * strides[d];
    index /= sizes[d];
  }
  return offset;
}

// kind: 0 sum, 1 max, 2 mean. Max keeps NaN (the CPU's maxPropagatingNan).
__device__ __forceinline__ double combine(double a, double b, int kind) {
  return kind == 1 ? ((isnan(a) || a >= b) ? a : b) : a + b;
}

// Folds the block's `acc` values in a fixed tree order (so a result is the
// same from run to run); every thread must call it. Returns thread 0's total.
__device__ double blockCombine(double *shares, double acc, int kind) {
  shares[threadIdx.x] = acc;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      shares[threadIdx.x] =
          combine(shares[threadIdx.x], shares[threadIdx.x + half], kind);
    __syncthreads();
  }
  return shares[0];
}

template <typename In, typename Out>
__device__ void reduce(const In *in, Out *out, ReducePlan plan, int kind) {
  __shared__ double shares[256];
  for (long long o = blockIdx.x; o < plan.outputCount; o += gridDim.x) {
    long long base =
        decompose(o, plan.keptRank, plan.keptSizes, plan.keptStrides);
    double acc = kind == 1 ? negativeInfinity() : 0.0;
    for (long long r = threadIdx.x; r < plan.reduceCount; r += blockDim.x) {
      long long offset = base + decompose(r, plan.reducedRank,
                                          plan.reducedSizes,
                                          plan.reducedStrides);
      acc = combine(acc, (double)loadValue(in[offset]), kind);
    }
    double total = blockCombine(shares, acc, kind);
    if (threadIdx.x == 0) {
      double result = total;
      if (kind == 2)
        result /= (double)plan.reduceCount;
      out[o] = storeValue<Out>(result);
    }
    __syncthreads();
  }
}

// Few outputs, long reductions (a gradient's sum of squares): pass 1 cuts
// each output's reduction into `chunks` contiguous ranges, one block each,
// and writes one double per block; pass 2 folds an output's partials in
// chunk order. Both passes fix the order of every addition, so the result is
// the same from run to run.
template <typename In>
__device__ void reducePartial(const In *in, double *partials, ReducePlan plan,
                              int kind, long long chunks) {
  __shared__ double shares[256];
  long long o = blockIdx.x / chunks, c = blockIdx.x % chunks;
  long long length = (plan.reduceCount + chunks - 1) / chunks;
  long long begin = c * length;
  long long end = min(plan.reduceCount, begin + length);
  long long base = decompose(o, plan.keptRank, plan.keptSizes, plan.keptStrides);
  double acc = kind == 1 ? negativeInfinity() : 0.0;
  for (long long r = begin + threadIdx.x; r < end; r += blockDim.x) {
    long long offset =
        base + decompose(r, plan.reducedRank, plan.reducedSizes,
                         plan.reducedStrides);
    acc = combine(acc, (double)loadValue(in[offset]), kind);
  }
  double total = blockCombine(shares, acc, kind);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = total;
}

template <typename Out>
__device__ void reduceFinish(const double *partials, Out *out,
                             long long chunks, long long count, int kind) {
  __shared__ double shares[256];
  const double *mine = partials + blockIdx.x * chunks;
  double acc = kind == 1 ? negativeInfinity() : 0.0;
  for (long long c = threadIdx.x; c < chunks; c += blockDim.x)
    acc = combine(acc, mine[c], kind);
  double total = blockCombine(shares, acc, kind);
  if (threadIdx.x == 0) {
    double result = total;
    if (kind == 2)
      result /= (double)count;
    out[blockIdx.x] = storeValue<Out>(result);
  }
}

extern "C" __global__ void llmc_reduce_partial_f32(const float *in,
                                                   double *partials,
                                                   ReducePlan plan, int kind,
                                                   long long chunks) {
  reducePartial(in, partials, plan, kind, chunks);
}
extern "C" __global__ void llmc_reduce_partial_bf16(const Bf16 *in,
                                                    double *partials,
                                                    ReducePlan plan, int kind,
                                                    long long chunks) {
  reducePartial(in, partials, plan, kind, chunks);
}
extern "C" __global__ void llmc_reduce_finish_f32(const double *partials,
                                                  float *out, long long chunks,
                                                  long long count, int kind) {
  reduceFinish(partials, out, chunks, count, kind);
}
extern "C" __global__ void llmc_reduce_finish_bf16(const double *partials,
                                                   Bf16 *out, long long chunks,
                                                   long long count, int kind) {
  reduceFinish(partials, out, chunks, count, kind);
}

extern "C" __global__ void llmc_reduce_f32_f32(const float *in, float *out,
                                               ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_bf16_f32(const Bf16 *in, float *out,
                                                ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_f32_bf16(const float *in, Bf16 *out,
                                                ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_bf16_bf16(const Bf16 *in, Bf16 *out,
                                                 ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}

// ---- Row composites: one warp per row, double accumulation ----------------

__device__ __forceinline__ long long warpRow() {
  return ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
}

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

// Softmax along a dimension viewed as [outer, length, inner]: row r is
// elements offset + s * inner.
// U is the result type: T, or f32 for bf16 input (a widening cast folded
// into the softmax by llmc-fuse).
template <typename T, typename U = T>
__device__ void softmax(const T *x, U *y, long long rows, long long length,
                        long long inner) {
  long long row = warpRow();
  if (row >= rows)
    return;
  long long offset = (row / inner) * length * inner + row % inner;
  double max = negativeInfinity();
  for (long long s = lane(); s < length; s += 32)
    max = fmax(max, (double)loadValue(x[offset + s * inner]));
  max = warpMax(max);
  double sum = 0.0;
  for (long long s = lane(); s < length; s += 32)
    sum += exp((double)loadValue(x[offset + s * inner]) - max);
  sum = warpSum(sum);
  for (long long s = lane(); s < length; s += 32)
    y[offset + s * inner] =
        storeValue<U>(exp((double)loadValue(x[offset + s * inner]) - max) / sum);
}

#define LLMC_COMPOSITE_KERNELS(T, SUFFIX)                                      \
  extern "C" __global__ void llmc_softmax_##SUFFIX(                            \
      const T *x, T *y, long long rows, long long length, long long inner) {   \
    softmax(x, y, rows, length, inner);                                        \
  }

LLMC_COMPOSITE_KERNELS(float, f32)
LLMC_COMPOSITE_KERNELS(Bf16, bf16)
extern "C" __global__ void llmc_softmax_bf16_f32(const Bf16 *x, float *y,
                                                 long long rows,
                                                 long long length,
                                                 long long inner) {
  softmax<Bf16, float>(x, y, rows, length, inner);
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

// The learning rate at step t (a scalar): linear warmup to peak, then
// cosine (0), linear (1) or constant (2) decay to min at `total`; in double
// as the CPU.
template <typename T>
__device__ void lrSchedule(const T *step, T *out, int kind, long long warmup,
                           long long total, double peak, double minimum) {
  double t = (double)loadValue(step[0]);
  double rate;
  if (warmup > 0 && t <= (double)warmup) {
    rate = peak * t / (double)warmup;
  } else {
    double progress = (t - (double)warmup) / (double)(total - warmup);
    progress = fmin(fmax(progress, 0.0), 1.0);
    if (kind == 0)
      rate = minimum + (peak - minimum) * 0.5 *
                           (1.0 + cos(3.14159265358979323846 * progress));
    else if (kind == 1)
      rate = peak - (peak - minimum) * progress;
    else
      rate = peak;
  }
  out[0] = storeValue<T>(rate);
}
extern "C" __global__ void llmc_lr_schedule_f32(const float *step, float *out,
                                                int kind, long long warmup,
                                                long long total, double peak,
                                                double minimum) {
  lrSchedule(step, out, kind, warmup, total, peak, minimum);
}
extern "C" __global__ void llmc_lr_schedule_bf16(const Bf16 *step, Bf16 *out,
                                                 int kind, long long warmup,
                                                 long long total, double peak,
                                                 double minimum) {
  lrSchedule(step, out, kind, warmup, total, peak, minimum);
}
)cuda";
}

} // namespace llmc::rt::cuda
