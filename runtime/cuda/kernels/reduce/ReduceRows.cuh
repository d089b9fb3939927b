//===- ReduceRows.cuh - the fast row and column reductions ----------------===//
//
// The two reduction shapes of a training step that carry the bytes, as
// CUDA C++ on the general reductions (Reduce.cuh, whose
// helpers they use: Bf16, loadValue, storeValue, combine,
// negativeInfinity): rows (the reduced elements are one contiguous run per
// result: per-row statistics) and columns ([outer, length, inner] reduced
// over the middle, `inner` contiguous: bias and norm-parameter gradients,
// the position-embedding gradient). Everything else runs the general
// kernels of Reduce.cuh. ReduceLaunch.cpp decides the path
// from the shapes (planReduceLaunch) and launches.
//
// Numerics as the general kernels and the CPU: every element is widened to
// double, folded in double in an order fixed by the shape alone (never by
// the device or the timing), and rounded once to the result type; a mean
// divides the double sum by the count. No atomics: a result is the same
// from run to run.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_REDUCE_REDUCEROWS_CUH
#define LLMC_CUDA_REDUCE_REDUCEROWS_CUH

#include "reduce/Reduce.cuh"

// ---- Fast reductions: rows and columns -------------------------------------

// VEC consecutive elements as floats: one 16-byte load for VEC = 4 f32 or
// VEC = 8 bf16 or f16 (the caller guarantees the alignment), else one
// element.
template <int VEC>
__device__ __forceinline__ void loadVector(const float *p, float (&v)[VEC]) {
  if constexpr (VEC == 4) {
    float4 q = *reinterpret_cast<const float4 *>(p);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
  } else {
    v[0] = p[0];
  }
}
template <int VEC>
__device__ __forceinline__ void loadVector(const Bf16 *p, float (&v)[VEC]) {
  if constexpr (VEC == 8) {
    uint4 q = *reinterpret_cast<const uint4 *>(p);
    unsigned int words[4] = {q.x, q.y, q.z, q.w};
    // Little-endian: the low half of each word is the earlier element.
    for (int w = 0; w < 4; ++w) {
      v[2 * w] = __uint_as_float(words[w] << 16);
      v[2 * w + 1] = __uint_as_float(words[w] & 0xffff0000u);
    }
  } else {
    v[0] = loadValue(p[0]);
  }
}
template <int VEC>
__device__ __forceinline__ void loadVector(const F16 *p, float (&v)[VEC]) {
  if constexpr (VEC == 8) {
    RowPack<F16, 8> q = *reinterpret_cast<const RowPack<F16, 8> *>(p);
    for (int j = 0; j < 8; ++j)
      v[j] = loadValue(q.v[j]);
  } else {
    v[0] = loadValue(p[0]);
  }
}

__device__ __forceinline__ double reduceIdentity(int kind) {
  return kind == 1 ? negativeInfinity() : 0.0;
}

// kind 2 (mean) divides the double sum by the count, as the CPU.
template <typename Out>
__device__ __forceinline__ Out reduceResult(double total, long long count,
                                            int kind) {
  return storeValue<Out>(kind == 2 ? total / (double)count : total);
}

constexpr int kReduceWarps = 8; // 256 threads per block
// Independent loads each thread issues before folding them: enough bytes in
// flight to cover the memory latency at full occupancy.
constexpr int kReduceBatch = 4;

