//===- FlashTcD64.cu - the tensor-core flash attention entries, D = 64 ----===//
//
// The flash unit (FlashAttention.cu) and the tensor-core entries of head
// dimension 64: compiled and loaded only when a launch needs one of them
// (where cuDNN runs bf16 attention, never).
//
//===----------------------------------------------------------------------===//
#include "attention/Flash.cuh"
#include "attention/FlashTc.cuh"
#include "attention/FlashTcForward.cuh"
#include "attention/FlashTcBackward.cuh"

LLMC_FLASH_TC_KERNELS(64)
