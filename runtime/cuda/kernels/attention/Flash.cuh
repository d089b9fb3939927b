//===- Flash.cuh - flash attention forward and backward (scalar) ----------===//
//
// The forward and backward kernels of llmc.attention and llmc.attention_grad,
// on the prelude (Bf16, loadValue, storeValue) and FlashLayout.cuh; AttentionLaunch.cpp launches them.
//
// Both are tiled over keys with an online softmax: a block holds a tile of
// query rows and walks the key tiles, so no [T, S] matrix is ever stored in
// device memory, and a causal block stops at the last key tile its rows see.
// Tiles live in shared memory as f32 (rows padded by one column so that the
// rows a warp reads fall in different banks); every sum is f32 (the CPU
// reference accumulates in f64, hence the tolerances of the tests).
//
// The kernels are instantiated for head-dimension capacities 16, 32, 64 and
// 128: a smaller head dimension runs in the next capacity up with its
// columns zero-padded (zeros change no dot product). Per kernel:
//   forward     one block per (batch·head, tile of 32 queries);
//   grad_rows   one block per (batch·head, query tile): pass 1 recomputes
//               each row's max and sum over the keys and stores the row's
//               log-sum-exp and delta = dout·out; pass 2 computes dq;
//   grad_keys   one block per (batch·kv head, key tile): loops over the
//               group's query heads and their query tiles and accumulates
//               dk and dv in registers.
// Every output element is written by exactly one thread that sums in a
// fixed order: the backward is deterministic, with no atomics.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ATTENTION_FLASH_CUH
#define LLMC_CUDA_ATTENTION_FLASH_CUH

#include "common/Prelude.cuh"
#include "attention/FlashLayout.cuh"

// ---- Flash attention, the scalar kernels ---------------------------------
#define LLMC_FLASH_THREADS 128

// Rows per tile of the forward kernel (queries and keys alike) and of the
// backward kernels, whose tiles are smaller for D = 128 to keep the six
// tiles of grad_keys under the 48 KiB of static shared memory.
template <int D> struct FlashTiles {
  static constexpr int forward = 32;
  static constexpr int backward = D <= 64 ? 32 : 16;
};

// tile[r][c] = head[(first + r) * rowStride + c] as f32 for the ROWS rows of
// the tile; rows past `length` and columns past headDim are zero.
// Consecutive threads read consecutive columns (coalesced).
template <typename T, int ROWS, int D>
__device__ void loadFlashTile(float (*tile)[D + 1], const T *head,
                              long long rowStride, long long first,
                              long long length, int headDim) {
  for (int i = threadIdx.x; i < ROWS * D; i += LLMC_FLASH_THREADS) {
    int r = i / D;
    int c = i % D;
    long long row = first + r;
    float value = 0.0f;
    if (row < length && c < headDim)
      value = loadValue(head[row * rowStride + c]);
    tile[r][c] = value;
  }
}

template <int D>
__device__ __forceinline__ float flashDot(const float *a, const float *b) {
  float sum = 0.0f;
#pragma unroll 16
  for (int d = 0; d < D; ++d)
    sum += a[d] * b[d];
  return sum;
}