// Rows: `rows` results, each the fold of `length` contiguous elements.
// One warp per row: lane l folds elements l*VEC .. l*VEC+VEC-1, then every
// 32*VEC-th run after them, in order; a butterfly of shuffles combines the
// lanes (a + b == b + a exactly, so every lane ends with the same value).
// VEC > 1 needs length % VEC == 0 and a 16-byte aligned input.
template <typename In, typename Out, int VEC>
__device__ void reduceRows(const In *in, Out *out, long long rows,
                           long long length, int kind) {
  int lane = threadIdx.x & 31;
  long long firstRow = (long long)blockIdx.x * kReduceWarps + (threadIdx.x >> 5);
  long long rowStep = (long long)gridDim.x * kReduceWarps;
  constexpr long long kStride = 32 * VEC;
  for (long long row = firstRow; row < rows; row += rowStep) {
    const In *p = in + row * length;
    double acc = reduceIdentity(kind);
    for (long long i = (long long)lane * VEC; i < length;
         i += kReduceBatch * kStride) {
      // kReduceBatch loads in flight, then folded in index order.
      float v[kReduceBatch][VEC];
      for (int b = 0; b < kReduceBatch; ++b)
        if (i + b * kStride < length)
          loadVector<VEC>(p + i + b * kStride, v[b]);
      for (int b = 0; b < kReduceBatch; ++b)
        if (i + b * kStride < length)
          for (int j = 0; j < VEC; ++j)
            acc = combine(acc, (double)v[b][j], kind);
    }
    for (int offset = 16; offset > 0; offset /= 2)
      acc = combine(acc, __shfl_xor_sync(0xffffffffu, acc, offset), kind);
    if (lane == 0)
      out[row] = reduceResult<Out>(acc, length, kind);
  }
}

// Columns, pass 1: the input is [outer, length, inner]; result (a, n) folds
// in[a, r, n] over r. Block (tile, chunk) takes 32*VEC consecutive columns
// of one a (lane l owns columns l*VEC .. l*VEC+VEC-1, so a warp reads
// 32*VEC contiguous elements of a row) and the rows
// [chunk*rowsPerChunk, +rowsPerChunk): warp w folds rows w, w+8, ... of
// the chunk in order, then the 8 warps' sums are folded in warp order. With
// one chunk the result is written (rounded once); otherwise the chunk's
// double goes to partials[chunk][a][n] for the finish kernel. The order of
// the additions depends on the shape only (rowsPerChunk is chosen from it),
// not on VEC or the grid. VEC > 1 needs inner % VEC == 0 and a 16-byte
// aligned input.
template <typename In, typename Out, int VEC>
__device__ void reduceColumns(const In *in, double *partials, Out *out,
                              long long outer, long long length,
                              long long inner, long long rowsPerChunk,
                              long long chunks, int kind) {
  __shared__ double shares[kReduceWarps][32 * VEC];
  constexpr long long kTile = 32 * VEC;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  long long tilesPerOuter = (inner + kTile - 1) / kTile;
  long long a = blockIdx.x / tilesPerOuter;
  long long firstColumn = (blockIdx.x % tilesPerOuter) * kTile;
  long long column = firstColumn + (long long)lane * VEC;
  long long chunk = blockIdx.y;
  long long rowBegin = chunk * rowsPerChunk;
  long long rowEnd = min(length, rowBegin + rowsPerChunk);
  const In *base = in + a * length * inner + column;

  // 1. Each lane folds its columns over the warp's rows of the chunk.
  double acc[VEC];
  for (int j = 0; j < VEC; ++j)
    acc[j] = reduceIdentity(kind);
  if (column < inner) {
    constexpr int kStep = kReduceWarps;
    for (long long r = rowBegin + warp; r < rowEnd; r += kReduceBatch * kStep) {
      // kReduceBatch loads in flight, then folded in row order.
      float v[kReduceBatch][VEC];
      for (int b = 0; b < kReduceBatch; ++b)
        if (r + b * kStep < rowEnd)
          loadVector<VEC>(base + (r + b * kStep) * inner, v[b]);
      for (int b = 0; b < kReduceBatch; ++b)
        if (r + b * kStep < rowEnd)
          for (int j = 0; j < VEC; ++j)
            acc[j] = combine(acc[j], (double)v[b][j], kind);
    }
  }
  for (int j = 0; j < VEC; ++j)
    shares[warp][lane * VEC + j] = acc[j];
  __syncthreads();

  // 2. The warps' sums, in warp order, one column per thread.
  for (int c = threadIdx.x; c < kTile; c += blockDim.x) {
    long long n = firstColumn + c;
    if (n >= inner)
      break;
    double total = shares[0][c];
    for (int w = 1; w < kReduceWarps; ++w)
      total = combine(total, shares[w][c], kind);
    if (chunks == 1)
      out[a * inner + n] = reduceResult<Out>(total, length, kind);
    else
      partials[(chunk * outer + a) * inner + n] = total;
  }
}

