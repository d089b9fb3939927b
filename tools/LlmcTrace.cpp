//===- LlmcTrace.cpp - `llmc trace merge`: one trace of several -----------===//
#include "tools/LlmcTrace.h"

#include "runtime/TraceRecorder.h"
#include "runtime/io/File.h"

namespace llmc::driver {

int runTrace(const TraceCommand &options) {
  std::vector<std::string> words(options.words.begin(), options.words.end());
  if (words.empty() || words[0] != "merge") {
    llvm::errs() << "llmc trace: expected `llmc trace merge OUT.json "
                    "IN.json...`, got '"
                 << (words.empty() ? std::string() : words[0]) << "'\n";
    return kExitUsage;
  }
  if (words.size() < 3) {
    llvm::errs() << "llmc trace merge: expected an output and at least one "
                    "input trace, got "
                 << words.size() - 1 << " file(s)\n";
    return kExitUsage;
  }
  std::string output = words[1];
  std::vector<std::string> inputs(words.begin() + 2, words.end());
  for (const std::string &input : inputs)
    if (llmc::rt::Status status =
            llmc::rt::checkNotAnInput("the output", output, "input", input);
        !status) {
      llvm::errs() << "llmc trace merge: " << status.message() << "\n";
      return kExitUsage;
    }
  if (llmc::rt::Status status = llmc::rt::mergeTraceFiles(inputs, output);
      !status) {
    llvm::errs() << "llmc trace merge: error: " << status.message() << "\n";
    return kExitRejected;
  }
  llvm::outs() << "merged " << inputs.size() << " traces into " << output
               << "\n";
  return kExitOk;
}

} // namespace llmc::driver
