//===- FlashTcBackward.cuh - the tensor-core flash attention backward -----===//
//
// Part of the bf16 tensor-core flash attention: on FlashTc.cuh (the design,
// the tiles, the fragment helpers and the entry points), whose helpers it
// uses.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ATTENTION_FLASHTCBACKWARD_CUH
#define LLMC_CUDA_ATTENTION_FLASHTCBACKWARD_CUH

#include "attention/FlashTc.cuh"

// ---- Backward ---------------------------------------------------------------
//
// As the scalar backward: p = exp(s - lse), dv = pᵀ dout, dp = dout vᵀ,
// ds = p (dp - delta), dq = ds k scale, dk = dsᵀ q scale.

// delta = dout . out of the BQ rows from `firstQuery`, into tileDelta
// (shared) and delta: PER_ROW threads per row, 16-byte loads (f32 sums: the
// thread's chunks of 8 columns in order, then the two threads' sums for
// D = 128). A step of flashGradRowsTc.
template <int D, int BQ>
__device__ __forceinline__ void
flashTcRowDelta(const Bf16 *out, const Bf16 *dout, float *tileDelta,
                float *delta, const FlashLayout &layout, long long head,
                int heads, long long firstQuery, long long seq) {
  constexpr int PER_ROW = LLMC_FLASH_TC_THREADS / BQ;
  int r = threadIdx.x / PER_ROW;
  long long query = firstQuery + r;
  float sum = 0.0f;
  if (query < seq) {
    long long at = flashRowAt(layout.o, head, heads, query);
    const uint4 *outRow = (const uint4 *)(out + at);
    const uint4 *doutRow = (const uint4 *)(dout + at);
    for (int c = threadIdx.x % PER_ROW; c < D / 8; c += PER_ROW) {
      uint4 outChunk = outRow[c], doutChunk = doutRow[c];
      unsigned o[4] = {outChunk.x, outChunk.y, outChunk.z, outChunk.w};
      unsigned d[4] = {doutChunk.x, doutChunk.y, doutChunk.z, doutChunk.w};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        // The bf16 pair of a word: the lower column in the low half.
        sum += __uint_as_float(d[e] << 16) * __uint_as_float(o[e] << 16);
        sum += __uint_as_float(d[e] & 0xffff0000u) *
               __uint_as_float(o[e] & 0xffff0000u);
      }
    }
  }
  if (PER_ROW == 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  if (threadIdx.x % PER_ROW == 0) {
    tileDelta[r] = sum;
    if (query < seq)
      delta[head * seq + query] = sum;
  }
}

// The rows' log-sum-exp (base 2: from the forward's `forwardLse` when
// given, else from the running max and sum, then stored to `lse`) and
// delta (from tileDelta, after a barrier: also when there is no key tile),
// per 16-row block m and half i of a warp. A step of flashGradRowsTc.
// POSITIONS: a given lse of -inf (the row sees no key anywhere) becomes
// +inf, so that every p of the row is 0.
template <int MT, bool POSITIONS>
__device__ __forceinline__ void
flashTcRowStats(float (*rowLse)[2], float (*rowDelta)[2],
                float (*runningMax)[2], float (*runningSum)[2],
                const float *tileDelta, const float *forwardLse, float *lse,
                long long head, long long seq, long long firstQuery,
                int warpRow) {
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  __syncthreads(); // tileDelta is written
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      int row = warpRow + 16 * m + g + 8 * i;
      long long query = firstQuery + row;
      rowDelta[m][i] = tileDelta[row];
      if (forwardLse != nullptr) {
        rowLse[m][i] =
            query < seq ? forwardLse[head * seq + query] * LLMC_LOG2E : 0.0f;
        if (POSITIONS && rowLse[m][i] == flashNegativeInfinity())
          rowLse[m][i] = -flashNegativeInfinity();
        continue;
      }
      float sum = quadSum(runningSum[m][i]);
      // No visible key (S = 0): no tile below reads it.
      rowLse[m][i] = sum > 0.0f ? runningMax[m][i] + log2f(sum) : 0.0f;
      if (t == 0 && query < seq)
        lse[head * seq + query] = rowLse[m][i] * LLMC_LN2;
    }
}

// The running max (-inf) and sum (0) of a warp's rows, before the first
// key tile.
template <int MT>
__device__ __forceinline__ void clearTcRowStats(float (*runningMax)[2],
                                                float (*runningSum)[2]) {
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      runningMax[m][i] = flashNegativeInfinity();
      runningSum[m][i] = 0.0f;
    }
}

