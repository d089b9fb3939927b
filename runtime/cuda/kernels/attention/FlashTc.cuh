//===- FlashTc.cuh - bf16 flash attention on tensor cores -----------------===//
//
// The tensor-core forward and backward of llmc.attention and
// llmc.attention_grad, and with a position mask of ring attention's blocks
// (llmc.attention_block and _grad: POSITIONS below), for bf16 operands with
// head dimension 64 or 128,
// beside the scalar kernels (Flash.cuh) in the flash units (they use the
// prelude's Bf16 and FlashLayout.cuh's flashNegativeInfinity and kvHeadOf); AttentionLaunch.cpp launches them and
// keeps the scalar kernels for f32, other head dimensions and unaligned
// operands.
//
// The same three kernels as the scalar path (forward; grad_rows: the row
// statistics and dq; grad_keys: dk and dv), with the same log-sum-exp and
// delta scratch and the same determinism (every output element is summed
// by one thread in a fixed order, no atomics), but the products run on
// mma.sync.m16n8k16 (bf16 operands, f32 accumulation), as FlashAttention-2
// does:
//   - 4 warps per block, each owning 16 rows of the 64-row tile (query rows
//     for forward and grad_rows, key rows for grad_keys);
//   - tiles are copied to shared memory as bf16 with 16-byte loads, rows
//     padded by 8 elements so that the fragment loads of a warp fall in
//     distinct banks;
//   - scores and probabilities live in the accumulator fragments; the
//     probabilities (and dS) are rounded to bf16 to become the A operand of
//     the next product (P·V, dS·K, Pᵀ·dO, dSᵀ·Q); softmax statistics are f32
//     in base-2 units (exp2f of scores pre-scaled by log2 e).
// No header is needed: the MMA is inline PTX (sm_80 and later; other
// architectures compile a trap, and the launcher never selects them there).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ATTENTION_FLASHTC_CUH
#define LLMC_CUDA_ATTENTION_FLASHTC_CUH

#include "common/Prelude.cuh"
#include "attention/FlashLayout.cuh"
#include "attention/FlashTcPtx.cuh"

// ---- Tensor-core flash attention ------------------------------------------
#define LLMC_FLASH_TC_THREADS 128
// Padding of a shared-memory row, in bf16 elements (16 bytes): the 8 rows
// an ldmatrix reads start 4 banks apart, so a warp's loads do not conflict.
#define LLMC_FLASH_TC_PAD 8

