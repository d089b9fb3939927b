//===- LaunchSelected.h - a kernel chosen on the spot, launched -*- C++ -*-===//
//
// For the kernel tests, which launch one kind at a time without a program:
// the choice is made here with the selection (selectKernel), as codegen
// makes it for a plan, and the runtime's CudaKernels then prepares or
// launches that choice (cuDNN attention still first where it loads, as for
// a carried choice). The runtime itself never selects: CudaSession runs the
// choices its plan carries.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_LAUNCHSELECTED_H
#define LLMC_CODEGEN_CUDA_LAUNCHSELECTED_H

#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <vector>

namespace llmc::rt::cuda {

/// selectKernel, then kernels.prepare(choice, ...): Unimplemented "no CUDA
/// kernel for <kind>(<types>) yet" when nothing covers the launch.
Status prepareSelected(CudaKernels &kernels, KernelKind kind,
                       const KernelAttrs &attrs,
                       const std::vector<TensorRef> &inputs,
                       const std::vector<TensorRef> &outputs);

/// selectKernel, then kernels.launch(choice, ...) on `stream`.
Status launchSelected(CudaKernels &kernels, KernelKind kind,
                      const KernelAttrs &attrs,
                      const std::vector<TensorRef> &inputs,
                      const std::vector<TensorRef> &outputs,
                      cudaStream_t stream,
                      const void *residualAddend = nullptr);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_LAUNCHSELECTED_H
