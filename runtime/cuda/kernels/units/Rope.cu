//===- Rope.cu - the NVRTC unit of llmc.rope ------------------------------===//
//
// Rope's table kernel evaluates pow, cos and sin in double: on the prelude
// alone, beside the device unit rather than in it.
//
//===----------------------------------------------------------------------===//
#include "rope/Rope.cuh"