// Columns, pass 2: result o of `count` folds partials[c][o] over the chunks
// c in order. Block: 32 results x 8 chunk lanes; chunk lane y folds chunks
// y, y+8, ... in order, then the 8 are folded in order.
template <typename Out>
__device__ void reduceColumnsFinish(const double *partials, Out *out,
                                    long long count, long long chunks,
                                    long long length, int kind) {
  __shared__ double shares[kReduceWarps][32];
  int lane = threadIdx.x & 31, y = threadIdx.x >> 5;
  long long o = (long long)blockIdx.x * 32 + lane;
  double acc = reduceIdentity(kind);
  if (o < count) {
    constexpr int kStep = kReduceWarps;
    for (long long c = y; c < chunks; c += kReduceBatch * kStep) {
      double v[kReduceBatch];
      for (int b = 0; b < kReduceBatch; ++b)
        if (c + b * kStep < chunks)
          v[b] = partials[(c + b * kStep) * count + o];
      for (int b = 0; b < kReduceBatch; ++b)
        if (c + b * kStep < chunks)
          acc = combine(acc, v[b], kind);
    }
  }
  shares[y][lane] = acc;
  __syncthreads();
  if (y == 0 && o < count) {
    double total = shares[0][lane];
    for (int w = 1; w < kReduceWarps; ++w)
      total = combine(total, shares[w][lane], kind);
    out[o] = reduceResult<Out>(total, length, kind);
  }
}

#define LLMC_REDUCE_FAST(IN, OUT, InT, OutT, VECTOR)                           \
  extern "C" __global__ void llmc_reduce_rows_vec_##IN##_##OUT(                \
      const InT *in, OutT *out, long long rows, long long length, int kind) {  \
    reduceRows<InT, OutT, VECTOR>(in, out, rows, length, kind);                \
  }                                                                            \
  extern "C" __global__ void llmc_reduce_rows_##IN##_##OUT(                    \
      const InT *in, OutT *out, long long rows, long long length, int kind) {  \
    reduceRows<InT, OutT, 1>(in, out, rows, length, kind);                     \
  }                                                                            \
  extern "C" __global__ void llmc_reduce_columns_vec_##IN##_##OUT(             \
      const InT *in, double *partials, OutT *out, long long outer,             \
      long long length, long long inner, long long rowsPerChunk,               \
      long long chunks, int kind) {                                            \
    reduceColumns<InT, OutT, VECTOR>(in, partials, out, outer, length, inner,  \
                                     rowsPerChunk, chunks, kind);              \
  }                                                                            \
  extern "C" __global__ void llmc_reduce_columns_##IN##_##OUT(                 \
      const InT *in, double *partials, OutT *out, long long outer,             \
      long long length, long long inner, long long rowsPerChunk,               \
      long long chunks, int kind) {                                            \
    reduceColumns<InT, OutT, 1>(in, partials, out, outer, length, inner,       \
                                rowsPerChunk, chunks, kind);                   \
  }
LLMC_REDUCE_FAST(f32, f32, float, float, 4)
LLMC_REDUCE_FAST(f32, bf16, float, Bf16, 4)
LLMC_REDUCE_FAST(bf16, f32, Bf16, float, 8)
LLMC_REDUCE_FAST(bf16, bf16, Bf16, Bf16, 8)
LLMC_REDUCE_FAST(f32, f16, float, F16, 4)
LLMC_REDUCE_FAST(f16, f32, F16, float, 8)
LLMC_REDUCE_FAST(f16, f16, F16, F16, 8)

