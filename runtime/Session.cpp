//===- Session.cpp - run a loaded Executable on CPU devices ---------------===//
#include "runtime/Session.h"
#include "runtime/Mesh.h"
#include "runtime/Sharding.h"
#include "runtime/TraceRecorder.h"
#include "runtime/cpu/Collectives.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/CpuProfile.h"
#include "runtime/cpu/ThreadPool.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace llmc::rt {

namespace {
constexpr size_t kArenaAlignment = 64;

/// Runs one Collective command of `rank` (encoding in Executable.h).
Status runCollective(CpuWorld &world, int rank, const Command &command,
                     const std::vector<TensorRef> &inputs,
                     const std::vector<TensorRef> &outputs) {
  const std::vector<int64_t> &ints = command.attrs.ints;
  if (ints.size() < 5 ||
      ints.size() != 5 + static_cast<size_t>(std::max<int64_t>(0, ints[4])))
    return Status::error(StatusCode::InvalidArgument,
                         "a collective needs [collective, reduce, peer, tag, "
                         "n, ranks...] attributes");
  auto kind = static_cast<CollectiveKind>(ints[0]);
  ReduceOp reduce = ints[1] == 1 ? ReduceOp::Max : ReduceOp::Sum;
  int peer = static_cast<int>(ints[2]), tag = static_cast<int>(ints[3]);
  if (kind == CollectiveKind::Send)
    return inputs.size() == 1
               ? world.send(rank, peer, tag, inputs[0])
               : Status::error(StatusCode::InvalidArgument,
                               "send needs one input");
  if (kind == CollectiveKind::Recv)
    return outputs.size() == 1
               ? world.recv(rank, peer, tag, outputs[0])
               : Status::error(StatusCode::InvalidArgument,
                               "recv needs one output");
  if (inputs.size() != 1 || outputs.size() != 1)
    return Status::error(StatusCode::InvalidArgument,
                         "a group collective needs one input and one output");
  std::vector<int> ranks(ints.begin() + 5, ints.end());
  DeviceGroup group;
  if (Status status = DeviceGroup::create(ranks, group); !status)
    return status;
  switch (kind) {
  case CollectiveKind::AllReduce:
    return world.allReduce(rank, group, reduce, inputs[0], outputs[0]);
  case CollectiveKind::AllGather:
    return world.allGather(rank, group, inputs[0], outputs[0]);
  case CollectiveKind::ReduceScatter:
    return world.reduceScatter(rank, group, reduce, inputs[0], outputs[0]);
  case CollectiveKind::AllToAll:
    return world.allToAll(rank, group, inputs[0], outputs[0]);
  default:
    return Status::error(StatusCode::InvalidArgument,
                         "unknown collective " + std::to_string(ints[0]));
  }
}
} // namespace

Session::Session(const Executable &executable, const SessionOptions &options)
    : executable_(executable), bound_(executable.arguments.size(), false) {
  size_t ranks = executable.ranks.size();
  // One rank uses every core for its kernels; several ranks each run on
  // their own device thread.
  for (size_t r = 0; r < ranks; ++r)
    pools_.push_back(
        std::make_unique<ThreadPool>(ranks == 1 ? options.threads : 1));
  // OpenBLAS follows: its own threads would compete with the ranks'.
  setBlasThreads(ranks == 1 ? options.threads : 1);
  collectiveTimeoutMs_ = options.collectiveTimeoutMs;
  stallRank_ = options.stallRank;
  CpuWorldOptions worldOptions;
  worldOptions.timeout = std::chrono::milliseconds(options.collectiveTimeoutMs);
  world_ = std::make_unique<CpuWorld>(static_cast<int>(ranks), worldOptions);
  profile_ = CpuProfile::fromEnvironment(static_cast<int>(ranks));
}

Session::~Session() {
  if (profile_)
    profile_->print(stderr);
  for (uint8_t *arena : arenas_)
    std::free(arena);
}

