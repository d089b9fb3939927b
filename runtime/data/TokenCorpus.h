//===- TokenCorpus.h - the shards of a training or validation set -*- C++ -*-===//
//
// `[data] train = "DIR/train_*.bin"` (or a list of files and globs) names a
// corpus: every match of every pattern, each pattern's matches in name
// order, opened as TokenShards (memory-mapped: a corpus of 10^10 tokens in
// 100 shards opens in milliseconds and costs address space, not memory).
// Opening checks every shard's header; a corpus of at most
// kFullScanTokens tokens is also scanned whole for tokens outside the
// vocabulary, so that a bad token stops the run before its first step.
// Larger corpora are checked batch by batch as the loader reads them
// (TokenLoader): a bad token still never reaches the model.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DATA_TOKENCORPUS_H
#define LLMC_RUNTIME_DATA_TOKENCORPUS_H

#include "runtime/data/TokenShard.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt {

/// A corpus of at most this many tokens is scanned whole when it opens.
constexpr uint64_t kFullScanTokens = uint64_t(1) << 28;

struct CorpusOptions {
  /// Files or glob patterns (glob(3): *, ?, [..]), in the order given; a
  /// pattern's matches are sorted by name. Empty: the built-in corpus.
  std::vector<std::string> patterns;
  TokenFormat format = TokenFormat::Auto;
  /// Every token must be below it.
  int64_t vocabSize = 0;
  /// Text files: the run's tokenizer; null: one token per byte.
  TextEncoder encode;
  /// "train" or "val": names the set in messages.
  std::string role = "train";
  /// The setting the patterns came from, for messages ("[data] train").
  std::string setting = "[data] train";
};

/// Expands `patterns` into files: each pattern's matches in name order, a
/// pattern with no wildcard taken as it is (its absence is reported when it
/// opens). A pattern that matches nothing is an error naming it.
Status expandPatterns(const std::vector<std::string> &patterns,
                      const std::string &setting,
                      std::vector<std::string> &files);

class TokenCorpus {
public:
  /// Opens every shard (TokenShard::open) and, for a corpus of at most
  /// kFullScanTokens tokens, checks every token against the vocabulary.
  static Status open(const CorpusOptions &options, TokenCorpus &corpus);

  const CorpusOptions &options() const { return options_; }
  size_t numShards() const { return shards_.size(); }
  const TokenShard &shard(size_t index) const { return shards_[index]; }
  uint64_t totalTokens() const { return totalTokens_; }
  /// Whether open() checked every token (else the loader checks batches).
  bool scanned() const { return scanned_; }
  /// "data/train_*.bin: 3 shards, 1,234,567 tokens (uint16)" for the log.
  std::string describe() const;

private:
  CorpusOptions options_;
  std::vector<TokenShard> shards_;
  uint64_t totalTokens_ = 0;
  bool scanned_ = false;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DATA_TOKENCORPUS_H
