//===- TokenizeCorpus.h - text files to llm.c token shards -----*- C++ -*-===//
//
// The work of `llmc tokenize` (tools/LlmcTokenize.cpp is only its command
// line): text files are encoded with a Tokenizer, in parallel across
// documents, and written in input order as llm.c shards
// (runtime/data/TokenShardFormat.h) DIR/train_000000.bin, ... and
// DIR/val_000000.bin, ...; the output does not depend on the thread count.
//
//   documents   each FILE, or with `lines` each non-empty line of each FILE
//               (without its "\n" or "\r\n"), in the order given
//   eot         the tokenizer's end-of-text token between the documents of
//               each split (not before the first: see docs/tokenizer.md)
//   val split   of N >= 2 documents, k = floor(N * valFraction) go to val,
//               spread evenly: document i (from 0) when
//               floor((i + 1) k / N) > floor(i k / N); with one document,
//               its first ceil(valFraction * T) of T tokens
//   shards      shardTokens tokens each (the last one fewer); a document
//               continues in the next shard, as in llm.c's fineweb.py
//
// Every input is opened and the output folder checked (created, writable,
// holding no shards of an earlier run) before any work.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_TOKENIZECORPUS_H
#define LLMC_RUNTIME_TEXT_TOKENIZECORPUS_H

#include "runtime/data/TokenShardFormat.h"
#include "runtime/text/Tokenizer.h"

#include <functional>

namespace llmc::rt {

struct TokenizeOptions {
  std::vector<std::string> inputs;
  std::string outputDir;
  double valFraction = 0.0; ///< in [0, 1)
  int64_t shardTokens = 100'000'000;
  bool eot = false;
  bool lines = false;
  int threads = 0; ///< 0: one per core
  /// Documents longer than this are encoded by the calling thread,
  /// streaming into the shards, instead of held whole by a worker (tests
  /// lower it to check that both paths write the same shards).
  size_t streamDocumentBytes = size_t{64} << 20;
};

struct TokenizeProgress {
  uint64_t bytesDone = 0, bytesTotal = 0;
  uint64_t tokens = 0;
  double seconds = 0.0;
};

struct TokenizeSummary {
  shard::TokenType tokenType = shard::TokenType::U16;
  uint64_t files = 0, bytes = 0;
  uint64_t trainDocuments = 0, valDocuments = 0;
  uint64_t trainTokens = 0, valTokens = 0;
  std::vector<std::string> trainShards, valShards;
  int threads = 0;
  double seconds = 0.0;
};

/// Checks `options` and the files, then writes the shards. `progress`
/// (optional) is called from the calling thread after each batch of
/// documents, a few hundred times a second at most.
Status tokenizeCorpus(const Tokenizer &tokenizer,
                      const TokenizeOptions &options,
                      const std::function<void(const TokenizeProgress &)>
                          &progress,
                      TokenizeSummary &summary);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TEXT_TOKENIZECORPUS_H
