//===- PlanKernels.h - codegen's CUDA kernel plan of a program --*- C++ -*-===//
//
// Fills RankProgram::cuda (runtime/CudaPlan.h) when the Executable is
// written: each command's kernel through the selection (selectCommand),
// each elementwise fused region's kernel (generateFusedKernel), the
// multi-tensor groups (planMultiTensorGroups), and the CUDA sources of
// every unit these need, generated and hand-written. codegen's
// buildExecutable calls it; so do tests that build programs by hand before
// they create a CudaSession. CudaSession itself only reads the plan.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_PLANKERNELS_H
#define LLMC_CODEGEN_CUDA_PLANKERNELS_H

#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <memory>
#include <vector>

namespace llmc::rt::cuda {

/// The plan of one rank program (replacing any it had).
void planCudaKernels(RankProgram &program);
/// The plans of every rank program of `executable` and of its companions.
void planCudaKernels(Executable &executable);

/// Compiles every unit of the plans of `executable` and its companions
/// with NVRTC for `arch` ("sm_90"; llmc compile --cuda-arch) and stores the
/// cubins: a GPU of that architecture then starts without compiling, any
/// other compiles the carried source. InvalidArgument for an architecture
/// that is not "sm_<digits>" or a unit that does not compile (naming it).
Status compileCudaKernels(Executable &executable, const std::string &arch);

/// The hand-written NVRTC units (kernels/units/*.cu, includes expanded) as
/// a plan carries them; Internal when an embedded file is missing (a broken
/// build).
Status handWrittenUnits(std::vector<CudaUnit> &units);

class CudaKernels;
/// CudaKernels::create with the hand-written units only (handWrittenUnits):
/// for the kernel tests, whose launches are chosen by selectKernel on the
/// spot and whose generated units come with the choice.
Status createHandWrittenKernels(std::unique_ptr<CudaKernels> &kernels);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_PLANKERNELS_H
