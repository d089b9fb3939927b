//===- LlmcReport.h - `llmc report`: a run's curves as one HTML page -*- C++ -*-===//
//
// Reads the JSON-lines metrics of one or more runs (`--metrics FILE` of
// `llmc train` / `llmc-run`, docs/training.md) and writes one self-contained
// HTML page: inline SVG charts of the loss and validation loss against
// steps and against tokens, the learning rate, the gradient norm, tokens/s
// and MFU, every run overlaid in its own colour with a legend, and a table
// of each run's figures. No script, no font or file from elsewhere: the
// page opens offline in any browser (docs/training.md, "Plots").
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TOOLS_LLMCREPORT_H
#define LLMC_TOOLS_LLMCREPORT_H

#include "tools/LlmcDriver.h"

namespace llmc::driver {

struct ReportCommand {
  cl::SubCommand command{
      "report",
      "Plot the metrics of one or more runs (llmc train --metrics FILE)\n"
      "  as one self-contained HTML page: loss and val loss against steps\n"
      "  and tokens, lr, grad norm, tok/s, MFU. See docs/training.md."};
  cl::list<std::string> inputs{cl::Positional, cl::desc("<METRICS.jsonl>..."),
                               cl::OneOrMore, cl::sub(command),
                               cl::cat(llmcCategory())};
  cl::opt<std::string> output{"o", cl::desc("The HTML page to write"),
                              cl::value_desc("report.html"), cl::Required,
                              cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> title{"title",
                             cl::desc("The page's title (default: the "
                                      "metrics files' names)"),
                             cl::value_desc("TEXT"), cl::sub(command),
                             cl::cat(llmcCategory())};
};

/// Runs `llmc report`; the exit code (kExitOk, kExitRejected, kExitUsage).
int runReport(const ReportCommand &options);

} // namespace llmc::driver

#endif // LLMC_TOOLS_LLMCREPORT_H
