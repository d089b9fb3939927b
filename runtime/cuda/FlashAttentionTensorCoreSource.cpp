//===- FlashAttentionTensorCoreSource.cpp - bf16 flash attention on MMA ----===//
//
// The tensor-core forward and backward of llmc.attention and
// llmc.attention_grad for bf16 operands with head dimension 64 or 128,
// appended to the unit after FlashAttentionSource.cpp (they use its Bf16,
// flashNegativeInfinity and kvHeadOf); DeviceKernels.cpp launches them and
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
#include "runtime/cuda/DeviceKernels.h"

namespace llmc::rt::cuda {

const char *flashAttentionTensorCoreSource() {
  return R"cuda(
// ---- Tensor-core flash attention (FlashAttentionTensorCoreSource.cpp) -----
#define LLMC_FLASH_TC_THREADS 128
// Rows of the tile the block's 4 warps own (16 each).
#define LLMC_FLASH_TC_ROWS 64
// Padding of a shared-memory row, in bf16 elements (16 bytes).
#define LLMC_FLASH_TC_PAD 8

// The other side of each kernel's tiles, chosen per head dimension so that
// the four tiles of a kernel stay under the 48 KiB of static shared memory.
template <int D> struct FlashTcTiles {
  static constexpr int forwardKeys = D <= 64 ? 64 : 32;
  static constexpr int rowsKeys = D <= 64 ? 64 : 16;
  static constexpr int keysQueries = D <= 64 ? 64 : 16;
};

#if __CUDA_ARCH__ >= 800
#define LLMC_FLASH_TC_AVAILABLE 1
#else
#define LLMC_FLASH_TC_AVAILABLE 0
#endif

// Two f32 rounded to nearest even into one bf16 pair, `lo` in the low half
// (the element at the lower address or column).
__device__ __forceinline__ unsigned packBf16(float lo, float hi) {
  unsigned result = 0;
#if LLMC_FLASH_TC_AVAILABLE
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(result) : "f"(hi), "f"(lo));
#endif
  return result;
}

// c += a b for a 16x16 bf16 A (row major), a 16x8 bf16 B (column major)
// and a 16x8 f32 C. Fragments (g = lane / 4, t = lane % 4):
//   a[0] = A[g][2t..2t+1],   a[1] = A[g+8][2t..2t+1],
//   a[2] = A[g][2t+8..2t+9], a[3] = A[g+8][2t+8..2t+9];
//   b0 = B[2t..2t+1][g],     b1 = B[2t+8..2t+9][g];
//   c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1].
__device__ __forceinline__ void mmaBf16(float c[4], const unsigned a[4],
                                        unsigned b0, unsigned b1) {
#if LLMC_FLASH_TC_AVAILABLE
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();
#endif
}

// The A fragment of the 16x16 block at (row0, col0) of a row-major tile.
template <int STRIDE>
__device__ __forceinline__ void loadFragmentA(unsigned a[4],
                                              const unsigned short *tile,
                                              int row0, int col0) {
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  const unsigned short *p = tile + (row0 + g) * STRIDE + col0 + 2 * t;
  a[0] = *(const unsigned *)p;
  a[1] = *(const unsigned *)(p + 8 * STRIDE);
  a[2] = *(const unsigned *)(p + 8);
  a[3] = *(const unsigned *)(p + 8 * STRIDE + 8);
}

// The B fragment of B[k][n] = tile[n0 + n][k0 + k]: the tile's rows are
// B's columns (keys for q kᵀ, queries for k qᵀ).
template <int STRIDE>
__device__ __forceinline__ void loadFragmentBRows(unsigned &b0, unsigned &b1,
                                                  const unsigned short *tile,
                                                  int n0, int k0) {
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  const unsigned short *p = tile + (n0 + g) * STRIDE + k0 + 2 * t;
  b0 = *(const unsigned *)p;
  b1 = *(const unsigned *)(p + 8);
}

// The B fragment of B[k][n] = tile[k0 + k][n0 + n]: the tile's rows are
// B's rows (values for p·v, keys for ds·k); two 16-bit loads per register.
template <int STRIDE>
__device__ __forceinline__ void loadFragmentBColumns(unsigned &b0,
                                                     unsigned &b1,
                                                     const unsigned short *tile,
                                                     int k0, int n0) {
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  const unsigned short *p = tile + (k0 + 2 * t) * STRIDE + n0 + g;
  b0 = (unsigned)p[0] | ((unsigned)p[STRIDE] << 16);
  b1 = (unsigned)p[8 * STRIDE] | ((unsigned)p[9 * STRIDE] << 16);
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

// tile[r][c] = head[(first + r) * D + c] for the ROWS rows of the tile (zero
// past `length`), 16 bytes per thread-iteration (the launcher checked that
// every operand is 16-byte aligned).
template <int ROWS, int D>
__device__ void loadTcTile(unsigned short *tile, const Bf16 *head,
                           long long first, long long length) {
  constexpr int CHUNKS = D / 8;
  constexpr int STRIDE = D + LLMC_FLASH_TC_PAD;
  for (int i = threadIdx.x; i < ROWS * CHUNKS; i += LLMC_FLASH_TC_THREADS) {
    int r = i / CHUNKS;
    int c = (i % CHUNKS) * 8;
    long long row = first + r;
    uint4 value = make_uint4(0u, 0u, 0u, 0u);
    if (row < length)
      value = *(const uint4 *)(head + row * D + c);
    *(uint4 *)(tile + r * STRIDE + c) = value;
  }
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

#define LLMC_LOG2E 1.4426950408889634f
#define LLMC_LN2 0.6931471805599453f

// ---- Forward ----------------------------------------------------------------
//
// One block per (batch·head, tile of 64 queries), the last tiles first. Per
// key tile: 1. s = q kᵀ (per warp 16 x BK), 2. masking and the online
// softmax (each thread holds rows g and g + 8; the running sums stay
// per-thread partial sums until the end, the max is reduced per quad),
// 3. acc += p v with p rounded to bf16.
template <int D>
__device__ void flashForwardTc(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                               Bf16 *out, int heads, int kvHeads,
                               long long seq, long long kvSeq, int causal,
                               float scale) {
  constexpr int BQ = LLMC_FLASH_TC_ROWS;
  constexpr int BK = FlashTcTiles<D>::forwardKeys;
  constexpr int STRIDE = D + LLMC_FLASH_TC_PAD;
  __shared__ __align__(16) unsigned short queryTile[BQ * STRIDE];
  __shared__ __align__(16) unsigned short keyTile[BK * STRIDE];
  __shared__ __align__(16) unsigned short valueTile[BK * STRIDE];

  long long queryTiles = (seq + BQ - 1) / BQ;
  long long head = blockIdx.x / queryTiles;
  long long firstQuery = (queryTiles - 1 - blockIdx.x % queryTiles) * BQ;
  long long kvHead = kvHeadOf(head, heads, kvHeads);
  const Bf16 *kHead = k + kvHead * kvSeq * D;
  const Bf16 *vHead = v + kvHead * kvSeq * D;
  int warpRow = (threadIdx.x / 32) * 16;
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  long long rowQuery[2] = {firstQuery + warpRow + g,
                           firstQuery + warpRow + g + 8};
  float scale2 = scale * LLMC_LOG2E;

  loadTcTile<BQ, D>(queryTile, q + head * seq * D, firstQuery, seq);
  float runningMax[2] = {flashNegativeInfinity(), flashNegativeInfinity()};
  float runningSum[2] = {0.0f, 0.0f};
  float acc[D / 8][4];
#pragma unroll
  for (int c = 0; c < D / 8; ++c)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc[c][e] = 0.0f;

  long long keyEnd = causal ? min(kvSeq, firstQuery + BQ) : kvSeq;
  for (long long firstKey = 0; firstKey < keyEnd; firstKey += BK) {
    __syncthreads(); // the previous tiles are read
    loadTcTile<BK, D>(keyTile, kHead, firstKey, kvSeq);
    loadTcTile<BK, D>(valueTile, vHead, firstKey, kvSeq);
    __syncthreads();

    // 1. s = q kᵀ.
    float s[BK / 8][4];
#pragma unroll
    for (int n = 0; n < BK / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[n][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      unsigned a[4];
      loadFragmentA<STRIDE>(a, queryTile, warpRow, kk * 16);
#pragma unroll
      for (int n = 0; n < BK / 8; ++n) {
        unsigned b0, b1;
        loadFragmentBRows<STRIDE>(b0, b1, keyTile, n * 8, kk * 16);
        mmaBf16(s[n], a, b0, b1);
      }
    }

    // 2. Scale to base-2 units; mask keys past the end and, causal, after
    //    the row (only tiles that reach them); the online softmax.
    bool edge = firstKey + BK > kvSeq ||
                (causal && firstKey + BK - 1 > firstQuery + warpRow);
#pragma unroll
    for (int n = 0; n < BK / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float score = s[n][e] * scale2;
        if (edge) {
          long long key = firstKey + n * 8 + 2 * t + (e & 1);
          long long query = rowQuery[e / 2];
          if (key >= kvSeq || (causal && key > query))
            score = flashNegativeInfinity();
        }
        s[n][e] = score;
      }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float tileMax = flashNegativeInfinity();
#pragma unroll
      for (int n = 0; n < BK / 8; ++n)
        tileMax = fmaxf(tileMax, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
      tileMax = quadMax(tileMax);
      // A row that has seen no visible key keeps a max of -inf:
      // exponentials are then taken against 0, giving 0, not NaN.
      float newMax = fmaxf(runningMax[i], tileMax);
      float reference = newMax == flashNegativeInfinity() ? 0.0f : newMax;
      float correction = exp2f(runningMax[i] - reference);
      float tileSum = 0.0f;
#pragma unroll
      for (int n = 0; n < BK / 8; ++n)
#pragma unroll
        for (int e = 2 * i; e < 2 * i + 2; ++e) {
          float p = exp2f(s[n][e] - reference);
          s[n][e] = p;
          tileSum += p;
        }
      runningSum[i] = runningSum[i] * correction + tileSum;
      runningMax[i] = newMax;
#pragma unroll
      for (int c = 0; c < D / 8; ++c) {
        acc[c][2 * i] *= correction;
        acc[c][2 * i + 1] *= correction;
      }
    }

    // 3. acc += p v.
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned a[4];
      accumulatorAsA(a, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
      for (int c = 0; c < D / 8; ++c) {
        unsigned b0, b1;
        loadFragmentBColumns<STRIDE>(b0, b1, valueTile, kk * 16, c * 8);
        mmaBf16(acc[c], a, b0, b1);
      }
    }
  }

  // Normalize; no visible key (S = 0) gives a zero row, as on the CPU.
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float sum = quadSum(runningSum[i]);
    long long query = rowQuery[i];
    if (query >= seq)
      continue;
    float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
    unsigned *outRow = (unsigned *)(out + (head * seq + query) * D);
#pragma unroll
    for (int c = 0; c < D / 8; ++c)
      outRow[(c * 8 + 2 * t) / 2] =
          packBf16(acc[c][2 * i] * inverse, acc[c][2 * i + 1] * inverse);
  }
}

// ---- Backward ---------------------------------------------------------------
//
// As the scalar backward: p = exp(s - lse), dv = pᵀ dout, dp = dout vᵀ,
// ds = p (dp - delta), dq = ds k scale, dk = dsᵀ q scale.

// grad_rows: one block per (batch·head, tile of 64 queries). 0. delta of
// each row; 1. the rows' max and sum over the key tiles (s = q kᵀ), their
// log-sum-exp; 2. per key tile s and dp = dout vᵀ, ds, dq += ds k.
template <int D>
__device__ void flashGradRowsTc(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                                const Bf16 *out, const Bf16 *dout, Bf16 *dq,
                                float *lse, float *delta, int heads,
                                int kvHeads, long long seq, long long kvSeq,
                                int causal, float scale) {
  constexpr int BQ = LLMC_FLASH_TC_ROWS;
  constexpr int BK = FlashTcTiles<D>::rowsKeys;
  constexpr int STRIDE = D + LLMC_FLASH_TC_PAD;
  __shared__ __align__(16) unsigned short queryTile[BQ * STRIDE];
  __shared__ __align__(16) unsigned short doutTile[BQ * STRIDE];
  __shared__ __align__(16) unsigned short keyTile[BK * STRIDE];
  __shared__ __align__(16) unsigned short valueTile[BK * STRIDE];
  __shared__ float tileDelta[BQ];

  long long queryTiles = (seq + BQ - 1) / BQ;
  long long head = blockIdx.x / queryTiles;
  long long firstQuery = (queryTiles - 1 - blockIdx.x % queryTiles) * BQ;
  long long kvHead = kvHeadOf(head, heads, kvHeads);
  const Bf16 *kHead = k + kvHead * kvSeq * D;
  const Bf16 *vHead = v + kvHead * kvSeq * D;
  int warpRow = (threadIdx.x / 32) * 16;
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  long long rowQuery[2] = {firstQuery + warpRow + g,
                           firstQuery + warpRow + g + 8};
  float scale2 = scale * LLMC_LOG2E;

  loadTcTile<BQ, D>(queryTile, q + head * seq * D, firstQuery, seq);
  loadTcTile<BQ, D>(doutTile, dout + head * seq * D, firstQuery, seq);

  // 0. delta = dout . out, two threads per row (f32 sums).
  {
    int r = threadIdx.x / 2;
    long long query = firstQuery + r;
    float sum = 0.0f;
    if (query < seq) {
      const Bf16 *outRow = out + (head * seq + query) * D;
      const Bf16 *doutRow = dout + (head * seq + query) * D;
      for (int c = threadIdx.x % 2; c < D; c += 2)
        sum += loadValue(doutRow[c]) * loadValue(outRow[c]);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    if (threadIdx.x % 2 == 0) {
      tileDelta[r] = sum;
      if (query < seq)
        delta[head * seq + query] = sum;
    }
  }

  long long keyEnd = causal ? min(kvSeq, firstQuery + BQ) : kvSeq;
  // 1. The rows' log-sum-exp, in base-2 units.
  float runningMax[2] = {flashNegativeInfinity(), flashNegativeInfinity()};
  float runningSum[2] = {0.0f, 0.0f};
  for (long long firstKey = 0; firstKey < keyEnd; firstKey += BK) {
    __syncthreads();
    loadTcTile<BK, D>(keyTile, kHead, firstKey, kvSeq);
    __syncthreads();
    float s[BK / 8][4];
#pragma unroll
    for (int n = 0; n < BK / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[n][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      unsigned a[4];
      loadFragmentA<STRIDE>(a, queryTile, warpRow, kk * 16);
#pragma unroll
      for (int n = 0; n < BK / 8; ++n) {
        unsigned b0, b1;
        loadFragmentBRows<STRIDE>(b0, b1, keyTile, n * 8, kk * 16);
        mmaBf16(s[n], a, b0, b1);
      }
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float tileMax = flashNegativeInfinity();
#pragma unroll
      for (int n = 0; n < BK / 8; ++n)
#pragma unroll
        for (int e = 2 * i; e < 2 * i + 2; ++e) {
          long long key = firstKey + n * 8 + 2 * t + (e & 1);
          bool visible = key < kvSeq && (!causal || key <= rowQuery[i]);
          float score = visible ? s[n][e] * scale2 : flashNegativeInfinity();
          s[n][e] = score;
          tileMax = fmaxf(tileMax, score);
        }
      tileMax = quadMax(tileMax);
      float newMax = fmaxf(runningMax[i], tileMax);
      float reference = newMax == flashNegativeInfinity() ? 0.0f : newMax;
      float tileSum = 0.0f;
#pragma unroll
      for (int n = 0; n < BK / 8; ++n)
        tileSum += exp2f(s[n][2 * i] - reference) +
                   exp2f(s[n][2 * i + 1] - reference);
      runningSum[i] =
          runningSum[i] * exp2f(runningMax[i] - reference) + tileSum;
      runningMax[i] = newMax;
    }
  }
  float rowLse[2];  // base 2
  float rowDelta[2];
  __syncthreads(); // tileDelta is written
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float sum = quadSum(runningSum[i]);
    // No visible key (S = 0): no tile below reads it.
    rowLse[i] = sum > 0.0f ? runningMax[i] + log2f(sum) : 0.0f;
    rowDelta[i] = tileDelta[warpRow + g + 8 * i];
    if (t == 0 && rowQuery[i] < seq)
      lse[head * seq + rowQuery[i]] = rowLse[i] * LLMC_LN2;
  }

  // 2. dq = sum over key tiles of ds k.
  float acc[D / 8][4];
#pragma unroll
  for (int c = 0; c < D / 8; ++c)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      acc[c][e] = 0.0f;
  for (long long firstKey = 0; firstKey < keyEnd; firstKey += BK) {
    __syncthreads();
    loadTcTile<BK, D>(keyTile, kHead, firstKey, kvSeq);
    loadTcTile<BK, D>(valueTile, vHead, firstKey, kvSeq);
    __syncthreads();
    float s[BK / 8][4];
    float dp[BK / 8][4];
#pragma unroll
    for (int n = 0; n < BK / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[n][e] = 0.0f;
        dp[n][e] = 0.0f;
      }
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      unsigned a[4], da[4];
      loadFragmentA<STRIDE>(a, queryTile, warpRow, kk * 16);
      loadFragmentA<STRIDE>(da, doutTile, warpRow, kk * 16);
#pragma unroll
      for (int n = 0; n < BK / 8; ++n) {
        unsigned b0, b1;
        loadFragmentBRows<STRIDE>(b0, b1, keyTile, n * 8, kk * 16);
        mmaBf16(s[n], a, b0, b1);
        loadFragmentBRows<STRIDE>(b0, b1, valueTile, n * 8, kk * 16);
        mmaBf16(dp[n], da, b0, b1);
      }
    }
#pragma unroll
    for (int n = 0; n < BK / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        long long key = firstKey + n * 8 + 2 * t + (e & 1);
        long long query = rowQuery[e / 2];
        bool visible = query < seq && key < kvSeq && (!causal || key <= query);
        float p = visible ? exp2f(s[n][e] * scale2 - rowLse[e / 2]) : 0.0f;
        s[n][e] = p * (dp[n][e] - rowDelta[e / 2]); // ds
      }
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned a[4];
      accumulatorAsA(a, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
      for (int c = 0; c < D / 8; ++c) {
        unsigned b0, b1;
        loadFragmentBColumns<STRIDE>(b0, b1, keyTile, kk * 16, c * 8);
        mmaBf16(acc[c], a, b0, b1);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    long long query = rowQuery[i];
    if (query >= seq)
      continue;
    unsigned *dqRow = (unsigned *)(dq + (head * seq + query) * D);
#pragma unroll
    for (int c = 0; c < D / 8; ++c)
      dqRow[(c * 8 + 2 * t) / 2] =
          packBf16(acc[c][2 * i] * scale, acc[c][2 * i + 1] * scale);
  }
}

// grad_keys: one block per (batch·kv head, tile of 64 keys), after
// grad_rows. Each warp owns 16 keys and computes the transposed products
// sᵀ = k qᵀ and dpᵀ = v doutᵀ (keys as rows, queries as columns), so that
// pᵀ and dsᵀ are A operands of dv += pᵀ dout and dk += dsᵀ q without a
// trip through shared memory. Loops over the group's query heads and their
// query tiles (causal: from the first that sees the tile's keys).
template <int D>
__device__ void flashGradKeysTc(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                                const Bf16 *dout, const float *lse,
                                const float *delta, Bf16 *dk, Bf16 *dv,
                                int heads, int kvHeads, long long seq,
                                long long kvSeq, int causal, float scale) {
  constexpr int BK = LLMC_FLASH_TC_ROWS;
  constexpr int BQ = FlashTcTiles<D>::keysQueries;
  constexpr int STRIDE = D + LLMC_FLASH_TC_PAD;
  __shared__ __align__(16) unsigned short keyTile[BK * STRIDE];
  __shared__ __align__(16) unsigned short valueTile[BK * STRIDE];
  __shared__ __align__(16) unsigned short queryTile[BQ * STRIDE];
  __shared__ __align__(16) unsigned short doutTile[BQ * STRIDE];
  __shared__ float tileLse[BQ];   // base 2
  __shared__ float tileDelta[BQ];

  long long keyTiles = (kvSeq + BK - 1) / BK;
  long long kvHead = blockIdx.x / keyTiles;
  long long firstKey = (blockIdx.x % keyTiles) * BK;
  long long b = kvHead / kvHeads;
  int group = heads / kvHeads;
  int firstHead = (int)(kvHead % kvHeads) * group;
  int warpKey = (threadIdx.x / 32) * 16;
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  long long rowKey[2] = {firstKey + warpKey + g, firstKey + warpKey + g + 8};
  float scale2 = scale * LLMC_LOG2E;

  loadTcTile<BK, D>(keyTile, k + kvHead * kvSeq * D, firstKey, kvSeq);
  loadTcTile<BK, D>(valueTile, v + kvHead * kvSeq * D, firstKey, kvSeq);
  float dkAcc[D / 8][4], dvAcc[D / 8][4];
#pragma unroll
  for (int c = 0; c < D / 8; ++c)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      dkAcc[c][e] = 0.0f;
      dvAcc[c][e] = 0.0f;
    }

  long long queryBegin = causal ? firstKey / BQ * BQ : 0;
  for (int h = firstHead; h < firstHead + group; ++h) {
    long long head = b * heads + h;
    for (long long firstQuery = queryBegin; firstQuery < seq;
         firstQuery += BQ) {
      // 1. The query tile's q, dout, lse and delta.
      __syncthreads();
      loadTcTile<BQ, D>(queryTile, q + head * seq * D, firstQuery, seq);
      loadTcTile<BQ, D>(doutTile, dout + head * seq * D, firstQuery, seq);
      if (threadIdx.x < BQ) {
        long long query = firstQuery + threadIdx.x;
        tileLse[threadIdx.x] =
            query < seq ? lse[head * seq + query] * LLMC_LOG2E : 0.0f;
        tileDelta[threadIdx.x] = query < seq ? delta[head * seq + query] : 0.0f;
      }
      __syncthreads();
      // Causal: a warp whose keys all follow the tile's queries has
      // nothing to add (no barrier below, so it may skip).
      if (causal && firstQuery + BQ - 1 < firstKey + warpKey)
        continue;

      // 2. sᵀ = k qᵀ and dpᵀ = v doutᵀ for this warp's 16 keys.
      float s[BQ / 8][4];
      float dp[BQ / 8][4];
#pragma unroll
      for (int n = 0; n < BQ / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[n][e] = 0.0f;
          dp[n][e] = 0.0f;
        }
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        unsigned a[4], va[4];
        loadFragmentA<STRIDE>(a, keyTile, warpKey, kk * 16);
        loadFragmentA<STRIDE>(va, valueTile, warpKey, kk * 16);
#pragma unroll
        for (int n = 0; n < BQ / 8; ++n) {
          unsigned b0, b1;
          loadFragmentBRows<STRIDE>(b0, b1, queryTile, n * 8, kk * 16);
          mmaBf16(s[n], a, b0, b1);
          loadFragmentBRows<STRIDE>(b0, b1, doutTile, n * 8, kk * 16);
          mmaBf16(dp[n], va, b0, b1);
        }
      }

      // 3. pᵀ and dsᵀ in place of sᵀ and dpᵀ.
#pragma unroll
      for (int n = 0; n < BQ / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          int column = n * 8 + 2 * t + (e & 1);
          long long query = firstQuery + column;
          long long key = rowKey[e / 2];
          bool visible =
              query < seq && key < kvSeq && (!causal || key <= query);
          float p = visible ? exp2f(s[n][e] * scale2 - tileLse[column]) : 0.0f;
          s[n][e] = p;
          dp[n][e] = p * (dp[n][e] - tileDelta[column]);
        }

      // 4. dv += pᵀ dout, dk += dsᵀ q.
#pragma unroll
      for (int kk = 0; kk < BQ / 16; ++kk) {
        unsigned pa[4], dsa[4];
        accumulatorAsA(pa, s[2 * kk], s[2 * kk + 1]);
        accumulatorAsA(dsa, dp[2 * kk], dp[2 * kk + 1]);
#pragma unroll
        for (int c = 0; c < D / 8; ++c) {
          unsigned b0, b1;
          loadFragmentBColumns<STRIDE>(b0, b1, doutTile, kk * 16, c * 8);
          mmaBf16(dvAcc[c], pa, b0, b1);
          loadFragmentBColumns<STRIDE>(b0, b1, queryTile, kk * 16, c * 8);
          mmaBf16(dkAcc[c], dsa, b0, b1);
        }
      }
    }
  }

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    long long key = rowKey[i];
    if (key >= kvSeq)
      continue;
    unsigned *dkRow = (unsigned *)(dk + (kvHead * kvSeq + key) * D);
    unsigned *dvRow = (unsigned *)(dv + (kvHead * kvSeq + key) * D);
#pragma unroll
    for (int c = 0; c < D / 8; ++c) {
      dkRow[(c * 8 + 2 * t) / 2] =
          packBf16(dkAcc[c][2 * i] * scale, dkAcc[c][2 * i + 1] * scale);
      dvRow[(c * 8 + 2 * t) / 2] = packBf16(dvAcc[c][2 * i], dvAcc[c][2 * i + 1]);
    }
  }
}

// Entry points: llmc_flash_attention_tc_{forward,grad_rows,grad_keys}_
// bf16_d{64,128}, the same parameters as the scalar entries but headDim
// (fixed to D).
#define LLMC_FLASH_TC_KERNELS(D)                                               \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_TC_THREADS)          \
      llmc_flash_attention_tc_forward_bf16_d##D(                               \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, Bf16 *out, int heads,   \
          int kvHeads, long long seq, long long kvSeq, int causal,             \
          float scale) {                                                       \
    flashForwardTc<D>(q, k, v, out, heads, kvHeads, seq, kvSeq, causal,        \
                      scale);                                                  \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_TC_THREADS)          \
      llmc_flash_attention_tc_grad_rows_bf16_d##D(                             \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, const Bf16 *out,        \
          const Bf16 *dout, Bf16 *dq, float *lse, float *delta, int heads,     \
          int kvHeads, long long seq, long long kvSeq, int causal,             \
          float scale) {                                                       \
    flashGradRowsTc<D>(q, k, v, out, dout, dq, lse, delta, heads, kvHeads,     \
                       seq, kvSeq, causal, scale);                             \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_TC_THREADS)          \
      llmc_flash_attention_tc_grad_keys_bf16_d##D(                             \
          const Bf16 *q, const Bf16 *k, const Bf16 *v, const Bf16 *dout,       \
          const float *lse, const float *delta, Bf16 *dk, Bf16 *dv, int heads, \
          int kvHeads, long long seq, long long kvSeq, int causal,             \
          float scale) {                                                       \
    flashGradKeysTc<D>(q, k, v, dout, lse, delta, dk, dv, heads, kvHeads, seq, \
                       kvSeq, causal, scale);                                  \
  }

LLMC_FLASH_TC_KERNELS(64)
LLMC_FLASH_TC_KERNELS(128)
)cuda";
}

} // namespace llmc::rt::cuda
