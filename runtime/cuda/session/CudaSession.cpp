//===- CudaSession.cpp - run a loaded Executable on one GPU ---------------===//
#include "runtime/cuda/session/CudaSession.h"
#include "runtime/Sharding.h"
#include "runtime/train/Init.h"

#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/KernelChoice.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorLaunch.h"
#include "runtime/cuda/libs/CollectiveBackend.h"
#include "runtime/cuda/session/CudaTiming.h"

#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <cstring>
#include <set>

namespace llmc::rt::cuda {

CudaSession::CudaSession(const Executable &executable,
                         const CudaSessionOptions &options)
    : executable_(executable), options_(options),
      bound_(executable.arguments.size(), false) {}

CudaSession::~CudaSession() {
  if (stream_)
    (void)cudaStreamSynchronize(stream_);
  if (profile_)
    printProfile();
  if (graphExec_)
    (void)cudaGraphExecDestroy(graphExec_);
  for (cudaEvent_t event : events_)
    (void)cudaEventDestroy(event);
  world_.reset(); // waits for its stream, destroys the communicators
  if (stopFlag_)
    (void)cudaFree(stopFlag_);
  for (cudaEvent_t event : collectiveDone_)
    if (event)
      (void)cudaEventDestroy(event);
  if (runDone_)
    (void)cudaEventDestroy(runDone_);
  multi_.reset(); // its launches use kernels_
  kernels_.reset();
  if (arena_)
    (void)cudaFree(arena_);
  if (stream_)
    (void)cudaStreamDestroy(stream_);
}

Status CudaSession::wrap(const Command &command, Status status) const {
  if (status)
    return status;
  return Status::error(status.code(),
                       "at " + command.origin + ": " + status.message());
}

const RankProgram &CudaSession::program() const {
  return executable_.ranks[options_.rank];
}

TensorRef CudaSession::slot(int32_t value) const {
  const ValueInfo &info = program().values[value];
  // No storage (an intermediate of a region that runs as one kernel): no
  // pointer, never launched on.
  if (!info.stored())
    return TensorRef{nullptr, info.dtype, info.shape};
  return TensorRef{arena_ + info.offset, info.dtype, info.shape};
}

uint64_t CudaSession::arenaBytes() const { return program().arenaBytes; }

std::string CudaSession::backendNotes() const {
  return kernels_->attentionPath();
}

std::string CudaSession::memorySummary() const {
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaSetDevice(options_.device) != cudaSuccess ||
      cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
    cudaGetLastError();
    return "device memory: cudaMemGetInfo failed on " + deviceName();
  }
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  char line[256];
  std::snprintf(line, sizeof(line),
                "device memory on %s: %.2f GiB planned (the arena), %.2f GiB "
                "in use (cudaMemGetInfo: the arena, scratch, library "
                "workspaces and the CUDA context), of %.1f GiB",
                deviceName().c_str(), arenaBytes() / GiB,
                (totalBytes - freeBytes) / GiB, totalBytes / GiB);
  return line;
}

void CudaSession::attachCollectives(
    std::unique_ptr<CollectiveBackend> world) {
  world_ = std::move(world);
}

size_t CudaSession::loadedUnits() const { return kernels_->loadedUnits(); }
size_t CudaSession::multiTensorGroups() const {
  return multi_ ? multi_->size() : 0;
}
size_t CudaSession::multiTensorCommands() const {
  size_t commands = 0;
  for (size_t g = 0; multi_ && g < multi_->size(); ++g)
    commands += multi_->group(static_cast<int>(g)).members.size();
  return commands;
}
double CudaSession::compileSeconds() const {
  return kernels_->compileSeconds();
}

int CudaSession::findArgument(const std::string &name) const {
  return executable_.findArgument(name);
}

