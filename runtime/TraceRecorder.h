//===- TraceRecorder.h - Chrome/Perfetto traces of chosen steps -*- C++ -*-===//
//
// The event buffer behind `--trace FILE.json` (docs/training.md, "Traces"):
// complete ("X") events with their start and duration in microseconds on
// one track each, and the metadata ("M") events that name the processes
// (one per rank) and their tracks. The training loop (train/TrainTrace.h)
// owns a recorder while a traced step runs and hands it to the session
// (DeviceSession::setTrace), which adds an event per command: the CPU
// session per rank thread, the CUDA session per stream from CUDA events.
// write() produces the JSON object format that ui.perfetto.dev and
// chrome://tracing open: {"traceEvents": [...], "otherData": {...}}.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRACERECORDER_H
#define LLMC_RUNTIME_TRACERECORDER_H

#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace llmc::rt {

/// The tracks (Chrome's "tid") of one rank's process, in display order.
enum TraceTrack : int {
  kTraceHostTrack = 0,    ///< host phases: data, step, checkpoint, eval
  kTraceCommandTrack = 1, ///< the CPU session: the rank's device thread
  kTraceComputeStreamTrack = 2,    ///< the CUDA session's compute stream
  kTraceCollectiveStreamTrack = 3, ///< its NCCL (communication) stream
};

/// One argument of an event, shown in the UI's details: text or a number.
struct TraceArg {
  std::string key;
  std::string text;
  double number = 0;
  bool isNumber = false;
  static TraceArg of(std::string key, std::string text) {
    return {std::move(key), std::move(text), 0, false};
  }
  static TraceArg of(std::string key, double number) {
    return {std::move(key), {}, number, true};
  }
};

/// A complete event: `name` on track `tid` of process `pid` from `ts` for
/// `dur` microseconds.
struct TraceEvent {
  std::string name;
  std::string category; ///< "host", "cpu", "gpu"
  int pid = 0;
  int tid = 0;
  double ts = 0;
  double dur = 0;
  std::vector<TraceArg> args;
};

class TraceRecorder {
public:
  /// Microseconds of the monotonic clock (CLOCK_MONOTONIC, which every
  /// process of a machine shares: the rank files of one run line up when
  /// merged).
  static double nowUs();

  /// Adds an event; safe from several threads (the CPU ranks).
  void add(TraceEvent event);
  /// Names process `pid` ("rank 0 (cpu)") and track `tid` of it.
  void nameProcess(int pid, const std::string &name);
  void nameTrack(int pid, int tid, const std::string &name);
  /// A run-wide note in "otherData" (the traced steps, the CUDA graph).
  void setMetadata(const std::string &key, const std::string &value);

  size_t size() const;
  /// A copy of the events so far (for tests).
  std::vector<TraceEvent> events() const;

  /// The trace as Chrome's JSON object format.
  std::string toJson() const;
  /// Writes toJson() to `path` (through a temporary file and a rename, so
  /// that a reader never sees half a trace).
  Status write(const std::string &path) const;

private:
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
  std::map<int, std::string> processes_;
  std::map<std::pair<int, int>, std::string> tracks_;
  std::map<std::string, std::string> metadata_;
};

/// What a command is called in traces and profiles: its kernel's name
/// (Kernels.def), "copy", or its collective's ("all_reduce", "send").
const char *commandOpName(const Command &command);

/// Merges Chrome trace files (each a JSON object with "traceEvents") into
/// `output`: every event of every input, in order. A process id that an
/// earlier input already used is given the next free one (two runs of one
/// rank each stay apart), and its process name says which file it came
/// from; `otherData` gathers each input's under its file name. Fails
/// naming the file that cannot be read or is not a trace.
Status mergeTraceFiles(const std::vector<std::string> &inputs,
                       const std::string &output);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRACERECORDER_H
