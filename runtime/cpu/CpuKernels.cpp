//===- CpuKernels.cpp - dispatch of the CPU reference kernels by id -------===//
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/KernelImpl.h"

namespace llmc::rt {

const char *kernelName(KernelKind kind) {
  switch (kind) {
#define LLMC_KERNEL(Name, Attributes)                                          \
  case KernelKind::Name:                                                       \
    return #Name;
#include "runtime/Kernels.def"
  case KernelKind::Count:
    break;
  }
  return "unknown";
}

Status KernelArgs::expectArity(size_t numInputs, size_t numOutputs) const {
  if (inputs.size() != numInputs || outputs.size() != numOutputs)
    return error("expected " + std::to_string(numInputs) + " inputs and " +
                 std::to_string(numOutputs) + " outputs, got " +
                 std::to_string(inputs.size()) + " and " +
                 std::to_string(outputs.size()));
  return Status::ok();
}

Status KernelArgs::expectAttrs(size_t numInts, size_t numFloats) const {
  if (attrs.ints.size() != numInts || attrs.floats.size() != numFloats)
    return error("expected " + std::to_string(numInts) + " integer and " +
                 std::to_string(numFloats) + " float attributes, got " +
                 std::to_string(attrs.ints.size()) + " and " +
                 std::to_string(attrs.floats.size()));
  return Status::ok();
}

Status runCpuKernel(KernelKind kind, const KernelAttrs &attrs,
                    const std::vector<TensorRef> &inputs,
                    const std::vector<TensorRef> &outputs, ThreadPool &pool) {
  KernelArgs args{kind, attrs, inputs, outputs, pool};
  switch (kind) {
#define LLMC_KERNEL(Name, Attributes)                                          \
  case KernelKind::Name:                                                       \
    return cpu##Name(args);
#include "runtime/Kernels.def"
  case KernelKind::Count:
    break;
  }
  return Status::error(StatusCode::InvalidArgument,
                       "unknown kernel id " +
                           std::to_string(static_cast<int>(kind)));
}

} // namespace llmc::rt
