//===- DeviceKernels.cu - the NVRTC unit of most hand-written kernels -----===//
//
// Every hand-written kernel of a training step but attention, rope and the
// widest rows-in-registers entries, which are units of their own so that
// this one's cold NVRTC compile (the longest of a session's start) stays
// short: NVRTC compiles a unit serially and the units side by side.
// Measured with NVRTC for sm_90 on the 2-core build machine: with the flash
// attention in it this unit took 34-47 s; without it 16.2 s.
//
//===----------------------------------------------------------------------===//
#include "common/Prelude.cuh"
#include "common/BlockMaxSum.cuh"
#include "movement/Movement.cuh"
#include "elementwise/IntegerCompare.cuh"
#include "reduce/Reduce.cuh"
#include "norms/Norms.cuh"
#include "softmax/Softmax.cuh"
#include "optimizer/LrSchedule.cuh"
#include "reduce/ReduceRows.cuh"
#include "moe/Moe.cuh"
#include "norms/NormRows4.cuh"
#include "softmax/SoftmaxLong.cuh"
#include "loss/CrossEntropy.cuh"
#include "loss/CrossEntropyGrad.cuh"
#include "norms/NormGrad.cuh"
#include "init/Init.cuh"
