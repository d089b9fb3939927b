//===- VirtualCollectives.cu - the NVRTC unit of virtual ranks' reductions ===//
//
// A unit of its own, carried by every program with collectives and loaded
// only by a session of virtual ranks on one GPU (the NCCL session never
// needs it): docs/distributed.md, "Virtual ranks on one GPU".
//
//===----------------------------------------------------------------------===//
#include "collective/VirtualCollectives.cuh"
