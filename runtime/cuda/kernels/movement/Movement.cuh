//===- Movement.cuh - strided copies, concat, gather, scatter_add, iota ---===//
//
// The data-movement kernels: broadcast, transpose and slice as one strided
// copy, concat by parts, gather and embedding (by element size: any dtype),
// scatter_add (f32 atomics; bf16 through an f32 copy: widen, scatter, narrow)
// and iota. Launched by movement/MovementLaunch.cpp.
// Scatter-add accumulates with f32 atomicAdd: its order, hence its last bit,
// varies between runs where indices repeat (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_MOVEMENT_MOVEMENT_CUH
#define LLMC_CUDA_MOVEMENT_MOVEMENT_CUH

#include "common/Prelude.cuh"

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

// A batch of row-major [rows, cols] matrices transposed to [cols, rows]
// through a 32 x 32 tile in shared memory, so that both the reads and the
// writes of a warp are 32 consecutive elements (the strided copy above reads
// a transpose's input 1 element per row). 256 threads: 8 rows of 32; blocks
// (cols / 32, rows / 32, batches), the batch grid-strided.
constexpr int kTransposeTile = 32;
template <typename T>
__device__ void tiledTranspose(const T *in, T *out, long long batch,
                               long long rows, long long cols) {
  __shared__ T tile[kTransposeTile][kTransposeTile + 1]; // +1: no bank clash
  const int tx = threadIdx.x % kTransposeTile, ty = threadIdx.x / kTransposeTile;
  const long long c0 = (long long)blockIdx.x * kTransposeTile;
  const long long r0 = (long long)blockIdx.y * kTransposeTile;
  for (long long b = blockIdx.z; b < batch; b += gridDim.z) {
    const T *src = in + b * rows * cols;
    T *dst = out + b * rows * cols;
    for (int i = ty; i < kTransposeTile; i += 8) {
      const long long r = r0 + i, c = c0 + tx;
      if (r < rows && c < cols)
        tile[i][tx] = src[r * cols + c];
    }
    __syncthreads();
    for (int i = ty; i < kTransposeTile; i += 8) {
      const long long c = c0 + i, r = r0 + tx;
      if (c < cols && r < rows)
        dst[c * rows + r] = tile[tx][i];
    }
    __syncthreads();
  }
}

// The 1-byte case (FP8 codes) of the tiled transpose, where rows and cols
// are multiples of 4 and both pointers 4-byte aligned: a 64 x 64 tile read
// and written as 4-byte words (16 words of a row per 16 threads, 16 rows at
// a time), since one byte per thread left the 32 x 32 kernel at a sixth of
// the memory bandwidth on the H200 (docs/precision.md, "Measured"). A
// result word is 4 consecutive rows of one input column, gathered from the
// tile; each row of the tile is padded by a word so that the gathers of a
// warp spread over the banks. Blocks (cols / 64, rows / 64, batches).
constexpr int kByteTile = 64;
__device__ void tiledTransposeBytes(const unsigned *in, unsigned *out,
                                    long long batch, long long rows,
                                    long long cols) {
  __shared__ unsigned char tile[kByteTile][kByteTile + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long c0 = (long long)blockIdx.x * kByteTile;
  const long long r0 = (long long)blockIdx.y * kByteTile;
  const long long rowWords = cols / 4, resultRowWords = rows / 4;
  for (long long b = blockIdx.z; b < batch; b += gridDim.z) {
    const unsigned *src = in + b * rows * rowWords;
    unsigned *dst = out + b * cols * resultRowWords;
    for (int i = ty; i < kByteTile; i += 16) {
      const long long r = r0 + i, w = c0 / 4 + tx;
      if (r < rows && w < rowWords)
        *(unsigned *)&tile[i][4 * tx] = src[r * rowWords + w];
    }
    __syncthreads();
    for (int i = ty; i < kByteTile; i += 16) {
      const long long c = c0 + i, w = r0 / 4 + tx;
      if (c < cols && w < resultRowWords)
        dst[c * resultRowWords + w] =
            (unsigned)tile[4 * tx][i] | (unsigned)tile[4 * tx + 1][i] << 8 |
            (unsigned)tile[4 * tx + 2][i] << 16 |
            (unsigned)tile[4 * tx + 3][i] << 24;
    }
    __syncthreads();
  }
}

extern "C" __global__ void llmc_transpose_bytes(const unsigned *in,
                                                unsigned *out, long long batch,
                                                long long rows,
                                                long long cols) {
  tiledTransposeBytes(in, out, batch, rows, cols);
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
  extern "C" __global__ void llmc_transpose_tiled_##SUFFIX(                   \
      const T *in, T *out, long long batch, long long rows, long long cols) {  \
    tiledTranspose<T>(in, out, batch, rows, cols);                             \
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
LLMC_SCATTER_ADD_KERNEL(F16, f32_f16, int, i32)
LLMC_SCATTER_ADD_KERNEL(F16, f32_f16, long long, i64)

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
// (f16's widening is init/Init.cuh's llmc_widen_f16_f32, same unit.)
extern "C" __global__ void llmc_narrow_f32_f16(const float *in, F16 *out,
                                               long long count) {
  for (long long i = globalThread(); i < count; i += gridThreads())
    out[i] = storeValue<F16>((double)in[i]);
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
extern "C" __global__ void llmc_iota_f16(F16 *out, long long count,
                                         long long size, long long inner) {
  for (long long i = globalThread(); i < count; i += gridThreads()) {
    long long position = (i / inner) % size;
    out[i] = storeValue<F16>((double)position);
  }
}

#endif // LLMC_CUDA_MOVEMENT_MOVEMENT_CUH