Status CudaSession::setArgument(const std::string &name, DType dtype,
                                const Shape &shape, const void *data,
                                size_t bytes) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  const ArgumentInfo &info = executable_.arguments[index];
  TensorRef target = slot(info.value);
  // The caller binds the GLOBAL tensor; this rank keeps its block.
  TensorRef global = target;
  LLMC_RETURN_IF_ERROR(
      argumentGlobalShape(executable_, static_cast<size_t>(index),
                          global.shape));
  LLMC_RETURN_IF_ERROR(checkBinding(name, global, dtype, shape, bytes));
  if (skipsArgument(index))
    return Status::ok();
  if (!info.sharding.replicated()) {
    staging_.resize(target.bytes());
    LLMC_RETURN_IF_ERROR(extractShard(data, dtypeSize(dtype), global.shape,
                                      info.sharding, executable_.mesh,
                                      options_.rank, staging_.data()));
    data = staging_.data();
    bytes = staging_.size();
  }
  // Ordered after the previous run's kernels on the same stream; the host
  // buffer may be reused as soon as this returns.
  LLMC_CUDA_CHECK(cudaMemcpyAsync(target.data, data, bytes,
                                  cudaMemcpyHostToDevice, stream_),
                  "copying argument '" + name + "' to the device");
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "copying argument '" + name + "' to the device");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::setArgumentConverting(const std::string &name,
                                          DType dtype, const Shape &shape,
                                          const void *data, size_t bytes,
                                          ThreadPool *pool) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  const ArgumentInfo &info = executable_.arguments[index];
  if (skipsArgument(index))
    return Status::ok();
  TensorRef target = slot(info.value);
  const char *entry = dtype == DType::BF16 && target.dtype == DType::F32
                          ? "llmc_widen_bf16_f32"
                      : dtype == DType::F16 && target.dtype == DType::F32
                          ? "llmc_widen_f16_f32"
                      : dtype == DType::F32 && target.dtype == DType::BF16
                          ? "llmc_narrow_f32_bf16"
                          : nullptr;
  if (dtype == target.dtype || !entry || !info.sharding.replicated() ||
      shape != target.shape ||
      bytes != static_cast<size_t>(numElements(shape)) * dtypeSize(dtype))
    return DeviceSession::setArgumentConverting(name, dtype, shape, data,
                                                bytes, pool);
  // The file's bytes to a temporary device buffer, converted into the slot.
  void *staging = nullptr;
  LLMC_CUDA_CHECK(cudaMalloc(&staging, std::max<size_t>(bytes, 1)),
                  "allocating " + std::to_string(bytes) +
                      " bytes to convert argument '" + name + "'");
  struct Release {
    void *pointer;
    ~Release() { (void)cudaFree(pointer); }
  } release{staging};
  LLMC_CUDA_CHECK(cudaMemcpyAsync(staging, data, bytes, cudaMemcpyHostToDevice,
                                  stream_),
                  "copying argument '" + name + "' to the device");
  void *out = target.data;
  long long count = static_cast<long long>(numElements(shape));
  std::vector<void *> args = {&staging, &out, &count};
  unsigned blocks = static_cast<unsigned>(
      std::clamp<long long>((count + 255) / 256, 1, 65535));
  LLMC_RETURN_IF_ERROR(
      kernels_->launchDeviceEntry(entry, blocks, args, stream_));
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "converting argument '" + name + "' on the device");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::zeroArgument(const std::string &name) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  if (skipsArgument(index))
    return Status::ok();
  TensorRef target = slot(executable_.arguments[index].value);
  LLMC_CUDA_CHECK(cudaMemsetAsync(target.data, 0, target.bytes(), stream_),
                  "clearing argument '" + name + "'");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::drawArgument(size_t index, uint64_t seed, bool &drawn) {
  drawn = false;
  if (index >= executable_.arguments.size())
    return Status::error(StatusCode::InvalidArgument,
                         "no argument #" + std::to_string(index));
  const ArgumentInfo &info = executable_.arguments[index];
  if (skipsArgument(index)) {
    drawn = true; // nothing to draw here
    return Status::ok();
  }
  TensorRef target = slot(info.value);
  int type = target.dtype == DType::F32    ? 0
             : target.dtype == DType::F64  ? 1
             : target.dtype == DType::BF16 ? 2
                                           : -1;
  int kind = -1;
  double scale = info.init.scale;
  switch (info.init.kind) {
  case InitSpec::Kind::Normal:
    kind = 0;
    break;
  case InitSpec::Kind::Uniform:
    kind = 1;
    break;
  case InitSpec::Kind::Ones:
    kind = 2, scale = 1.0;
    break;
  case InitSpec::Kind::Constant:
    kind = 2;
    break;
  case InitSpec::Kind::Zeros:
    kind = 2, scale = 0.0;
    break;
  default:
    break;
  }
  // Optimizer state starts at zero unless its initializer is a constant
  // (initialArgumentBytes).
  if (info.role == ArgumentRole::OptimizerState &&
      info.init.kind != InitSpec::Kind::Constant)
    kind = 2, scale = 0.0;
  // A sharded argument's block would need the global positions of its
  // elements: the host draws it and setArgument splits it.
  if (type < 0 || kind < 0 || !info.sharding.replicated() ||
      info.role == ArgumentRole::Input)
    return Status::ok();
  void *out = target.data;
  long long n = static_cast<long long>(numElements(target.shape));
  unsigned long long stream = initialStream(seed, index);
  std::vector<void *> args = {&out, &type, &n, &stream, &kind, &scale};
  // Blocks of 256 threads, two pairs per thread (more beyond 65,535
  // blocks: the kernel strides over the grid).
  long long pairs = (n + 1) / 2;
  unsigned blocks = static_cast<unsigned>(
      std::clamp<long long>((pairs + 511) / 512, 1, 65535));
  LLMC_RETURN_IF_ERROR(
      kernels_->launchDeviceEntry("llmc_init_draw", blocks, args, stream_));
  bound_[index] = true;
  drawn = true;
  return Status::ok();
}