// The other side of each kernel's tiles, chosen per head dimension so that
// the accumulators stay in registers (D = 128 holds twice the columns), and
// the dynamic shared memory of each kernel: the row tile(s) it keeps plus
// two buffers of the tiles it streams (the next one is copied with cp.async
// while the current one is multiplied). AttentionLaunch.cpp's
// flashTensorCoreLaunch computes the same bytes for the launch; the kernels
// trap when launched with less.
//
// The sizes of D = 64 may be overridden by defining the LLMC_FLASH_TC_D64_*
// macros below (CudaTest.FlashAttentionTileSweep compiles and times such
// variants); AttentionLaunch.cpp's flashTcTileSizes must give the same.
// The defaults are the sweep's fastest on the H200 (docs/cuda.md): one
// 16-row block per warp and 3 blocks (12 warps) per SM in every kernel.
#ifndef LLMC_FLASH_TC_D64_FORWARD_ROW_BLOCKS
#define LLMC_FLASH_TC_D64_FORWARD_ROW_BLOCKS 1
#endif
#ifndef LLMC_FLASH_TC_D64_FORWARD_KEYS
#define LLMC_FLASH_TC_D64_FORWARD_KEYS 64
#endif
#ifndef LLMC_FLASH_TC_D64_ROWS_ROW_BLOCKS
#define LLMC_FLASH_TC_D64_ROWS_ROW_BLOCKS 1
#endif
#ifndef LLMC_FLASH_TC_D64_ROWS_KEYS
#define LLMC_FLASH_TC_D64_ROWS_KEYS 32
#endif
#ifndef LLMC_FLASH_TC_D64_KEYS_ROW_BLOCKS
#define LLMC_FLASH_TC_D64_KEYS_ROW_BLOCKS 1
#endif
#ifndef LLMC_FLASH_TC_D64_KEYS_QUERIES
#define LLMC_FLASH_TC_D64_KEYS_QUERIES 32
#endif
// The blocks per SM each D = 64 kernel promises (__launch_bounds__): 1 and
// 2 let ptxas use up to 255 registers at 128 threads, 3 up to 168 (12 warps
// per SM instead of 8). D = 128 promises 1 (its accumulators are twice as
// wide).
#ifndef LLMC_FLASH_TC_D64_FORWARD_MIN_BLOCKS
#define LLMC_FLASH_TC_D64_FORWARD_MIN_BLOCKS 3
#endif
#ifndef LLMC_FLASH_TC_D64_ROWS_MIN_BLOCKS
#define LLMC_FLASH_TC_D64_ROWS_MIN_BLOCKS 3
#endif
#ifndef LLMC_FLASH_TC_D64_KEYS_MIN_BLOCKS
#define LLMC_FLASH_TC_D64_KEYS_MIN_BLOCKS 3
#endif
// 1: the kernel keeps the A fragments of its fixed rows (forward: q;
// grad_rows: q and dout; grad_keys: k and v) in registers for the whole
// block instead of reading them with ldmatrix for every product: fewer
// shared-memory reads, more registers (MT x D / 4 per operand).
#ifndef LLMC_FLASH_TC_FORWARD_CACHED
#define LLMC_FLASH_TC_FORWARD_CACHED 0
#endif
#ifndef LLMC_FLASH_TC_ROWS_CACHED
#define LLMC_FLASH_TC_ROWS_CACHED 0
#endif
#ifndef LLMC_FLASH_TC_KEYS_CACHED
#define LLMC_FLASH_TC_KEYS_CACHED 0
#endif
template <int D> struct FlashTcTiles {
  // The forward's 16-row blocks per warp and query rows per block.
  static constexpr int forwardRowBlocks =
      D <= 64 ? LLMC_FLASH_TC_D64_FORWARD_ROW_BLOCKS : 1;
  static constexpr int forwardQueries = 64 * forwardRowBlocks;
  static constexpr int forwardKeys =
      D <= 64 ? LLMC_FLASH_TC_D64_FORWARD_KEYS : 32;
  // grad_rows: 16-row blocks per warp, query rows and keys per tile.
  static constexpr int rowsRowBlocks =
      D <= 64 ? LLMC_FLASH_TC_D64_ROWS_ROW_BLOCKS : 1;
  static constexpr int rowsQueries = 64 * rowsRowBlocks;
  static constexpr int rowsKeys = D <= 64 ? LLMC_FLASH_TC_D64_ROWS_KEYS : 16;
  // grad_keys: 16-row blocks per warp, keys and queries per tile.
  static constexpr int keysRowBlocks =
      D <= 64 ? LLMC_FLASH_TC_D64_KEYS_ROW_BLOCKS : 1;
  static constexpr int keysKeys = 64 * keysRowBlocks;
  static constexpr int keysQueries =
      D <= 64 ? LLMC_FLASH_TC_D64_KEYS_QUERIES : 16;
  // __launch_bounds__'s blocks per SM of each kernel.
  static constexpr int forwardMinBlocks =
      D <= 64 ? LLMC_FLASH_TC_D64_FORWARD_MIN_BLOCKS : 1;
  static constexpr int rowsMinBlocks =
      D <= 64 ? LLMC_FLASH_TC_D64_ROWS_MIN_BLOCKS : 1;
  static constexpr int keysMinBlocks =
      D <= 64 ? LLMC_FLASH_TC_D64_KEYS_MIN_BLOCKS : 1;
  static constexpr int stride = D + LLMC_FLASH_TC_PAD;
  // Bytes of each kernel's tiles.
  static constexpr int forwardQueriesTile = forwardQueries * stride * 2;
  static constexpr int rowsQueriesTile = rowsQueries * stride * 2;
  static constexpr int keysKeysTile = keysKeys * stride * 2;
  static constexpr int forwardKeysTile = forwardKeys * stride * 2;
  static constexpr int rowsKeysTile = rowsKeys * stride * 2;
  static constexpr int keysQueriesTile = keysQueries * stride * 2;
  // q, 2 x (k, v).
  static constexpr int forwardBytes = forwardQueriesTile + 4 * forwardKeysTile;
  // q, dout, 2 x (k, v), delta of the rows.
  static constexpr int rowsBytes =
      2 * rowsQueriesTile + 4 * rowsKeysTile + 4 * rowsQueries;
  // k, v, 2 x (q, dout, lse, delta).
  static constexpr int keysBytes =
      2 * keysKeysTile + 4 * keysQueriesTile + 16 * keysQueries;
};

