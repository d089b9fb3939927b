//===- TokenShard.cpp - one file of training tokens -----------------------===//
#include "runtime/data/TokenShard.h"

#include "runtime/data/BuiltinCorpus.h"

namespace llmc::rt {

namespace {

int32_t readInt32(const uint8_t *at) {
  uint32_t word = at[0] | (uint32_t(at[1]) << 8) | (uint32_t(at[2]) << 16) |
                  (uint32_t(at[3]) << 24);
  return static_cast<int32_t>(word);
}

bool endsWith(const std::string &text, const char *suffix) {
  std::string_view s(suffix);
  return text.size() >= s.size() &&
         text.compare(text.size() - s.size(), s.size(), s) == 0;
}

// The header of an llm.c shard, and a token count the file's size agrees
// with: version 1 holds uint16 tokens, version 2 uint32.
Status parseShardHeader(const std::string &path, const MappedFile &file,
                        unsigned &tokenBytes, uint64_t &numTokens) {
  if (file.size() < shard::kHeaderBytes)
    return Status::error(
        StatusCode::DataLoss,
        path + ": file is " + std::to_string(file.size()) +
            " bytes, shorter than the " + std::to_string(shard::kHeaderBytes) +
            "-byte header of an llm.c token shard (256 int32); the file is "
            "truncated, or it is nanoGPT's headerless uint16 file (set "
            "[data] format = \"u16\")");
  int32_t magic = readInt32(file.data());
  int32_t version = readInt32(file.data() + 4);
  if (magic != shard::kMagicU16 && magic != shard::kMagicU32)
    return Status::error(
        StatusCode::InvalidArgument,
        path + ": magic number at byte 0 is " + std::to_string(magic) +
            ", expected " + std::to_string(shard::kMagicU16) +
            " (llm.c shard, uint16 tokens) or " +
            std::to_string(shard::kMagicU32) +
            " (uint32 tokens); for nanoGPT's headerless train.bin set [data] "
            "format = \"u16\", for plain text format = \"text\"");
  // uint32 shards: 7 is what llm.c writes for LLaMA 3; 2 is accepted too.
  bool wide = magic == shard::kMagicU32;
  bool known = wide ? version == shard::kVersionU32 ||
                          version == shard::kLegacyVersionU32
                    : version == shard::kVersionU16;
  if (!known)
    return Status::error(
        StatusCode::InvalidArgument,
        path + ": shard version at byte 4 is " + std::to_string(version) +
            ", expected " +
            (wide ? std::to_string(shard::kVersionU32) + " (or " +
                        std::to_string(shard::kLegacyVersionU32) + ")"
                  : std::to_string(shard::kVersionU16)) +
            " for magic " + std::to_string(magic) +
            "; the file was written by a tool whose format this runtime does "
            "not read");
  tokenBytes = wide ? 4 : 2;
  int32_t count = readInt32(file.data() + 8);
  if (count < 0)
    return Status::error(StatusCode::DataLoss,
                         path + ": header (byte 8) says " +
                             std::to_string(count) +
                             " tokens; the file is corrupt");
  uint64_t expected = static_cast<uint64_t>(count) * tokenBytes;
  uint64_t found = file.size() - shard::kHeaderBytes;
  if (found != expected)
    return Status::error(
        StatusCode::DataLoss,
        path + ": header says " + formatCount(static_cast<uint64_t>(count)) +
            " tokens (" + formatCount(expected) + " bytes after the " +
            std::to_string(shard::kHeaderBytes) +
            "-byte header) but the file has " + formatCount(found) +
            " bytes after it; " +
            (found < expected
                 ? "the file is truncated: write it again (llmc tokenize) or "
                   "download it again"
                 : "the file is corrupt or was written by another tool"));
  numTokens = static_cast<uint64_t>(count);
  return Status::ok();
}

} // namespace

const char *tokenFormatName(TokenFormat format) {
  switch (format) {
  case TokenFormat::Auto:
    return "auto";
  case TokenFormat::Shard:
    return "tokens";
  case TokenFormat::U16:
    return "u16";
  case TokenFormat::Text:
    return "text";
  }
  return "?";
}

bool parseTokenFormat(std::string_view name, TokenFormat &format) {
  for (TokenFormat f : {TokenFormat::Auto, TokenFormat::Shard,
                        TokenFormat::U16, TokenFormat::Text})
    if (name == tokenFormatName(f)) {
      format = f;
      return true;
    }
  return false;
}

Status TokenShard::open(const std::string &path, TokenFormat format,
                        const TextEncoder &encode, TokenShard &shard) {
  shard = TokenShard();
  if (format == TokenFormat::Auto)
    format = endsWith(path, ".bin") ? TokenFormat::Shard : TokenFormat::Text;
  TokenShard result;
  result.path_ = path;
  result.format_ = format;
  LLMC_RETURN_IF_ERROR(MappedFile::open(path, result.file_));
  const MappedFile &file = *result.file_;
  switch (format) {
  case TokenFormat::Shard:
    LLMC_RETURN_IF_ERROR(
        parseShardHeader(path, file, result.tokenBytes_, result.numTokens_));
    result.dataOffset_ = shard::kHeaderBytes;
    break;
  case TokenFormat::U16:
    if (file.size() % 2 != 0)
      return Status::error(
          StatusCode::DataLoss,
          path + ": " + formatCount(file.size()) +
              " bytes, an odd number, cannot be uint16 tokens; the file is "
              "truncated, or it is not a headerless uint16 file (an llm.c "
              "shard has format = \"tokens\")");
    if (file.size() >= 4 && (readInt32(file.data()) == shard::kMagicU16 ||
                             readInt32(file.data()) == shard::kMagicU32))
      return Status::error(
          StatusCode::InvalidArgument,
          path + ": starts with an llm.c shard header (magic " +
              std::to_string(readInt32(file.data())) +
              "), which format = \"u16\" would read as tokens; set [data] "
              "format = \"tokens\" (or leave it out: .bin files are read as "
              "shards)");
    result.tokenBytes_ = 2;
    result.numTokens_ = file.size() / 2;
    break;
  case TokenFormat::Text:
  case TokenFormat::Auto:
    if (file.size() == 0)
      return Status::error(
          StatusCode::InvalidArgument,
          path + ": text file is empty; one batch needs batch size x "
                 "sequence length + 1 tokens");
    if (encode) {
      auto ids = std::make_shared<std::vector<uint32_t>>();
      std::string_view text(reinterpret_cast<const char *>(file.data()),
                            static_cast<size_t>(file.size()));
      if (Status status = encode(text, *ids); !status)
        return Status::error(status.code(), path + ": " + status.message());
      result.held_ = ids;
      result.file_.reset();
      result.base_ = reinterpret_cast<const uint8_t *>(ids->data());
      result.tokenBytes_ = 4;
      result.numTokens_ = ids->size();
      shard = std::move(result);
      return Status::ok();
    }
    result.tokenBytes_ = 1;
    result.numTokens_ = file.size();
    break;
  }
  result.base_ = file.data() + result.dataOffset_;
  shard = std::move(result);
  return Status::ok();
}

TokenShard TokenShard::builtin() {
  const std::string &corpus = builtinCorpus();
  TokenShard shard;
  shard.path_ = kBuiltinCorpusName;
  shard.format_ = TokenFormat::Text;
  shard.base_ = reinterpret_cast<const uint8_t *>(corpus.data());
  shard.tokenBytes_ = 1;
  shard.numTokens_ = corpus.size();
  return shard;
}

uint64_t TokenShard::findOutOfVocabulary(uint64_t begin, uint64_t end,
                                         uint64_t vocab) const {
  for (uint64_t i = begin; i < end; ++i)
    if ((*this)[i] >= vocab)
      return i;
  return end;
}

void TokenShard::advise(AccessPattern pattern) const {
  if (file_)
    file_->advise(pattern);
}

Status outOfVocabularyError(const TokenShard &shard, uint64_t index,
                            int64_t vocab) {
  std::string where =
      shard.format() == TokenFormat::Text && shard.tokenBytes() == 4
          ? "token " + formatCount(index) + " of the encoded text"
          : "token " + formatCount(index) + " (byte offset " +
                formatCount(shard.byteOffset(index)) + ")";
  std::string fix =
      shard.format() == TokenFormat::Text && shard.tokenBytes() == 1
          ? "; a text file without a tokenizer gives one token per byte, so "
            "the model needs vocab_size >= 256, or set [data] tokenizer"
          : "; the data was tokenized for a larger vocabulary than the "
            "model's: set vocab_size to at least the tokenizer's, or "
            "tokenize the data with the model's tokenizer";
  return Status::error(StatusCode::InvalidArgument,
                       shard.path() + ": " + where + " is " +
                           std::to_string(shard[index]) +
                           ", not below the vocabulary size " +
                           std::to_string(vocab) + fix);
}

} // namespace llmc::rt
