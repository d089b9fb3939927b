//===- LlmcTokenize.h - `llmc tokenize`: text files to token shards -*- C++ -*-===//
//
// The options of `llmc tokenize` and its entry point. The work is in the
// runtime (runtime/text/TokenizeCorpus.h); tools/LlmcTokenize.cpp parses the
// command line, prints the progress line and the summary.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TOOLS_LLMCTOKENIZE_H
#define LLMC_TOOLS_LLMCTOKENIZE_H

#include "tools/LlmcDriver.h"

namespace llmc::driver {

struct TokenizeCommand {
  cl::SubCommand command{
      "tokenize",
      "Encode text files with a Hugging Face tokenizer.json into llm.c token\n"
      "  shards: DIR/train_000000.bin, ... and DIR/val_000000.bin, ...\n"
      "  (uint16 tokens when the vocabulary fits 16 bits, else uint32).\n"
      "  A document is one FILE, or one non-empty line with --lines.\n"
      "  See docs/tokenizer.md."};
  cl::list<std::string> inputs{cl::Positional, cl::desc("<FILE>..."),
                               cl::OneOrMore, cl::sub(command),
                               cl::cat(llmcCategory())};
  cl::opt<std::string> tokenizer{
      "tokenizer", cl::desc("The tokenizer.json to encode with"),
      cl::value_desc("T.json"), cl::Required, cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<std::string> output{"o",
                              cl::desc("The folder of the shards (created; "
                                       "it must hold no shards yet)"),
                              cl::value_desc("DIR"), cl::Required,
                              cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<double> valFraction{
      "val-fraction",
      cl::desc("Send this fraction to val: of N documents, floor(N*F) spread "
               "evenly; of one document, its first tokens (default 0)"),
      cl::value_desc("F"), cl::init(0.0), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<long long> shardTokens{
      "shard-tokens",
      cl::desc("Tokens per shard (default 100000000, as llm.c's fineweb.py)"),
      cl::value_desc("N"), cl::init(100000000), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<bool> eot{"eot",
                    cl::desc("Put the tokenizer's end-of-text token between "
                             "documents"),
                    cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> lines{"lines",
                      cl::desc("Each non-empty line is a document (without "
                               "its line ending)"),
                      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int> threads{"threads",
                       cl::desc("Encoding threads (default: one per core); "
                                "the shards are the same for any number"),
                       cl::value_desc("N"), cl::init(0), cl::sub(command),
                       cl::cat(llmcCategory())};
};

/// Runs `llmc tokenize`; the exit code (kExitOk, kExitRejected).
int runTokenize(const TokenizeCommand &options);

} // namespace llmc::driver

#endif // LLMC_TOOLS_LLMCTOKENIZE_H