// The A fragment of the 16x16 block at (row0, col0) of a row-major tile:
// matrices (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15).
template <int STRIDE>
__device__ __forceinline__ void loadFragmentA(unsigned a[4],
                                              const unsigned short *tile,
                                              int row0, int col0) {
  int lane = threadIdx.x % 32;
  loadMatrices(a, tile + (row0 + (lane & 15)) * STRIDE + col0 + (lane >> 4) * 8);
}

// The B fragments of n-blocks n0 and n0 + 8 (b[0..1] and b[2..3]) of
// B[k][n] = tile[n0 + n][k0 + k], k < 16: the tile's rows are B's columns
// (keys for q kᵀ, queries for k qᵀ). Matrices (rows n0.., cols k0..),
// (n0.., k0 + 8..), (n0 + 8.., k0..), (n0 + 8.., k0 + 8..).
template <int STRIDE>
__device__ __forceinline__ void loadFragmentsBRows(unsigned b[4],
                                                   const unsigned short *tile,
                                                   int n0, int k0) {
  int lane = threadIdx.x % 32;
  loadMatrices(b, tile + (n0 + (lane & 7) + (lane >> 4) * 8) * STRIDE + k0 +
                      ((lane >> 3) & 1) * 8);
}

// The B fragments of n-blocks n0 and n0 + 8 (b[0..1] and b[2..3]) of
// B[k][n] = tile[k0 + k][n0 + n], k < 16: the tile's rows are B's rows
// (values for p·v, keys for ds·k, dout for pᵀ·dout, queries for dsᵀ·q),
// read transposed. Matrices (rows k0.., cols n0..), (k0 + 8.., n0..),
// (k0.., n0 + 8..), (k0 + 8.., n0 + 8..).
template <int STRIDE>
__device__ __forceinline__ void loadFragmentsBColumns(unsigned b[4],
                                                      const unsigned short *tile,
                                                      int k0, int n0) {
  int lane = threadIdx.x % 32;
  loadMatricesTransposed(
      b, tile + (k0 + (lane & 15)) * STRIDE + n0 + (lane >> 4) * 8);
}

// The A fragment of the 16x16 block kk of a 16-row accumulator (the
// accumulators of n-blocks 2kk and 2kk + 1), rounded to bf16.
__device__ __forceinline__ void accumulatorAsA(unsigned a[4],
                                               const float low[4],
                                               const float high[4]) {
  a[0] = packBf16(low[0], low[1]);
  a[1] = packBf16(low[2], low[3]);
  a[2] = packBf16(high[0], high[1]);
  a[3] = packBf16(high[2], high[3]);
}

// tile[r][c] = head[(first + r) * rowStride + c] for the ROWS rows of the
// tile (zero past `length`), 16 bytes per copy (the launcher checked that
// every operand and row stride is 16-byte aligned); asynchronous (see
// copyAsync16).
template <int ROWS, int D>
__device__ __forceinline__ void copyTcTile(unsigned short *tile,
                                           const Bf16 *head,
                                           long long rowStride,
                                           long long first,
                                           long long length) {
  constexpr int CHUNKS = D / 8;
  constexpr int STRIDE = D + LLMC_FLASH_TC_PAD;
  static_assert(ROWS * CHUNKS % LLMC_FLASH_TC_THREADS == 0,
                "every thread copies the same number of chunks");
#pragma unroll
  for (int it = 0; it < ROWS * CHUNKS / LLMC_FLASH_TC_THREADS; ++it) {
    int i = threadIdx.x + it * LLMC_FLASH_TC_THREADS;
    int r = i / CHUNKS;
    int c = (i % CHUNKS) * 8;
    long long row = first + r;
    bool valid = row < length;
    copyAsync16(tile + r * STRIDE + c,
                valid ? (const void *)(head + row * rowStride + c)
                      : (const void *)head,
                valid);
  }
}

