//===- TrainTrace.cpp - --trace: which steps, the host phases -------------===//
#include "runtime/train/TrainTrace.h"

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace llmc::rt {

namespace {

/// A whole number >= 1 from `text`, or false.
bool parseStep(const std::string &text, int64_t &value) {
  if (text.empty() || text[0] == '-' || text[0] == '+')
    return false;
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno || !end || *end || parsed < 1)
    return false;
  value = parsed;
  return true;
}

} // namespace

Status parseTraceSteps(const std::string &text, const std::string &what,
                       TraceSteps &steps) {
  size_t colon = text.find(':');
  std::string a = text.substr(0, colon);
  std::string b = colon == std::string::npos ? a : text.substr(colon + 1);
  TraceSteps parsed;
  if (!parseStep(a, parsed.first) || !parseStep(b, parsed.last) ||
      parsed.last < parsed.first)
    return Status::error(StatusCode::InvalidArgument,
                         what + " expects A:B, the first and last step to "
                                "trace (1 <= A <= B), or one step A, got '" +
                             text + "'");
  steps = parsed;
  return Status::ok();
}

TraceSteps defaultTraceSteps(int64_t first, int64_t last) {
  TraceSteps steps{first + 2, first + 3};
  if (steps.last > last)
    steps = {std::max(first, last - 1), last};
  return steps;
}

std::string rankTracePath(const std::string &path, int rank) {
  const std::string suffix = ".json";
  std::string stem = path;
  if (stem.size() > suffix.size() &&
      stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0)
    stem.resize(stem.size() - suffix.size());
  return stem + ".rank" + std::to_string(rank) + ".json";
}

Status TrainTrace::create(const Executable &exe, DeviceSession &session,
                          const std::string &path,
                          const std::string &stepsText, int64_t first,
                          int64_t last, std::FILE *log,
                          std::unique_ptr<TrainTrace> &trace) {
  trace.reset();
  std::string file = path;
  if (file.empty())
    if (const char *env = std::getenv("LLMC_TRACE"))
      file = env;
  if (file.empty())
    return Status::ok();
  std::string text = stepsText, what = "--trace-steps";
  if (text.empty())
    if (const char *env = std::getenv("LLMC_TRACE_STEPS"); env && *env)
      text = env, what = "LLMC_TRACE_STEPS";
  TraceSteps steps = defaultTraceSteps(first, last);
  if (!text.empty())
    LLMC_RETURN_IF_ERROR(parseTraceSteps(text, what, steps));
  std::unique_ptr<TrainTrace> made(new TrainTrace(session));
  made->steps_ = steps;
  made->path_ = file;
  made->log_ = log;
  std::vector<int> ranks = session.localRanks();
  made->rank_ = ranks.empty() ? 0 : ranks.front();
  // One rank of several in this process: a multi-process run.
  if (exe.ranks.size() > 1 && ranks.size() == 1)
    made->worldSize_ = static_cast<int>(exe.ranks.size());
  TraceRecorder &recorder = made->recorder_;
  // The loop's phases are on the first local rank's process (the CPU's
  // virtual ranks share one loop).
  recorder.nameTrack(made->rank_, kTraceHostTrack,
                     "host phases (the training loop)");
  recorder.setMetadata("producer", versionLine());
  recorder.setMetadata("source", exe.source);
  recorder.setMetadata("device", session.deviceName());
  recorder.setMetadata("traced_steps", std::to_string(steps.first) + "-" +
                                           std::to_string(steps.last));
  recorder.setMetadata("clock", "microseconds of CLOCK_MONOTONIC");
  if (log && steps.first > last)
    std::fprintf(log,
                 "note: --trace: steps %lld-%lld are past the run's last step "
                 "%lld; no trace is written\n",
                 static_cast<long long>(steps.first),
                 static_cast<long long>(steps.last),
                 static_cast<long long>(last));
  trace = std::move(made);
  return Status::ok();
}

void TrainTrace::beginStep(int64_t step) {
  active_ = traces(step) && !written_;
  if (active_)
    session_.setTrace(&recorder_);
}

void TrainTrace::addPhase(const std::string &name, double beginUs) {
  TraceEvent event;
  event.name = name;
  event.category = "host";
  event.pid = rank_;
  event.tid = kTraceHostTrack;
  event.ts = beginUs;
  event.dur = TraceRecorder::nowUs() - beginUs;
  recorder_.add(std::move(event));
}

Status TrainTrace::endStep(int64_t step, bool stopping) {
  if (!active_)
    return Status::ok();
  active_ = false;
  session_.setTrace(nullptr);
  if (step < steps_.last && !stopping)
    return Status::ok();
  return finish();
}

Status TrainTrace::finish() {
  written_ = true;
  if (worldSize_ == 1) {
    LLMC_RETURN_IF_ERROR(recorder_.write(path_));
    if (log_)
      std::fprintf(log_, "trace of steps %s: %s (%zu events; open it in "
                         "ui.perfetto.dev)\n",
                   std::to_string(steps_.first).append("-").append(
                       std::to_string(steps_.last)).c_str(),
                   path_.c_str(), recorder_.size());
    return Status::ok();
  }
  // Every rank writes its file; after the all-gather that every rank makes
  // here (agreeOnStop's, with nothing to agree on) all files exist, and
  // rank 0 merges them.
  LLMC_RETURN_IF_ERROR(recorder_.write(rankTracePath(path_, rank_)));
  int nothing = 0;
  LLMC_RETURN_IF_ERROR(session_.agreeOnStop(nothing));
  if (rank_ != 0)
    return Status::ok();
  std::vector<std::string> files;
  for (int r = 0; r < worldSize_; ++r)
    files.push_back(rankTracePath(path_, r));
  LLMC_RETURN_IF_ERROR(mergeTraceFiles(files, path_));
  if (log_)
    std::fprintf(log_,
                 "trace of steps %lld-%lld: %s (the %d ranks' %s ... "
                 "merged; open it in ui.perfetto.dev)\n",
                 static_cast<long long>(steps_.first),
                 static_cast<long long>(steps_.last), path_.c_str(),
                 worldSize_, files.front().c_str());
  return Status::ok();
}

} // namespace llmc::rt
