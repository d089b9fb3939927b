//===- FlashAttention.cu - the NVRTC unit of flash attention --------------===//
//
// The scalar flash attention kernels with their entries (f32 and bf16, head
// dimensions 16 to 128), and the tensor-core kernels' templates, whose
// entries are units of one head dimension each (FlashTcD64.cu,
// FlashTcD128.cu), compiled on demand. The flash unit alone took 13.8 s of
// NVRTC for sm_90 on the 2-core build machine.
//
//===----------------------------------------------------------------------===//
#include "attention/Flash.cuh"
#include "attention/FlashTc.cuh"
#include "attention/FlashTcForward.cuh"
#include "attention/FlashTcBackward.cuh"