// Stores a warp's accumulators (MT blocks of 16 rows from `warpRow` of the
// tile at `firstQuery`), times `scale`, as bf16 rows of `rows` laid out as
// `at` says; rows past `seq` are not stored.
template <int D, int MT>
__device__ __forceinline__ void
storeTcRows(Bf16 *rows, float (*acc)[D / 8][4], float scale,
            FlashStrides at, long long head, int heads,
            long long firstQuery, int warpRow, long long seq) {
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      long long query = firstQuery + warpRow + 16 * m + g + 8 * i;
      if (query >= seq)
        continue;
      unsigned *row = (unsigned *)(rows + flashRowAt(at, head, heads, query));
#pragma unroll
      for (int c = 0; c < D / 8; ++c)
        row[(c * 8 + 2 * t) / 2] = packBf16(acc[m][c][2 * i] * scale,
                                            acc[m][c][2 * i + 1] * scale);
    }
}

// grad_rows: one block per (batch·head, tile of BQ = 64 MT queries); each
// warp owns MT blocks of 16 rows (MT = 2 for D = 64, so that every k and v
// fragment read from shared memory feeds two products; 1 for D = 128).
// 0. delta of each row; 1. the rows' log-sum-exp: read from `forwardLse`
// (the forward's second result) when given, else their max and sum over
// the key tiles (s = q kᵀ), stored to `lse`; 2. per key tile s and
// dp = dout vᵀ, ds, dq += ds k. The key (and value) tiles stream through
// two buffers, the next copying while the current one is multiplied; the
// last tile of 1 prefetches the first of 2. Causal: a warp whose rows all
// precede a key tile skips it. POSITIONS (ring attention's blocks,
// FlashTc.cuh): the positions' mask and tile skipping as the forward;
// `forwardLse` is the ring's merged log-sum-exp, -inf (a row that sees no
// key anywhere) taken as +inf so that every p of the row is 0.
// Long: one kernel whose passes share the shared-memory tiles and the
// register fragments of the loop; the steps that stand alone are helpers
// (above and in FlashTc.cuh), and the loop bodies stay here, where the
// fragments' lifetimes can be read.
template <int D, bool POSITIONS = false>
__device__ void flashGradRowsTc(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                                const Bf16 *out, const Bf16 *dout,
                                const float *forwardLse, Bf16 *dq,
                                float *lse, float *delta, int heads,
                                int kvHeads, long long seq, long long kvSeq,
                                int causal, float scale, FlashLayout layout,
                                const int *queryPositions = nullptr,
                                const int *keyPositions = nullptr) {
  constexpr int MT = FlashTcTiles<D>::rowsRowBlocks;
  constexpr int BQ = FlashTcTiles<D>::rowsQueries;
  constexpr int BK = FlashTcTiles<D>::rowsKeys;
  constexpr int STRIDE = FlashTcTiles<D>::stride;
  expectFlashTcShared(FlashTcTiles<D>::rowsBytes);
  unsigned short *queryTile = (unsigned short *)llmcFlashTcShared;
  unsigned short *doutTile = queryTile + BQ * STRIDE;
  unsigned short *keyTiles = doutTile + BQ * STRIDE;        // 2 buffers
  unsigned short *valueTiles = keyTiles + 2 * BK * STRIDE;  // 2 buffers
  float *tileDelta = (float *)(valueTiles + 2 * BK * STRIDE);

  long long queryTiles = (seq + BQ - 1) / BQ;
  long long head = blockIdx.x / queryTiles;
  long long firstQuery = (queryTiles - 1 - blockIdx.x % queryTiles) * BQ;
  long long kvHead = kvHeadOf(head, heads, kvHeads);
  const Bf16 *kHead = k + flashHeadAt(layout.k, kvHead, kvHeads);
  const Bf16 *vHead = v + flashHeadAt(layout.v, kvHead, kvHeads);
  int warpRow = (threadIdx.x / 32) * 16 * MT;
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  float scale2 = scale * LLMC_LOG2E;

  long long keyEnd = causal ? min(kvSeq, firstQuery + BQ) : kvSeq;
  int keyTileCount = (int)((keyEnd + BK - 1) / BK);
  // The first tile of 1 (its keys), or of 2 (keys and values) when 1 reads
  // the forward's log-sum-exp; tile j of 2 sits in buffer (base + j) % 2.
  int base = forwardLse != nullptr ? 0 : keyTileCount;
  copyTcTile<BQ, D>(queryTile, q + flashHeadAt(layout.q, head, heads),
                    layout.q.row, firstQuery, seq);
  copyTcTile<BQ, D>(doutTile, dout + flashHeadAt(layout.o, head, heads),
                    layout.o.row, firstQuery, seq);
  if (keyTileCount > 0) {
    copyTcTile<BK, D>(keyTiles, kHead, layout.k.row, 0, kvSeq);
    if (forwardLse != nullptr)
      copyTcTile<BK, D>(valueTiles, vHead, layout.v.row, 0, kvSeq);
  }
  commitAsync();

  // 0. delta = dout . out of each row.
  flashTcRowDelta<D, BQ>(out, dout, tileDelta, delta, layout, head, heads,
                         firstQuery, seq);

  TcWarpPositions<MT, POSITIONS> rows; // POSITIONS: the warp's rows'
  rows.load(queryPositions, firstQuery + warpRow, seq, kTcPositionMin);
  // Whether row block m's 16 x BK block of a key tile reaches past the keys
  // or queries, (causal) the diagonal or (POSITIONS) a key above a row: only
  // those mask. Skipped: every key after (or above) the warp's every row.
  auto edgeBlock = [&](long long firstKey, int m, int keyHigh) {
    long long blockRow = firstQuery + warpRow + 16 * m;
    return firstKey + BK > kvSeq || blockRow + 16 > seq ||
           (causal && firstKey + BK - 1 > blockRow) ||
           (POSITIONS && keyHigh > rows.low);
  };
  auto skipTile = [&](long long firstKey, int keyLow) {
    return (causal && firstKey > firstQuery + warpRow + 16 * MT - 1) ||
           (POSITIONS && keyLow > rows.high);
  };

  // 1. The rows' log-sum-exp, in base-2 units; per 16-row block m and half
  //    i (its rows g and g + 8). Without the forward's: the max and sum
  //    over the key tiles.
  float runningMax[MT][2], runningSum[MT][2];
  clearTcRowStats<MT>(runningMax, runningSum);
  for (int j = 0; forwardLse == nullptr && j < keyTileCount; ++j) {
    long long firstKey = (long long)j * BK;
    waitAsync();
    __syncthreads();
    int next = (j + 1) % 2;
    if (j + 1 < keyTileCount) {
      copyTcTile<BK, D>(keyTiles + next * BK * STRIDE, kHead, layout.k.row,
                        firstKey + BK, kvSeq);
    } else {
      // The first tile of 2 (its keys and values).
      copyTcTile<BK, D>(keyTiles + next * BK * STRIDE, kHead, layout.k.row, 0,
                        kvSeq);
      copyTcTile<BK, D>(valueTiles + next * BK * STRIDE, vHead, layout.v.row,
                        0, kvSeq);
    }
    commitAsync();
    int keyLow, keyHigh;
    tcTileRange<BK, POSITIONS>(keyPositions, firstKey, kvSeq, keyLow, keyHigh);
    if (skipTile(firstKey, keyLow))
      continue;
    float s[MT][BK / 8][4];
    multiplyRowsByColumns<D, BK, MT>(s, queryTile, warpRow,
                                     keyTiles + (j % 2) * BK * STRIDE);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      bool edge = edgeBlock(firstKey, m, keyHigh);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        long long query = firstQuery + warpRow + 16 * m + g + 8 * i;
        float tileMax = flashNegativeInfinity();
#pragma unroll
        for (int n = 0; n < BK / 8; ++n)
#pragma unroll
          for (int e = 2 * i; e < 2 * i + 2; ++e) {
            float score = s[m][n][e] * scale2;
            if (edge) {
              long long key = firstKey + n * 8 + 2 * t + (e & 1);
              if (key >= kvSeq || (causal && key > query) ||
                  (POSITIONS && keyPositions[key] > rows.own[m][i]))
                score = flashNegativeInfinity();
            }
            s[m][n][e] = score;
            tileMax = fmaxf(tileMax, score);
          }
        tileMax = quadMax(tileMax);
        float newMax = fmaxf(runningMax[m][i], tileMax);
        float reference = newMax == flashNegativeInfinity() ? 0.0f : newMax;
        float tileSum = 0.0f;
#pragma unroll
        for (int n = 0; n < BK / 8; ++n)
          tileSum += exp2f(s[m][n][2 * i] - reference) +
                     exp2f(s[m][n][2 * i + 1] - reference);
        runningSum[m][i] =
            runningSum[m][i] * exp2f(runningMax[m][i] - reference) + tileSum;
        runningMax[m][i] = newMax;
      }
    }
  }
  float rowLse[MT][2]; // base 2
  float rowDelta[MT][2];
  flashTcRowStats<MT, POSITIONS>(rowLse, rowDelta, runningMax, runningSum,
                                 tileDelta, forwardLse, lse, head, seq,
                                 firstQuery, warpRow);

  // The A fragments of q and dout in registers (LLMC_FLASH_TC_ROWS_CACHED),
  // once they have landed for every thread.
  constexpr bool CACHED = LLMC_FLASH_TC_ROWS_CACHED != 0;
  unsigned queryA[MT][D / 16][4], doutA[MT][D / 16][4];
  if constexpr (CACHED) {
    waitAsync();
    __syncthreads();
    loadRowFragments<D, MT>(queryA, queryTile, warpRow);
    loadRowFragments<D, MT>(doutA, doutTile, warpRow);
  }

  // 2. dq = sum over key tiles of ds k; tile j sits in buffer
  //    (base + j) % 2.
  float acc[MT][D / 8][4];
  clearTcAccumulators<D, MT>(acc);
  for (int j = 0; j < keyTileCount; ++j) {
    long long firstKey = (long long)j * BK;
    waitAsync();
    __syncthreads();
    if (j + 1 < keyTileCount) {
      int next = (base + j + 1) % 2;
      copyTcTile<BK, D>(keyTiles + next * BK * STRIDE, kHead, layout.k.row,
                        firstKey + BK, kvSeq);
      copyTcTile<BK, D>(valueTiles + next * BK * STRIDE, vHead, layout.v.row,
                        firstKey + BK, kvSeq);
      commitAsync();
    }
    int keyLow, keyHigh;
    tcTileRange<BK, POSITIONS>(keyPositions, firstKey, kvSeq, keyLow, keyHigh);
    if (skipTile(firstKey, keyLow))
      continue;
    int buffer = (base + j) % 2;
    const unsigned short *keyTile = keyTiles + buffer * BK * STRIDE;
    const unsigned short *valueTile = valueTiles + buffer * BK * STRIDE;
    float s[MT][BK / 8][4];
    float dp[MT][BK / 8][4];
    multiplyRowsByColumns<D, BK, MT, CACHED>(s, queryTile, warpRow, keyTile,
                                             queryA);
    multiplyRowsByColumns<D, BK, MT, CACHED>(dp, doutTile, warpRow, valueTile,
                                             doutA);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      bool edge = edgeBlock(firstKey, m, keyHigh);
#pragma unroll
      for (int n = 0; n < BK / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          int i = e / 2;
          float p = exp2f(s[m][n][e] * scale2 - rowLse[m][i]);
          if (edge) {
            long long key = firstKey + n * 8 + 2 * t + (e & 1);
            long long query = firstQuery + warpRow + 16 * m + g + 8 * i;
            if (query >= seq || key >= kvSeq || (causal && key > query) ||
                (POSITIONS && keyPositions[key] > rows.own[m][i]))
              p = 0.0f;
          }
          s[m][n][e] = p * (dp[m][n][e] - rowDelta[m][i]); // ds
        }
    }
    accumulateProduct<D, BK, MT>(acc, s, keyTile);
  }
  waitAsync(); // no copy outlives the block (none is pending here)
  storeTcRows<D, MT>(dq, acc, scale, layout.q, head, heads, firstQuery,
                     warpRow, seq);
}


