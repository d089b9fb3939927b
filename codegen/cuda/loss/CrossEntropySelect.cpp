//===- CrossEntropySelect.cpp - the loss and its gradient -----------------===//
//
// The selection of the cross-entropy family (loss/CrossEntropy.cuh,
// CrossEntropyGrad.cuh): the rows' entries (scalar and "_vec", which the
// launch takes when the row length and the pointers allow), the finish or
// the gradient's weight, and their scratch. The launches are
// runtime/cuda/kernels/loss/CrossEntropyLaunch.cpp.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectCrossEntropy(const KernelCall &call,
                                  KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::CrossEntropy: {
    // Outputs: the loss, and optionally each position's log-sum-exp.
    if (inputs.size() != 2 || outputs.empty() || outputs.size() > 2 ||
        attrs.ints.size() < 3)
      return Status::error(StatusCode::InvalidArgument,
                           "CrossEntropy: expected 2 inputs, 1 or 2 outputs "
                           "and 3 ints");
    std::string suffix = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(inputs[1].dtype);
    if (suffix.empty() || index.empty() || outputs[0].dtype != DType::F32 ||
        inputs[0].rank() < 1)
      return call.refuse("cross_entropy covers f32, bf16 and f16 logits, i32 "
                         "or i64 targets, an f32 result");
    if (outputs.size() == 2 &&
        (outputs[1].dtype != DType::F32 ||
         outputs[1].numElements() != inputs[1].numElements()))
      return call.refuse("cross_entropy's lse is f32, one per position");
    if (inputs[1].numElements() > 0x7fffffffLL ||
        inputs[0].shape.back() > 0x7fffffffLL)
      return call.refuse("more than 2^31 - 1 positions or classes");
    // One double loss per position.
    choice.scratchBytes =
        static_cast<size_t>(std::max<int64_t>(1, inputs[1].numElements())) *
        sizeof(double);
    // The launch takes the "_vec" row entry (16-byte loads) when the row
    // length and the pointer allow.
    return runEntries(
        choice, {"llmc_cross_entropy_rows_" + suffix + "_" + index,
                 "llmc_cross_entropy_rows_" + suffix + "_" + index + "_vec",
                 "llmc_cross_entropy_finish_" + index});
  }
  case KernelKind::CrossEntropyGrad: {
    // Inputs: logits, targets, dloss, and optionally the forward's lse.
    LLMC_RETURN_IF_ERROR(call.expect(3, 4, 3, 0));
    std::string suffix = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(inputs[1].dtype);
    if (suffix.empty() || index.empty() || inputs[2].dtype != DType::F32 ||
        outputs[0].dtype != inputs[0].dtype || inputs[0].rank() < 1)
      return call.refuse(
          "cross_entropy_grad covers f32, bf16 and f16 logits (dlogits "
          "of their type), i32 or i64 targets, an f32 dloss");
    if (inputs.size() == 4 &&
        (inputs[3].dtype != DType::F32 ||
         inputs[3].numElements() != inputs[1].numElements()))
      return call.refuse("cross_entropy_grad's lse is f32, one per position");
    if (inputs[1].numElements() > 0x7fffffffLL ||
        inputs[0].shape.back() > 0x7fffffffLL)
      return call.refuse("more than 2^31 - 1 positions or classes");
    // The weight of a mean or sum (one double).
    choice.scratchBytes = sizeof(double);
    // The launch takes the "_vec" row entry (16-byte moves) when the
    // row length and the pointers allow.
    return runEntries(
        choice, {"llmc_cross_entropy_grad_weight_" + index,
                 "llmc_cross_entropy_grad_" + suffix + "_" + index,
                 "llmc_cross_entropy_grad_" + suffix + "_" + index + "_vec"});
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
