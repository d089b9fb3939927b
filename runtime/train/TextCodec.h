//===- TextCodec.h - text to tokens and back, for the loop ------*- C++ -*-===//
//
// What the training loop, the validation set and the sample need of a
// tokenizer: encode a text file's contents, decode generated ids, and the
// vocabulary's size. Without `[data] tokenizer` the codec is byte-level:
// one token per byte, decoded as printable text. With one, it is the Hugging
// Face tokenizer.json (runtime/text/Tokenizer.h). See docs/data.md.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_TEXTCODEC_H
#define LLMC_RUNTIME_TRAIN_TEXTCODEC_H

#include "runtime/Status.h"
#include "runtime/data/TokenShard.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmc::rt {

class TextCodec {
public:
  /// Bytes: encodes nothing (text files are read one token per byte) and
  /// decodes ids below 256 as bytes (other bytes escaped as \xNN).
  TextCodec() = default;
  /// Loads the tokenizer.json at `path`; errors name the file.
  static Status load(const std::string &path, TextCodec &codec);

  /// Whether a tokenizer is loaded (else bytes).
  bool hasTokenizer() const { return static_cast<bool>(state_); }
  /// The tokenizer's file, "" for bytes.
  const std::string &path() const { return path_; }
  /// The encoder text files are read with; null for bytes.
  TextEncoder encoder() const;
  /// Encodes `text` (bytes: one id per byte), without special tokens.
  Status encode(const std::string &text, std::vector<uint32_t> &ids) const;
  /// Encodes a prompt as the package's `tokenizer(text)` does: with the
  /// post-processor's tokens (LLaMA's BOS; none for GPT-2).
  Status encodePrompt(const std::string &text,
                      std::vector<uint32_t> &ids) const;
  /// The text of `ids`: the tokenizer's decoding (special tokens kept), or
  /// printable bytes.
  std::string decode(const std::vector<int32_t> &ids) const;
  /// Ids the tokenizer can produce (largest + 1); 256 for bytes.
  int64_t vocabSize() const;

private:
  struct State;
  std::shared_ptr<const State> state_;
  std::string path_;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_TEXTCODEC_H