// LLMC_COLLECTIVE_TIMEOUT_S and LLMC_TEST_STALL_RANK over `options`.
static Status optionsFromEnvironment(SessionOptions &options) {
  auto number = [](const char *name, long low, long &value) {
    const char *text = std::getenv(name);
    if (!text)
      return Status::ok();
    char *end = nullptr;
    errno = 0;
    value = std::strtol(text, &end, 10);
    if (!*text || *end || errno || value < low || value > 1000000)
      return Status::error(StatusCode::InvalidArgument,
                           std::string(name) + "='" + text +
                               "' is not a whole number from " +
                               std::to_string(low) + " to 1000000");
    return Status::ok();
  };
  long seconds = 0, rank = -1;
  LLMC_RETURN_IF_ERROR(number("LLMC_COLLECTIVE_TIMEOUT_S", 1, seconds));
  LLMC_RETURN_IF_ERROR(number("LLMC_TEST_STALL_RANK", 0, rank));
  if (seconds > 0)
    options.collectiveTimeoutMs = static_cast<unsigned>(seconds * 1000);
  if (std::getenv("LLMC_TEST_STALL_RANK"))
    options.stallRank = static_cast<int>(rank);
  return Status::ok();
}

Status Session::create(const Executable &executable,
                       const SessionOptions &givenOptions,
                       std::unique_ptr<Session> &session) {
  if (Status status = validateExecutable(executable); !status)
    return status;
  SessionOptions options = givenOptions;
  LLMC_RETURN_IF_ERROR(optionsFromEnvironment(options));
  // The CPU runs a fused region's commands one by one, which needs every
  // intermediate in the arena; a program planned for fused kernels gives
  // them none.
  if (executable.fusedKernels)
    return Status::error(
        StatusCode::InvalidArgument,
        executable.source + ": @" + executable.name +
            " was compiled for fused kernels (devices = \"cuda\": each "
            "elementwise region runs as one GPU kernel, and its intermediates "
            "have no storage), so the CPU cannot run it; compile it again "
            "with devices = \"cpu\" (or \"auto\", or llmc compile "
            "--fused-kernels=false) to run it on the CPU");
  std::unique_ptr<Session> created(new Session(executable, options));
  for (const RankProgram &rank : executable.ranks) {
    size_t bytes = (rank.arenaBytes + kArenaAlignment - 1) / kArenaAlignment *
                   kArenaAlignment;
    auto *arena = static_cast<uint8_t *>(
        std::aligned_alloc(kArenaAlignment, bytes ? bytes : kArenaAlignment));
    if (!arena)
      return Status::error(StatusCode::Unavailable,
                           "cannot allocate an arena of " +
                               std::to_string(rank.arenaBytes) + " bytes");
    created->arenas_.push_back(arena);
    created->highWater_.push_back(0);
    int r = static_cast<int>(created->arenas_.size()) - 1;
    for (const ConstantData &constant : rank.constants) {
      std::memcpy(arena + rank.values[constant.value].offset,
                  constant.bytes.data(), constant.bytes.size());
      created->touch(r, constant.value);
    }
  }
  session = std::move(created);
  return Status::ok();
}

TensorRef Session::slot(int rank, int32_t value) const {
  const ValueInfo &info = executable_.ranks[rank].values[value];
  return TensorRef{arenas_[rank] + info.offset, info.dtype, info.shape};
}

uint64_t Session::arenaBytes() const {
  return executable_.ranks.front().arenaBytes;
}

void Session::touch(int rank, int32_t value) {
  // A buffer's extent: the planner aligns every buffer to 64 bytes.
  const ValueInfo &info = executable_.ranks[rank].values[value];
  uint64_t extent = (info.bytes() + 63) / 64 * 64;
  highWater_[rank] = std::max(highWater_[rank], info.offset + extent);
}

uint64_t Session::highWaterBytes(int rank) const { return highWater_[rank]; }

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
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  const ArgumentInfo &arg = executable_.arguments[index];
  // The caller binds the global tensor; the message names its shape.
  Shape global;
  LLMC_RETURN_IF_ERROR(argumentGlobalShape(executable_, index, global));
  TensorRef expected{nullptr, slot(0, arg.value).dtype, global};
  LLMC_RETURN_IF_ERROR(checkBinding(name, expected, dtype, shape, bytes));
  bool replicated = arg.sharding.replicated();
  for (int rank = 0; rank < numRanks(); ++rank) {
    // A pipelined program binds an argument only where it is read (the
    // other ranks' slot may hold another value).
    if (holderOf(arg.pipelineStage, rank) != rank)
      continue;
    TensorRef target = slot(rank, arg.value);
    if (!replicated) {
      LLMC_RETURN_IF_ERROR(extractShard(data, dtypeSize(dtype), shape,
                                        arg.sharding, executable_.mesh, rank,
                                        target.data));
    } else if (target.data != data) {
      // An output written into its argument's buffer (donation) and fed
      // back is already there.
      std::memcpy(target.data, data, bytes);
    }
    touch(rank, arg.value);
  }
  bound_[index] = true;
  return Status::ok();
}

