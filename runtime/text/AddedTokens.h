//===- AddedTokens.h - added and special tokens of a tokenizer --*- C++ -*-===//
//
// `added_tokens` of a tokenizer.json: strings (special or not) that are cut
// out of the text before the model sees it, as the package's
// AddedVocabulary does. Tokens with "normalized": false are matched in the
// raw text; the others in the normalized text, as their own normalized
// form. Matching is leftmost-longest (the package uses Aho-Corasick with
// that match kind), then single_word, lstrip and rstrip apply.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_ADDEDTOKENS_H
#define LLMC_RUNTIME_TEXT_ADDEDTOKENS_H

#include "runtime/text/Bpe.h"
#include "runtime/text/Components.h"

#include <unordered_map>
#include <unordered_set>

namespace llmc::rt::text {

struct AddedToken {
  std::string content;
  uint32_t id = 0;
  bool singleWord = false, lstrip = false, rstrip = false;
  bool normalized = true, special = false;
  /// The string decoding gives it: `content` through the normalizer when
  /// the token is normalized (the package's normalized_cache), so that the
  /// decoder can undo the normalization; else `content`.
  std::string decodeAs;
};

/// A part of a text: an added token (its index) or text for the model.
struct AddedSegment {
  size_t begin, end;
  int64_t token; ///< index into AddedVocabulary::tokens(), or -1
};

class AddedVocabulary {
public:
  /// Reads `added_tokens` (an array at `path`). Ids are checked against the
  /// ones the package assigns (the model's id for a string in the model's
  /// vocabulary, else the next free id in file order): the package ignores
  /// a differing id with a warning, llmc refuses it.
  Status parse(const JsonSource &source, const Json &value,
               const std::string &path, const BpeModel &model,
               const Normalizer *normalizer);

  const std::vector<AddedToken> &tokens() const { return tokens_; }
  std::optional<uint32_t> idOf(std::string_view content) const;
  /// The added token of `id`, or nullptr.
  const AddedToken *byId(uint32_t id) const;
  bool isSpecial(std::string_view content) const;

  /// Cuts `text` at the tokens with "normalized": false (raw text) or true
  /// (normalized text); `onSegment` receives the parts in order.
  Status splitRaw(std::string_view text,
                  FunctionRef<Status(const AddedSegment &)> onSegment) const {
    return raw_.split(text, tokens_, onSegment);
  }
  Status splitNormalized(
      std::string_view text,
      FunctionRef<Status(const AddedSegment &)> onSegment) const {
    return normalized_.split(text, tokens_, onSegment);
  }

private:
  /// Leftmost-longest matching of a set of strings: candidates by first
  /// byte, longest first.
  class Matcher {
  public:
    void add(std::string pattern, size_t token);
    Status split(std::string_view text, const std::vector<AddedToken> &tokens,
                 FunctionRef<Status(const AddedSegment &)> onSegment) const;

  private:
    struct Entry {
      std::string pattern;
      size_t token;
    };
    /// The leftmost, then longest, match at or after `from`.
    bool find(std::string_view text, size_t from, size_t &begin,
              const Entry *&entry) const;
    std::vector<Entry> byFirstByte_[256];
    bool any_ = false;
  };

  std::vector<AddedToken> tokens_;
  std::unordered_map<std::string, size_t> byContent_;
  std::unordered_map<uint32_t, size_t> byId_;
  Matcher raw_, normalized_;
};

} // namespace llmc::rt::text

#endif // LLMC_RUNTIME_TEXT_ADDEDTOKENS_H
