//===- FamilySelect.h - what a kernel family selects ------------*- C++ -*-===//
//
// Private to codegen/cuda/. Every kind of Kernels.def that runs on the GPU
// has a line in CudaKernels.def naming its family; a family selects, in
// codegen/cuda/<family>/<Family>Select.cpp, declared here from that table:
//
//   Status family::select<F>(const KernelCall &, KernelChoice &);
//     which entries (or generated unit, or GEMM) run the call, from its
//     kind, attributes and operand types and shapes alone (no device); or
//     the refusal "no CUDA kernel for <launch> yet: <why>".
//
// Its launch, family::launch<F>, is the runtime's
// (runtime/cuda/kernels/<family>/<F>Launch.cpp, KernelFamily.h), and reads
// the choice made here. selectKernel (KernelSelection.h) dispatches through
// the table; nothing else names a family.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_FAMILYSELECT_H
#define LLMC_CODEGEN_CUDA_FAMILYSELECT_H

#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/KernelChoice.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// `choice` runs `entries` of the hand-written units (in launch order, or
/// the candidates the launch picks from by alignment).
Status runEntries(KernelChoice &choice, std::vector<std::string> entries);

namespace family {
#define LLMC_CUDA_FAMILY(Family)                                               \
  Status select##Family(const KernelCall &call, KernelChoice &choice);
#include "runtime/cuda/kernels/CudaKernels.def"
} // namespace family

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_FAMILYSELECT_H
