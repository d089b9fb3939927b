//===- OptimizerLaunch.cpp - the learning-rate schedule -------------------===//
//
// The optimizer family's one kernel of Kernels.def: the learning rate of a
// step (optimizer/LrSchedule.cuh), one thread; the selection is codegen's
// (codegen/cuda/optimizer/OptimizerSelect.cpp). The multi-tensor launches
// of the update (MultiTensorLaunch.h) run fused regions and sums of
// squares.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::launchOptimizer(LaunchContext &context, const KernelCall &call,
                               const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  const void *step = inputs[0].data;
  void *result = out->data;
  int scheduleKind = static_cast<int>(attrs.ints[0]);
  long long warmup = attrs.ints[1], total = attrs.ints[2];
  double peak = attrs.floats[0], minimum = attrs.floats[1];
  std::vector<void *> args = {&step,  &result, &scheduleKind, &warmup,
                              &total, &peak,   &minimum};
  return context.launch(entries[0], 1, 1, 0, args);
}

} // namespace llmc::rt::cuda