Status Session::runRank(int rank) {
  const RankProgram &program = executable_.ranks[rank];
  std::vector<TensorRef> inputs, outputs;
  bool stall = rank == stallRank_;
  for (size_t index = 0; index < program.commands.size(); ++index) {
    const Command &command = program.commands[index];
    if (stall && command.kind == CommandKind::Collective) {
      // The fault-injection hook: this rank stops answering for longer
      // than its peers wait.
      stall = false;
      std::this_thread::sleep_for(
          std::chrono::milliseconds(collectiveTimeoutMs_ + 1000));
    }
    inputs.clear();
    outputs.clear();
    for (int32_t value : command.inputs) {
      inputs.push_back(slot(rank, value));
      touch(rank, value);
    }
    for (int32_t value : command.outputs) {
      outputs.push_back(slot(rank, value));
      touch(rank, value);
    }
    Status status = Status::ok();
    double started = profile_ ? CpuProfile::threadSeconds() : 0.0;
    double traceBegin = trace_ ? TraceRecorder::nowUs() : 0.0;
    switch (command.kind) {
    case CommandKind::Kernel:
    case CommandKind::Gemm:
      status = runCpuKernel(command.kernel, command.attrs, inputs, outputs,
                            *pools_[rank]);
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
      status = runCollective(*world_, rank, command, inputs, outputs);
      break;
    case CommandKind::HostStep:
      status = Status::error(StatusCode::Unimplemented,
                             "host steps are not part of any program yet");
      break;
    }
    if (profile_)
      profile_->record(rank, commandOpName(command),
                       CpuProfile::threadSeconds() - started);
    if (trace_)
      traceCommand(rank, index, traceBegin);
    if (!status) {
      std::string where = numRanks() > 1 ? "rank " + std::to_string(rank) + ": "
                                         : std::string();
      std::string hint;
      if (command.kind == CommandKind::Collective &&
          status.code() == StatusCode::Unavailable &&
          status.message().find("never arrived") != std::string::npos)
        hint = "; a rank that stops answering (stuck, or failed) holds up "
               "its peers: LLMC_COLLECTIVE_TIMEOUT_S sets how long they wait "
               "(in seconds)";
      return Status::error(status.code(), where + "at " + command.origin +
                                              ": " + status.message() + hint);
    }
  }
  return Status::ok();
}

Status Session::run() {
  LLMC_RETURN_IF_ERROR(checkAllBound(executable_, bound_));
  if (profile_)
    profile_->endRun();
  if (numRanks() == 1)
    return runRank(0);
  return runOnDevices(numRanks(), [this](int rank) { return runRank(rank); });
}

void Session::setTrace(TraceRecorder *trace) {
  trace_ = trace;
  if (!trace)
    return;
  for (int rank = 0; rank < numRanks(); ++rank) {
    trace->nameProcess(rank, "rank " + std::to_string(rank) + " (cpu)");
    trace->nameTrack(rank, kTraceCommandTrack,
                     numRanks() > 1 ? "commands (the rank's device thread)"
                                    : "commands (the calling thread)");
  }
}

void Session::traceCommand(int rank, size_t index, double beginUs) const {
  const Command &command = executable_.ranks[rank].commands[index];
  TraceEvent event;
  event.name = commandOpName(command);
  event.category = "cpu";
  event.pid = rank;
  event.tid = kTraceCommandTrack;
  event.ts = beginUs;
  event.dur = TraceRecorder::nowUs() - beginUs;
  event.args = {TraceArg::of("part", command.origin),
                TraceArg::of("op", event.name),
                TraceArg::of("command", static_cast<double>(index))};
  trace_->add(std::move(event));
}

int Session::holderOf(int32_t stage, int rank) const {
  return stageHolder(executable_, stage, rank);
}

