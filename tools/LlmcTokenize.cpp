//===- LlmcTokenize.cpp - `llmc tokenize`: text files to token shards -----===//
//
// Loads the tokenizer, hands the files to tokenizeCorpus (the runtime does
// the work), and reports: a progress line on stderr (MB done, tokens/s, ETA
// by bytes) redrawn four times a second on a terminal, or a plain line every
// ten seconds otherwise; then a summary on stdout.
//
//===----------------------------------------------------------------------===//

#include "tools/LlmcTokenize.h"

#include "runtime/text/TokenizeCorpus.h"

#include <unistd.h>

namespace llmc::driver {

namespace {

constexpr double kTerminalRefreshSeconds = 0.25;
constexpr double kPlainLineSeconds = 10.0;

std::string megabytes(uint64_t bytes) {
  return llvm::formatv("{0:f1}", static_cast<double>(bytes) / 1e6).str();
}

std::string progressLine(const llmc::rt::TokenizeProgress &p) {
  double fraction =
      p.bytesTotal ? static_cast<double>(p.bytesDone) / p.bytesTotal : 1.0;
  double rate = p.seconds > 0 ? p.tokens / p.seconds : 0.0;
  std::string eta = "?";
  if (fraction > 0 && p.seconds > 0) {
    double left = p.seconds * (1 - fraction) / fraction;
    eta = left < 100 ? llvm::formatv("{0:f0} s", left).str()
                     : llvm::formatv("{0:f0} min", left / 60).str();
  }
  return llvm::formatv("tokenize: {0} / {1} MB ({2:f0}%), {3} tokens, "
                       "{4:f2}M tokens/s, ETA {5}",
                       megabytes(p.bytesDone), megabytes(p.bytesTotal),
                       100 * fraction, withThousands(p.tokens), rate / 1e6,
                       eta)
      .str();
}

std::string shardRange(const std::vector<std::string> &paths) {
  if (paths.empty())
    return "";
  if (paths.size() == 1)
    return " (" + paths.front() + ")";
  return " (" + paths.front() + " .. " +
         llvm::sys::path::filename(paths.back()).str() + ")";
}

} // namespace

int runTokenize(const TokenizeCommand &options) {
  std::unique_ptr<llmc::rt::Tokenizer> tokenizer;
  if (llmc::rt::Status status =
          llmc::rt::Tokenizer::load(options.tokenizer, tokenizer);
      !status) {
    llvm::errs() << "llmc tokenize: error: " << status.message() << "\n";
    return kExitRejected;
  }
  llmc::rt::TokenizeOptions run;
  run.inputs.assign(options.inputs.begin(), options.inputs.end());
  run.outputDir = options.output;
  run.valFraction = options.valFraction;
  run.shardTokens = options.shardTokens;
  run.eot = options.eot;
  run.lines = options.lines;
  run.threads = options.threads;

  bool terminal = ::isatty(STDERR_FILENO);
  double shown = 0.0;
  bool drawn = false;
  auto progress = [&](const llmc::rt::TokenizeProgress &p) {
    double every = terminal ? kTerminalRefreshSeconds : kPlainLineSeconds;
    if (p.seconds - shown < every)
      return;
    shown = p.seconds;
    if (terminal) {
      llvm::errs() << "\r" << progressLine(p) << "\x1b[K";
      drawn = true;
    } else {
      llvm::errs() << progressLine(p) << "\n";
    }
    llvm::errs().flush();
  };
  llmc::rt::TokenizeSummary summary;
  llmc::rt::Status status =
      llmc::rt::tokenizeCorpus(*tokenizer, run, progress, summary);
  if (drawn)
    llvm::errs() << "\r\x1b[K";
  if (!status) {
    llvm::errs() << "llmc tokenize: error: " << status.message() << "\n";
    return kExitRejected;
  }
  llvm::raw_ostream &os = llvm::outs();
  double rate = summary.seconds > 0 ? summary.bytes / summary.seconds : 0.0;
  os << "llmc tokenize: " << summary.files
     << (summary.files == 1 ? " file, " : " files, ")
     << withThousands(summary.bytes) << " bytes -> "
     << withThousands(summary.trainTokens + summary.valTokens) << " tokens ("
     << (summary.tokenType == llmc::rt::shard::TokenType::U16 ? "uint16"
                                                               : "uint32")
     << ", " << tokenizer->describe() << ") in "
     << llvm::formatv("{0:f2} s, {1:f1} MB/s with {2} thread{3}\n",
                      summary.seconds, rate / 1e6, summary.threads,
                      summary.threads == 1 ? "" : "s");
  auto split = [&](const char *name, uint64_t documents, uint64_t tokens,
                   const std::vector<std::string> &shards) {
    os << "  " << name << withThousands(documents)
       << (documents == 1 ? " document, " : " documents, ")
       << withThousands(tokens) << " tokens, " << shards.size()
       << (shards.size() == 1 ? " shard" : " shards") << shardRange(shards)
       << "\n";
  };
  split("train: ", summary.trainDocuments, summary.trainTokens,
        summary.trainShards);
  split("val:   ", summary.valDocuments, summary.valTokens, summary.valShards);
  return kExitOk;
}

} // namespace llmc::driver