Status CudaSession::setArgumentFromOutput(const std::string &name,
                                          size_t output) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  if (skipsArgument(index))
    return Status::ok();
  if (output < executable_.outputs.size() &&
      outputHolder(executable_, output, options_.rank) != options_.rank)
    return Status::error(
        StatusCode::InvalidArgument,
        "argument '" + name + "' is read on rank " +
            std::to_string(options_.rank) + ", whose pipeline stage does not "
            "compute its new value (output '" +
            executable_.outputs[output].name +
            "'): the program lacks the transfer between the processes (a "
            "tied parameter's update under ZeRO in a pipeline); run it on "
            "virtual ranks (llmc-run --virtual-ranks) or CPU devices, or "
            "without ZeRO (docs/distributed.md)");
  TensorRef source;
  LLMC_RETURN_IF_ERROR(this->output(output, source));
  TensorRef target = slot(executable_.arguments[index].value);
  if (source.dtype != target.dtype || source.shape != target.shape)
    return Status::error(
        StatusCode::InvalidArgument,
        "argument '" + name + "' is " + dtypeName(target.dtype) +
            formatShape(target.shape) + ", output #" + std::to_string(output) +
            " is " + dtypeName(source.dtype) + formatShape(source.shape));
  if (source.data != target.data)
    LLMC_CUDA_CHECK(cudaMemcpyAsync(target.data, source.data, target.bytes(),
                                    cudaMemcpyDeviceToDevice, stream_),
                    "copying output #" + std::to_string(output) +
                        " into argument '" + name + "'");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::setArgumentFromDevice(const std::string &name,
                                          const TensorRef &source) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  TensorRef target = slot(executable_.arguments[index].value);
  if (source.dtype != target.dtype || source.shape != target.shape)
    return Status::error(StatusCode::InvalidArgument,
                         "argument '" + name + "' is " +
                             dtypeName(target.dtype) +
                             formatShape(target.shape) + ", the tensor is " +
                             dtypeName(source.dtype) +
                             formatShape(source.shape));
  LLMC_CUDA_CHECK(cudaMemcpyAsync(target.data, source.data, target.bytes(),
                                  cudaMemcpyDeviceToDevice, stream_),
                  "copying a tensor into argument '" + name + "'");
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "copying a tensor into argument '" + name + "'");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::joinCollectives(const Command *command) {
  const std::vector<ValueInfo> &values = program().values;
  auto overlaps = [&](const InFlight &flight) {
    if (!command)
      return true;
    for (const std::vector<int32_t> *slots :
         {&command->inputs, &command->outputs})
      for (int32_t value : *slots) {
        uint64_t begin = values[value].offset;
        uint64_t end = begin + values[value].bytes();
        for (auto [b, e] : flight.ranges)
          if (begin < e && b < end)
            return true;
      }
    return false;
  };
  for (size_t i = 0; i < inFlight_.size();) {
    if (!overlaps(inFlight_[i])) {
      ++i;
      continue;
    }
    LLMC_CUDA_CHECK(cudaStreamWaitEvent(stream_, inFlight_[i].done, 0),
                    "cudaStreamWaitEvent(a collective's end)");
    inFlight_.erase(inFlight_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return Status::ok();
}

/// Enqueues every command of the program on the stream, in order (run()
/// directly, or under a CUDA graph capture).
namespace {

/// NVTX ranges for Nsight Systems: one per run of consecutive commands of
/// one model part ("transformer.h.3.mlp (backward)"), pushed as they are
/// enqueued. NVTX is header-only and costs a branch when no tool is
/// attached. A step replayed from a CUDA graph pushes none: profile with
/// LLMC_CUDA_GRAPH=0 to see them on every step.
class NvtxParts {
public:
  void enter(const std::string &part) {
    if (open_ && part == part_)
      return;
    if (open_)
      nvtxRangePop();
    nvtxRangePushA(part.c_str());
    part_ = part;
    open_ = true;
  }
  ~NvtxParts() {
    if (open_)
      nvtxRangePop();
  }

private:
  std::string part_;
  bool open_ = false;
};

} // namespace

Status CudaSession::enqueueCommands() {
  const RankProgram &rankProgram = program();
  const std::vector<Command> &commands = rankProgram.commands;
  std::vector<TensorRef> inputs, outputs;
  size_t event = 0;
  NvtxParts nvtx;
  for (size_t index = 0; index < commands.size(); ++index) {
    const Command &command = commands[index];
    nvtx.enter(command.origin);
    // A later command that touches a collective's bytes waits for it; the
    // others overlap with it.
    LLMC_RETURN_IF_ERROR(wrap(command, joinCollectives(&command)));
    inputs.clear();
    outputs.clear();
    for (int32_t value : command.inputs)
      inputs.push_back(slot(value));
    for (int32_t value : command.outputs)
      outputs.push_back(slot(value));
    Status status = Status::ok();
    const size_t launched = index; // the loop may skip what it covers
    size_t traceMark = 0;
    if (trace_ && command.kind != CommandKind::Collective)
      LLMC_RETURN_IF_ERROR(traceBefore(index, stream_, traceMark));
    if (command.kind == CommandKind::Collective) {
      cudaEvent_t done = collectiveDone_[index], started = nullptr;
      if (trace_)
        LLMC_RETURN_IF_ERROR(
            wrap(command, timing_->reserve(started, traceMark)));
      status =
          world_->enqueue(command, inputs, outputs, stream_, done, started);
      if (status) {
        InFlight flight{done, {}};
        for (const std::vector<int32_t> *slots :
             {&command.inputs, &command.outputs})
          for (int32_t value : *slots) {
            const ValueInfo &info = rankProgram.values[value];
            flight.ranges.push_back({info.offset, info.offset + info.bytes()});
          }
        inFlight_.push_back(std::move(flight));
      }
      // Errors name the rank and collective; wrap adds the model part.
      if (!status)
        return status;
    } else if (command.kind == CommandKind::Copy) {
      if (inputs.size() != 1 || outputs.size() != 1 ||
          inputs[0].bytes() != outputs[0].bytes())
        status = Status::error(StatusCode::InvalidArgument,
                               "a copy needs one input and one output of "
                               "the same size");
      else if (inputs[0].data != outputs[0].data)
        status = cudaStatus(cudaMemcpyAsync(outputs[0].data, inputs[0].data,
                                            inputs[0].bytes(),
                                            cudaMemcpyDeviceToDevice, stream_),
                            "cudaMemcpyAsync(copy)");
    } else if (multi_ && !check_ && multi_->covered(index)) {
      // A command of a multi-tensor group: the group's launch, at its
      // first command, does the work of all of them (after waiting for
      // any collective one of them touches); the others launch nothing.
      if (int group = multi_->groupAt(index); group >= 0) {
        const MultiTensorGroup &g = multi_->group(group);
        for (size_t m = 0; status && m < g.members.size(); ++m)
          for (size_t k = g.members[m]; status && k < g.ends[m]; ++k)
            status = joinCollectives(&commands[k]);
        if (status)
          status = multi_->launch(group, stream_);
      }
    } else if (auto fused = fused_.find(index);
               fused != fused_.end() &&
               (!check_ || fused->second.needsOneKernel)) {
      // The region as one kernel; its commands are skipped (their profile
      // events are recorded with no work between them). LLMC_CHECK_CPU runs
      // a region op by op, unless its intermediates have no storage: then
      // the kernel is checked against the region's commands on the host.
      if (check_)
        status = check_->before(inputs, outputs, stream_);
      if (status)
        status = kernels_->launchFused(fused->second.kernel,
                                       fused->second.elements, inputs,
                                       outputs, stream_);
      if (status && check_)
        status = check_->afterRegion(index, rankProgram, inputs, outputs,
                                     stream_);
      for (size_t skip = 0; status && skip < fused->second.commands; ++skip) {
        ++index;
        if (profile_)
          status = cudaStatus(cudaEventRecord(events_[++event], stream_),
                              "profile event");
      }
    } else if (check_ && command.kernel != KernelKind::FusedElementwise) {
      status = check_->before(inputs, outputs, stream_);
      if (status)
        status = kernels_->launch(choices_[index], command.kernel,
                                  command.attrs, inputs, outputs, stream_);
      if (status)
        status = check_->after(index, command, inputs, outputs, stream_);
    } else {
      auto fold = check_ ? foldedAdds_.end() : foldedAdds_.find(index);
      bool folded = fold != foldedAdds_.end();
      status = kernels_->launch(choices_[index], command.kernel, command.attrs,
                                inputs, outputs, stream_,
                                folded ? slot(fold->second).data : nullptr);
      if (status && folded) {
        // The residual add that follows is done: it runs nothing (its
        // profile event marks no work).
        ++index;
        if (profile_)
          status = cudaStatus(cudaEventRecord(events_[++event], stream_),
                              "profile event");
      }
    }
    if (status && trace_)
      status = traceAfter(launched, traceMark);
    if (status && options_.syncEachCommand)
      status = cudaStatus(cudaStreamSynchronize(stream_),
                          std::string(kernelName(command.kernel)));
    if (status && profile_)
      status = cudaStatus(cudaEventRecord(events_[++event], stream_),
                          "profile event");
    LLMC_RETURN_IF_ERROR(wrap(command, status));
  }
  return Status::ok();
}

Status CudaSession::run() {
  LLMC_RETURN_IF_ERROR(checkAllBound(executable_, bound_));
  const RankProgram &rankProgram = program();
  const std::vector<Command> &commands = rankProgram.commands;
  bool hasCollectives = false;
  for (cudaEvent_t event : collectiveDone_)
    hasCollectives = hasCollectives || event;
  if (hasCollectives && !world_)
    return Status::error(StatusCode::Internal,
                         "the program has collectives and the session no "
                         "communicators (attachCollectives was not called)");
  inFlight_.clear();
  if (const char *env = std::getenv("LLMC_PROFILE"); env && *env && *env != '0') {
    profile_ = true;
    profileShapes_ = std::string(env) == "shapes";
  }
  if (profile_ && events_.empty()) {
    events_.resize(commands.size() + 1);
    for (cudaEvent_t &event : events_)
      LLMC_CUDA_CHECK(cudaEventCreate(&event), "cudaEventCreate(profile)");
  }
  if (profile_)
    LLMC_CUDA_CHECK(cudaEventRecord(events_[0], stream_), "profile event");
  if (const char *env = std::getenv("LLMC_CHECK_CPU");
      env && *env && *env != '0' && !check_)
    check_ = std::make_unique<CpuCheck>();
  // The steady state replays one CUDA graph: the second run is captured
  // (the first compiles, allocates scratch, picks the GEMM algorithms and
  // lets NCCL connect), every later one launches it. The addresses are the
  // arena's, fixed since creation, and arguments are written into it before
  // each run, so the graph stays valid. Under NCCL the graph holds the
  // collectives too: the communication stream joins the capture where it
  // waits for the compute stream, and leaves it where the compute stream
  // waits for the collectives' ends (every one by the end of the step).
  // LLMC_CUDA_GRAPH=0 turns it off; profiling, the CPU check,
  // syncEachCommand and virtual ranks (their threads meet on the host at
  // each collective) do not capture. A traced step runs ungraphed (its
  // launches are timed one by one).
  const char *graphEnv = std::getenv("LLMC_CUDA_GRAPH");
  bool graphs = (!world_ || world_->capturable()) && !profile_ && !check_ &&
                !options_.syncEachCommand &&
                !(graphEnv && std::string(graphEnv) == "0") && !graphFailed_;
  if (trace_) {
    LLMC_RETURN_IF_ERROR(traceRunBegin(graphs));
    graphs = false;
  }
  const bool replay = graphs && graphExec_;
  const bool capture = graphs && !graphExec_ && runs_ > 0;
  if (world_)
    world_->beginRun(replay    ? RunMode::Replay
                     : capture ? RunMode::Capture
                               : RunMode::Direct);
  if (replay) {
    LLMC_CUDA_CHECK(cudaGraphLaunch(graphExec_, stream_),
                    "cudaGraphLaunch(the step)");
  } else if (capture) {
    LLMC_CUDA_CHECK(
        cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
    Status enqueued = enqueueCommands();
    // The capture ends on the stream it began on: join every collective.
    if (enqueued && world_)
      enqueued = joinCollectives(nullptr);
    cudaGraph_t graph = nullptr;
    cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    cudaError_t made = cudaErrorUnknown;
    if (enqueued && ended == cudaSuccess)
      made = cudaGraphInstantiate(&graphExec_, graph, 0);
    if (graph)
      (void)cudaGraphDestroy(graph);
    const std::string why = !enqueued ? enqueued.message()
                            : ended != cudaSuccess
                                ? cudaGetErrorString(ended)
                                : cudaGetErrorString(made);
    if (made == cudaSuccess) {
      LLMC_CUDA_CHECK(cudaGraphLaunch(graphExec_, stream_),
                      "cudaGraphLaunch(the step)");
    } else if (world_) {
      // NCCL may have counted the collectives of the abandoned capture,
      // so running them again directly could pair them wrongly with the
      // other ranks': stop instead.
      (void)cudaGetLastError();
      graphExec_ = nullptr;
      graphFailed_ = true;
      return Status::error(StatusCode::Internal,
                           "rank " + std::to_string(options_.rank) +
                               ": the step could not be captured as a CUDA "
                               "graph (" + why +
                               "); run with LLMC_CUDA_GRAPH=0 to run it "
                               "command by command");
    } else {
      // Said once, then every run enqueues its commands as before.
      (void)cudaGetLastError();
      graphExec_ = nullptr;
      graphFailed_ = true;
      std::fprintf(stderr,
                   "[cuda] the step could not be captured as a CUDA graph "
                   "(%s); running it command by command\n",
                   why.c_str());
      inFlight_.clear();
      LLMC_RETURN_IF_ERROR(enqueueCommands());
    }
  } else {
    LLMC_RETURN_IF_ERROR(enqueueCommands());
  }
  if (world_) {
    // The step ends when its last collective has; the watchdog names a
    // collective that never completes instead of hanging.
    LLMC_RETURN_IF_ERROR(joinCollectives(nullptr));
    LLMC_CUDA_CHECK(cudaEventRecord(runDone_, stream_),
                    "cudaEventRecord(the end of the run)");
    LLMC_RETURN_IF_ERROR(world_->synchronize(runDone_));
    if (trace_)
      LLMC_RETURN_IF_ERROR(traceRunEnd());
    if (profile_ && runs_ > 0)
      recordProfile();
    ++runs_;
    return Status::ok();
  }
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "running the program (a kernel failed; "
                  "CudaSessionOptions::syncEachCommand names which)");
  if (trace_)
    LLMC_RETURN_IF_ERROR(traceRunEnd());
  if (profile_ && runs_ > 0)
    recordProfile();
  ++runs_;
  if (check_) {
    std::fprintf(stderr, "LLMC_CHECK_CPU: %zu commands checked\n",
                 check_->checked());
    return check_->result();
  }
  return Status::ok();
}

Status CudaSession::output(size_t index, TensorRef &tensor) const {
  if (index >= executable_.outputs.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.outputs.size()) +
                             " outputs, asked for #" + std::to_string(index));
  tensor = slot(executable_.outputs[index].value);
  return Status::ok();
}

Status CudaSession::argument(size_t index, TensorRef &tensor) const {
  if (index >= executable_.arguments.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.arguments.size()) +
                             " arguments, asked for #" + std::to_string(index));
  tensor = slot(executable_.arguments[index].value);
  return Status::ok();
}

