//===- Tokenizer.h - Hugging Face tokenizer.json in the runtime -*- C++ -*-===//
//
// Loads a Hugging Face `tokenizer.json` and encodes and decodes text with it,
// id for id as the `tokenizers` package does: byte-level BPE (GPT-2, LLaMA 3,
// Qwen 2) and BPE with byte fallback (LLaMA 2, Mistral). Everything else
// (WordPiece, Unigram, a normalizer, pre-tokenizer, decoder or option not
// listed in docs/tokenizer.md) is refused when the file is loaded, with the
// file, the JSON path and what is supported. Used by `llmc tokenize`
// (runtime/text/TokenizeCorpus.h) and by sampling. No MLIR here: this is the
// runtime.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_TOKENIZER_H
#define LLMC_RUNTIME_TEXT_TOKENIZER_H

#include "runtime/Status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::rt {

namespace text {
class EncodeState;
struct Pipeline;
} // namespace text

/// Whether encode() adds the tokens of the file's post_processor (the BOS of
/// LLaMA's TemplateProcessing, ...), as the package's `encode(text,
/// add_special_tokens=True)` does.
enum class SpecialTokens { Omit, Add };

/// Whether decode() keeps special tokens (the package's
/// `skip_special_tokens=False`) or drops them (its default).
enum class DecodeSpecial { Keep, Skip };

/// The reusable state of encode(): the BPE words already seen and the
/// regex match buffers. Encoding many texts through one cache is faster; a
/// cache is not thread-safe, so each thread keeps its own.
class EncodeCache {
public:
  EncodeCache();
  ~EncodeCache();
  EncodeCache(EncodeCache &&) noexcept;
  EncodeCache &operator=(EncodeCache &&) noexcept;

private:
  friend class Tokenizer;
  std::unique_ptr<text::EncodeState> state_;
};

/// A loaded tokenizer.json. Immutable after load(): encode() and decode()
/// may be called from several threads at once (each with its own cache).
class Tokenizer {
public:
  ~Tokenizer();

  /// Loads a Hugging Face tokenizer.json; errors name the file and JSON path
  /// (`tok.json: model.merges[17]: expected "left right" or ["left",
  /// "right"], got 42`). Unsupported parts are Unimplemented, malformed ones
  /// InvalidArgument, a missing file NotFound.
  static Status load(const std::string &path,
                     std::unique_ptr<Tokenizer> &tokenizer);
  /// The same from JSON text in memory; `path` names it in messages.
  static Status loadFromJson(std::string_view json, const std::string &path,
                             std::unique_ptr<Tokenizer> &tokenizer);

  /// Appends the ids of `text` to `ids` (added/special tokens in the text are
  /// matched as the tokenizers package does; no BOS/EOS unless asked). Fails
  /// only on text that is not UTF-8 (the message gives the byte offset) or a
  /// regex engine limit.
  Status encode(std::string_view text, std::vector<uint32_t> &ids) const;
  /// The same with the post-processor's tokens when `special` is Add, and a
  /// cache kept by the caller across calls (nullptr: one for this call).
  Status encode(std::string_view text, std::vector<uint32_t> &ids,
                SpecialTokens special, EncodeCache *cache = nullptr) const;

  /// The same for a text whose ids need not be held at once (a document of
  /// gigabytes): `sink` receives them in order, in blocks; its error stops
  /// the encoding and is returned.
  Status encodeStreaming(
      std::string_view text, SpecialTokens special, EncodeCache &cache,
      const std::function<Status(const uint32_t *ids, size_t count)> &sink)
      const;

  /// The text of `ids` through the decoder chain, special tokens kept. Ids
  /// that name no token are skipped, and bytes that are not UTF-8 become
  /// U+FFFD, as the package does.
  std::string decode(const std::vector<int32_t> &ids) const;
  std::string decode(const std::vector<int32_t> &ids,
                     DecodeSpecial special) const;

  /// The number of ids (largest id + 1, added tokens included).
  int64_t vocabSize() const;
  std::optional<uint32_t> tokenToId(std::string_view token) const;
  /// The token string of `id` (an added token's content, normalized if the
  /// token is, or the model's vocabulary entry, byte-level characters and
  /// all), as the package's id_to_token.
  std::optional<std::string> idToToken(uint32_t id) const;
  /// The end-of-text / end-of-sequence token the file declares: the first of
  /// <|endoftext|>, <|end_of_text|>, </s>, <eos>, <|eos|> that is a token,
  /// special added tokens first (docs/tokenizer.md), if any.
  std::optional<uint32_t> endOfTextId() const;
  const std::string &path() const { return path_; }
  /// One line for summaries: "byte-level BPE, 50257 ids, 50000 merges".
  std::string describe() const;

private:
  Tokenizer();
  /// Steps 1-3 of encoding (Tokenizer.cpp); `flush`, when set, is called
  /// whenever `ids` holds many ids, and empties it.
  Status encodeText(std::string_view text, text::EncodeState &state,
                    std::vector<uint32_t> &ids,
                    const std::function<Status()> *flush) const;
  std::string path_;
  std::unique_ptr<text::Pipeline> pipeline_;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TEXT_TOKENIZER_H
