//===- TokenCorpus.cpp - the shards of a training or validation set -------===//
#include "runtime/data/TokenCorpus.h"

#include <algorithm>
#include <glob.h>
#include <thread>

namespace llmc::rt {

namespace {

bool hasWildcard(const std::string &pattern) {
  return pattern.find_first_of("*?[") != std::string::npos;
}

/// Step 2 of open: every token below the vocabulary, shards in parallel
/// (a memory-speed scan: 2^28 uint16 tokens are 512 MiB).
Status scanTokens(const std::vector<TokenShard> &shards, int64_t vocab) {
  const uint64_t limit = static_cast<uint64_t>(vocab);
  struct Hit {
    size_t shard;
    uint64_t index;
  };
  // Split every shard into chunks; the first bad token in file order wins.
  constexpr uint64_t kChunk = uint64_t(1) << 22;
  struct Chunk {
    size_t shard;
    uint64_t begin, end;
  };
  std::vector<Chunk> chunks;
  for (size_t s = 0; s < shards.size(); ++s)
    for (uint64_t b = 0; b < shards[s].size(); b += kChunk)
      chunks.push_back({s, b, std::min(shards[s].size(), b + kChunk)});
  std::vector<uint64_t> found(chunks.size());
  unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (size_t c = t; c < chunks.size(); c += threads)
        found[c] = shards[chunks[c].shard].findOutOfVocabulary(
            chunks[c].begin, chunks[c].end, limit);
    });
  for (std::thread &thread : pool)
    thread.join();
  for (size_t c = 0; c < chunks.size(); ++c)
    if (found[c] != chunks[c].end)
      return outOfVocabularyError(shards[chunks[c].shard], found[c], vocab);
  return Status::ok();
}

} // namespace

Status expandPatterns(const std::vector<std::string> &patterns,
                      const std::string &setting,
                      std::vector<std::string> &files) {
  files.clear();
  for (const std::string &pattern : patterns) {
    if (!hasWildcard(pattern)) {
      files.push_back(pattern);
      continue;
    }
    glob_t matches{};
    int result = ::glob(pattern.c_str(), 0, nullptr, &matches);
    if (result == GLOB_NOMATCH || (result == 0 && matches.gl_pathc == 0)) {
      ::globfree(&matches);
      return Status::error(StatusCode::NotFound,
                           setting + ": the pattern '" + pattern +
                               "' matches no file; check the directory and "
                               "the name (shards from llmc tokenize are "
                               "DIR/train_000000.bin, DIR/val_000000.bin)");
    }
    if (result != 0) {
      ::globfree(&matches);
      return Status::error(StatusCode::InvalidArgument,
                           setting + ": cannot list the files of '" +
                               pattern + "' (glob error " +
                               std::to_string(result) + ")");
    }
    // glob sorts by name (the C locale when unset); sort again to be sure
    // of byte order whatever the locale.
    std::vector<std::string> names(matches.gl_pathv,
                                   matches.gl_pathv + matches.gl_pathc);
    ::globfree(&matches);
    std::sort(names.begin(), names.end());
    files.insert(files.end(), names.begin(), names.end());
  }
  if (files.empty())
    return Status::error(StatusCode::InvalidArgument,
                         setting + ": no files given");
  return Status::ok();
}

Status TokenCorpus::open(const CorpusOptions &options, TokenCorpus &corpus) {
  corpus = TokenCorpus();
  if (options.vocabSize <= 0)
    return Status::error(StatusCode::InvalidArgument,
                         "the vocabulary size is " +
                             std::to_string(options.vocabSize) +
                             ", expected a positive number");
  TokenCorpus result;
  result.options_ = options;
  // 1. The shards, headers checked.
  if (options.patterns.empty()) {
    result.shards_.push_back(TokenShard::builtin());
  } else {
    std::vector<std::string> files;
    LLMC_RETURN_IF_ERROR(expandPatterns(options.patterns, options.setting,
                                        files));
    for (const std::string &file : files) {
      TokenShard shard;
      LLMC_RETURN_IF_ERROR(
          TokenShard::open(file, options.format, options.encode, shard));
      result.shards_.push_back(std::move(shard));
    }
  }
  for (const TokenShard &shard : result.shards_)
    result.totalTokens_ += shard.size();
  // 2. Small corpora: every token, now.
  if (result.totalTokens_ <= kFullScanTokens) {
    LLMC_RETURN_IF_ERROR(scanTokens(result.shards_, options.vocabSize));
    result.scanned_ = true;
  }
  corpus = std::move(result);
  return Status::ok();
}

std::string TokenCorpus::describe() const {
  if (options_.patterns.empty())
    return shards_.front().path();
  std::string names;
  for (size_t i = 0; i < options_.patterns.size(); ++i)
    names += (i ? ", " : "") + options_.patterns[i];
  const TokenShard &first = shards_.front();
  const char *type = first.format() == TokenFormat::Text
                         ? (first.tokenBytes() == 1 ? "bytes" : "tokenized text")
                     : first.tokenBytes() == 2 ? "uint16"
                                               : "uint32";
  return names + ": " + std::to_string(shards_.size()) +
         (shards_.size() == 1 ? " file, " : " files, ") +
         formatCount(totalTokens_) + " tokens (" + type + ")";
}

} // namespace llmc::rt