// The sum and max over the `lanes` consecutive lanes that share a row
// (lanes is a power of two; every lane gets the same result).
template <int LANES> __device__ __forceinline__ float rowSum(float value) {
  for (int offset = 1; offset < LANES; offset *= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}
template <int LANES> __device__ __forceinline__ float rowMax(float value) {
  for (int offset = 1; offset < LANES; offset *= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

// Whether query `query` sees key `key` (both in range): by the blocks'
// global positions when keyPositions is given (ring attention's blocks,
// attention/FlashBlock.cuh: keyPositions[key] <= the row's position
// `queryPosition`), else by causal's index mask.
__device__ __forceinline__ bool flashSees(long long query, long long key,
                                          int causal, int queryPosition,
                                          const int *keyPositions) {
  if (keyPositions != nullptr)
    return keyPositions[key] <= queryPosition;
  return !causal || key <= query;
}

// The position of query row `query` (INT_MIN past the end: it sees nothing).
__device__ __forceinline__ int flashRowPosition(const int *queryPositions,
                                                long long query,
                                                long long seq) {
  if (queryPositions == nullptr || query >= seq)
    return -2147483647 - 1;
  return queryPositions[query];
}

// The smallest and largest of positions[first, first + count) that lie
// below `length` (INT_MAX and INT_MIN when none): the tile tests of the
// position mask. Every thread computes them alike, so a tile skipped is
// skipped by the whole block (its __syncthreads stay matched).
__device__ __forceinline__ int flashMinPosition(const int *positions,
                                                long long first, int count,
                                                long long length) {
  int least = 2147483647;
  for (int i = 0; i < count && first + i < length; ++i)
    least = min(least, positions[first + i]);
  return least;
}
__device__ __forceinline__ int flashMaxPosition(const int *positions,
                                                long long first, int count,
                                                long long length) {
  int most = -2147483647 - 1;
  for (int i = 0; i < count && first + i < length; ++i)
    most = max(most, positions[first + i]);
  return most;
}

// The scaled scores of a query row (queryRow, a row of a shared tile)
// against the KEYS keys of a key tile this thread owns (j = part + LANES *
// jj), -inf where masked (past kvSeq or not seen: flashSees), and the
// row's max over the tile (every one of its LANES threads gets it). The
// forward and grad_rows' first pass.
template <int D, int LANES, int KEYS>
__device__ __forceinline__ float
flashTileScores(float (&scores)[KEYS], const float *queryRow,
                const float (*keyTile)[D + 1], int part, long long firstKey,
                long long kvSeq, int causal, long long query, float scale,
                int queryPosition, const int *keyPositions) {
  float tileMax = flashNegativeInfinity();
#pragma unroll
  for (int jj = 0; jj < KEYS; ++jj) {
    int j = part + LANES * jj;
    long long key = firstKey + j;
    bool visible = key < kvSeq &&
                   flashSees(query, key, causal, queryPosition, keyPositions);
    scores[jj] = visible ? flashDot<D>(queryRow, keyTile[j]) * scale
                         : flashNegativeInfinity();
    tileMax = fmaxf(tileMax, scores[jj]);
  }
  return rowMax<LANES>(tileMax);
}

// ---- Forward ----------------------------------------------------------------
//
// Thread layout: LANES = 4 consecutive threads per query row r; each owns
// the keys j = part + LANES * jj of a tile and the output columns
// c = part + LANES * cc. Per key tile: 1. the scores of its keys, 2. the
// online softmax update (new max, rescaled sum and accumulators), 3. the
// probabilities times the value tile, which replaces the key tile in shared
// memory once the scores are done. With positions (queryPositions and
// keyPositions non-null, causal 0) the mask is theirs and a key tile whose
// smallest position is above the query tile's largest is skipped.
template <typename T, int D>
__device__ void flashForward(const T *q, const T *k, const T *v, T *out,
                             float *lse, int heads, int kvHeads, long long seq,
                             long long kvSeq, int headDim, int causal,
                             float scale, FlashLayout layout,
                             const int *queryPositions,
                             const int *keyPositions) {
  constexpr int BQ = FlashTiles<D>::forward;
  constexpr int BK = FlashTiles<D>::forward;
  constexpr int LANES = LLMC_FLASH_THREADS / BQ;
  constexpr int KEYS = BK / LANES;
  constexpr int COLUMNS = D / LANES;
  __shared__ float queryTile[BQ][D + 1];
  __shared__ float kvTile[BK][D + 1];
  __shared__ float probTile[BQ][BK + 1];

  // The last query tiles of a causal head have the most keys: they go
  // first, so that the short ones fill the machine's tail.
  long long queryTiles = (seq + BQ - 1) / BQ;
  long long head = blockIdx.x / queryTiles;
  long long firstQuery = (queryTiles - 1 - blockIdx.x % queryTiles) * BQ;
  long long kvHead = kvHeadOf(head, heads, kvHeads);
  const T *qHead = q + flashHeadAt(layout.q, head, heads);
  const T *kHead = k + flashHeadAt(layout.k, kvHead, kvHeads);
  const T *vHead = v + flashHeadAt(layout.v, kvHead, kvHeads);
  int r = threadIdx.x / LANES;
  int part = threadIdx.x % LANES;
  long long query = firstQuery + r;
  int queryPosition = flashRowPosition(queryPositions, query, seq);
  int lastPosition = keyPositions != nullptr
                         ? flashMaxPosition(queryPositions, firstQuery, BQ, seq)
                         : 0;

  loadFlashTile<T, BQ, D>(queryTile, qHead, layout.q.row, firstQuery, seq,
                          headDim);
  float runningMax = flashNegativeInfinity();
  float runningSum = 0.0f;
  float acc[COLUMNS];
#pragma unroll
  for (int cc = 0; cc < COLUMNS; ++cc)
    acc[cc] = 0.0f;

  long long keyEnd = causal ? min(kvSeq, firstQuery + BQ) : kvSeq;
  for (long long firstKey = 0; firstKey < keyEnd; firstKey += BK) {
    if (keyPositions != nullptr &&
        flashMinPosition(keyPositions, firstKey, BK, kvSeq) > lastPosition)
      continue; // no query of the tile sees a key of it
    __syncthreads(); // the previous tile's values are read
    loadFlashTile<T, BK, D>(kvTile, kHead, layout.k.row, firstKey, kvSeq,
                            headDim);
    __syncthreads();

    // 1. Scores of this thread's keys; masked ones are -inf.
    float scores[KEYS];
    float tileMax = flashTileScores<D, LANES, KEYS>(
        scores, queryTile[r], kvTile, part, firstKey, kvSeq, causal, query,
        scale, queryPosition, keyPositions);

    // 2. Online softmax. A row that has seen no visible key keeps a max of
    //    -inf: exponentials are then taken against 0, giving 0, not NaN.
    float newMax = fmaxf(runningMax, tileMax);
    float reference = newMax == flashNegativeInfinity() ? 0.0f : newMax;
    float correction = expf(runningMax - reference);
    float tileSum = 0.0f;
#pragma unroll
    for (int jj = 0; jj < KEYS; ++jj) {
      float p = expf(scores[jj] - reference);
      probTile[r][part + LANES * jj] = p;
      tileSum += p;
    }
    tileSum = rowSum<LANES>(tileSum);
    runningSum = runningSum * correction + tileSum;
    runningMax = newMax;
#pragma unroll
    for (int cc = 0; cc < COLUMNS; ++cc)
      acc[cc] *= correction;

    // 3. acc += p v, with the value tile in place of the key tile.
    __syncthreads();
    loadFlashTile<T, BK, D>(kvTile, vHead, layout.v.row, firstKey, kvSeq,
                            headDim);
    __syncthreads();
    for (int j = 0; j < BK; ++j) {
      float p = probTile[r][j];
#pragma unroll
      for (int cc = 0; cc < COLUMNS; ++cc)
        acc[cc] += p * kvTile[j][part + LANES * cc];
    }
  }

  // Normalize; no visible key (S = 0) gives a zero row, as on the CPU.
  // The log-sum-exp when asked for: -inf for a row that sees no key.
  if (query >= seq)
    return;
  if (lse != nullptr && part == 0)
    lse[head * seq + query] = runningSum > 0.0f
                                  ? runningMax + logf(runningSum)
                                  : flashNegativeInfinity();
  T *outRow = out + flashRowAt(layout.o, head, heads, query);
  float inverse = runningSum > 0.0f ? 1.0f / runningSum : 0.0f;
#pragma unroll
  for (int cc = 0; cc < COLUMNS; ++cc) {
    int c = part + LANES * cc;
    if (c < headDim)
      outRow[c] = storeValue<T>((double)(acc[cc] * inverse));
  }
}

// ---- Backward ---------------------------------------------------------------
//
// With p = exp(s - lse) recomputed per tile from the row's log-sum-exp:
//   dv = p^T dout, dp = dout v^T, ds = p (dp - delta), dq = ds k * scale,
//   dk = ds^T q * scale, where delta = sum_c dout * out per query row.

// grad_rows: one block per (batch·head, query tile). LANES threads per
// query row, as in the forward kernel. With `givenLse` (ring attention's
// blocks: the merged log-sum-exp of the whole ring) the first pass is
// skipped and the rows' lse is that one, copied to `lse` for grad_keys; a
// row with no visible key anywhere (-inf) takes +inf there, so that every
// p = exp(s - lse) of it is 0. Positions and tile skipping as the forward.
template <typename T, int D>
__device__ void flashGradRows(const T *q, const T *k, const T *v, const T *out,
                              const T *dout, T *dq, float *lse, float *delta,
                              int heads, int kvHeads, long long seq,
                              long long kvSeq, int headDim, int causal,
                              float scale, FlashLayout layout,
                              const float *givenLse,
                              const int *queryPositions,
                              const int *keyPositions) {
  constexpr int BQ = FlashTiles<D>::backward;
  constexpr int BK = FlashTiles<D>::backward;
  constexpr int LANES = LLMC_FLASH_THREADS / BQ;
  constexpr int KEYS = BK / LANES;
  constexpr int COLUMNS = D / LANES;
  __shared__ float queryTile[BQ][D + 1];
  __shared__ float doutTile[BQ][D + 1];
  __shared__ float keyTile[BK][D + 1];
  __shared__ float valueTile[BK][D + 1];
  __shared__ float dsTile[BQ][BK + 1];

  long long queryTiles = (seq + BQ - 1) / BQ;
  long long head = blockIdx.x / queryTiles;
  long long firstQuery = (queryTiles - 1 - blockIdx.x % queryTiles) * BQ;
  long long kvHead = kvHeadOf(head, heads, kvHeads);
  const T *kHead = k + flashHeadAt(layout.k, kvHead, kvHeads);
  const T *vHead = v + flashHeadAt(layout.v, kvHead, kvHeads);
  int r = threadIdx.x / LANES;
  int part = threadIdx.x % LANES;
  long long query = firstQuery + r;
  long long row = head * seq + query; // valid when query < seq
  long long outRow = flashRowAt(layout.o, head, heads, query);
  int queryPosition = flashRowPosition(queryPositions, query, seq);
  int lastPosition = keyPositions != nullptr
                         ? flashMaxPosition(queryPositions, firstQuery, BQ, seq)
                         : 0;

  loadFlashTile<T, BQ, D>(queryTile, q + flashHeadAt(layout.q, head, heads),
                          layout.q.row, firstQuery, seq, headDim);
  loadFlashTile<T, BQ, D>(doutTile, dout + flashHeadAt(layout.o, head, heads),
                          layout.o.row, firstQuery, seq, headDim);
  long long keyEnd = causal ? min(kvSeq, firstQuery + BQ) : kvSeq;

  // 1. The row's max and sum of exponentials (one pass over the keys), its
  //    log-sum-exp and delta = dout . out.
  float runningMax = flashNegativeInfinity();
  float runningSum = 0.0f;
  for (long long firstKey = 0; givenLse == nullptr && firstKey < keyEnd;
       firstKey += BK) {
    if (keyPositions != nullptr &&
        flashMinPosition(keyPositions, firstKey, BK, kvSeq) > lastPosition)
      continue;
    __syncthreads();
    loadFlashTile<T, BK, D>(keyTile, kHead, layout.k.row, firstKey, kvSeq,
                            headDim);
    __syncthreads();
    float scores[KEYS];
    float tileMax = flashTileScores<D, LANES, KEYS>(
        scores, queryTile[r], keyTile, part, firstKey, kvSeq, causal, query,
        scale, queryPosition, keyPositions);
    float newMax = fmaxf(runningMax, tileMax);
    float reference = newMax == flashNegativeInfinity() ? 0.0f : newMax;
    float tileSum = 0.0f;
#pragma unroll
    for (int jj = 0; jj < KEYS; ++jj)
      tileSum += expf(scores[jj] - reference);
    tileSum = rowSum<LANES>(tileSum);
    runningSum = runningSum * expf(runningMax - reference) + tileSum;
    runningMax = newMax;
  }
  // No visible key (S = 0): no tile below reads it.
  float rowLse = runningSum > 0.0f ? runningMax + logf(runningSum) : 0.0f;
  if (givenLse != nullptr && query < seq) {
    rowLse = givenLse[row];
    if (rowLse == flashNegativeInfinity())
      rowLse = -flashNegativeInfinity();
  }
  float rowDelta = 0.0f;
  if (query < seq)
    for (int c = part; c < headDim; c += LANES)
      rowDelta += loadValue(dout[outRow + c]) * loadValue(out[outRow + c]);
  rowDelta = rowSum<LANES>(rowDelta);
  if (query < seq && part == 0) {
    lse[row] = rowLse;
    delta[row] = rowDelta;
  }

  // 2. dq = sum over key tiles of ds k, ds recomputed per tile.
  float acc[COLUMNS];
#pragma unroll
  for (int cc = 0; cc < COLUMNS; ++cc)
    acc[cc] = 0.0f;
  for (long long firstKey = 0; firstKey < keyEnd; firstKey += BK) {
    if (keyPositions != nullptr &&
        flashMinPosition(keyPositions, firstKey, BK, kvSeq) > lastPosition)
      continue;
    __syncthreads();
    loadFlashTile<T, BK, D>(keyTile, kHead, layout.k.row, firstKey, kvSeq,
                            headDim);
    loadFlashTile<T, BK, D>(valueTile, vHead, layout.v.row, firstKey, kvSeq,
                            headDim);
    __syncthreads();
#pragma unroll
    for (int jj = 0; jj < KEYS; ++jj) {
      int j = part + LANES * jj;
      long long key = firstKey + j;
      bool visible =
          query < seq && key < kvSeq &&
          flashSees(query, key, causal, queryPosition, keyPositions);
      float ds = 0.0f;
      if (visible) {
        float p =
            expf(flashDot<D>(queryTile[r], keyTile[j]) * scale - rowLse);
        float dp = flashDot<D>(doutTile[r], valueTile[j]);
        ds = p * (dp - rowDelta);
      }
      dsTile[r][j] = ds;
    }
    __syncthreads();
    for (int j = 0; j < BK; ++j) {
      float ds = dsTile[r][j];
#pragma unroll
      for (int cc = 0; cc < COLUMNS; ++cc)
        acc[cc] += ds * keyTile[j][part + LANES * cc];
    }
  }
  if (query >= seq)
    return;
#pragma unroll
  for (int cc = 0; cc < COLUMNS; ++cc) {
    int c = part + LANES * cc;
    if (c < headDim)
      dq[flashRowAt(layout.q, head, heads, query) + c] =
          storeValue<T>((double)(acc[cc] * scale));
  }
}

// grad_keys: one block per (batch·kv head, key tile), after grad_rows (it
// reads lse and delta). Scores use the row layout (LANES threads per query
// row); the accumulation uses the key layout: LANES threads per key j, each
// owning the dk and dv columns c = part + LANES * cc.
// With positions, a query tile whose largest position is below this key
// tile's smallest is skipped.
template <typename T, int D>
__device__ void flashGradKeys(const T *q, const T *k, const T *v,
                              const T *dout, const float *lse,
                              const float *delta, T *dk, T *dv, int heads,
                              int kvHeads, long long seq, long long kvSeq,
                              int headDim, int causal, float scale,
                              FlashLayout layout, const int *queryPositions,
                              const int *keyPositions) {
  constexpr int BQ = FlashTiles<D>::backward;
  constexpr int BK = FlashTiles<D>::backward;
  constexpr int LANES = LLMC_FLASH_THREADS / BQ; // == LLMC_FLASH_THREADS / BK
  constexpr int KEYS = BK / LANES;
  constexpr int COLUMNS = D / LANES;
  __shared__ float queryTile[BQ][D + 1];
  __shared__ float doutTile[BQ][D + 1];
  __shared__ float keyTile[BK][D + 1];
  __shared__ float valueTile[BK][D + 1];
  __shared__ float probTile[BQ][BK + 1];
  __shared__ float dsTile[BQ][BK + 1];
  __shared__ float tileLse[BQ];
  __shared__ float tileDelta[BQ];

  long long keyTiles = (kvSeq + BK - 1) / BK;
  long long kvHead = blockIdx.x / keyTiles;
  long long firstKey = (blockIdx.x % keyTiles) * BK;
  long long b = kvHead / kvHeads;
  int group = heads / kvHeads;
  int firstHead = (int)(kvHead % kvHeads) * group;
  int r = threadIdx.x / LANES; // the row layout
  int part = threadIdx.x % LANES;
  int ownKey = threadIdx.x / LANES; // the key layout
  int firstPosition = keyPositions != nullptr
                          ? flashMinPosition(keyPositions, firstKey, BK, kvSeq)
                          : 0;

  loadFlashTile<T, BK, D>(keyTile, k + flashHeadAt(layout.k, kvHead, kvHeads),
                          layout.k.row, firstKey, kvSeq, headDim);
  loadFlashTile<T, BK, D>(valueTile,
                          v + flashHeadAt(layout.v, kvHead, kvHeads),
                          layout.v.row, firstKey, kvSeq, headDim);
  float dkAcc[COLUMNS], dvAcc[COLUMNS];
#pragma unroll
  for (int cc = 0; cc < COLUMNS; ++cc) {
    dkAcc[cc] = 0.0f;
    dvAcc[cc] = 0.0f;
  }

  // Causal: query tiles before this key tile see none of its keys.
  long long queryBegin = causal ? firstKey / BQ * BQ : 0;
  for (int h = firstHead; h < firstHead + group; ++h) {
    long long head = b * heads + h;
    for (long long firstQuery = queryBegin; firstQuery < seq;
         firstQuery += BQ) {
      if (keyPositions != nullptr &&
          flashMaxPosition(queryPositions, firstQuery, BQ, seq) <
              firstPosition)
        continue; // no query of the tile sees a key of this one
      // 1. The query, dout, lse and delta of this query tile.
      __syncthreads();
      loadFlashTile<T, BQ, D>(queryTile, q + flashHeadAt(layout.q, head, heads),
                              layout.q.row, firstQuery, seq, headDim);
      loadFlashTile<T, BQ, D>(doutTile,
                              dout + flashHeadAt(layout.o, head, heads),
                              layout.o.row, firstQuery, seq, headDim);
      if (threadIdx.x < BQ) {
        long long query = firstQuery + threadIdx.x;
        tileLse[threadIdx.x] = query < seq ? lse[head * seq + query] : 0.0f;
        tileDelta[threadIdx.x] =
            query < seq ? delta[head * seq + query] : 0.0f;
      }
      __syncthreads();

      // 2. p and ds for this thread's (row, key) pairs.
      long long query = firstQuery + r;
      int queryPosition = flashRowPosition(queryPositions, query, seq);
#pragma unroll
      for (int jj = 0; jj < KEYS; ++jj) {
        int j = part + LANES * jj;
        long long key = firstKey + j;
        bool visible =
            query < seq && key < kvSeq &&
            flashSees(query, key, causal, queryPosition, keyPositions);
        float p = 0.0f;
        float ds = 0.0f;
        if (visible) {
          p = expf(flashDot<D>(queryTile[r], keyTile[j]) * scale -
                   tileLse[r]);
          float dp = flashDot<D>(doutTile[r], valueTile[j]);
          ds = p * (dp - tileDelta[r]);
        }
        probTile[r][j] = p;
        dsTile[r][j] = ds;
      }
      __syncthreads();

      // 3. dv += p^T dout and dk += ds^T q for this thread's key.
      for (int i = 0; i < BQ; ++i) {
        float p = probTile[i][ownKey];
        float ds = dsTile[i][ownKey];
#pragma unroll
        for (int cc = 0; cc < COLUMNS; ++cc) {
          int c = part + LANES * cc;
          dvAcc[cc] += p * doutTile[i][c];
          dkAcc[cc] += ds * queryTile[i][c];
        }
      }
    }
  }

  long long key = firstKey + ownKey;
  if (key >= kvSeq)
    return;
  long long dkRow = flashRowAt(layout.k, kvHead, kvHeads, key);
  long long dvRow = flashRowAt(layout.v, kvHead, kvHeads, key);
#pragma unroll
  for (int cc = 0; cc < COLUMNS; ++cc) {
    int c = part + LANES * cc;
    if (c < headDim) {
      dk[dkRow + c] = storeValue<T>((double)(dkAcc[cc] * scale));
      dv[dvRow + c] = storeValue<T>((double)dvAcc[cc]);
    }
  }
}

// Entry points: llmc_flash_attention_{forward,grad_rows,grad_keys}_
// {f32,bf16}_d{16,32,64,128}.
#define LLMC_FLASH_KERNELS(T, SUFFIX, D)                                       \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_THREADS)             \
      llmc_flash_attention_forward_##SUFFIX##_d##D(                            \
          const T *q, const T *k, const T *v, T *out, float *lse, int heads,   \
          int kvHeads, long long seq, long long kvSeq, int headDim,            \
          int causal, float scale, FlashLayout layout) {                       \
    flashForward<T, D>(q, k, v, out, lse, heads, kvHeads, seq, kvSeq,          \
                       headDim, causal, scale, layout, nullptr, nullptr);      \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_THREADS)             \
      llmc_flash_attention_grad_rows_##SUFFIX##_d##D(                          \
          const T *q, const T *k, const T *v, const T *out, const T *dout,     \
          T *dq, float *lse, float *delta, int heads, int kvHeads,             \
          long long seq, long long kvSeq, int headDim, int causal,             \
          float scale, FlashLayout layout) {                                   \
    flashGradRows<T, D>(q, k, v, out, dout, dq, lse, delta, heads, kvHeads,    \
                        seq, kvSeq, headDim, causal, scale, layout, nullptr,   \
                        nullptr, nullptr);                                     \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_THREADS)             \
      llmc_flash_attention_grad_keys_##SUFFIX##_d##D(                          \
          const T *q, const T *k, const T *v, const T *dout, const float *lse, \
          const float *delta, T *dk, T *dv, int heads, int kvHeads,            \
          long long seq, long long kvSeq, int headDim, int causal,             \
          float scale, FlashLayout layout) {                                   \
    flashGradKeys<T, D>(q, k, v, dout, lse, delta, dk, dv, heads, kvHeads,     \
                        seq, kvSeq, headDim, causal, scale, layout, nullptr,   \
                        nullptr);                                              \
  }

#define LLMC_FLASH_HEAD_DIMS(T, SUFFIX)                                        \
  LLMC_FLASH_KERNELS(T, SUFFIX, 16)                                            \
  LLMC_FLASH_KERNELS(T, SUFFIX, 32)                                            \
  LLMC_FLASH_KERNELS(T, SUFFIX, 64)                                            \
  LLMC_FLASH_KERNELS(T, SUFFIX, 128)

// The unit of ring attention's blocks (units/FlashBlock.cu) takes the
// templates only, with entries of its own (attention/FlashBlock.cuh).
#ifndef LLMC_FLASH_TEMPLATES_ONLY
LLMC_FLASH_HEAD_DIMS(float, f32)
LLMC_FLASH_HEAD_DIMS(Bf16, bf16)
LLMC_FLASH_HEAD_DIMS(F16, f16)
#endif

#endif // LLMC_CUDA_ATTENTION_FLASH_CUH
