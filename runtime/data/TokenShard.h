//===- TokenShard.h - one file of training tokens ---------------*- C++ -*-===//
//
// A token file as the loader reads it: an llm.c shard (a 256-int32 header,
// then uint16 tokens, or uint32 tokens as llm.c writes them for LLaMA 3;
// runtime/data/TokenShardFormat.h), nanoGPT's headerless uint16 `train.bin`, or
// raw text (one token per byte, or encoded by the run's tokenizer). Binary
// files are memory-mapped, never read whole; a header is checked against
// the file's size when the shard opens, tokens when they are read
// (TokenCorpus scans small corpora whole before the first step).
// See docs/data.md.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DATA_TOKENSHARD_H
#define LLMC_RUNTIME_DATA_TOKENSHARD_H

#include "runtime/Status.h"
#include "runtime/data/TokenShardFormat.h"
#include "runtime/io/MappedFile.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::rt {

enum class TokenFormat : uint8_t {
  Auto,  ///< `.bin`: an llm.c shard (Shard); anything else: Text
  Shard, ///< llm.c shard, version 1 (uint16) or 2 (uint32), by its header
  U16,   ///< nanoGPT's headerless little-endian uint16 file
  Text,  ///< raw text: bytes, or the ids of a tokenizer
};

/// "auto", "tokens", "u16", "text": the names of `[data] format`.
const char *tokenFormatName(TokenFormat format);
/// The inverse of tokenFormatName; false for an unknown name.
bool parseTokenFormat(std::string_view name, TokenFormat &format);

/// Encodes text into token ids (the run's tokenizer); see TokenShard::open.
using TextEncoder =
    std::function<Status(std::string_view text, std::vector<uint32_t> &ids)>;

class TokenShard {
public:
  /// Opens `path` in `format` (Auto resolved by the name). A shard's magic,
  /// version and token count are checked against the file's size; a text
  /// file must not be empty. Text is encoded with `encode` when given (the
  /// ids are then held in memory, 4 bytes a token), else one token per byte
  /// (mapped). Messages name the file and say how to fix it.
  static Status open(const std::string &path, TokenFormat format,
                     const TextEncoder &encode, TokenShard &shard);
  /// The built-in corpus (runtime/data/BuiltinCorpus.h) as byte tokens.
  static TokenShard builtin();

  const std::string &path() const { return path_; }
  /// The resolved format (never Auto).
  TokenFormat format() const { return format_; }
  /// Bytes per token in the file: 1 (text bytes), 2 or 4.
  unsigned tokenBytes() const { return tokenBytes_; }
  uint64_t size() const { return numTokens_; }
  uint32_t operator[](uint64_t index) const {
    const uint8_t *at = base_ + index * tokenBytes_;
    switch (tokenBytes_) {
    case 1:
      return at[0];
    case 2:
      return at[0] | (uint32_t(at[1]) << 8);
    default:
      return at[0] | (uint32_t(at[1]) << 8) | (uint32_t(at[2]) << 16) |
             (uint32_t(at[3]) << 24);
    }
  }
  /// Where token `index` is in the file, in bytes (for messages; for
  /// tokenized text: the token's index, there being no byte position).
  uint64_t byteOffset(uint64_t index) const {
    return dataOffset_ + index * tokenBytes_;
  }
  /// The first index in [begin, end) whose token is >= `vocab`, or `end`.
  uint64_t findOutOfVocabulary(uint64_t begin, uint64_t end,
                               uint64_t vocab) const;
  /// A kernel read-ahead hint for the mapped bytes (no-op when held).
  void advise(AccessPattern pattern) const;

private:
  std::string path_;
  TokenFormat format_ = TokenFormat::Text;
  std::shared_ptr<const MappedFile> file_;
  std::shared_ptr<const std::vector<uint32_t>> held_;
  const uint8_t *base_ = nullptr;
  uint64_t dataOffset_ = 0;
  unsigned tokenBytes_ = 1;
  uint64_t numTokens_ = 0;
};

/// The message for token `index` of `shard` being `token` >= `vocab`: the
/// file, the token's index and byte offset, and the fix.
Status outOfVocabularyError(const TokenShard &shard, uint64_t index,
                            int64_t vocab);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DATA_TOKENSHARD_H
