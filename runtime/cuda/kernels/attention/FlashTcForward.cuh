//===- FlashTcForward.cuh - the tensor-core flash attention forward -------===//
//
// Part of the bf16 tensor-core flash attention: on FlashTc.cuh (the design,
// the tiles, the fragment helpers and the entry points), whose helpers it
// uses.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ATTENTION_FLASHTCFORWARD_CUH
#define LLMC_CUDA_ATTENTION_FLASHTCFORWARD_CUH

#include "attention/FlashTc.cuh"

// ---- Forward ----------------------------------------------------------------
//
// One block per (batch·head, tile of BQ = 64 MT queries), the last tiles
// first; each warp owns MT blocks of 16 rows (MT = 2 for D = 64, so that
// every k and v fragment read from shared memory feeds two products; 1 for
// D = 128, whose accumulators are twice as wide). Per key tile (the next one
// copying meanwhile): 1. s = q kᵀ (per warp 16 MT x BK), 2. masking (only
// tiles that reach past the end or the diagonal) and the online softmax
// (each thread holds rows g and g + 8 of each 16-row block; the running
// sums stay per-thread partial sums until the end, the max is reduced per
// quad), 3. acc += p v with p rounded to bf16. Causal: key tiles after the
// query tile's last row are never copied, and a warp whose rows all precede
// a key tile skips it. POSITIONS (ring attention's blocks, FlashTc.cuh):
// the positions' mask instead, a warp skips a key tile whose smallest
// position is above its rows' largest, and only tiles whose largest is
// above its rows' smallest evaluate the mask.
// Long: one kernel whose passes share the shared-memory tiles and the
// register fragments of the loop; the steps that stand alone are helpers
// (above and in FlashTc.cuh), and the loop bodies stay here, where the
// fragments' lifetimes can be read.
template <int D, bool POSITIONS = false>
__device__ void flashForwardTc(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                               Bf16 *out, float *lse, int heads, int kvHeads,
                               long long seq, long long kvSeq, int causal,
                               float scale, FlashLayout layout,
                               const int *queryPositions = nullptr,
                               const int *keyPositions = nullptr) {
  constexpr int MT = FlashTcTiles<D>::forwardRowBlocks;
  constexpr int BQ = FlashTcTiles<D>::forwardQueries;
  constexpr int BK = FlashTcTiles<D>::forwardKeys;
  constexpr int STRIDE = FlashTcTiles<D>::stride;
  expectFlashTcShared(FlashTcTiles<D>::forwardBytes);
  unsigned short *queryTile = (unsigned short *)llmcFlashTcShared;
  unsigned short *keyTiles = queryTile + BQ * STRIDE;       // 2 buffers
  unsigned short *valueTiles = keyTiles + 2 * BK * STRIDE;  // 2 buffers

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
  copyTcTile<BQ, D>(queryTile, q + flashHeadAt(layout.q, head, heads),
                    layout.q.row, firstQuery, seq);
  if (keyTileCount > 0) {
    copyTcTile<BK, D>(keyTiles, kHead, layout.k.row, 0, kvSeq);
    copyTcTile<BK, D>(valueTiles, vHead, layout.v.row, 0, kvSeq);
  }
  commitAsync();

  // Per 16-row block m and half i (its rows g and g + 8).
  float runningMax[MT][2], runningSum[MT][2];
  float acc[MT][D / 8][4];
#pragma unroll
  for (int m = 0; m < MT; ++m) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      runningMax[m][i] = flashNegativeInfinity();
      runningSum[m][i] = 0.0f;
    }