// acc = 0 for a warp's MT x 16 rows of D columns.
template <int D, int MT>
__device__ __forceinline__ void clearTcAccumulators(float (*acc)[D / 8][4]) {
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int c = 0; c < D / 8; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        acc[m][c][e] = 0.0f;
}

// The max and sum over the 4 lanes of a quad (the threads of one row).
__device__ __forceinline__ float quadMax(float value) {
  value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 1));
  return fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 2));
}
__device__ __forceinline__ float quadSum(float value) {
  value += __shfl_xor_sync(0xffffffffu, value, 1);
  return value + __shfl_xor_sync(0xffffffffu, value, 2);
}

// The A fragments of one warp's MT x 16 rows at row0 of a row-major tile,
// every 16-column block: for a kernel that keeps its fixed row operand in
// registers instead of reading it from shared memory for every product
// (LLMC_FLASH_TC_*_CACHED below).
template <int D, int MT>
__device__ __forceinline__ void loadRowFragments(unsigned (*a)[D / 16][4],
                                                 const unsigned short *rows,
                                                 int row0) {
  constexpr int STRIDE = D + LLMC_FLASH_TC_PAD;
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      loadFragmentA<STRIDE>(a[m][kk], rows, row0 + 16 * m, kk * 16);
}

// s[m][n] = A Bᵀ for one warp's MT x 16 rows: A the (16 MT) x D block at
// row0 of `rows` (or, CACHED, its fragments `cached` from
// loadRowFragments) and B the N x D `columns` tile (tile rows are B's
// columns). Each B fragment feeds MT products.
template <int D, int N, int MT = 1, bool CACHED = false>
__device__ __forceinline__ void multiplyRowsByColumns(
    float (*s)[N / 8][4], const unsigned short *rows, int row0,
    const unsigned short *columns,
    const unsigned (*cached)[D / 16][4] = nullptr) {
  constexpr int STRIDE = D + LLMC_FLASH_TC_PAD;
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int n = 0; n < N / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[m][n][e] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    unsigned a[MT][4];
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      if constexpr (CACHED) {
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a[m][r] = cached[m][kk][r];
      } else {
        loadFragmentA<STRIDE>(a[m], rows, row0 + 16 * m, kk * 16);
      }
    }
#pragma unroll
    for (int n = 0; n < N / 8; n += 2) {
      unsigned b[4];
      loadFragmentsBRows<STRIDE>(b, columns, n * 8, kk * 16);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        mmaBf16(s[m][n], a[m], b[0], b[1]);
        mmaBf16(s[m][n + 1], a[m], b[2], b[3]);
      }
    }
  }
}

// acc[m] += P T for one warp's MT x 16 rows: P the (16 MT) x K accumulator
// `p` (rounded to bf16) and T the K x D `tile` (row-major, its rows are the
// product's k). Each B fragment feeds MT products.
template <int D, int K, int MT = 1>
__device__ __forceinline__ void accumulateProduct(float (*acc)[D / 8][4],
                                                  float (*p)[K / 8][4],
                                                  const unsigned short *tile) {
  constexpr int STRIDE = D + LLMC_FLASH_TC_PAD;
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    unsigned a[MT][4];
#pragma unroll
    for (int m = 0; m < MT; ++m)
      accumulatorAsA(a[m], p[m][2 * kk], p[m][2 * kk + 1]);
#pragma unroll
    for (int c = 0; c < D / 8; c += 2) {
      unsigned b[4];
      loadFragmentsBColumns<STRIDE>(b, tile, kk * 16, c * 8);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        mmaBf16(acc[m][c], a[m], b[0], b[1]);
        mmaBf16(acc[m][c + 1], a[m], b[2], b[3]);
      }
    }
  }
}

