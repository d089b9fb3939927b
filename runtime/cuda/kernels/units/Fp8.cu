//===- Fp8.cu - the NVRTC unit of FP8 training's amax and scaled casts ----===//
//
// A unit of its own: only fp8 programs load it, and it needs nothing of the
// device unit's families.
//
//===----------------------------------------------------------------------===//
#include "fp8/Fp8.cuh"
