//===- OptimizerSelect.cpp - the learning-rate schedule -------------------===//
//
// The selection of the optimizer family's one kernel of Kernels.def, the
// learning rate of a step (optimizer/LrSchedule.cuh). The multi-tensor
// groups of the update are planned apart (optimizer/MultiTensor.h); the
// launch is runtime/cuda/kernels/optimizer/OptimizerLaunch.cpp.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectOptimizer(const KernelCall &call, KernelChoice &choice) {
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  LLMC_RETURN_IF_ERROR(call.expect(1, 1, 3, 2));
  std::string suffix = floatSuffix(outputs[0].dtype);
  if (suffix.empty() || inputs[0].dtype != outputs[0].dtype)
    return call.refuse("lr_schedule covers f32, bf16 and f16");
  return runEntries(choice, {"llmc_lr_schedule_" + suffix});
}

} // namespace llmc::rt::cuda
