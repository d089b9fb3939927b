//===- LlmcTrace.h - `llmc trace merge`: one trace of several ---*- C++ -*-===//
//
// `llmc trace merge OUT.json IN.json...` merges Chrome/Perfetto traces
// (`--trace` of `llmc train`, `llmc-run`, `llmc launch`; docs/training.md,
// "Traces") into one file: every process of every input, a process id that
// an earlier input already used renumbered. A multi-process run merges its
// rank files itself; this is for traces of separate runs side by side, or
// rank files kept from a run that stopped.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TOOLS_LLMCTRACE_H
#define LLMC_TOOLS_LLMCTRACE_H

#include "tools/LlmcDriver.h"

namespace llmc::driver {

struct TraceCommand {
  cl::SubCommand command{
      "trace",
      "Work with traces (--trace FILE.json of llmc train / llmc-run):\n"
      "  `llmc trace merge OUT.json IN.json...` merges them into one, every\n"
      "  input's processes kept apart. See docs/training.md, \"Traces\"."};
  cl::list<std::string> words{cl::Positional,
                              cl::desc("merge <OUT.json> <IN.json>..."),
                              cl::OneOrMore, cl::sub(command),
                              cl::cat(llmcCategory())};
};

/// Runs `llmc trace`; the exit code (kExitOk, kExitRejected, kExitUsage).
int runTrace(const TraceCommand &options);

} // namespace llmc::driver

#endif // LLMC_TOOLS_LLMCTRACE_H
