//===- CudaTiming.cpp - CUDA events for a step's commands: trace, profile -===//
//
// The event pool (CudaTiming.h), and the CudaSession methods that time its
// commands with CUDA events: the trace of chosen steps (--trace, one event
// per launch on its stream's track) and the LLMC_PROFILE tables (GPU time
// by kernel and by model part, summed over every step after the first).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/session/CudaTiming.h"

#include "runtime/TraceRecorder.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorLaunch.h"
#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/libs/Nccl.h"
#include "runtime/cuda/session/CudaSession.h"

#include <algorithm>
#include <cstdio>

namespace llmc::rt::cuda {

CudaTiming::~CudaTiming() {
  for (cudaEvent_t event : events_)
    (void)cudaEventDestroy(event);
}

Status CudaTiming::reserve(cudaEvent_t &event, size_t &index) {
  if (used_ == events_.size()) {
    cudaEvent_t made = nullptr;
    LLMC_CUDA_CHECK(cudaEventCreate(&made), "cudaEventCreate(trace)");
    events_.push_back(made);
  }
  index = used_++;
  event = events_[index];
  return Status::ok();
}

Status CudaTiming::mark(cudaStream_t stream, size_t &index) {
  cudaEvent_t event = nullptr;
  LLMC_RETURN_IF_ERROR(reserve(event, index));
  LLMC_CUDA_CHECK(cudaEventRecord(event, stream), "cudaEventRecord(trace)");
  return Status::ok();
}

Status CudaTiming::elapsedUs(size_t from, size_t to, double &us) const {
  float ms = 0;
  LLMC_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[from], events_[to]),
                  "cudaEventElapsedTime(trace)");
  us = 1e3 * static_cast<double>(ms);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The trace
//===----------------------------------------------------------------------===//

void CudaSession::setTrace(TraceRecorder *trace) {
  trace_ = trace;
  if (!trace)
    return;
  if (!timing_)
    timing_ = std::make_unique<CudaTiming>();
  int pid = options_.rank;
  trace->nameProcess(pid, "rank " + std::to_string(pid) + " (" +
                              deviceName() + ", " + hardwareName() + ")");
  trace->nameTrack(pid, kTraceComputeStreamTrack,
                   "GPU stream: compute (kernels, cuBLASLt GEMMs, copies)");
  if (world_)
    trace->nameTrack(pid, kTraceCollectiveStreamTrack,
                     "GPU stream: NCCL collectives");
}

Status CudaSession::traceRunBegin(bool graphed) {
  if (graphed || graphExec_)
    trace_->setMetadata(
        "cuda_graph",
        "the untraced steps of this run replay one CUDA graph (captured at "
        "the second step); each traced step was run once ungraphed, command "
        "by command on the same streams: the same kernels, timed one by "
        "one, with the launch gaps that a graph would hide");
  else
    trace_->setMetadata("cuda_graph",
                        "not used by this run (NCCL, LLMC_CUDA_GRAPH=0, "
                        "profiling or a checking mode): the traced steps "
                        "ran as every step does");
  // The origin: an event recorded on an idle stream fires at once, so
  // its GPU time is the host time taken just before it.
  timing_->reset();
  traced_.clear();
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_), "the trace's origin");
  traceOriginUs_ = TraceRecorder::nowUs();
  return timing_->mark(stream_, traceOrigin_);
}

Status CudaSession::traceBefore(size_t index, cudaStream_t stream,
                                size_t &mark) {
  return wrap(program().commands[index], timing_->mark(stream, mark));
}

Status CudaSession::traceAfter(size_t index, size_t mark) {
  const Command &command = program().commands[index];
  bool collective = command.kind == CommandKind::Collective;
  size_t end = 0;
  LLMC_RETURN_IF_ERROR(wrap(
      command, timing_->mark(collective ? world_->stream() : stream_, end)));
  traced_.push_back({index, mark, end, collective});
  return Status::ok();
}

bool CudaSession::describeLaunch(size_t index, std::string &name,
                                 int64_t &commands,
                                 std::string &kernel) const {
  const Command &command = program().commands[index];
  const KernelChoice &choice = choices_[index];
  commands = 1;
  kernel.clear();
  name = commandOpName(command);
  if (command.kind == CommandKind::Collective) {
    kernel = "NCCL";
    return true;
  }
  if (command.kind == CommandKind::Copy) {
    kernel = "cudaMemcpyAsync";
    return true;
  }
  if (multi_ && !check_ && multi_->covered(index)) {
    int group = multi_->groupAt(index);
    if (group < 0)
      return false; // its group's launch did its work
    const MultiTensorGroup &g = multi_->group(group);
    name = "MultiTensor " + g.label;
    commands = static_cast<int64_t>(g.members.size());
    kernel = g.entry;
    return true;
  }
  if (auto fused = fused_.find(index);
      fused != fused_.end() && (!check_ || fused->second.needsOneKernel)) {
    name = "FusedElementwise (one kernel)";
    commands = static_cast<int64_t>(fused->second.commands) + 1;
    return true;
  }
  switch (choice.route) {
  case KernelChoice::Route::Nothing:
    return false;
  case KernelChoice::Route::Copy:
    kernel = "cudaMemcpyAsync";
    break;
  case KernelChoice::Route::Elementwise:
    kernel = choice.unit.entry;
    break;
  case KernelChoice::Route::Gemm:
    kernel = "cuBLASLt";
    break;
  case KernelChoice::Route::DeviceUnit:
    for (const std::string &entry : choice.entries)
      kernel += (kernel.empty() ? "" : ", ") + entry;
    break;
  }
  if (!check_ && foldedAdds_.count(index)) {
    name += " + folded residual add";
    commands = 2;
  }
  return true;
}

