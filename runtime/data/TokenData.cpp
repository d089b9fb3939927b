//===- TokenData.cpp - token ids for training, in batches -----------------===//
#include "runtime/data/TokenData.h"

#include "runtime/data/BuiltinCorpus.h"
#include "runtime/io/File.h"

#include <limits>

namespace llmc::rt {

namespace {

int32_t readInt32(const uint8_t *at) {
  uint32_t word = at[0] | (uint32_t(at[1]) << 8) | (uint32_t(at[2]) << 16) |
                  (uint32_t(at[3]) << 24);
  return static_cast<int32_t>(word);
}

// Step 2 of readTokenData for a shard: the header, and a token count that
// the file's size agrees with.
Status parseShardHeader(const std::string &path,
                        const std::vector<uint8_t> &bytes,
                        uint64_t &numTokens) {
  if (bytes.size() < kTokenShardHeaderBytes)
    return Status::error(
        StatusCode::DataLoss,
        path + ": file is " + std::to_string(bytes.size()) +
            " bytes, shorter than the " +
            std::to_string(kTokenShardHeaderBytes) +
            "-byte header of a token shard (256 int32); the file is "
            "truncated");
  int32_t magic = readInt32(bytes.data());
  if (magic != kTokenShardMagic)
    return Status::error(
        StatusCode::InvalidArgument,
        path + ": magic number is " + std::to_string(magic) + ", expected " +
            std::to_string(kTokenShardMagic) +
            " (an llm.c/nanoGPT token shard); for a plain text file use the "
            "text format");
  int32_t version = readInt32(bytes.data() + 4);
  if (version != kTokenShardVersion)
    return Status::error(
        StatusCode::InvalidArgument,
        path + ": shard version is " + std::to_string(version) + ", expected " +
            std::to_string(kTokenShardVersion) +
            " (uint16 tokens), the only version this runtime reads");
  int32_t count = readInt32(bytes.data() + 8);
  if (count < 0)
    return Status::error(StatusCode::DataLoss,
                         path + ": header says " + std::to_string(count) +
                             " tokens; the file is corrupt");
  uint64_t expected = static_cast<uint64_t>(count) * sizeof(uint16_t);
  uint64_t found = bytes.size() - kTokenShardHeaderBytes;
  if (found != expected)
    return Status::error(
        StatusCode::DataLoss,
        path + ": header says " + std::to_string(count) + " tokens (" +
            std::to_string(expected) + " bytes after the " +
            std::to_string(kTokenShardHeaderBytes) +
            "-byte header) but the file has " + std::to_string(found) +
            " bytes after it; " +
            (found < expected ? "the file is truncated"
                              : "the file is corrupt or not a version-1 "
                                "shard"));
  numTokens = static_cast<uint64_t>(count);
  return Status::ok();
}

std::string batchShape(const TokenLoaderOptions &options) {
  return "B=" + std::to_string(options.batchSize) +
         " x T=" + std::to_string(options.seqLen);
}

} // namespace

const char *tokenFormatName(TokenFormat format) {
  switch (format) {
  case TokenFormat::Text:
    return "text";
  case TokenFormat::Shard:
    return "shard";
  }
  return "?";
}

Status readTokenData(const std::string &path, TokenFormat format,
                     int64_t vocabSize, TokenData &data) {
  data = TokenData();
  if (vocabSize <= 0)
    return Status::error(StatusCode::InvalidArgument,
                         path + ": vocabulary size is " +
                             std::to_string(vocabSize) +
                             ", expected a positive number");
  // 1. The bytes.
  TokenData result;
  result.path_ = path;
  result.format_ = format;
  if (Status status = readFile(path, result.bytes_); !status)
    return status;
  // 2 and 3.
  if (Status status = result.index(vocabSize); !status)
    return status;
  data = std::move(result);
  return Status::ok();
}

Status readBuiltinTokenData(int64_t vocabSize, TokenData &data) {
  data = TokenData();
  if (vocabSize <= 0)
    return Status::error(
        StatusCode::InvalidArgument,
        std::string(kBuiltinCorpusName) + ": vocabulary size is " +
            std::to_string(vocabSize) + ", expected a positive number");
  TokenData result;
  result.path_ = kBuiltinCorpusName;
  result.format_ = TokenFormat::Text;
  const std::string &corpus = builtinCorpus();
  result.bytes_.assign(corpus.begin(), corpus.end());
  if (Status status = result.index(vocabSize); !status)
    return status;
  data = std::move(result);
  return Status::ok();
}

Status TokenData::index(int64_t vocabSize) {
  const std::string &path = path_;
  const TokenFormat format = format_;
  // 2. Where the tokens are and how many.
  if (format == TokenFormat::Shard) {
    if (Status status = parseShardHeader(path, bytes_, numTokens_); !status)
      return status;
    dataOffset_ = kTokenShardHeaderBytes;
    tokenBytes_ = sizeof(uint16_t);
  } else {
    if (bytes_.empty())
      return Status::error(
          StatusCode::InvalidArgument,
          path + ": text file is empty; it gives one token per byte, and "
                 "one batch needs batch size x sequence length + 1 of them");
    dataOffset_ = 0;
    tokenBytes_ = 1;
    numTokens_ = bytes_.size();
  }

  // 3. Every token in the vocabulary: a model indexes its embedding with
  // them, so a stray id must fail here rather than read out of bounds later.
  uint64_t vocab = static_cast<uint64_t>(vocabSize);
  for (uint64_t i = 0; i < numTokens_; ++i) {
    uint32_t token = (*this)[i];
    if (token >= vocab)
      return Status::error(
          StatusCode::InvalidArgument,
          path + ": token " + std::to_string(i) + " (byte offset " +
              std::to_string(byteOffset(i)) + ") is " + std::to_string(token) +
              ", not below the vocabulary size " + std::to_string(vocabSize) +
              (format == TokenFormat::Text
                   ? "; a text file gives one token per byte, so the model "
                     "needs a vocabulary of 256"
                   : "; the data was tokenized for a larger vocabulary than "
                     "the model's"));
  }
  return Status::ok();
}

Status TokenLoader::open(const TokenLoaderOptions &options,
                         TokenLoader &loader) {
  loader = TokenLoader();
  const std::string source =
      options.builtin ? std::string(kBuiltinCorpusName) : options.path;
  // 1. The options.
  constexpr int64_t kMaxBatchTokens = std::numeric_limits<int32_t>::max();
  if (options.batchSize <= 0 || options.seqLen <= 0 ||
      options.batchSize > kMaxBatchTokens / options.seqLen)
    return Status::error(StatusCode::InvalidArgument,
                         source + ": batch " + batchShape(options) +
                             " is not valid; both must be positive and "
                             "B*T below 2^31");

  // 2. The data, and at least one batch of it.
  TokenLoader result;
  result.options_ = options;
  if (Status status =
          options.builtin
              ? readBuiltinTokenData(options.vocabSize, result.data_)
              : readTokenData(options.path, options.format, options.vocabSize,
                              result.data_);
      !status)
    return status;
  uint64_t needed =
      static_cast<uint64_t>(options.batchSize * options.seqLen) + 1;
  if (result.data_.size() < needed)
    return Status::error(
        StatusCode::InvalidArgument,
        source + " holds " + std::to_string(result.data_.size()) +
            " tokens, but one batch of " + batchShape(options) + " needs " +
            std::to_string(needed) +
            " (B*T+1); use a smaller batch or sequence length, or more data");
  loader = std::move(result);
  return Status::ok();
}

Status TokenLoader::next(TokenBatch &batch) {
  const uint64_t count =
      static_cast<uint64_t>(options_.batchSize * options_.seqLen);
  if (data_.size() < count + 1)
    return Status::error(StatusCode::Internal,
                         "TokenLoader::next called on a loader that is not "
                         "open; call TokenLoader::open first");
  batch.batchSize = options_.batchSize;
  batch.seqLen = options_.seqLen;
  batch.tokens.resize(count);
  batch.targets.resize(count);
  // 1. The window [position, position + B*T] (open() and setPosition()
  // guarantee that it fits): targets are the tokens shifted by one.
  uint32_t current = data_[position_];
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t following = data_[position_ + i + 1];
    batch.tokens[i] = static_cast<int32_t>(current);
    batch.targets[i] = static_cast<int32_t>(following);
    current = following;
  }
  // 2. Advance, and wrap when the next window would not fit, so position()
  // always names the start of the next batch.
  position_ += count;
  if (position_ + count + 1 > data_.size())
    position_ = 0;
  return Status::ok();
}

Status TokenLoader::setPosition(uint64_t position) {
  const uint64_t count =
      static_cast<uint64_t>(options_.batchSize * options_.seqLen);
  if (position > data_.size() || data_.size() - position < count + 1)
    return Status::error(
        StatusCode::InvalidArgument,
        data_.path() + ": cannot continue from token " +
            std::to_string(position) + ": the file holds " +
            std::to_string(data_.size()) + " tokens and a batch of " +
            batchShape(options_) + " needs " + std::to_string(count + 1) +
            " from there; was the position saved for other data or another "
            "batch shape?");
  position_ = position;
  return Status::ok();
}

} // namespace llmc::rt