Status CudaSession::copyToHost(const TensorRef &tensor,
                               std::vector<uint8_t> &bytes) const {
  bytes.resize(tensor.bytes());
  if (bytes.empty())
    return Status::ok();
  LLMC_CUDA_CHECK(cudaMemcpyAsync(bytes.data(), tensor.data, bytes.size(),
                                  cudaMemcpyDeviceToHost, stream_),
                  "copying a tensor to the host");
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "copying a tensor to the host");
  return Status::ok();
}

std::string CudaSession::deviceName() const {
  std::string name = "cuda:" + std::to_string(options_.device);
  if (options_.transport != RankTransport::None)
    name += " (rank " + std::to_string(options_.rank) + " of " +
            std::to_string(executable_.ranks.size()) + ", " +
            (world_ ? world_->transport()
             : options_.transport == RankTransport::Nccl ? "NCCL"
                                                         : "virtual") +
            ")";
  return name;
}

std::string CudaSession::hardwareName() const {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, options_.device) != cudaSuccess)
    return "unknown GPU";
  return properties.name;
}

Status CudaSession::toHost(TensorRef device, HostTensor &tensor) const {
  LLMC_RETURN_IF_ERROR(copyToHost(device, tensor.storage));
  tensor.view = device;
  tensor.view.data = tensor.storage.data();
  return Status::ok();
}

