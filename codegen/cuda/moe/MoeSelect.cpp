//===- MoeSelect.cpp - MoE routing, dispatch and combine ------------------===//
//
// The selection of the MoE family (moe/Moe.cuh): top-k routing, and the
// slots and moves of dispatch and combine with the slots' scratch. The
// launches are runtime/cuda/kernels/moe/MoeLaunch.cpp.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectMoe(const KernelCall &call, KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::MoeTopK: {
    if (inputs.size() != 1 || outputs.size() != 2 || attrs.ints.size() < 2)
      return Status::error(StatusCode::InvalidArgument,
                           "MoeTopK: expected 1 input, 2 outputs and 2 ints");
    std::string type = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(outputs[1].dtype);
    if (type.empty() || index.empty() || outputs[0].dtype != inputs[0].dtype ||
        inputs[0].rank() != 2)
      return call.refuse(
          "moe_top_k covers f32, bf16 and f16 logits [N, E] (weights of "
          "their type) with i32 or i64 indices");
    if (inputs[0].shape[1] > 256 || attrs.ints[0] > 256)
      return call.refuse("moe_top_k covers at most 256 experts");
    return runEntries(choice, {"llmc_moe_topk_" + type + "_" + index});
  }
  case KernelKind::MoeDispatch:
  case KernelKind::MoeCombine: {
    bool dispatch = call.kind == KernelKind::MoeDispatch;
    LLMC_RETURN_IF_ERROR(call.expect(dispatch ? 2 : 3, dispatch ? 2 : 3, 0, 0));
    const TensorRef &indices = inputs[dispatch ? 1 : 2];
    std::string type = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(indices.dtype);
    if (type.empty() || index.empty() || outputs[0].dtype != inputs[0].dtype ||
        indices.rank() != 2)
      return call.refuse(
          "moe_dispatch and moe_combine cover f32, bf16 and f16 with i32 "
          "or i64 indices [N, k]");
    // The slot of every (token, choice) pair, in the scratch.
    choice.scratchBytes =
        static_cast<size_t>(indices.numElements()) * sizeof(long long);
    if (dispatch)
      return runEntries(choice, {"llmc_moe_slots_" + index,
                                 "llmc_moe_dispatch_" + type + "_" + index});
    std::string weights = floatSuffix(inputs[1].dtype);
    if (weights.empty() || (weights != type && weights != "f32"))
      return call.refuse(
          "moe_combine covers weights of the outputs' type, or f32 "
          "weights with bf16 or f16 outputs");
    return runEntries(
        choice, {"llmc_moe_slots_" + index,
                 "llmc_moe_combine_" + type + "_" + weights + "_" + index});
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
