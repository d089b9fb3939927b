//===- FusedKernels.h - one CUDA kernel per elementwise fused region -*- C++ -*-===//
//
// Codegen announces each elementwise llmc.fused region with a
// FusedElementwise marker command before the region's own commands
// (Kernels.def). This generates one CUDA C++ kernel for the region: a
// grid-stride loop whose body evaluates the region's ops per element, in
// order, each rounded to its result type exactly as its own kernel would
// store it (bf16 round-to-nearest-even on every bf16 result), so a fused
// region computes the same bits as its commands run one by one. Only the
// region's results are written; the intermediates never touch memory.
//
// Covered: the elementwise kinds of ElementwiseKernels.h on the region's
// common shape (integer compares included), iotas, and broadcasts of region
// inputs (constants inside the region are inputs too) into that shape.
// Anything else (a reshape inside the region, a broadcast of an
// intermediate) is refused with the reason, and the session runs the
// region's commands one by one, unless the program was compiled for fused
// kernels and the region's intermediates have no storage: then the session
// refuses the program at creation (regionNeedsOneKernel).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_FUSEDKERNELS_H
#define LLMC_RUNTIME_CUDA_FUSEDKERNELS_H

#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <string>

namespace llmc::rt::cuda {

struct FusedSource {
  std::string source; ///< the CUDA C++ translation unit
  std::string entry;  ///< its kernel: (inputs..., outputs..., long long n)
  int64_t elements = 0;
};

/// Generates the kernel of the region whose marker is command `marker` of
/// `program`. Unimplemented, with the reason, when the region has something
/// the generator does not cover.
Status generateFusedKernel(const RankProgram &program, size_t marker,
                           FusedSource &out);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_FUSEDKERNELS_H