bool CudaSession::skipsArgument(int index) {
  if (bindsArgument(executable_, static_cast<size_t>(index), options_.rank))
    return false;
  bound_[index] = true; // another stage's ranks hold it
  return true;
}

Status CudaSession::globalToHost(TensorRef device,
                                 const TensorSharding &sharding,
                                 const std::vector<int> &holders,
                                 HostTensor &tensor) const {
  // Every rank's own copy is the value (no pipeline stage holds it alone):
  // the same decision on every process, so that all or none gather.
  bool everyRankHolds = true;
  for (size_t r = 0; r < holders.size(); ++r)
    everyRankHolds = everyRankHolds && holders[r] == static_cast<int>(r);
  if (executable_.ranks.size() == 1 ||
      (sharding.replicated() && everyRankHolds))
    return toHost(device, tensor); // every rank holds the whole tensor
  if (!world_)
    return Status::error(StatusCode::Internal,
                         "a sharded or stage-held tensor needs the other "
                         "ranks, and the session has no communicators");
  // Every rank's block (the same local shape on every rank; a rank off the
  // tensor's stage sends its unwritten slot), then the global tensor
  // assembled from the holders' blocks as the CPU session does.
  std::vector<uint8_t> gathered;
  size_t bytes = device.bytes();
  LLMC_RETURN_IF_ERROR(
      world_->gatherToHost(device.data, bytes, stream_, gathered));
  tensor.view = device;
  if (sharding.replicated()) {
    const uint8_t *held = gathered.data() + holders[options_.rank] * bytes;
    tensor.storage.assign(held, held + bytes);
    tensor.view.data = tensor.storage.data();
    return Status::ok();
  }
  std::vector<const void *> locals(executable_.ranks.size());
  for (size_t r = 0; r < locals.size(); ++r)
    locals[r] = gathered.data() + holders[r] * bytes;
  Shape global;
  LLMC_RETURN_IF_ERROR(globalShape(device.shape, sharding, executable_.mesh,
                                   global));
  tensor.view.shape = global;
  tensor.storage.resize(tensor.view.bytes());
  LLMC_RETURN_IF_ERROR(assembleShards(locals, dtypeSize(device.dtype), global,
                                      sharding, executable_.mesh,
                                      tensor.storage.data()));
  tensor.view.data = tensor.storage.data();
  return Status::ok();
}

