//===- KernelSelection.cpp - which CUDA kernel runs a command -------------===//
//
// The dispatch of a launch to its kind's family through the table of CUDA
// kernels (CudaKernels.def), and the command-level checks. Entry names are
// `llmc_<kernel>_<types>` (the suffixes: runtime/cuda/kernels/KernelChoice.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/KernelSelection.h"
#include "codegen/cuda/FamilySelect.h"

#include <array>

namespace llmc::rt::cuda {

namespace {

using SelectFn = Status (*)(const KernelCall &, KernelChoice &);

/// Each kind's family selection, indexed by KernelKind (null: no CUDA
/// kernel).
const std::array<SelectFn, kNumKernels> &selectionTable() {
  static const std::array<SelectFn, kNumKernels> table = [] {
    std::array<SelectFn, kNumKernels> t{};
#define LLMC_CUDA_KERNEL(Kind, Family)                                         \
  t[static_cast<size_t>(KernelKind::Kind)] = &family::select##Family;
#include "runtime/cuda/kernels/CudaKernels.def"
    return t;
  }();
  return table;
}

} // namespace

Status runEntries(KernelChoice &choice, std::vector<std::string> entries) {
  choice.route = KernelChoice::Route::DeviceUnit;
  choice.entries = std::move(entries);
  return Status::ok();
}

Status selectKernel(KernelKind kind, const KernelAttrs &attrs,
                    const std::vector<TensorRef> &inputs,
                    const std::vector<TensorRef> &outputs,
                    KernelChoice &choice) {
  choice = KernelChoice();
  KernelCall call{kind, attrs, inputs, outputs};
  size_t index = static_cast<size_t>(kind);
  if (index >= kNumKernels || !selectionTable()[index])
    return call.refuse("");
  return selectionTable()[index](call, choice);
}

void commandOperands(const RankProgram &program, const Command &command,
                     std::vector<TensorRef> &inputs,
                     std::vector<TensorRef> &outputs) {
  inputs.clear();
  outputs.clear();
  for (int32_t value : command.inputs)
    inputs.push_back(TensorRef{nullptr, program.values[value].dtype,
                               program.values[value].shape});
  for (int32_t value : command.outputs)
    outputs.push_back(TensorRef{nullptr, program.values[value].dtype,
                                program.values[value].shape});
}

Status selectCommand(const RankProgram &program, const Command &command,
                     KernelChoice &choice) {
  choice = KernelChoice();
  Status status = Status::ok();
  switch (command.kind) {
  case CommandKind::Collective:
  case CommandKind::HostStep:
    status = Status::error(StatusCode::Unimplemented,
                           "collectives and host steps do not run on the CUDA "
                           "session yet");
    break;
  case CommandKind::Copy:
    choice.route = KernelChoice::Route::Copy;
    break;
  case CommandKind::Kernel:
  case CommandKind::Gemm: {
    std::vector<TensorRef> inputs, outputs;
    commandOperands(program, command, inputs, outputs);
    status =
        selectKernel(command.kernel, command.attrs, inputs, outputs, choice);
    break;
  }
  }
  if (status)
    return status;
  return Status::error(status.code(),
                       "at " + command.origin + ": " + status.message());
}

} // namespace llmc::rt::cuda
