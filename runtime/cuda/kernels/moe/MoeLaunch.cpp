//===- MoeLaunch.cpp - MoE routing, dispatch and combine ------------------===//
//
// The MoE family (moe/Moe.cuh): top-k routing, a warp per token; the slot
// of every (token, choice) pair in one block (expert e's thread scans the
// pairs in order, as the CPU); dispatch and combine grid-stride over the
// moved elements.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/libs/CudaModule.h"

#include <algorithm>
#include <cstdint>
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
          "moe_top_k covers f32 and bf16 logits [N, E] (weights of "
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
          "moe_dispatch and moe_combine cover f32 and bf16 with i32 "
          "or i64 indices [N, k]");
    // The slot of every (token, choice) pair, in the scratch.
    choice.scratchBytes =
        static_cast<size_t>(indices.numElements()) * sizeof(long long);
    if (dispatch)
      return runEntries(choice, {"llmc_moe_slots_" + index,
                                 "llmc_moe_dispatch_" + type + "_" + index});
    std::string weights = floatSuffix(inputs[1].dtype);
    if (weights.empty() || (type == "f32" && weights != "f32"))
      return call.refuse(
          "moe_combine covers weights of the outputs' type, or f32 "
          "weights with bf16 outputs");
    return runEntries(
        choice, {"llmc_moe_slots_" + index,
                 "llmc_moe_combine_" + type + "_" + weights + "_" + index});
  }
  default:
    return call.refuse("");
  }
}

Status family::launchMoe(LaunchContext &context, const KernelCall &call,
                         const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  switch (call.kind) {
  case KernelKind::MoeTopK: {
    const TensorRef &logits = inputs[0];
    const void *source = logits.data;
    void *weights = outputs[0].data, *ids = outputs[1].data;
    long long tokens = logits.shape[0], experts = logits.shape[1],
              k = attrs.ints[0];
    int normalize = static_cast<int>(attrs.ints[1]);
    std::vector<void *> args = {&source,  &weights, &ids,      &tokens,
                                &experts, &k,       &normalize};
    return context.launch(entries[0], context.gridFor(tokens, 128), 128, 0,
                          args);
  }
  case KernelKind::MoeDispatch:
  case KernelKind::MoeCombine: {
    bool dispatch = call.kind == KernelKind::MoeDispatch;
    const TensorRef &indices = inputs[dispatch ? 1 : 2];
    const TensorRef &slotsOf = dispatch ? *out : inputs[0]; // [E, C, D]
    long long pairs = indices.numElements(), k = indices.shape[1],
              experts = slotsOf.shape[0], capacity = slotsOf.shape[1],
              dim = slotsOf.shape[2];
    const void *ids = indices.data;
    void *slots = context.scratch();
    // 1. The slots, one block (thread e scans the pairs for expert e).
    std::vector<void *> slotArgs = {&ids, &pairs, &experts, &capacity, &slots};
    LLMC_RETURN_IF_ERROR(context.launch(entries[0], 1, 256, 0, slotArgs));
    void *result = out->data;
    if (dispatch) {
      // 2. Unused slots stay zero, as on the CPU.
      LLMC_CUDA_CHECK(
          cudaMemsetAsync(result, 0, out->bytes(), context.stream()),
          "cudaMemsetAsync(moe_dispatch)");
      const void *source = inputs[0].data;
      std::vector<void *> args = {&source, &ids, &slots, &result,
                                  &pairs,  &k,   &dim,   &capacity};
      return context.launch(entries[1], context.gridFor(pairs * dim, 256), 256,
                            0, args);
    }
    const void *expertOut = inputs[0].data, *weights = inputs[1].data;
    long long tokens = out->shape[0];
    std::vector<void *> args = {&expertOut, &weights, &ids, &slots,   &result,
                                &tokens,    &k,       &dim, &capacity};
    return context.launch(entries[1], context.gridFor(tokens * dim, 256), 256,
                          0, args);
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
