//===- MoeLaunch.cpp - MoE routing, dispatch and combine ------------------===//
//
// The MoE family (moe/Moe.cuh): top-k routing, a warp per token; the slot
// of every (token, choice) pair in one block (expert e's thread scans the
// pairs in order, as the CPU); dispatch and combine grid-stride over the
// moved elements. The selection is codegen's
// (codegen/cuda/moe/MoeSelect.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/libs/CudaModule.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

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
