//===- TokenShardFormat.h - the llm.c token shard header --------*- C++ -*-===//
//
// The on-disk format of llm.c token shards, shared by their writer (`llmc
// tokenize`, runtime/text/TokenizeCorpus.h) and their reader (runtime/data/):
// a header of 256 little-endian int32 — [0] magic, [1] version, [2] number of
// tokens, the rest zero — then the tokens, little-endian.
//
//   uint16 tokens: magic 20240520, version 1 (llm.c's GPT-2 shards)
//   uint32 tokens: magic 20240801, version 7 (what llm.c's
//                  dev/data/data_common.py writes for LLaMA 3 and its
//                  train_llama3.py asserts); readers also accept version 2,
//                  the number issue #22 and llmc's first shard reader used
//
// Only the constants and a header encode/decode live here, so that a reader
// can include it without anything else of the tokenizer.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DATA_TOKENSHARDFORMAT_H
#define LLMC_RUNTIME_DATA_TOKENSHARDFORMAT_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace llmc::rt::shard {

constexpr int kHeaderInts = 256;
constexpr size_t kHeaderBytes = kHeaderInts * sizeof(int32_t);
constexpr int32_t kMagicU16 = 20240520;
constexpr int32_t kVersionU16 = 1;
constexpr int32_t kMagicU32 = 20240801;
constexpr int32_t kVersionU32 = 7;
/// The other version a uint32 shard may carry (decodeHeader accepts it).
constexpr int32_t kLegacyVersionU32 = 2;
/// header[2] is an int32: no shard holds more tokens.
constexpr int64_t kMaxTokens = std::numeric_limits<int32_t>::max();

enum class TokenType : uint8_t { U16, U32 };

/// 2 or 4.
inline size_t tokenBytes(TokenType type) {
  return type == TokenType::U16 ? 2 : 4;
}

/// uint16 when every id of a vocabulary of `vocabSize` fits in 16 bits.
inline TokenType tokenTypeForVocab(int64_t vocabSize) {
  return vocabSize <= 65536 ? TokenType::U16 : TokenType::U32;
}

/// Writes the kHeaderBytes of a shard of `tokens` tokens (0 <= tokens <=
/// kMaxTokens) to `out`.
inline void encodeHeader(TokenType type, int64_t tokens,
                         uint8_t out[kHeaderBytes]) {
  int32_t words[kHeaderInts] = {};
  words[0] = type == TokenType::U16 ? kMagicU16 : kMagicU32;
  words[1] = type == TokenType::U16 ? kVersionU16 : kVersionU32;
  words[2] = static_cast<int32_t>(tokens);
  for (int i = 0; i < kHeaderInts; ++i) {
    uint32_t word = static_cast<uint32_t>(words[i]);
    for (int b = 0; b < 4; ++b)
      out[4 * i + b] = static_cast<uint8_t>(word >> (8 * b));
  }
}

/// Reads a header: the token type and count, or false with `why` ("magic
/// number is 123, expected 20240520 (uint16 tokens) or 20240801 (uint32
/// tokens)", "version is 3, expected 7 (or 2) for magic 20240801").
inline bool decodeHeader(const uint8_t in[kHeaderBytes], TokenType &type,
                         int64_t &tokens, std::string &why) {
  auto word = [&](int i) {
    uint32_t value = 0;
    for (int b = 0; b < 4; ++b)
      value |= static_cast<uint32_t>(in[4 * i + b]) << (8 * b);
    return static_cast<int32_t>(value);
  };
  int32_t magic = word(0), version = word(1), count = word(2);
  if (magic == kMagicU16 || magic == kMagicU32) {
    type = magic == kMagicU16 ? TokenType::U16 : TokenType::U32;
    bool known = magic == kMagicU16
                     ? version == kVersionU16
                     : version == kVersionU32 || version == kLegacyVersionU32;
    if (!known) {
      why = "version is " + std::to_string(version) + ", expected " +
            (magic == kMagicU16 ? std::to_string(kVersionU16)
                                : std::to_string(kVersionU32) + " (or " +
                                      std::to_string(kLegacyVersionU32) +
                                      ")") +
            " for magic " + std::to_string(magic);
      return false;
    }
  } else {
    why = "magic number is " + std::to_string(magic) + ", expected " +
          std::to_string(kMagicU16) + " (uint16 tokens) or " +
          std::to_string(kMagicU32) + " (uint32 tokens)";
    return false;
  }
  if (count < 0) {
    why = "token count is negative (" + std::to_string(count) + ")";
    return false;
  }
  tokens = count;
  return true;
}

} // namespace llmc::rt::shard

#endif // LLMC_RUNTIME_DATA_TOKENSHARDFORMAT_H
