//===- SoftmaxSelect.cpp - the entries of softmax -------------------------===//
//
// The selection of the softmax family: the warp-per-row entry of the
// types; the launch (runtime/cuda/kernels/softmax/SoftmaxLaunch.cpp) takes
// its long-row variant (a block per row) for contiguous rows of 1024
// elements and more.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectSoftmax(const KernelCall &call, KernelChoice &choice) {
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  LLMC_RETURN_IF_ERROR(call.expect(1, 1, 1, 0));
  std::string suffix = floatSuffix(inputs[0].dtype);
  if ((inputs[0].dtype == DType::BF16 || inputs[0].dtype == DType::F16) &&
      outputs[0].dtype == DType::F32)
    return runEntries(choice, {"llmc_softmax_" + suffix + "_f32"});
  if (suffix.empty() || outputs[0].dtype != inputs[0].dtype)
    return call.refuse("softmax covers f32, bf16 and f16, and bf16 or f16 to "
                       "f32");
  return runEntries(choice, {"llmc_softmax_" + suffix});
}

} // namespace llmc::rt::cuda