#pragma unroll
    for (int c = 0; c < D / 8; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        acc[m][c][e] = 0.0f;
  }

  // POSITIONS: the positions of the warp's rows.
  TcWarpPositions<MT, POSITIONS> rows;
  rows.load(queryPositions, firstQuery + warpRow, seq,
            LLMC_FLASH_TC_POSITION_MIN);

  // The query rows' A fragments in registers (LLMC_FLASH_TC_FORWARD_CACHED):
  // once q has landed for every thread.
  constexpr bool CACHED = LLMC_FLASH_TC_FORWARD_CACHED != 0;
  unsigned queryA[MT][D / 16][4];
  if constexpr (CACHED) {
    waitAsync();
    __syncthreads();
    loadRowFragments<D, MT>(queryA, queryTile, warpRow);
  }

  for (int j = 0; j < keyTileCount; ++j) {
    long long firstKey = (long long)j * BK;
    // Tile j has landed for every thread, and every warp is done with
    // tile j - 1, whose buffer the copy of tile j + 1 now refills.
    waitAsync();
    __syncthreads();
    if (j + 1 < keyTileCount) {
      int next = (j + 1) % 2;
      copyTcTile<BK, D>(keyTiles + next * BK * STRIDE, kHead, layout.k.row,
                        firstKey + BK, kvSeq);
      copyTcTile<BK, D>(valueTiles + next * BK * STRIDE, vHead, layout.v.row,
                        firstKey + BK, kvSeq);
      commitAsync();
    }
    // Causal: every key of the tile follows the warp's last row.
    if (causal && firstKey > firstQuery + warpRow + 16 * MT - 1)
      continue;
    // POSITIONS: every key of the tile after every row of the warp.
    int keyLow, keyHigh;
    tcTileRange<BK, POSITIONS>(keyPositions, firstKey, kvSeq, keyLow, keyHigh);
    if (POSITIONS && keyLow > rows.high)
      continue;
    const unsigned short *keyTile = keyTiles + (j % 2) * BK * STRIDE;
    const unsigned short *valueTile = valueTiles + (j % 2) * BK * STRIDE;

    // 1. s = q kᵀ.
    float s[MT][BK / 8][4];
    multiplyRowsByColumns<D, BK, MT, CACHED>(s, queryTile, warpRow, keyTile,
                                             queryA);

    // 2. Scale to base-2 units; mask keys past the end and, causal, after
    //    the row (only tiles that reach them); the online softmax.
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      long long blockRow = firstQuery + warpRow + 16 * m;
      bool edge = firstKey + BK > kvSeq ||
                  (causal && firstKey + BK - 1 > blockRow) ||
                  (POSITIONS && keyHigh > rows.low);
#pragma unroll
      for (int n = 0; n < BK / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float score = s[m][n][e] * scale2;
          if (edge) {
            long long key = firstKey + n * 8 + 2 * t + (e & 1);
            long long query = blockRow + g + 8 * (e / 2);
            if (key >= kvSeq || (causal && key > query))
              score = flashNegativeInfinity();
            else if (POSITIONS && keyPositions[key] > rows.own[m][e / 2])
              score = flashNegativeInfinity();
          }
          s[m][n][e] = score;
        }
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float tileMax = flashNegativeInfinity();
#pragma unroll
        for (int n = 0; n < BK / 8; ++n)
          tileMax = fmaxf(tileMax, fmaxf(s[m][n][2 * i], s[m][n][2 * i + 1]));
        tileMax = quadMax(tileMax);
        // A row that has seen no visible key keeps a max of -inf:
        // exponentials are then taken against 0, giving 0, not NaN.
        float newMax = fmaxf(runningMax[m][i], tileMax);
        float reference = newMax == flashNegativeInfinity() ? 0.0f : newMax;
        float correction = exp2f(runningMax[m][i] - reference);
        float tileSum = 0.0f;
#pragma unroll
        for (int n = 0; n < BK / 8; ++n)
#pragma unroll
          for (int e = 2 * i; e < 2 * i + 2; ++e) {
            float p = exp2f(s[m][n][e] - reference);
            s[m][n][e] = p;
            tileSum += p;
          }
        runningSum[m][i] = runningSum[m][i] * correction + tileSum;
        runningMax[m][i] = newMax;
#pragma unroll
        for (int c = 0; c < D / 8; ++c) {
          acc[m][c][2 * i] *= correction;
          acc[m][c][2 * i + 1] *= correction;
        }
      }
    }

    // 3. acc += p v.
    accumulateProduct<D, BK, MT>(acc, s, valueTile);
  }
  waitAsync(); // no copy outlives the block (none is pending here)

  // Normalize; no visible key (S = 0) gives a zero row, as on the CPU.
  // The log-sum-exp (when asked for) in natural-log units, -inf for a row
  // that sees no key.
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      float sum = quadSum(runningSum[m][i]);
      long long query = firstQuery + warpRow + 16 * m + g + 8 * i;
      if (query >= seq)
        continue;
      if (lse != nullptr && t == 0)
        lse[head * seq + query] =
            sum > 0.0f ? (runningMax[m][i] + log2f(sum)) * LLMC_LN2
                       : flashNegativeInfinity();
      float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
      unsigned *outRow =
          (unsigned *)(out + flashRowAt(layout.o, head, heads, query));
#pragma unroll
      for (int c = 0; c < D / 8; ++c)
        outRow[(c * 8 + 2 * t) / 2] = packBf16(acc[m][c][2 * i] * inverse,
                                               acc[m][c][2 * i + 1] * inverse);
    }
}

#endif // LLMC_CUDA_ATTENTION_FLASHTCFORWARD_CUH