Status Session::output(size_t index, TensorRef &tensor, int rank) const {
  if (index >= executable_.outputs.size() || rank < 0 || rank >= numRanks())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.outputs.size()) +
                             " outputs on " + std::to_string(numRanks()) +
                             " ranks, asked for #" + std::to_string(index) +
                             " on rank " + std::to_string(rank));
  // A pipelined program computes an output on one stage's ranks (and on
  // the stages that run their own copy of a tied parameter's update).
  tensor = slot(outputHolder(executable_, index, rank),
               executable_.outputs[index].value);
  return Status::ok();
}

Status Session::argument(size_t index, TensorRef &tensor, int rank) const {
  if (index >= executable_.arguments.size() || rank < 0 || rank >= numRanks())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.arguments.size()) +
                             " arguments, asked for #" +
                             std::to_string(index));
  const ArgumentInfo &arg = executable_.arguments[index];
  tensor = slot(holderOf(arg.pipelineStage, rank), arg.value);
  return Status::ok();
}

DeviceSession::~DeviceSession() = default;

Status Session::setArgumentFromOutput(const std::string &name, size_t output) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  if (output >= executable_.outputs.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.outputs.size()) +
                             " outputs, asked for #" + std::to_string(output));
  const OutputInfo &out = executable_.outputs[output];
  const ArgumentInfo &arg = executable_.arguments[index];
  // Rank by rank, so both must be split the same way.
  if (out.sharding.replicated() != arg.sharding.replicated() ||
      (!arg.sharding.replicated() && out.sharding != arg.sharding))
    return Status::error(
        StatusCode::InvalidArgument,
        "output '" + out.name + "' is sharded " +
            formatSharding(out.sharding, executable_.mesh) +
            ", argument '" + name + "' " +
            formatSharding(arg.sharding, executable_.mesh) +
            "; feeding it back needs the same sharding");
  for (int rank = 0; rank < numRanks(); ++rank) {
    if (holderOf(arg.pipelineStage, rank) != rank)
      continue; // not bound on this rank (a pipeline stage that never reads it)
    TensorRef from, to;
    LLMC_RETURN_IF_ERROR(this->output(output, from, rank));
    LLMC_RETURN_IF_ERROR(argument(index, to, rank));
    if (from.dtype != to.dtype || from.shape != to.shape)
      return Status::error(StatusCode::InvalidArgument,
                           "output '" + out.name + "' is " +
                               dtypeName(from.dtype) + formatShape(from.shape) +
                               " per rank, argument '" + name + "' " +
                               dtypeName(to.dtype) + formatShape(to.shape));
    // The plan may have put the output in the argument's own buffer.
    if (from.data != to.data)
      std::memmove(to.data, from.data, from.bytes());
    touch(rank, arg.value);
  }
  bound_[index] = true;
  return Status::ok();
}

Status Session::globalToHost(int32_t value, const TensorSharding &sharding,
                             HostTensor &tensor, int32_t stage) const {
  tensor.storage.clear();
  // Replicated: rank 0's copy (its stage's), without copying it.
  if (sharding.replicated()) {
    tensor.view = slot(holderOf(stage, 0), value);
    return Status::ok();
  }
  TensorRef first = slot(holderOf(stage, 0), value);
  Shape global;
  LLMC_RETURN_IF_ERROR(
      globalShape(first.shape, sharding, executable_.mesh, global));
  std::vector<const void *> locals;
  for (int rank = 0; rank < numRanks(); ++rank)
    locals.push_back(slot(holderOf(stage, rank), value).data);
  tensor.storage.resize(static_cast<size_t>(numElements(global)) *
                        dtypeSize(first.dtype));
  LLMC_RETURN_IF_ERROR(assembleShards(locals, dtypeSize(first.dtype), global,
                                      sharding, executable_.mesh,
                                      tensor.storage.data()));
  tensor.view = TensorRef{tensor.storage.data(), first.dtype, global};
  return Status::ok();
}

Status Session::outputToHost(size_t index, HostTensor &tensor) const {
  TensorRef local;
  LLMC_RETURN_IF_ERROR(output(index, local));
  const OutputInfo &out = executable_.outputs[index];
  return globalToHost(out.value, out.sharding, tensor, out.pipelineStage);
}

Status Session::argumentToHost(size_t index, HostTensor &tensor) const {
  TensorRef local;
  LLMC_RETURN_IF_ERROR(argument(index, local));
  const ArgumentInfo &arg = executable_.arguments[index];
  return globalToHost(arg.value, arg.sharding, tensor, arg.pipelineStage);
}

} // namespace llmc::rt
