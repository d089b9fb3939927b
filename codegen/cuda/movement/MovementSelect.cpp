//===- MovementSelect.cpp - copies, concat, gather, scatter_add, iota -----===//
//
// The selection of the movement family (kernels of movement/Movement.cuh):
// the entries by element size and index type. The launch
// (runtime/cuda/kernels/movement/MovementLaunch.cpp) narrows a strided copy
// or a concat part to wider elements and 32-bit indices where the shape and
// the pointers allow, so its entry names come from the launch's
// simplification, not from here.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectMovement(const KernelCall &call, KernelChoice &choice) {
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::Broadcast:
  case KernelKind::Transpose:
  case KernelKind::Slice: {
    LLMC_RETURN_IF_ERROR(call.expect(1, 1, 0, 0));
    if (outputs[0].rank() > kMaxRank || inputs[0].rank() > kMaxRank)
      return call.refuse("ranks above 8 are not supported");
    if (outputs[0].dtype != inputs[0].dtype)
      return call.refuse("expected the result to have the input's type");
    return runEntries(choice,
                      {"llmc_strided_copy_" + bytesSuffix(inputs[0].dtype)});
  }
  case KernelKind::Concat: {
    LLMC_RETURN_IF_ERROR(call.expect(1, SIZE_MAX, 1, 0));
    for (const TensorRef &in : inputs)
      if (in.dtype != outputs[0].dtype)
        return call.refuse("expected every input to have the result's type");
    return runEntries(choice,
                      {"llmc_concat_part_" + bytesSuffix(outputs[0].dtype)});
  }
  case KernelKind::Gather:
  case KernelKind::Embedding: {
    LLMC_RETURN_IF_ERROR(
        call.expect(2, 2, call.kind == KernelKind::Gather ? 1 : 0, 0));
    std::string index = indexSuffix(inputs[1].dtype);
    if (index.empty())
      return call.refuse("indices must be i32 or i64");
    if (outputs[0].dtype != inputs[0].dtype)
      return call.refuse("expected the result to have the table's type");
    return runEntries(
        choice, {"llmc_gather_" + bytesSuffix(inputs[0].dtype) + "_" + index});
  }
  case KernelKind::ScatterAdd: {
    LLMC_RETURN_IF_ERROR(call.expect(3, 3, 1, 0));
    const TensorRef &dest = inputs[0], &updates = inputs[2];
    std::string type = floatSuffix(dest.dtype);
    std::string index = indexSuffix(inputs[1].dtype);
    if (type.empty() || index.empty() || updates.dtype != dest.dtype ||
        outputs[0].dtype != dest.dtype)
      return call.refuse("scatter_add covers f32, bf16 and f16 (dest, "
                         "updates and result of one type) with i32 or i64 "
                         "indices");
    if (dest.dtype == DType::F32)
      return runEntries(choice, {"llmc_scatter_add_f32_" + index});
    // bf16 and f16, as the CPU: accumulate in an f32 copy of dest (the
    // scratch), round once at the end.
    choice.scratchBytes = static_cast<size_t>(dest.numElements()) * 4;
    return runEntries(choice, {"llmc_widen_" + type + "_f32",
                               "llmc_scatter_add_f32_" + type + "_" + index,
                               "llmc_narrow_f32_" + type});
  }
  case KernelKind::Iota: {
    LLMC_RETURN_IF_ERROR(call.expect(0, 0, 1, 0));
    std::string suffix = floatSuffix(outputs[0].dtype);
    if (suffix.empty())
      suffix = indexSuffix(outputs[0].dtype);
    if (suffix.empty())
      return call.refuse("iota covers f32, bf16, f16, i32 and i64");
    return runEntries(choice, {"llmc_iota_" + suffix});
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
