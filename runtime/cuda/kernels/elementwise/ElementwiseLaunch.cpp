//===- ElementwiseLaunch.cpp - elementwise kernels, the fused marker ------===//
//
// The elementwise family's launch: the generated unit of the choice (its
// source carried by the plan, ElementwiseUnit.h), loaded on first use, its
// scalar or vectorized entry by alignment (launchElementwise,
// libs/CudaModule.h); integer compares run elementwise/IntegerCompare.cuh.
// And the fused family's: a FusedElementwise marker, which launches
// nothing. The selection is codegen's
// (codegen/cuda/elementwise/ElementwiseSelect.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/kernels/elementwise/ElementwiseUnit.h"
#include "runtime/cuda/libs/CudaModule.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

// The marker of a fused region launches nothing itself: the session runs
// the region's kernel (the plan's CudaFusedPlan) or, where codegen's
// generator refused it, the commands that follow.
Status family::launchFused(LaunchContext &, const KernelCall &,
                           const KernelChoice &) {
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

LaunchShape elementwiseLaunchShape(int64_t units, unsigned maxBlocks) {
  LaunchShape shape;
  int64_t blocks = (units + shape.threads - 1) / shape.threads;
  shape.blocks = static_cast<unsigned>(
      std::clamp<int64_t>(blocks, 1, std::max(1u, maxBlocks)));
  return shape;
}

} // namespace llmc::rt::cuda
