//===- TrainTrace.h - --trace: which steps, the host phases -----*- C++ -*-===//
//
// The training loop's side of `--trace FILE.json` (docs/training.md,
// "Traces"): which steps are traced (--trace-steps A:B, LLMC_TRACE_STEPS;
// by default the third and fourth steps the run makes, after two warm-up
// steps), the host phases of those steps (data, run, outputs, eval,
// checkpoint) on their own track, and the file: the session adds its
// commands to the same TraceRecorder while a traced step runs
// (DeviceSession::setTrace). In a multi-process run each rank writes
// FILE.rankN.json and rank 0, after every rank has written (an all-gather
// of all ranks serves as the barrier), merges them into FILE.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_TRAINTRACE_H
#define LLMC_RUNTIME_TRAIN_TRAINTRACE_H

#include "runtime/DeviceSession.h"
#include "runtime/Executable.h"
#include "runtime/Status.h"
#include "runtime/TraceRecorder.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace llmc::rt {

/// The steps to trace: [first, last], both inclusive.
struct TraceSteps {
  int64_t first = 0;
  int64_t last = 0;
};

/// Parses "A:B" (1 <= A <= B) or "A" (A:A) into `steps`; the message names
/// `what` (the flag or the variable) and the text.
Status parseTraceSteps(const std::string &text, const std::string &what,
                       TraceSteps &steps);

/// The default: the third and fourth steps of a run that makes steps
/// `first`..`last` (after two warm-up steps: the first run compiles and
/// allocates, the second captures the CUDA graph), or its last two when it
/// makes fewer than four.
TraceSteps defaultTraceSteps(int64_t first, int64_t last);

/// FILE.rankN.json of rank `rank`: "trace.json" -> "trace.rank1.json".
std::string rankTracePath(const std::string &path, int rank);

class TrainTrace {
public:
  /// The trace of a run that makes steps `first`..`last` on `session`, or
  /// null in `trace` when none is asked for: `path` (--trace) or else
  /// LLMC_TRACE; `stepsText` (--trace-steps) or else LLMC_TRACE_STEPS, or
  /// the default. `log` (null: silent) gets the line saying where the
  /// trace went.
  static Status create(const Executable &exe, DeviceSession &session,
                       const std::string &path, const std::string &stepsText,
                       int64_t first, int64_t last, std::FILE *log,
                       std::unique_ptr<TrainTrace> &trace);

  /// Whether step `step` is traced.
  bool traces(int64_t step) const {
    return step >= steps_.first && step <= steps_.last;
  }
  /// Whether the step running now is traced (between beginStep and endStep).
  bool active() const { return active_; }
  TraceRecorder &recorder() { return recorder_; }
  const TraceSteps &steps() const { return steps_; }

  /// Before step `step`: a traced step hands the recorder to the session.
  void beginStep(int64_t step);
  /// After it: the session lets go of the recorder; after the last traced
  /// step, or after a traced step the run stops at (`stopping`), the file
  /// is written (and merged, multi-process).
  Status endStep(int64_t step, bool stopping);
  /// A host phase from `beginUs` to now on the host track.
  void addPhase(const std::string &name, double beginUs);

private:
  TrainTrace(DeviceSession &session) : session_(session) {}
  Status finish();

  DeviceSession &session_;
  TraceRecorder recorder_;
  TraceSteps steps_;
  std::string path_;
  std::FILE *log_ = nullptr;
  int rank_ = 0;      ///< this process's first rank: the host track's pid
  int worldSize_ = 1; ///< processes of the run (1 unless multi-process)
  bool active_ = false;
  bool written_ = false;
};

/// A host phase of a traced step, from construction to end() (or the end
/// of its scope); nothing when `trace` is null or its step is not traced.
class TracePhase {
public:
  TracePhase(TrainTrace *trace, std::string name)
      : trace_(trace && trace->active() ? trace : nullptr),
        name_(trace_ ? std::move(name) : std::string()),
        beginUs_(trace_ ? TraceRecorder::nowUs() : 0.0) {}
  ~TracePhase() { end(); }
  TracePhase(const TracePhase &) = delete;
  TracePhase &operator=(const TracePhase &) = delete;
  void end() {
    if (trace_)
      trace_->addPhase(name_, beginUs_);
    trace_ = nullptr;
  }

private:
  TrainTrace *trace_;
  std::string name_;
  double beginUs_;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_TRAINTRACE_H
