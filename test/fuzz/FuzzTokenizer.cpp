//===- FuzzTokenizer.cpp - libFuzzer target: tokenizer.json ---------------===//
//
// Tokenizer::loadFromJson on any bytes; a tokenizer it accepts encodes a
// fixed text and the input itself (when it is UTF-8), decodes the ids, and
// maps every id back to its token. An encoding that decodes to other text
// is not a failure (normalizers and byte fallback change text); a crash, a
// leak or an id past vocabSize() is.
//
//===----------------------------------------------------------------------===//
#include "runtime/text/Tokenizer.h"
#include "test/fuzz/FuzzSupport.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

void roundTrip(const llmc::rt::Tokenizer &tokenizer, std::string_view text) {
  std::vector<uint32_t> ids;
  if (!tokenizer.encode(text, ids))
    return;
  std::vector<int32_t> signedIds;
  for (uint32_t id : ids) {
    if (static_cast<int64_t>(id) >= tokenizer.vocabSize())
      llmc::fuzz::fail("encode gave id " + std::to_string(id) +
                       " past the vocabulary size " +
                       std::to_string(tokenizer.vocabSize()));
    signedIds.push_back(static_cast<int32_t>(id));
  }
  (void)tokenizer.decode(signedIds);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view json(reinterpret_cast<const char *>(data), size);
  std::unique_ptr<llmc::rt::Tokenizer> tokenizer;
  if (!llmc::rt::Tokenizer::loadFromJson(json, "tokenizer.json", tokenizer))
    return 0;
  roundTrip(*tokenizer, "Hello world! 123 <|endoftext|> caf\xc3\xa9  \n\tx");
  roundTrip(*tokenizer, json.substr(0, 256));
  int64_t vocab = tokenizer->vocabSize();
  for (int64_t id = 0; id < vocab && id < 512; ++id)
    if (std::optional<std::string> token =
            tokenizer->idToToken(static_cast<uint32_t>(id)))
      (void)tokenizer->tokenToId(*token);
  (void)tokenizer->decode({-1, 0, static_cast<int32_t>(vocab), 1 << 30});
  return 0;
}
