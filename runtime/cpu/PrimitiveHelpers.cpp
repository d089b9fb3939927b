//===- PrimitiveHelpers.cpp - operand validation of the primitive kernels -===//
#include "runtime/cpu/PrimitiveHelpers.h"

namespace llmc::rt::primitive {

std::string formatDTypeSet(DTypeSet set) {
  std::vector<std::string> names;
  for (int i = 0; i < kNumDTypes; ++i)
    if (set & dtypeBit(static_cast<DType>(i)))
      names.push_back(dtypeName(static_cast<DType>(i)));
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0)
      text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

static Status checkTensor(const KernelArgs &args, const char *what, size_t i,
                          const TensorRef &t) {
  std::string name = std::string(what) + " #" + std::to_string(i);
  if (static_cast<int>(t.dtype) >= kNumDTypes)
    return args.error("expected " + name + " to have a known dtype, got id " +
                      std::to_string(static_cast<int>(t.dtype)));
  // Bound the element count so that offsets cannot overflow int64.
  int64_t count = 1;
  for (int64_t d : t.shape) {
    if (d < 0)
      return args.error("expected " + name +
                        " to have non-negative dimensions, got " +
                        formatShape(t.shape));
    if (d != 0 && count > (int64_t(1) << 56) / d)
      return args.error("expected " + name +
                        " to have fewer than 2^56 "
                        "elements, got " +
                        formatShape(t.shape));
    count *= d;
  }
  if (count > 0 && t.data == nullptr)
    return args.error("expected " + name + " to have data, got a null pointer");
  return Status::ok();
}

Status checkOperands(const KernelArgs &args) {
  for (size_t i = 0; i < args.inputs.size(); ++i)
    if (Status s = checkTensor(args, "input", i, args.inputs[i]); !s)
      return s;
  for (size_t i = 0; i < args.outputs.size(); ++i)
    if (Status s = checkTensor(args, "output", i, args.outputs[i]); !s)
      return s;
  return Status::ok();
}

Status checkLaunch(const KernelArgs &args, size_t numInputs, size_t numOutputs,
                   size_t numInts) {
  if (Status s = args.expectArity(numInputs, numOutputs); !s)
    return s;
  if (Status s = args.expectAttrs(numInts, 0); !s)
    return s;
  return checkOperands(args);
}

Status expectDType(const KernelArgs &args, const std::string &what, DType found,
                   DTypeSet allowed) {
  if (allowed & dtypeBit(found))
    return Status::ok();
  return args.error("expected " + what + " of dtype " +
                    formatDTypeSet(allowed) + ", got " + dtypeName(found));
}

Status expectSameDType(const KernelArgs &args, const std::string &what,
                       DType found, DType expected) {
  if (found == expected)
    return Status::ok();
  return args.error("expected " + what + " of dtype " + dtypeName(expected) +
                    ", got " + dtypeName(found));
}

Status expectShape(const KernelArgs &args, const std::string &what,
                   const Shape &found, const Shape &expected) {
  if (found == expected)
    return Status::ok();
  return args.error("expected " + what + " of shape " + formatShape(expected) +
                    ", got " + formatShape(found));
}

Status expectDim(const KernelArgs &args, const std::string &what, int64_t dim,
                 int64_t rank) {
  if (dim >= 0 && dim < rank)
    return Status::ok();
  return args.error("expected " + what + " in [0, " + std::to_string(rank) +
                    "), got " + std::to_string(dim));
}

Shape rowMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

} // namespace llmc::rt::primitive
