//===- CudaSessionRun.cpp - run(): a step's commands on the GPU ------------===//
//
// How a CudaSession runs its program: every command enqueued in order on
// the compute stream (kernels, fused regions, multi-tensor launches, copies)
// and the collectives on the backend's stream with the events that order
// them (joinCollectives), the step captured as one CUDA graph and replayed,
// with NCCL too (docs/cuda.md, "The step as a CUDA graph"), and the end of
// the run waited for. The rest of the session (creation, arguments,
// outputs) is in CudaSession.cpp and CudaSessionCreate.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/session/CudaSession.h"

#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorLaunch.h"
#include "runtime/cuda/libs/CollectiveBackend.h"
#include "runtime/cuda/session/CpuCheck.h"
#include "runtime/cuda/session/CudaTiming.h"

#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace llmc::rt::cuda {

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

} // namespace llmc::rt::cuda
