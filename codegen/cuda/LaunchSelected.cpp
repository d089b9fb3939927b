//===- LaunchSelected.cpp - a kernel chosen on the spot, launched ---------===//
#include "codegen/cuda/LaunchSelected.h"

#include "codegen/cuda/KernelSelection.h"

namespace llmc::rt::cuda {

Status prepareSelected(CudaKernels &kernels, KernelKind kind,
                       const KernelAttrs &attrs,
                       const std::vector<TensorRef> &inputs,
                       const std::vector<TensorRef> &outputs) {
  KernelChoice choice;
  LLMC_RETURN_IF_ERROR(selectKernel(kind, attrs, inputs, outputs, choice));
  return kernels.prepare(choice, kind, attrs, inputs, outputs);
}

Status launchSelected(CudaKernels &kernels, KernelKind kind,
                      const KernelAttrs &attrs,
                      const std::vector<TensorRef> &inputs,
                      const std::vector<TensorRef> &outputs,
                      cudaStream_t stream, const void *residualAddend) {
  KernelChoice choice;
  LLMC_RETURN_IF_ERROR(selectKernel(kind, attrs, inputs, outputs, choice));
  return kernels.launch(choice, kind, attrs, inputs, outputs, stream,
                        residualAddend);
}

} // namespace llmc::rt::cuda