extern "C" __global__ void llmc_reduce_columns_finish_f32(
    const double *partials, float *out, long long count, long long chunks,
    long long length, int kind) {
  reduceColumnsFinish(partials, out, count, chunks, length, kind);
}
extern "C" __global__ void llmc_reduce_columns_finish_bf16(
    const double *partials, Bf16 *out, long long count, long long chunks,
    long long length, int kind) {
  reduceColumnsFinish(partials, out, count, chunks, length, kind);
}
extern "C" __global__ void llmc_reduce_columns_finish_f16(
    const double *partials, F16 *out, long long count, long long chunks,
    long long length, int kind) {
  reduceColumnsFinish(partials, out, count, chunks, length, kind);
}
// ---- Sums of squares: the gradient norm's terms (SumSquares) --------------
// A tensor is cut into chunks of kSquaresChunk elements (ReduceKernels.h's
// kSumSquaresChunk), a block of 256 threads each. Every square rounds to f32
// (__fmul_rn: never contracted into the sum; the CPU's float product), then
// the squares fold in double: per thread in a fixed order, across the block
// by blockCombine; a second kernel folds a tensor's chunk sums in chunk
// order and rounds once to f32. Only the order of the double additions
// differs from the CPU's sequential sum (docs/cuda.md, "Numerics").
constexpr long long kSquaresChunk = 4096;

__device__ double chunkSumSquares(const float *x, long long n, long long chunk,
                                  double *shares) {
  const long long begin = chunk * kSquaresChunk;
  const long long count = min(kSquaresChunk, n - begin);
  const float *p = x + begin;
  double acc = 0.0;
  long long vectors = 0;
  if ((reinterpret_cast<unsigned long long>(p) & 15ull) == 0ull) {
    vectors = count / 4;
    const float4 *q = reinterpret_cast<const float4 *>(p);
    for (long long v = threadIdx.x; v < vectors; v += blockDim.x) {
      const float4 w = q[v];
      acc += (double)__fmul_rn(w.x, w.x);
      acc += (double)__fmul_rn(w.y, w.y);
      acc += (double)__fmul_rn(w.z, w.z);
      acc += (double)__fmul_rn(w.w, w.w);
    }
  }
  for (long long i = vectors * 4 + threadIdx.x; i < count; i += blockDim.x) {
    const float v = p[i];
    acc += (double)__fmul_rn(v, v);
  }
  return blockCombine(shares, acc, 0);
}

// Folds `chunks` chunk sums in order (strided per thread, then the block's
// tree) and stores the f32 result.
__device__ void finishSumSquares(const double *partials, long long chunks,
                                 float *out, double *shares) {
  double acc = 0.0;
  for (long long c = threadIdx.x; c < chunks; c += blockDim.x)
    acc += partials[c];
  const double total = blockCombine(shares, acc, 0);
  if (threadIdx.x == 0)
    *out = (float)total;
}

// One tensor: a block per chunk, then one block.
extern "C" __global__ void llmc_sum_squares_partial(const float *x, long long n,
                                                    double *partials) {
  __shared__ double shares[256];
  const double total = chunkSumSquares(x, n, blockIdx.x, shares);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = total;
}
extern "C" __global__ void llmc_sum_squares_finish(const double *partials,
                                                   long long chunks,
                                                   float *out) {
  __shared__ double shares[256];
  finishSumSquares(partials, chunks, out, shares);
}

// Many tensors in one launch (optimizer/MultiTensorLaunch.h): a table of
// entries, one per tensor, built once when the session is created (the
// pointers are fixed places in the arena). Entry t owns the blocks
// [firstChunk, firstChunk + chunks) of the partial kernel, and block t of
// the finish kernel.
struct SumSquaresEntry {
  const float *x;
  float *out;
  long long n;
  long long firstChunk;
  long long chunks;
};

extern "C" __global__ void llmc_sum_squares_multi_partial(
    const SumSquaresEntry *table, int entries, double *partials) {
  __shared__ double shares[256];
  // The tensor of this block: the last entry starting at or before it.
  int lo = 0, hi = entries - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (table[mid].firstChunk <= (long long)blockIdx.x)
      lo = mid;
    else
      hi = mid - 1;
  }
  const SumSquaresEntry entry = table[lo];
  const double total =
      chunkSumSquares(entry.x, entry.n, blockIdx.x - entry.firstChunk, shares);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = total;
}
extern "C" __global__ void llmc_sum_squares_multi_finish(
    const SumSquaresEntry *table, const double *partials) {
  __shared__ double shares[256];
  const SumSquaresEntry entry = table[blockIdx.x];
  finishSumSquares(partials + entry.firstChunk, entry.chunks, entry.out,
                   shares);
}

#endif // LLMC_CUDA_REDUCE_REDUCEROWS_CUH