Status CudaSession::traceRunEnd() {
  const std::vector<Command> &commands = program().commands;
  for (const TracedLaunch &launch : traced_) {
    TraceEvent event;
    int64_t covered = 1;
    std::string kernel;
    if (!describeLaunch(launch.command, event.name, covered, kernel))
      continue;
    double startUs = 0, durationUs = 0;
    LLMC_RETURN_IF_ERROR(timing_->elapsedUs(traceOrigin_, launch.begin, startUs));
    LLMC_RETURN_IF_ERROR(
        timing_->elapsedUs(launch.begin, launch.end, durationUs));
    const Command &command = commands[launch.command];
    event.category = "gpu";
    event.pid = options_.rank;
    event.tid = launch.collective ? kTraceCollectiveStreamTrack
                                  : kTraceComputeStreamTrack;
    event.ts = traceOriginUs_ + startUs;
    event.dur = durationUs;
    event.args = {TraceArg::of("part", command.origin),
                  TraceArg::of("op", commandOpName(command)),
                  TraceArg::of("command", static_cast<double>(launch.command))};
    if (!kernel.empty())
      event.args.push_back(TraceArg::of("kernel", kernel));
    if (covered > 1)
      event.args.push_back(
          TraceArg::of("commands", static_cast<double>(covered)));
    trace_->add(std::move(event));
  }
  traced_.clear();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// LLMC_PROFILE
//===----------------------------------------------------------------------===//

void CudaSession::recordProfile() {
  const std::vector<Command> &commands = program().commands;
  const RankProgram &rankProgram = program();
  for (size_t i = 0; i < commands.size(); ++i) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, events_[i], events_[i + 1]) != cudaSuccess)
      continue;
    const Command &command = commands[i];
    // A residual add folded into the norm gradient before it ran nothing;
    // the norm's row has its time.
    if (!check_ && i > 0 && foldedAdds_.count(i - 1))
      continue;
    // A multi-tensor launch: its time is its first command's; its other
    // commands ran nothing.
    if (multi_ && !check_ && multi_->covered(i)) {
      if (int group = multi_->groupAt(i); group >= 0) {
        const MultiTensorGroup &g = multi_->group(group);
        ProfileRow &row = profileRows_["MultiTensor " + g.label];
        row.ms += ms;
        ++row.launches;
        ProfileRow &one =
            profileCommands_["MultiTensor " + g.label + " x" +
                             std::to_string(g.members.size()) + " from " +
                             command.origin];
        one.ms += ms;
        ++one.launches;
      }
      continue;
    }
    // A region run as one kernel: its time is the marker's, and its own
    // commands did not run.
    if (auto fused = fused_.find(i); fused != fused_.end()) {
      ProfileRow &row = profileRows_["FusedElementwise (one kernel)"];
      row.ms += ms;
      ++row.launches;
      ProfileRow &one =
          profileCommands_["FusedElementwise at " + command.origin];
      one.ms += ms;
      ++one.launches;
      i += fused->second.commands;
      continue;
    }
    std::string kind = command.kind == CommandKind::Copy
                           ? std::string("Copy")
                           : std::string(kernelName(command.kernel));
    if (!command.outputs.empty())
      kind += " -> " +
              std::string(dtypeName(rankProgram.values[command.outputs[0]].dtype));
    ProfileRow &row = profileRows_[kind];
    row.ms += ms;
    ++row.launches;
    std::string where = kind + " at " + command.origin;
    if (profileShapes_) {
      // LLMC_PROFILE=shapes: the operand shapes too, every row printed.
      auto shapeText = [&](int32_t slot) {
        const ValueInfo &v = rankProgram.values[slot];
        std::string text = std::string(dtypeName(v.dtype)) + "[";
        for (size_t d = 0; d < v.shape.size(); ++d)
          text += (d ? "," : "") + std::to_string(v.shape[d]);
        return text + "]";
      };
      where += " (";
      for (size_t k = 0; k < command.inputs.size(); ++k)
        where += (k ? ", " : "") + shapeText(command.inputs[k]);
      where += " -> ";
      for (size_t k = 0; k < command.outputs.size(); ++k)
        where += (k ? ", " : "") + shapeText(command.outputs[k]);
      where += ")";
    }
    ProfileRow &one = profileCommands_[where];
    one.ms += ms;
    ++one.launches;
  }
}

void CudaSession::printProfile() const {
  int64_t runs = runs_ - 1;
  if (runs <= 0)
    return;
  auto print = [&](const std::map<std::string, ProfileRow> &rows,
                   const char *title, size_t limit) {
    std::vector<std::pair<double, std::string>> order;
    double total = 0;
    for (const auto &[name, row] : rows) {
      order.push_back({row.ms / runs, name});
      total += row.ms / runs;
    }
    std::sort(order.rbegin(), order.rend());
    std::fprintf(stderr, "[profile] %s, per step (mean of %lld steps), total %.2f ms:\n",
                 title, static_cast<long long>(runs), total);
    for (size_t i = 0; i < order.size() && i < limit; ++i)
      std::fprintf(stderr, "[profile] %9.3f ms %5.1f%%  %5lld x  %s\n",
                   order[i].first, 100.0 * order[i].first / total,
                   static_cast<long long>(rows.at(order[i].second).launches / runs),
                   order[i].second.c_str());
  };
  print(profileRows_, "GPU time by kernel", 40);
  print(profileCommands_, "GPU time by kernel and model part",
        profileShapes_ ? 400 : 25);
}

} // namespace llmc::rt::cuda
