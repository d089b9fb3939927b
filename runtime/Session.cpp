//===- Session.cpp - run a loaded Executable on the CPU -------------------===//
#include "runtime/Session.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"

#include <cstdlib>
#include <cstring>

namespace llmc::rt {

namespace {
constexpr size_t kArenaAlignment = 64;
} // namespace

Session::Session(const Executable &executable, const SessionOptions &options)
    : executable_(executable),
      pool_(std::make_unique<ThreadPool>(options.threads)),
      bound_(executable.arguments.size(), false) {}

Session::~Session() { std::free(arena_); }

Status Session::create(const Executable &executable,
                       const SessionOptions &options,
                       std::unique_ptr<Session> &session) {
  if (Status status = validateExecutable(executable); !status)
    return status;
  if (executable.ranks.size() != 1)
    return Status::error(
        StatusCode::Unimplemented,
        executable.source + ": a program for " +
            std::to_string(executable.ranks.size()) +
            " ranks needs the multi-device runtime (issue #8); this session "
            "runs single-rank programs");
  const RankProgram &rank = executable.ranks.front();
  std::unique_ptr<Session> created(new Session(executable, options));
  size_t bytes = (rank.arenaBytes + kArenaAlignment - 1) / kArenaAlignment *
                 kArenaAlignment;
  created->arena_ = static_cast<uint8_t *>(
      std::aligned_alloc(kArenaAlignment, bytes ? bytes : kArenaAlignment));
  if (!created->arena_)
    return Status::error(StatusCode::Unavailable,
                         "cannot allocate the arena of " +
                             std::to_string(rank.arenaBytes) + " bytes");
  for (const ConstantData &constant : rank.constants)
    std::memcpy(created->arena_ + rank.values[constant.value].offset,
                constant.bytes.data(), constant.bytes.size());
  session = std::move(created);
  return Status::ok();
}

TensorRef Session::slot(int32_t value) const {
  const ValueInfo &info = executable_.ranks.front().values[value];
  return TensorRef{arena_ + info.offset, info.dtype, info.shape};
}

uint64_t Session::arenaBytes() const {
  return executable_.ranks.front().arenaBytes;
}

int Session::findArgument(const std::string &name) const {
  for (size_t i = 0; i < executable_.arguments.size(); ++i)
    if (executable_.arguments[i].name == name)
      return static_cast<int>(i);
  return -1;
}

Status Session::setArgument(const std::string &name, DType dtype,
                            const Shape &shape, const void *data,
                            size_t bytes) {
  int index = findArgument(name);
  if (index < 0)
    return Status::error(StatusCode::NotFound,
                         "the program has no argument '" + name + "'");
  TensorRef target = slot(executable_.arguments[index].value);
  if (dtype != target.dtype || shape != target.shape)
    return Status::error(
        StatusCode::InvalidArgument,
        "argument '" + name + "' is " + dtypeName(target.dtype) +
            formatShape(target.shape) + ", got " + dtypeName(dtype) +
            formatShape(shape));
  if (bytes != target.bytes())
    return Status::error(StatusCode::InvalidArgument,
                         "argument '" + name + "' needs " +
                             std::to_string(target.bytes()) + " bytes, got " +
                             std::to_string(bytes));
  std::memcpy(target.data, data, bytes);
  bound_[index] = true;
  return Status::ok();
}

Status Session::run() {
  std::string missing;
  size_t count = 0;
  for (size_t i = 0; i < bound_.size(); ++i)
    if (!bound_[i]) {
      if (count++ < 5)
        missing += (missing.empty() ? "" : ", ") + executable_.arguments[i].name;
    }
  if (count)
    return Status::error(StatusCode::InvalidArgument,
                         std::to_string(count) +
                             " argument(s) were never bound: " + missing +
                             (count > 5 ? ", ..." : ""));

  const RankProgram &rank = executable_.ranks.front();
  std::vector<TensorRef> inputs, outputs;
  for (const Command &command : rank.commands) {
    inputs.clear();
    outputs.clear();
    for (int32_t value : command.inputs)
      inputs.push_back(slot(value));
    for (int32_t value : command.outputs)
      outputs.push_back(slot(value));
    Status status = Status::ok();
    switch (command.kind) {
    case CommandKind::Kernel:
    case CommandKind::Gemm:
      status = runCpuKernel(command.kernel, command.attrs, inputs, outputs,
                            *pool_);
      break;
    case CommandKind::Copy:
      if (inputs.size() != 1 || outputs.size() != 1 ||
          inputs[0].bytes() != outputs[0].bytes())
        status = Status::error(StatusCode::InvalidArgument,
                               "a copy needs one input and one output of "
                               "the same size");
      else if (inputs[0].data != outputs[0].data)
        std::memmove(outputs[0].data, inputs[0].data, inputs[0].bytes());
      break;
    case CommandKind::Collective:
    case CommandKind::HostStep:
      status = Status::error(StatusCode::Unimplemented,
                             "collectives and host steps arrive with issues "
                             "#8 and #5");
      break;
    }
    if (!status)
      return Status::error(status.code(), "at " + command.origin + ": " +
                                              status.message());
  }
  return Status::ok();
}

Status Session::output(size_t index, TensorRef &tensor) const {
  if (index >= executable_.outputs.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.outputs.size()) +
                             " outputs, asked for #" + std::to_string(index));
  tensor = slot(executable_.outputs[index].value);
  return Status::ok();
}

Status Session::argument(size_t index, TensorRef &tensor) const {
  if (index >= executable_.arguments.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.arguments.size()) +
                             " arguments, asked for #" +
                             std::to_string(index));
  tensor = slot(executable_.arguments[index].value);
  return Status::ok();
}

} // namespace llmc::rt
