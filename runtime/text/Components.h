//===- Components.h - normalizers, pre-tokenizers, decoders ----*- C++ -*-===//
//
// The parts of a tokenizer.json around its model, as the tokenizers package
// defines them, for the types llmc implements (docs/tokenizer.md lists them;
// the parse functions refuse every other type with that list):
//
//   normalizer      Sequence, Prepend, Replace, NFC, NFD, NFKC, NFKD
//   pre_tokenizer   Sequence, ByteLevel, Split, Metaspace
//   decoder         Sequence, ByteLevel, ByteFallback, Fuse, Strip, Replace,
//                   Metaspace
//   post_processor  Sequence, ByteLevel, TemplateProcessing
//
// The package carries offsets through every step; llmc needs only ids, so a
// piece of text is a string and one bit of its origin: whether it starts at
// byte 0 of the text (Metaspace's prepend_scheme "first" asks). Each piece
// goes through all pre-tokenizers before the next one starts, which is the
// package's result too: its pre-tokenizers treat each split on its own.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_COMPONENTS_H
#define LLMC_RUNTIME_TEXT_COMPONENTS_H

#include "runtime/text/Bpe.h"
#include "runtime/text/FunctionRef.h"
#include "runtime/text/Regex.h"
#include "runtime/text/TokenizerJson.h"

#include <memory>
#include <string>
#include <vector>

namespace llmc::rt::text {

/// A piece of text between the normalizer and the model. It views text that
/// lives at least as long as the call it is passed to.
struct Piece {
  std::string_view text;
  bool atOrigin; ///< starts at byte 0 of the encoded text
};

/// Where a stage sends its pieces: the next stage, depth first, so that a
/// text is never held as a list of all its pre-tokens.
using PieceSink = FunctionRef<Status(const Piece &)>;

/// One thread's buffers for encoding (behind the public EncodeCache).
class EncodeState {
public:
  RegexScratch regex;
  BpeScratch bpe;
};

/// A part of a text and whether a pattern matched it.
struct Segment {
  size_t begin, end;
  bool isMatch;
};

/// A pattern of Replace or Split: {"String": literal} or {"Regex": regex}.
class Pattern {
public:
  static Status parse(const JsonSource &source, const Json &value,
                      const std::string &path, Pattern &out);
  /// A literal pattern (Metaspace's replacement character).
  static Pattern literal(std::string text);

  /// Calls `onSegment` with the consecutive parts of `text`, matched or
  /// not, that cover it (the package's Pattern::find_matches: an empty text
  /// is one unmatched empty segment; an empty literal matches nothing).
  Status forEachSegment(std::string_view text, EncodeState &state,
                        FunctionRef<Status(const Segment &)> onSegment) const;

private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;
};

class Normalizer {
public:
  virtual ~Normalizer() = default;
  virtual Status normalize(std::string &text, EncodeState &state) const = 0;
};

class PreTokenizer {
public:
  virtual ~PreTokenizer() = default;
  /// Sends the pre-tokens of `piece` to `emit`, in order; empty ones are
  /// dropped, as the package drops them.
  virtual Status preTokenize(const Piece &piece, EncodeState &state,
                             PieceSink emit) const = 0;
};

class Decoder {
public:
  virtual ~Decoder() = default;
  /// One step of the chain (the package's decode_chain).
  virtual void decodeChain(std::vector<std::string> &tokens) const = 0;
};

class PostProcessor {
public:
  virtual ~PostProcessor() = default;
  /// Puts its tokens around one encoded sequence: its leading tokens in
  /// front of `before`, its trailing ones after `after`.
  virtual void wrap(std::vector<uint32_t> &before,
                    std::vector<uint32_t> &after) const = 0;
};

/// Metaspace's options, shared by its pre-tokenizer and its decoder: the
/// replacement character, prepend_scheme (or, in files written before it
/// existed, add_prefix_space: true is "always") and split (the decoder
/// reads and ignores it).
enum class PrependScheme { Always, First, Never };
struct MetaspaceOptions {
  std::string replacement;
  PrependScheme scheme = PrependScheme::Always;
  bool split = true;
};
Status readMetaspaceOptions(const JsonSource &source, const Json &value,
                            const std::string &path, MetaspaceOptions &out);

/// Each reads the object at `path` (null is no component, `out` empty).
Status parseNormalizer(const JsonSource &source, const Json &value,
                       const std::string &path,
                       std::unique_ptr<Normalizer> &out);
Status parsePreTokenizer(const JsonSource &source, const Json &value,
                         const std::string &path,
                         std::unique_ptr<PreTokenizer> &out);
Status parseDecoder(const JsonSource &source, const Json &value,
                    const std::string &path, std::unique_ptr<Decoder> &out);
Status parsePostProcessor(const JsonSource &source, const Json &value,
                          const std::string &path,
                          std::unique_ptr<PostProcessor> &out);

/// Whether the pre-tokenizer chain maps bytes to GPT-2's byte characters
/// (a ByteLevel step), for Tokenizer::describe().
bool isByteLevel(const PreTokenizer &preTokenizer);

/// GPT-2's printable character for each byte (the package's bytes_char),
/// as UTF-8 (the 256 strings are consecutive: &byteLevelChar(0)[b] is
/// byteLevelChar(b)), and the byte of each such character (-1 for others).
const std::string &byteLevelChar(unsigned char byte);
int byteOfByteLevelChar(char32_t c);

} // namespace llmc::rt::text

#endif // LLMC_RUNTIME_TEXT_COMPONENTS_H