Status CudaSession::outputToHost(size_t index, HostTensor &tensor) const {
  TensorRef device;
  LLMC_RETURN_IF_ERROR(output(index, device));
  std::vector<int> holders(executable_.ranks.size());
  for (size_t r = 0; r < holders.size(); ++r)
    holders[r] = outputHolder(executable_, index, static_cast<int>(r));
  return globalToHost(device, executable_.outputs[index].sharding, holders,
                      tensor);
}

Status CudaSession::agreeOnStop(int &signal) {
  if (!world_)
    return Status::ok();
  if (!stopFlag_)
    LLMC_CUDA_CHECK(cudaMalloc(&stopFlag_, sizeof(int32_t)),
                    "allocating the stop flag");
  int32_t local = signal;
  LLMC_CUDA_CHECK(cudaMemcpyAsync(stopFlag_, &local, sizeof(local),
                                  cudaMemcpyHostToDevice, stream_),
                  "copying the stop flag to the device");
  std::vector<uint8_t> gathered;
  LLMC_RETURN_IF_ERROR(
      world_->gatherToHost(stopFlag_, sizeof(int32_t), stream_, gathered));
  for (size_t r = 0; r + sizeof(int32_t) <= gathered.size();
       r += sizeof(int32_t)) {
    int32_t theirs = 0;
    std::memcpy(&theirs, gathered.data() + r, sizeof(theirs));
    signal = std::max<int>(signal, theirs);
  }
  return Status::ok();
}

Status CudaSession::argumentToHost(size_t index, HostTensor &tensor) const {
  TensorRef device;
  LLMC_RETURN_IF_ERROR(argument(index, device));
  const ArgumentInfo &arg = executable_.arguments[index];
  std::vector<int> holders(executable_.ranks.size());
  for (size_t r = 0; r < holders.size(); ++r)
    holders[r] = stageHolder(executable_, arg.pipelineStage,
                             static_cast<int>(r));
  return globalToHost(device, arg.sharding, holders, tensor);
}

} // namespace llmc::rt::cuda
