//===- NormGradRows.cu - the NVRTC unit of the norm grads by rows --------===//
//
// On the prelude alone: in the device unit their eight entries took GPT-2's
// cold NVRTC from 24.8 to 42.6 s on the H200's host.
//
//===----------------------------------------------------------------------===//
#include "norms/NormGradRows.cuh"
