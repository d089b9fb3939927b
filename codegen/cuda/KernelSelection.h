//===- KernelSelection.h - which CUDA kernel runs a command -----*- C++ -*-===//
//
// Codegen's choice of kernel for one command, made from the command's
// kind, attributes and operand types and shapes alone, without a device:
// a generated elementwise unit, entries of the hand-written units
// (DeviceUnits.h), a cuBLASLt GEMM, or a copy (a KernelChoice,
// runtime/cuda/kernels/KernelChoice.h); or the refusal
// "no CUDA kernel for <kind>(<types>) -> <types> yet: <why>". selectKernel
// dispatches through the one table of CUDA kernels (CudaKernels.def) to
// the kind's family (codegen/cuda/<family>/<Family>Select.cpp).
// planCudaKernels (PlanKernels.h) stores the choices in the Executable's
// plan, which CudaSession runs; checkCudaCoverage (CudaCoverage.h) and the
// kernel tests (LaunchSelected.h) decide through the same functions, so
// the three can never disagree. The runtime never selects.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_KERNELSELECTION_H
#define LLMC_CODEGEN_CUDA_KERNELSELECTION_H

#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/KernelChoice.h"

#include <vector>

namespace llmc::rt::cuda {

/// Chooses the kernel of one launch (operand data pointers are not read).
/// Unimplemented "no CUDA kernel for <launch> yet: <why>" when no CUDA
/// kernel covers the kind with these types; InvalidArgument when the
/// operand or attribute counts are not Kernels.def's.
Status selectKernel(KernelKind kind, const KernelAttrs &attrs,
                    const std::vector<TensorRef> &inputs,
                    const std::vector<TensorRef> &outputs, KernelChoice &choice);

/// The operands of `command` in rank `program`, with null data pointers.
void commandOperands(const RankProgram &program, const Command &command,
                     std::vector<TensorRef> &inputs,
                     std::vector<TensorRef> &outputs);

/// The choice for a command of a one-rank program, errors prefixed with
/// "at <origin>: " exactly as CudaSession reports them: collectives and
/// host steps are refused (they do not run on one GPU yet).
Status selectCommand(const RankProgram &program, const Command &command,
                     KernelChoice &choice);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_KERNELSELECTION_H
