//===- DeviceKernels.cpp - launch any kernel of the CUDA table ------------===//
//
// CudaKernels::launch: a choice (carried by the plan, or selectKernel's),
// then the launch of the kind's family by the table of CUDA kernels
// (CudaKernels.def).
// The families compute the launch parameters from the operands' shapes as
// the CPU kernels do (runtime/cpu/); the shapes are trusted to be the
// checked ones of a validated program.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/KernelFamily.h"

#include <algorithm>
#include <array>

namespace llmc::rt::cuda {

namespace {

using LaunchFn = Status (*)(LaunchContext &, const KernelCall &,
                            const KernelChoice &);

/// Each kind's family launch, indexed by KernelKind (null: no CUDA kernel,
/// which the selection has refused already).
const std::array<LaunchFn, kNumKernels> &launchTable() {
  static const std::array<LaunchFn, kNumKernels> table = [] {
    std::array<LaunchFn, kNumKernels> t{};
#define LLMC_CUDA_KERNEL(Kind, Family)                                         \
  t[static_cast<size_t>(KernelKind::Kind)] = &family::launch##Family;
#include "runtime/cuda/kernels/CudaKernels.def"
    return t;
  }();
  return table;
}

} // namespace

Status CudaKernels::launch(const KernelChoice &choice, KernelKind kind,
                           const KernelAttrs &attrs,
                           const std::vector<TensorRef> &inputs,
                           const std::vector<TensorRef> &outputs,
                           cudaStream_t stream, const void *residualAddend) {
  // 1. Attention that cuDNN takes (attention/AttentionCudnn.cpp), before
  //    the carried choice: the flash kernels' on-demand units are then
  //    never compiled.
  if (kind == KernelKind::Attention || kind == KernelKind::AttentionGrad) {
    bool cudnn = false;
    LLMC_RETURN_IF_ERROR(
        launchCudnn(kind, attrs, inputs, outputs, stream, cudnn));
    if (cudnn)
      return Status::ok();
  }
  return launchChosen(choice, kind, attrs, inputs, outputs, stream,
                      residualAddend);
}

Status CudaKernels::launchChosen(const KernelChoice &choice, KernelKind kind,
                                 const KernelAttrs &attrs,
                                 const std::vector<TensorRef> &inputs,
                                 const std::vector<TensorRef> &outputs,
                                 cudaStream_t stream,
                                 const void *residualAddend) {
  // 2. What the choice needs: its units loaded, its scratch reserved.
  LLMC_RETURN_IF_ERROR(prepareChosen(choice));
  if (!outputs.empty() &&
      std::all_of(outputs.begin(), outputs.end(),
                  [](const TensorRef &t) { return t.numElements() == 0; }))
    return Status::ok();
  // 3. The family's launch.
  LaunchFn family = launchTable()[static_cast<size_t>(kind)];
  KernelCall call{kind, attrs, inputs, outputs};
  if (!family)
    return call.refuse("selected but not launched");
  LaunchContext context(*this, stream, residualAddend);
  return family(context, call, choice);
}

} // namespace llmc::rt::cuda