// grad_keys: one block per (batch·kv head, tile of BK = 64 MT keys), after
// grad_rows. Each warp owns MT blocks of 16 keys (MT = 2 for D = 64, so that
// every q and dout fragment read from shared memory feeds two products; 1
// for D = 128) and computes the transposed products
// sᵀ = k qᵀ and dpᵀ = v doutᵀ (keys as rows, queries as columns), so that
// pᵀ and dsᵀ are A operands of dv += pᵀ dout and dk += dsᵀ q without a
// trip through shared memory. Loops over the group's query heads and their
// query tiles (causal: from the first that sees the tile's keys), in that
// fixed order; the q, dout, lse and delta of the next (head, query tile)
// copy into the other buffer while the current one is multiplied.
// POSITIONS (ring attention's blocks, FlashTc.cuh): a warp skips a query
// tile whose largest position is below its keys' smallest, and only tiles
// whose smallest is below its keys' largest evaluate the mask. `lse` is
// the ring's merged one: a row at -inf sees no key anywhere, so each of
// its elements here is masked (its tile is skipped or evaluates the mask).
// Long: one kernel whose passes share the shared-memory tiles and the
// register fragments of the loop; the steps that stand alone are helpers
// (above and in FlashTc.cuh), and the loop bodies stay here, where the
// fragments' lifetimes can be read.
template <int D, bool POSITIONS = false>
__device__ void flashGradKeysTc(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                                const Bf16 *dout, const float *lse,
                                const float *delta, Bf16 *dk, Bf16 *dv,
                                int heads, int kvHeads, long long seq,
                                long long kvSeq, int causal, float scale,
                                FlashLayout layout,
                                const int *queryPositions = nullptr,
                                const int *keyPositions = nullptr) {
  constexpr int MT = FlashTcTiles<D>::keysRowBlocks;
  constexpr int BK = FlashTcTiles<D>::keysKeys;
  constexpr int BQ = FlashTcTiles<D>::keysQueries;
  constexpr int STRIDE = FlashTcTiles<D>::stride;
  expectFlashTcShared(FlashTcTiles<D>::keysBytes);
  unsigned short *keyTile = (unsigned short *)llmcFlashTcShared;
  unsigned short *valueTile = keyTile + BK * STRIDE;
  unsigned short *queryTiles = valueTile + BK * STRIDE;     // 2 buffers
  unsigned short *doutTiles = queryTiles + 2 * BQ * STRIDE; // 2 buffers
  float *tileLse = (float *)(doutTiles + 2 * BQ * STRIDE);  // 2 x BQ, base e
  float *tileDelta = tileLse + 2 * BQ;                      // 2 x BQ

  long long keyTiles = (kvSeq + BK - 1) / BK;
  long long kvHead = blockIdx.x / keyTiles;
  long long firstKey = (blockIdx.x % keyTiles) * BK;
  long long b = kvHead / kvHeads;
  int group = heads / kvHeads;
  int firstHead = (int)(kvHead % kvHeads) * group;
  int warpKey = (threadIdx.x / 32) * 16 * MT;
  int g = (threadIdx.x % 32) / 4;
  int t = threadIdx.x % 4;
  float scale2 = scale * LLMC_LOG2E;

  // The items: (query head h, query tile) for h of the group, tiles from
  // queryBegin; item i is head firstHead + i / perHead, tile i % perHead.
  long long queryBegin = causal ? firstKey / BQ * BQ : 0;
  int perHead = seq > queryBegin ? (int)((seq - queryBegin + BQ - 1) / BQ) : 0;
  int items = group * perHead;
  auto copyItem = [&](int item, int buffer) {
    long long head = b * heads + firstHead + item / perHead;
    long long firstQuery = queryBegin + (long long)(item % perHead) * BQ;
    copyTcTile<BQ, D>(queryTiles + buffer * BQ * STRIDE,
                      q + flashHeadAt(layout.q, head, heads), layout.q.row,
                      firstQuery, seq);
    copyTcTile<BQ, D>(doutTiles + buffer * BQ * STRIDE,
                      dout + flashHeadAt(layout.o, head, heads), layout.o.row,
                      firstQuery, seq);
    if (threadIdx.x < BQ) {
      long long query = firstQuery + threadIdx.x;
      bool valid = query < seq;
      long long at = valid ? head * seq + query : 0;
      copyAsync4(tileLse + buffer * BQ + threadIdx.x, lse + at, valid);
      copyAsync4(tileDelta + buffer * BQ + threadIdx.x, delta + at, valid);
    }
    commitAsync();
  };

  copyTcTile<BK, D>(keyTile, k + flashHeadAt(layout.k, kvHead, kvHeads),
                    layout.k.row, firstKey, kvSeq);
  copyTcTile<BK, D>(valueTile, v + flashHeadAt(layout.v, kvHead, kvHeads),
                    layout.v.row, firstKey, kvSeq);
  commitAsync();
  if (items > 0)
    copyItem(0, 0);
  float dkAcc[MT][D / 8][4], dvAcc[MT][D / 8][4];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int c = 0; c < D / 8; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        dkAcc[m][c][e] = 0.0f;
        dvAcc[m][c][e] = 0.0f;
      }

  // POSITIONS: the positions of the warp's keys.
  TcWarpPositions<MT, POSITIONS> keys;
  keys.load(keyPositions, firstKey + warpKey, kvSeq,
            LLMC_FLASH_TC_POSITION_MAX);

  // The A fragments of k and v in registers (LLMC_FLASH_TC_KEYS_CACHED),
  // once they have landed for every thread.
  constexpr bool CACHED = LLMC_FLASH_TC_KEYS_CACHED != 0;
  unsigned keyA[MT][D / 16][4], valueA[MT][D / 16][4];
  if constexpr (CACHED) {
    waitAsync();
    __syncthreads();
    loadRowFragments<D, MT>(keyA, keyTile, warpKey);
    loadRowFragments<D, MT>(valueA, valueTile, warpKey);
  }

  for (int item = 0; item < items; ++item) {
    // Item `item` has landed for every thread, and every warp is done with
    // the previous one, whose buffers the copy of the next now refills.
    waitAsync();
    __syncthreads();
    if (item + 1 < items)
      copyItem(item + 1, (item + 1) % 2);
    int buffer = item % 2;
    long long firstQuery = queryBegin + (long long)(item % perHead) * BQ;
    // Causal: a warp whose keys all follow the tile's queries has nothing
    // to add (no barrier in the body, so it may skip).
    if (causal && firstQuery + BQ - 1 < firstKey + warpKey)
      continue;
    // POSITIONS: every query of the tile before every key of the warp.
    int queryLow, queryHigh;
    tcTileRange<BQ, POSITIONS>(queryPositions, firstQuery, seq, queryLow,
                               queryHigh);
    if (POSITIONS && keys.low > queryHigh)
      continue;
    const unsigned short *queryTile = queryTiles + buffer * BQ * STRIDE;
    const unsigned short *doutTile = doutTiles + buffer * BQ * STRIDE;
    const float *lseColumns = tileLse + buffer * BQ;
    const float *deltaColumns = tileDelta + buffer * BQ;

    // 2. sᵀ = k qᵀ and dpᵀ = v doutᵀ for this warp's 16 MT keys.
    float s[MT][BQ / 8][4];
    float dp[MT][BQ / 8][4];
    multiplyRowsByColumns<D, BQ, MT, CACHED>(s, keyTile, warpKey, queryTile,
                                             keyA);
    multiplyRowsByColumns<D, BQ, MT, CACHED>(dp, valueTile, warpKey,
                                             doutTile, valueA);

    // 3. pᵀ and dsᵀ in place of sᵀ and dpᵀ (the mask only where a 16-key
    //    block reaches past the queries, the keys or the diagonal).
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      long long blockKey = firstKey + warpKey + 16 * m;
      bool edge = firstQuery + BQ > seq || blockKey + 16 > kvSeq ||
                  (causal && blockKey + 15 > firstQuery) ||
                  (POSITIONS && keys.high > queryLow);
#pragma unroll
      for (int n = 0; n < BQ / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          int column = n * 8 + 2 * t + (e & 1);
          float p =
              exp2f(s[m][n][e] * scale2 - lseColumns[column] * LLMC_LOG2E);
          if (edge) {
            long long query = firstQuery + column;
            long long key = blockKey + g + 8 * (e / 2);
            if (query >= seq || key >= kvSeq || (causal && key > query))
              p = 0.0f;
            else if (POSITIONS && keys.own[m][e / 2] > queryPositions[query])
              p = 0.0f;
          }
          s[m][n][e] = p;
          dp[m][n][e] = p * (dp[m][n][e] - deltaColumns[column]);
        }
    }

    // 4. dv += pᵀ dout, dk += dsᵀ q.
    accumulateProduct<D, BQ, MT>(dvAcc, s, doutTile);
    accumulateProduct<D, BQ, MT>(dkAcc, dp, queryTile);
  }
  waitAsync(); // no copy outlives the block (the key tile when no item)

#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      long long key = firstKey + warpKey + 16 * m + g + 8 * i;
      if (key >= kvSeq)
        continue;
      unsigned *dkRow =
          (unsigned *)(dk + flashRowAt(layout.k, kvHead, kvHeads, key));
      unsigned *dvRow =
          (unsigned *)(dv + flashRowAt(layout.v, kvHead, kvHeads, key));
#pragma unroll
      for (int c = 0; c < D / 8; ++c) {
        dkRow[(c * 8 + 2 * t) / 2] = packBf16(dkAcc[m][c][2 * i] * scale,
                                              dkAcc[m][c][2 * i + 1] * scale);
        dvRow[(c * 8 + 2 * t) / 2] =
            packBf16(dvAcc[m][c][2 * i], dvAcc[m][c][2 * i + 1]);
      }
    }
}

#endif // LLMC_CUDA_ATTENTION_FLASHTCBACKWARD_CUH
