//===- ElementwiseSelect.cpp - elementwise kernels, the fused marker ------===//
//
// The selection of the elementwise family: a float kind gets the
// generated unit of its signature (ElementwiseKernels.h, its math
// CudaKernels.def's), whose source the choice carries into the plan; an
// integer compare the hand-written entry of elementwise/IntegerCompare.cuh.
// And the fused family's: a FusedElementwise marker chooses nothing (its
// region's kernel planCudaKernels generates). The launches are
// runtime/cuda/kernels/elementwise/ElementwiseLaunch.cpp.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"
#include "codegen/cuda/elementwise/ElementwiseKernels.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

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

// The marker of a fused region launches nothing itself: the session runs
// the region's kernel (FusedKernels.h) or, where the generator refused it,
// the commands that follow.
Status family::selectFused(const KernelCall &, KernelChoice &) {
  return Status::ok();
}

} // namespace llmc::rt::cuda
