//===- KernelPlan.h - a carried CUDA plan as the launchers see it -*- C++ -*-===//
//
// The Executable carries codegen's choices as plain data (runtime/CudaPlan.h);
// the launchers take a KernelChoice and the multi-tensor launches a
// MultiTensorGroup. These convert one into the other, both ways (codegen
// writes the plan from the selection's KernelChoice), with nothing chosen
// or generated here.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_KERNELPLAN_H
#define LLMC_RUNTIME_CUDA_KERNELS_KERNELPLAN_H

#include "runtime/CudaPlan.h"
#include "runtime/cuda/kernels/KernelChoice.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorGroup.h"

namespace llmc::rt::cuda {

/// The launchers' view of a carried choice (the elementwise unit's entry
/// and layout, without its source: the plan's units hold it).
KernelChoice kernelChoice(const CudaCommandPlan &plan);
/// The carried form of a selection's choice (its elementwise source goes
/// to the plan's units separately).
CudaCommandPlan commandPlan(const KernelChoice &choice);

MultiTensorGroup multiTensorGroup(const CudaMultiTensorPlan &plan);
CudaMultiTensorPlan multiTensorPlan(const MultiTensorGroup &group);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_KERNELPLAN_H