// ---- Position masks (ring attention's blocks) ----------------------------
//
// The kernels' POSITIONS variant (the llmc_flash_block_tc_ entries below):
// key s is visible to query t iff keyPositions[s] <= queryPositions[t]
// (i32, the blocks' global positions), in place of the causal index mask
// (causal is 0 there). As the scalar block kernels (FlashBlock.cuh), a tile
// whose keys all come after the rows a warp owns is skipped, and only tiles
// where some key may come after some row evaluate the mask per element.
#define LLMC_FLASH_TC_POSITION_MAX 2147483647
#define LLMC_FLASH_TC_POSITION_MIN (-2147483647 - 1)
constexpr int kTcPositionMin = LLMC_FLASH_TC_POSITION_MIN;

// The smallest and largest of positions[first + r] for r < ROWS and
// first + r < length, in every lane of the calling warp (POSITION_MAX and
// POSITION_MIN when none): each lane reads ROWS / 32 of them, then a
// butterfly over the warp. The whole warp must call it.
template <int ROWS>
__device__ __forceinline__ void warpPositionRange(const int *positions,
                                                  long long first,
                                                  long long length, int &low,
                                                  int &high) {
  int lane = threadIdx.x % 32;
  low = LLMC_FLASH_TC_POSITION_MAX;
  high = LLMC_FLASH_TC_POSITION_MIN;
#pragma unroll
  for (int r = lane; r < ROWS; r += 32) {
    if (first + r < length) {
      int position = positions[first + r];
      low = position < low ? position : low;
      high = position > high ? position : high;
    }
  }
#pragma unroll
  for (int mask = 16; mask > 0; mask /= 2) {
    int otherLow = __shfl_xor_sync(0xffffffffu, low, mask);
    int otherHigh = __shfl_xor_sync(0xffffffffu, high, mask);
    low = otherLow < low ? otherLow : low;
    high = otherHigh > high ? otherHigh : high;
  }
}

// The smallest and largest position of a streamed tile's ROWS rows from
// `first` (POSITIONS; 0 and 0 without).
template <int ROWS, bool POSITIONS>
__device__ __forceinline__ void tcTileRange(const int *positions,
                                            long long first, long long length,
                                            int &low, int &high) {
  low = high = 0;
  if constexpr (POSITIONS)
    warpPositionRange<ROWS>(positions, first, length, low, high);
}

// The positions of the 16 MT rows (query rows, or keys in grad_keys) a warp
// owns from `first`, for POSITIONS (unused without): their smallest and
// largest, and this thread's (block m, half i: rows g and g + 8), which are
// `otherwise` past `length` (POSITION_MIN for a query: it sees nothing;
// POSITION_MAX for a key: nothing sees it).
template <int MT, bool POSITIONS> struct TcWarpPositions {
  int low = 0, high = 0;
  int own[MT][2];
  __device__ __forceinline__ void load(const int *positions, long long first,
                                       long long length, int otherwise) {
    if constexpr (POSITIONS) {
      warpPositionRange<16 * MT>(positions, first, length, low, high);
      int g = (threadIdx.x % 32) / 4;
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          long long row = first + 16 * m + g + 8 * i;
          own[m][i] = row < length ? positions[row] : otherwise;
        }
    }
  }
};

#define LLMC_LOG2E 1.4426950408889634f
#define LLMC_LN2 0.6931471805599453f

