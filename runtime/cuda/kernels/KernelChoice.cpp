//===- KernelChoice.cpp - what selection and launch share -----------------===//
//
// KernelCall's refusal and operand check, the suffixes of the entry names
// (`llmc_<kernel>_<types>`, the types in the order the kernels' template
// parameters take them: the input's, then the parameters' or the
// result's where they may differ), describeLaunch, checkOneRank, and the
// small helpers of the families' launches (KernelFamily.h). The selection
// that uses them is codegen's (codegen/cuda/KernelSelection.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelChoice.h"
#include "runtime/cuda/kernels/KernelFamily.h"

#include "runtime/Sharding.h"

#include <cstdint>

namespace llmc::rt::cuda {

namespace {

Status unsupported(KernelKind kind, const std::vector<TensorRef> &inputs,
                   const std::vector<TensorRef> &outputs,
                   const std::string &why) {
  return Status::error(StatusCode::Unimplemented,
                       "no CUDA kernel for " +
                           describeLaunch(kind, inputs, outputs) + " yet" +
                           (why.empty() ? "" : ": " + why));
}

/// Checks Kernels.def's operand and attribute counts of `kind`.
Status expectOperands(KernelKind kind, const KernelAttrs &attrs,
                      const std::vector<TensorRef> &inputs,
                      const std::vector<TensorRef> &outputs, size_t minInputs,
                      size_t maxInputs, size_t ints, size_t floats) {
  if (inputs.size() < minInputs || inputs.size() > maxInputs ||
      outputs.size() != 1 || attrs.ints.size() < ints ||
      attrs.floats.size() < floats)
    return Status::error(StatusCode::InvalidArgument,
                         std::string(kernelName(kind)) + ": expected " +
                             std::to_string(minInputs) + "-" +
                             std::to_string(maxInputs) + " inputs, 1 output, " +
                             std::to_string(ints) + " ints and " +
                             std::to_string(floats) + " floats, got " +
                             std::to_string(inputs.size()) + ", " +
                             std::to_string(outputs.size()) + ", " +
                             std::to_string(attrs.ints.size()) + " and " +
                             std::to_string(attrs.floats.size()));
  return Status::ok();
}

} // namespace

Status KernelCall::refuse(const std::string &why) const {
  return unsupported(kind, inputs, outputs, why);
}

Status KernelCall::expect(size_t minInputs, size_t maxInputs, size_t ints,
                          size_t floats) const {
  return expectOperands(kind, attrs, inputs, outputs, minInputs, maxInputs,
                        ints, floats);
}

std::string floatSuffix(DType dtype) {
  if (dtype == DType::F32)
    return "f32";
  if (dtype == DType::BF16)
    return "bf16";
  if (dtype == DType::F16)
    return "f16";
  return "";
}

std::string indexSuffix(DType dtype) {
  if (dtype == DType::I32)
    return "i32";
  if (dtype == DType::I64)
    return "i64";
  return "";
}

std::string bytesSuffix(DType dtype) {
  return "b" + std::to_string(dtypeSize(dtype));
}

bool aligned16(std::initializer_list<const void *> pointers) {
  for (const void *pointer : pointers)
    if (reinterpret_cast<uintptr_t>(pointer) % 16 != 0)
      return false;
  return true;
}

AxisView viewAround(const Shape &shape, int64_t dim) {
  AxisView view;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim)
      view.outer *= shape[d];
    else if (d == dim)
      view.size = shape[d];
    else
      view.inner *= shape[d];
  }
  return view;
}

std::string describeLaunch(KernelKind kind,
                           const std::vector<TensorRef> &inputs,
                           const std::vector<TensorRef> &outputs) {
  std::string text = std::string(kernelName(kind)) + "(";
  for (size_t i = 0; i < inputs.size(); ++i)
    text += (i ? ", " : "") + std::string(dtypeName(inputs[i].dtype)) +
            formatShape(inputs[i].shape);
  text += ") -> ";
  for (size_t i = 0; i < outputs.size(); ++i)
    text += (i ? ", " : "") + std::string(dtypeName(outputs[i].dtype)) +
            formatShape(outputs[i].shape);
  return text;
}

Status checkOneRank(const Executable &executable, int gpus) {
  // Validation makes the mesh's device count the number of ranks, so this
  // refuses every mesh of more than one device in a plain session: several
  // GPUs run one process each (createMultiProcessSession), and one GPU runs
  // them only when asked (virtual ranks: VirtualRanks.h), never silently.
  const size_t ranks = executable.ranks.size();
  if (ranks == 1)
    return Status::ok();
  const std::string n = std::to_string(ranks);
  std::string launch = "one process per GPU with `llmc launch -n " + n +
                       " RUN.toml` (docs/distributed.md)";
  if (gpus < static_cast<int>(ranks))
    launch += ", which needs " + n + " GPUs (this machine has " +
              std::to_string(gpus) + ")";
  return Status::error(
      StatusCode::Unimplemented,
      "the program has " + n + " ranks on the mesh " +
          formatMesh(executable.mesh) +
          " and a CUDA session of one process runs one rank: run all " + n +
          " on one GPU as virtual ranks with `llmc-run --virtual-ranks` "
          "(docs/distributed.md, \"Virtual ranks on one GPU\"), " + launch +
          ", or on the CPU with --device cpu");
}

} // namespace llmc::rt::cuda
