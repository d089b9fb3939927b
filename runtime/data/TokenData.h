//===- TokenData.h - token ids for training, in batches ---------*- C++ -*-===//
//
// The training loop's input: token ids from plain text (one token per byte)
// or from an llm.c/nanoGPT token shard, cut into [B, T] batches of tokens and
// next-token targets. A file is validated whole when it is opened, so a bad
// token fails the run before the first step, not hours into it. See
// docs/runtime.md, "Token data".
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DATA_TOKENDATA_H
#define LLMC_RUNTIME_DATA_TOKENDATA_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt {

enum class TokenFormat : uint8_t {
  Text,  ///< any file; each byte is a token (vocabulary 256)
  Shard, ///< llm.c/nanoGPT `.bin`: 256 int32 header, then uint16 tokens
};

/// "text" or "shard".
const char *tokenFormatName(TokenFormat format);

/// The llm.c/nanoGPT shard header: 256 little-endian int32, of which
/// [0] = magic, [1] = version, [2] = number of tokens.
constexpr int32_t kTokenShardMagic = 20240520;
constexpr int32_t kTokenShardVersion = 1;
constexpr uint64_t kTokenShardHeaderBytes = 256 * sizeof(int32_t);

/// The tokens of one file. It keeps the file's bytes and decodes a token when
/// asked, so it needs no more memory than the file.
class TokenData {
public:
  const std::string &path() const { return path_; }
  TokenFormat format() const { return format_; }
  /// The number of tokens.
  uint64_t size() const { return numTokens_; }
  /// Token `index` (< size()).
  uint32_t operator[](uint64_t index) const {
    const uint8_t *at = bytes_.data() + dataOffset_ + index * tokenBytes_;
    return tokenBytes_ == 1 ? at[0] : (at[0] | (uint32_t(at[1]) << 8));
  }
  /// Where token `index` is in the file, in bytes.
  uint64_t byteOffset(uint64_t index) const {
    return dataOffset_ + index * tokenBytes_;
  }

private:
  friend Status readTokenData(const std::string &path, TokenFormat format,
                              int64_t vocabSize, TokenData &data);
  friend Status readBuiltinTokenData(int64_t vocabSize, TokenData &data);
  /// Steps 2 and 3 of reading: where the tokens are in bytes_, and that
  /// every one is below `vocabSize`.
  Status index(int64_t vocabSize);
  std::string path_;
  TokenFormat format_ = TokenFormat::Text;
  std::vector<uint8_t> bytes_;
  uint64_t dataOffset_ = 0;
  uint64_t tokenBytes_ = 1;
  uint64_t numTokens_ = 0;
};

/// Reads and validates `path` in `format`: a shard's magic, version and token
/// count against the file's size; a text file must not be empty; every token
/// must be below `vocabSize` (the error names the file, the token's position
/// and its value). On failure `data` is left empty.
Status readTokenData(const std::string &path, TokenFormat format,
                     int64_t vocabSize, TokenData &data);

/// The built-in corpus (runtime/data/BuiltinCorpus.h) as text tokens, one
/// per byte, validated like a file; path() is "<built-in corpus>".
Status readBuiltinTokenData(int64_t vocabSize, TokenData &data);

struct TokenLoaderOptions {
  std::string path;
  TokenFormat format = TokenFormat::Shard;
  int64_t batchSize = 0; ///< B
  int64_t seqLen = 0;    ///< T
  int64_t vocabSize = 0; ///< every token must be below it
  /// Reads the built-in corpus instead of a file: `path` and `format` are
  /// ignored (it is text, all bytes below 128).
  bool builtin = false;
};

/// One batch: row-major [B, T] token ids and, for each, the token that
/// follows it in the data.
struct TokenBatch {
  int64_t batchSize = 0;
  int64_t seqLen = 0;
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;
};

/// Cuts a token file into batches: each batch reads the B*T+1 tokens from
/// position() (tokens = the first B*T, targets = the last B*T) and advances
/// position() by B*T; when the next window would run past the end it starts
/// again at token 0. position() is a token index (the byte offset is
/// TokenData::byteOffset of it): saving it and calling setPosition() in a
/// later run gives exactly the same batches from there on.
class TokenLoader {
public:
  /// Validates the options, reads the file (readTokenData) and checks that it
  /// holds at least one batch.
  static Status open(const TokenLoaderOptions &options, TokenLoader &loader);

  /// Fills `batch` (resized to [B, T]) with the next batch.
  Status next(TokenBatch &batch);

  /// The token index where the next batch starts.
  uint64_t position() const { return position_; }
  /// Continues from `position`: a value position() returned for the same
  /// file and batch shape. Fails, changing nothing, when a batch from there
  /// would run past the end of the data.
  Status setPosition(uint64_t position);

  const TokenLoaderOptions &options() const { return options_; }
  const TokenData &data() const { return data_; }

private:
  TokenLoaderOptions options_;
  TokenData data_;
  uint64_t position_ = 0;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DATA_TOKENDATA_H
