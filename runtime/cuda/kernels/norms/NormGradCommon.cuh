//===- NormGradCommon.cuh - the norm gradients' chunk constants -----------===//
//
// Rows per chunk and runs of chunks of the norm gradients' column sums,
// which both NormGrad.cuh and NormGradRows.cuh use, and which the launch
// (norms/NormGradLaunch.h, norms/NormsLaunch.cpp) and the CPU reference agree with.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_NORMS_NORMGRADCOMMON_CUH
#define LLMC_CUDA_NORMS_NORMGRADCOMMON_CUH

// ---- Norm gradients ---------------------------------------------------------
// Rows per chunk of the column sums: NormGradLaunch::kChunkRows
// (norms/NormGradLaunch.h) sizes the scratch with it; the CPU reference uses the
// same.
#define LLMC_NORM_GRAD_CHUNK 32
// Runs of chunks the finish kernel sums side by side per column.
#define LLMC_NORM_GRAD_RUNS 32

#endif // LLMC_CUDA_NORMS_NORMGRADCOMMON_CUH
