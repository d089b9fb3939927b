//===- NormRows8.cu - the NVRTC unit of the norms' 8-pack row entries -----===//
//
// Rows of up to 8 packs per lane (64 doubles held per lane) on the prelude
// alone, as the norm gradients' rows (NormGradRows.cu).
//
//===----------------------------------------------------------------------===//
#include "norms/NormRows8.cuh"
