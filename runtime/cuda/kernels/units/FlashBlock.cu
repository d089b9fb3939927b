//===- FlashBlock.cu - the NVRTC unit of ring attention's blocks ----------===//
//
// The position-masked flash kernels of AttentionBlock and AttentionBlockGrad
// (attention/FlashBlock.cuh) on the scalar templates of attention/Flash.cuh,
// without the flash unit's own entries: compiled and loaded only when a
// launch needs one of them (programs with context parallelism).
//
//===----------------------------------------------------------------------===//
#define LLMC_FLASH_TEMPLATES_ONLY
#include "attention/FlashBlock.cuh"
