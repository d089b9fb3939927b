//===- ElementwiseLaunch.cpp - elementwise kernels, the fused marker ------===//
//
// The elementwise family: one generated unit per signature
// (ElementwiseKernels.h; its math is CudaKernels.def's), compiled on first
// use, its scalar or vectorized entry by alignment (launchElementwise,
// libs/CudaModule.h); integer compares run elementwise/IntegerCompare.cuh.
// And the fused family: a FusedElementwise marker, which launches nothing.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/kernels/elementwise/ElementwiseKernels.h"
#include "runtime/cuda/libs/CudaModule.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

// The marker of a fused region launches nothing itself: the session runs
// the region's kernel (FusedKernels.h) or, where the generator refused it,
// the commands that follow.
Status family::selectFused(const KernelCall &, KernelChoice &) {
  return Status::ok();
}
Status family::launchFused(LaunchContext &, const KernelCall &,
                           const KernelChoice &) {
  return Status::ok();
}

Status family::selectElementwise(const KernelCall &call, KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  // A float compare is generated; an integer one is a hand-written entry
  // (elementwise/IntegerCompare.cuh).
  bool integerCompare = call.kind == KernelKind::Compare && !inputs.empty() &&
                        floatSuffix(inputs[0].dtype).empty();
  if (integerCompare) {
    LLMC_RETURN_IF_ERROR(call.expect(2, 2, 1, 0));
    std::string index = indexSuffix(inputs[0].dtype);
    if (index.empty() || inputs[1].dtype != inputs[0].dtype)
      return call.refuse("compare covers f32, bf16, i32 and i64");
    return runEntries(choice, {"llmc_compare_" + index});
  }
  // One generated unit per signature.
  if (outputs.size() != 1)
    return call.refuse("expected one result");
  ElementwiseSignature signature;
  signature.kind = call.kind;
  for (const TensorRef &input : inputs)
    signature.inputs.push_back(input.dtype);
  signature.result = outputs[0].dtype;
  signature.ints = attrs.ints;
  ElementwiseSource source;
  if (Status status = generateElementwiseKernel(signature, source); !status)
    return call.refuse(status.message());
  choice.route = KernelChoice::Route::Elementwise;
  choice.elementwise = signature;
  choice.unit = std::move(source);
  return Status::ok();
}

Status family::launchElementwise(LaunchContext &context, const KernelCall &call,
                                 const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  if (choice.route == KernelChoice::Route::Elementwise) {
    const ElementwiseSource *source = nullptr;
    const CudaLibrary *library = nullptr;
    LLMC_RETURN_IF_ERROR(context.elementwiseUnit(choice, source, library));
    std::vector<const void *> pointers;
    for (const TensorRef &input : inputs)
      pointers.push_back(input.data);
    return cuda::launchElementwise(*source, *library, pointers, out->data,
                                   out->numElements(), context.stream());
  }
  // The integer compare.
  const void *lhs = inputs[0].data, *rhs = inputs[1].data;
  void *result = out->data;
  long long count = out->numElements();
  int direction = static_cast<int>(attrs.ints[0]);
  std::vector<void *> args = {&lhs, &rhs, &result, &count, &direction};
  return context.launch(entries[0], context.gridFor(count, 256), 256, 0, args);
}

} // namespace llmc::rt::cuda