// Entry points: llmc_flash_attention_tc_{forward,grad_rows,grad_keys}_
// bf16_d{64,128}, the same parameters as the scalar entries but headDim
// (fixed to D).
#define LLMC_FLASH_TC_KERNELS(D)                                               \
  extern "C" __global__ void __launch_bounds__(                                \
      LLMC_FLASH_TC_THREADS, FlashTcTiles<D>::forwardMinBlocks)                \
      llmc_flash_attention_tc_forward_bf16_d##D(                               \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, Bf16 *out, float *lse,  \
          int heads, int kvHeads, long long seq, long long kvSeq, int causal,  \
          float scale, FlashLayout layout) {                                   \
    flashForwardTc<D>(q, k, v, out, lse, heads, kvHeads, seq, kvSeq, causal,   \
                      scale, layout);                                          \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(                                \
      LLMC_FLASH_TC_THREADS, FlashTcTiles<D>::rowsMinBlocks)                   \
      llmc_flash_attention_tc_grad_rows_bf16_d##D(                             \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, const Bf16 *out,        \
          const Bf16 *dout, const float *forwardLse, Bf16 *dq, float *lse,     \
          float *delta, int heads, int kvHeads, long long seq,                 \
          long long kvSeq, int causal, float scale, FlashLayout layout) {      \
    flashGradRowsTc<D>(q, k, v, out, dout, forwardLse, dq, lse, delta, heads,  \
                       kvHeads, seq, kvSeq, causal, scale, layout);            \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(                                \
      LLMC_FLASH_TC_THREADS, FlashTcTiles<D>::keysMinBlocks)                   \
      llmc_flash_attention_tc_grad_keys_bf16_d##D(                             \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, const Bf16 *dout,       \
          const float *lse, const float *delta, Bf16 *dk, Bf16 *dv, int heads, \
          int kvHeads, long long seq, long long kvSeq, int causal,             \
          float scale, FlashLayout layout) {                                   \
    flashGradKeysTc<D>(q, k, v, dout, lse, delta, dk, dv, heads, kvHeads, seq, \
                       kvSeq, causal, scale, layout);                          \
  }

// The entries are instantiated by the units of one head dimension each
// (units/FlashTcD64.cu, units/FlashTcD128.cu).

// Entry points of ring attention's blocks (AttentionBlock and
// AttentionBlockGrad on tensor cores): llmc_flash_block_tc_{forward,
// grad_rows,grad_keys}_bf16_d{64,128}, the parameters of the scalar block
// entries (FlashBlock.cuh) but headDim. The same kernels with POSITIONS
// (above); grad_rows reads the ring's merged log-sum-exp `givenLse` (never
// recomputes it) and grad_keys reads the same. Instantiated by
// units/FlashBlockTcD64.cu and units/FlashBlockTcD128.cu.
#define LLMC_FLASH_BLOCK_TC_KERNELS(D)                                         \
  extern "C" __global__ void __launch_bounds__(                                \
      LLMC_FLASH_TC_THREADS, FlashTcTiles<D>::forwardMinBlocks)                \
      llmc_flash_block_tc_forward_bf16_d##D(                                   \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, Bf16 *out, float *lse,  \
          const int *queryPositions, const int *keyPositions, int heads,       \
          int kvHeads, long long seq, long long kvSeq, float scale,            \
          FlashLayout layout) {                                                \
    flashForwardTc<D, true>(q, k, v, out, lse, heads, kvHeads, seq, kvSeq, 0,  \
                            scale, layout, queryPositions, keyPositions);      \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(                                \
      LLMC_FLASH_TC_THREADS, FlashTcTiles<D>::rowsMinBlocks)                   \
      llmc_flash_block_tc_grad_rows_bf16_d##D(                                 \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, const Bf16 *out,        \
          const Bf16 *dout, const float *givenLse, Bf16 *dq, float *lse,       \
          float *delta, const int *queryPositions, const int *keyPositions,    \
          int heads, int kvHeads, long long seq, long long kvSeq, float scale, \
          FlashLayout layout) {                                                \
    flashGradRowsTc<D, true>(q, k, v, out, dout, givenLse, dq, lse, delta,     \
                             heads, kvHeads, seq, kvSeq, 0, scale, layout,     \
                             queryPositions, keyPositions);                    \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(                                \
      LLMC_FLASH_TC_THREADS, FlashTcTiles<D>::keysMinBlocks)                   \
      llmc_flash_block_tc_grad_keys_bf16_d##D(                                 \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, const Bf16 *dout,       \
          const float *lse, const float *delta, Bf16 *dk, Bf16 *dv,            \
          const int *queryPositions, const int *keyPositions, int heads,       \
          int kvHeads, long long seq, long long kvSeq, float scale,            \
          FlashLayout layout) {                                                \
    flashGradKeysTc<D, true>(q, k, v, dout, lse, delta, dk, dv, heads,         \
                             kvHeads, seq, kvSeq, 0, scale, layout,            \
                             queryPositions, keyPositions);                    \
  }

#endif // LLMC_CUDA_ATTENTION_FLASHTC_CUH
