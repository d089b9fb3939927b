//===- TextCodec.cpp - text to tokens and back, for the loop --------------===//
#include "runtime/train/TextCodec.h"

#include <cstdio>

namespace llmc::rt {

// TODO(#22): the Hugging Face tokenizer (runtime/text/Tokenizer.h) is being
// written beside this; until it is merged, load() refuses every file.
struct TextCodec::State {};

Status TextCodec::load(const std::string &path, TextCodec &codec) {
  codec = TextCodec();
  return Status::error(StatusCode::Unimplemented,
                       path + ": tokenizers are not available in this build "
                              "yet; leave [data] tokenizer out to read text "
                              "as bytes");
}

TextEncoder TextCodec::encoder() const { return nullptr; }

Status TextCodec::encode(const std::string &text,
                         std::vector<uint32_t> &ids) const {
  for (unsigned char byte : text)
    ids.push_back(byte);
  return Status::ok();
}

std::string TextCodec::decode(const std::vector<int32_t> &ids) const {
  std::string text;
  for (int32_t id : ids) {
    if (id == '\n' || (id >= 32 && id < 127)) {
      text += static_cast<char>(id);
    } else {
      char escaped[16];
      std::snprintf(escaped, sizeof(escaped), id < 256 ? "\\x%02x" : "<%d>",
                    id);
      text += escaped;
    }
  }
  return text;
}

int64_t TextCodec::vocabSize() const { return 256; }

} // namespace llmc::rt
