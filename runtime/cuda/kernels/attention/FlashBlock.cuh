//===- FlashBlock.cuh - flash kernels of ring attention's blocks ----------===//
//
// The entries of AttentionBlock and AttentionBlockGrad (Kernels.def): the
// scalar flash templates of Flash.cuh with the mask of the blocks' global
// positions (key s visible to query t when kpos[s] <= qpos[t], i32), tiles
// whose keys all come after their queries skipped; the backward reads the
// ring's merged log-sum-exp instead of recomputing the rows' statistics.
// bhtd operands only (the ring's); f32, bf16 and f16 storage, f32 sums.
// AttentionLaunch.cpp launches them; units/FlashBlock.cu compiles them on
// demand (only programs with context parallelism have the kinds).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ATTENTION_FLASHBLOCK_CUH
#define LLMC_CUDA_ATTENTION_FLASHBLOCK_CUH

#include "attention/Flash.cuh"

// Entry points: llmc_flash_block_{forward,grad_rows,grad_keys}_
// {f32,bf16,f16}_d{16,32,64,128}.
#define LLMC_FLASH_BLOCK_KERNELS(T, SUFFIX, D)                                 \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_THREADS)             \
      llmc_flash_block_forward_##SUFFIX##_d##D(                                \
          const T *q, const T *k, const T *v, T *out, float *lse,              \
          const int *queryPositions, const int *keyPositions, int heads,       \
          int kvHeads, long long seq, long long kvSeq, int headDim,            \
          float scale, FlashLayout layout) {                                   \
    flashForward<T, D>(q, k, v, out, lse, heads, kvHeads, seq, kvSeq,          \
                       headDim, 0, scale, layout, queryPositions,              \
                       keyPositions);                                          \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_THREADS)             \
      llmc_flash_block_grad_rows_##SUFFIX##_d##D(                              \
          const T *q, const T *k, const T *v, const T *out, const T *dout,     \
          const float *givenLse, T *dq, float *lse, float *delta,              \
          const int *queryPositions, const int *keyPositions, int heads,       \
          int kvHeads, long long seq, long long kvSeq, int headDim,            \
          float scale, FlashLayout layout) {                                   \
    flashGradRows<T, D>(q, k, v, out, dout, dq, lse, delta, heads, kvHeads,    \
                        seq, kvSeq, headDim, 0, scale, layout, givenLse,       \
                        queryPositions, keyPositions);                         \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(LLMC_FLASH_THREADS)             \
      llmc_flash_block_grad_keys_##SUFFIX##_d##D(                              \
          const T *q, const T *k, const T *v, const T *dout, const float *lse, \
          const float *delta, T *dk, T *dv, const int *queryPositions,         \
          const int *keyPositions, int heads, int kvHeads, long long seq,      \
          long long kvSeq, int headDim, float scale, FlashLayout layout) {     \
    flashGradKeys<T, D>(q, k, v, dout, lse, delta, dk, dv, heads, kvHeads,     \
                        seq, kvSeq, headDim, 0, scale, layout,                 \
                        queryPositions, keyPositions);                         \
  }

#define LLMC_FLASH_BLOCK_HEAD_DIMS(T, SUFFIX)                                  \
  LLMC_FLASH_BLOCK_KERNELS(T, SUFFIX, 16)                                      \
  LLMC_FLASH_BLOCK_KERNELS(T, SUFFIX, 32)                                      \
  LLMC_FLASH_BLOCK_KERNELS(T, SUFFIX, 64)                                      \
  LLMC_FLASH_BLOCK_KERNELS(T, SUFFIX, 128)

LLMC_FLASH_BLOCK_HEAD_DIMS(float, f32)
LLMC_FLASH_BLOCK_HEAD_DIMS(Bf16, bf16)
LLMC_FLASH_BLOCK_HEAD_DIMS(F16, f16)

#endif // LLMC_CUDA_ATTENTION_FLASHBLOCK_CUH
