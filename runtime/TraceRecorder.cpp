//===- TraceRecorder.cpp - Chrome/Perfetto traces of chosen steps ---------===//
#include "runtime/TraceRecorder.h"

#include "runtime/io/File.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <set>

namespace llmc::rt {

using nlohmann::json;

double TraceRecorder::nowUs() {
  // libstdc++'s steady_clock is CLOCK_MONOTONIC.
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void TraceRecorder::add(TraceEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

void TraceRecorder::nameProcess(int pid, const std::string &name) {
  std::lock_guard<std::mutex> lock(mutex_);
  processes_[pid] = name;
}

void TraceRecorder::nameTrack(int pid, int tid, const std::string &name) {
  std::lock_guard<std::mutex> lock(mutex_);
  tracks_[{pid, tid}] = name;
}

void TraceRecorder::setMetadata(const std::string &key,
                                const std::string &value) {
  std::lock_guard<std::mutex> lock(mutex_);
  metadata_[key] = value;
}

size_t TraceRecorder::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

std::vector<TraceEvent> TraceRecorder::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

namespace {

/// Microseconds with nanosecond digits: a double of 1e12 us (11 days of
/// uptime) still resolves them, and the file stays readable.
double roundedUs(double us) { return std::round(us * 1000.0) / 1000.0; }

json metadataEvent(const char *name, int pid, int tid, json args) {
  json event = {{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", args}};
  if (tid >= 0)
    event["tid"] = tid;
  return event;
}

} // namespace

std::string TraceRecorder::toJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  json events = json::array();
  // 1. The metadata events: names, and the order of processes (by rank)
  //    and tracks (host phases first, then commands, then streams).
  for (const auto &[pid, name] : processes_) {
    events.push_back(metadataEvent("process_name", pid, -1, {{"name", name}}));
    events.push_back(
        metadataEvent("process_sort_index", pid, -1, {{"sort_index", pid}}));
  }
  for (const auto &[where, name] : tracks_) {
    events.push_back(
        metadataEvent("thread_name", where.first, where.second,
                      {{"name", name}}));
    events.push_back(metadataEvent("thread_sort_index", where.first,
                                   where.second,
                                   {{"sort_index", where.second}}));
  }
  // 2. The complete events.
  for (const TraceEvent &event : events_) {
    json args = json::object();
    for (const TraceArg &arg : event.args) {
      // Counts and indices print as integers.
      if (arg.isNumber && arg.number == std::floor(arg.number) &&
          std::fabs(arg.number) < 9.0e15)
        args[arg.key] = static_cast<int64_t>(arg.number);
      else if (arg.isNumber)
        args[arg.key] = arg.number;
      else
        args[arg.key] = arg.text;
    }
    events.push_back({{"ph", "X"},
                      {"name", event.name},
                      {"cat", event.category},
                      {"pid", event.pid},
                      {"tid", event.tid},
                      {"ts", roundedUs(event.ts)},
                      {"dur", roundedUs(std::max(0.0, event.dur))},
                      {"args", args}});
  }
  json other = json::object();
  for (const auto &[key, value] : metadata_)
    other[key] = value;
  json trace = {{"traceEvents", events},
                {"displayTimeUnit", "ms"},
                {"otherData", other}};
  return trace.dump(1);
}

Status TraceRecorder::write(const std::string &path) const {
  std::string text = toJson();
  text += "\n";
  if (Status status = writeFileAtomically(path, text.data(), text.size());
      !status)
    return Status::error(status.code(),
                         "writing the trace: " + status.message());
  return Status::ok();
}

const char *commandOpName(const Command &command) {
  switch (command.kind) {
  case CommandKind::Kernel:
  case CommandKind::Gemm:
    return kernelName(command.kernel);
  case CommandKind::Copy:
    return "copy";
  case CommandKind::Collective:
    return collectiveKindName(
        command.attrs.ints.empty()
            ? CollectiveKind::AllReduce
            : static_cast<CollectiveKind>(command.attrs.ints[0]));
  case CommandKind::HostStep:
    return "host_step";
  }
  return "?";
}

namespace {

Status readTrace(const std::string &path, json &trace) {
  std::vector<uint8_t> bytes;
  LLMC_RETURN_IF_ERROR(readFile(path, bytes));
  trace = json::parse(bytes.begin(), bytes.end(), nullptr,
                      /*allow_exceptions=*/false);
  if (trace.is_discarded() || !trace.is_object() ||
      !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    return Status::error(StatusCode::InvalidArgument,
                         path + ": expected a Chrome trace (a JSON object "
                                "with a \"traceEvents\" array), as --trace "
                                "writes");
  return Status::ok();
}

} // namespace

Status mergeTraceFiles(const std::vector<std::string> &inputs,
                       const std::string &output) {
  json events = json::array();
  json other = json::object();
  std::set<int64_t> used;
  for (const std::string &path : inputs) {
    json trace;
    LLMC_RETURN_IF_ERROR(readTrace(path, trace));
    // 1. This file's pids, renumbered where an earlier file has them.
    std::map<int64_t, int64_t> renamed;
    for (const json &event : trace["traceEvents"]) {
      int64_t pid = event.is_object() && event.contains("pid") &&
                            event["pid"].is_number_integer()
                        ? event["pid"].get<int64_t>()
                        : 0;
      if (renamed.count(pid))
        continue;
      int64_t to = pid;
      while (used.count(to))
        ++to;
      renamed[pid] = to;
    }
    for (const auto &[from, to] : renamed)
      used.insert(to);
    // 2. Its events, with their new pids.
    for (json event : trace["traceEvents"]) {
      if (!event.is_object())
        continue;
      int64_t pid = event.contains("pid") && event["pid"].is_number_integer()
                        ? event["pid"].get<int64_t>()
                        : 0;
      event["pid"] = renamed[pid];
      if (renamed[pid] != pid && event.value("ph", "") == "M" &&
          event.value("name", "") == "process_name" &&
          event.contains("args") && event["args"].is_object())
        event["args"]["name"] =
            event["args"].value("name", "process") + " (" + path + ")";
      if (event.value("ph", "") == "M" &&
          event.value("name", "") == "process_sort_index")
        event["args"]["sort_index"] = renamed[pid];
      events.push_back(std::move(event));
    }
    if (trace.contains("otherData"))
      other[path] = trace["otherData"];
  }
  json merged = {{"traceEvents", events},
                 {"displayTimeUnit", "ms"},
                 {"otherData", {{"merged_from", inputs}, {"files", other}}}};
  std::string text = merged.dump(1) + "\n";
  if (Status status = writeFileAtomically(output, text.data(), text.size());
      !status)
    return Status::error(status.code(),
                         "writing the merged trace: " + status.message());
  return Status::ok();
}

} // namespace llmc::rt
