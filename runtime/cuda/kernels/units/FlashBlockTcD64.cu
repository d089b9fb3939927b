//===- FlashBlockTcD64.cu - tensor-core ring attention blocks, D = 64 -----===//
//
// The position-masked tensor-core flash kernels of AttentionBlock and
// AttentionBlockGrad (LLMC_FLASH_BLOCK_TC_KERNELS, attention/FlashTc.cuh)
// of head dimension 64: compiled and loaded only when a launch needs one of
// them (programs with context parallelism, bf16, on sm_80 and later).
//
//===----------------------------------------------------------------------===//
#include "attention/FlashTc.cuh"
#include "attention/FlashTcForward.cuh"
#include "attention/FlashTcBackward.cuh"

LLMC_FLASH_BLOCK_TC_KERNELS(64)
