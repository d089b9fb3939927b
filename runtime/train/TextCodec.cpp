//===- TextCodec.cpp - text to tokens and back, for the loop --------------===//
#include "runtime/train/TextCodec.h"

#include "runtime/text/Tokenizer.h"

#include <cstdio>

namespace llmc::rt {

struct TextCodec::State {
  std::unique_ptr<Tokenizer> tokenizer;
};

Status TextCodec::load(const std::string &path, TextCodec &codec) {
  codec = TextCodec();
  auto state = std::make_shared<State>();
  LLMC_RETURN_IF_ERROR(Tokenizer::load(path, state->tokenizer));
  codec.state_ = std::move(state);
  codec.path_ = path;
  return Status::ok();
}

TextEncoder TextCodec::encoder() const {
  if (!state_)
    return nullptr;
  // Training text: the ids of the text alone (no BOS/EOS), as llm.c's and
  // nanoGPT's preparation scripts encode a document.
  std::shared_ptr<const State> state = state_;
  return [state](std::string_view text, std::vector<uint32_t> &ids) {
    return state->tokenizer->encode(text, ids);
  };
}

Status TextCodec::encode(const std::string &text,
                         std::vector<uint32_t> &ids) const {
  if (state_)
    return state_->tokenizer->encode(text, ids);
  for (unsigned char byte : text)
    ids.push_back(byte);
  return Status::ok();
}

Status TextCodec::encodePrompt(const std::string &text,
                               std::vector<uint32_t> &ids) const {
  if (state_)
    return state_->tokenizer->encode(text, ids, SpecialTokens::Add);
  return encode(text, ids);
}

std::string TextCodec::decode(const std::vector<int32_t> &ids) const {
  if (state_)
    return state_->tokenizer->decode(ids, DecodeSpecial::Keep);
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

int64_t TextCodec::vocabSize() const {
  return state_ ? state_->tokenizer->vocabSize() : 256;
}

} // namespace llmc::rt
