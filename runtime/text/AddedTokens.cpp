//===- AddedTokens.cpp - added and special tokens of a tokenizer ----------===//
//
// split() is the package's AddedVocabulary::find_matches: for each match
// (non-overlapping, leftmost-longest, the search resuming at the match's
// end),
//   - single_word drops a match with a word character (Rust's Unicode \w)
//     just before or after it;
//   - lstrip takes the white space before it (not past the previous match),
//     rstrip the white space after it;
// and the text between matches goes to the model.
//
//===----------------------------------------------------------------------===//

#include "runtime/text/AddedTokens.h"

#include "runtime/text/Utf8.h"

#include <algorithm>

namespace llmc::rt::text {

void AddedVocabulary::Matcher::add(std::string pattern, size_t token) {
  if (pattern.empty())
    return;
  auto &bucket = byFirstByte_[static_cast<unsigned char>(pattern[0])];
  bucket.push_back({std::move(pattern), token});
  // Longest first; among equals, the first added (stable).
  std::stable_sort(bucket.begin(), bucket.end(),
                   [](const Entry &a, const Entry &b) {
                     return a.pattern.size() > b.pattern.size();
                   });
  any_ = true;
}

bool AddedVocabulary::Matcher::find(std::string_view text, size_t from,
                                    size_t &begin, const Entry *&entry) const {
  for (size_t at = from; at < text.size(); ++at) {
    const auto &bucket = byFirstByte_[static_cast<unsigned char>(text[at])];
    for (const Entry &candidate : bucket)
      if (text.compare(at, candidate.pattern.size(), candidate.pattern) == 0) {
        begin = at;
        entry = &candidate;
        return true;
      }
  }
  return false;
}

Status AddedVocabulary::Matcher::split(
    std::string_view text, const std::vector<AddedToken> &tokens,
    FunctionRef<Status(const AddedSegment &)> onSegment) const {
  size_t startOffset = 0, from = 0, begin = 0;
  const Entry *entry = nullptr;
  while (any_ && find(text, from, begin, entry)) {
    size_t start = begin, stop = begin + entry->pattern.size();
    from = stop;
    const AddedToken &token = tokens[entry->token];
    if (token.singleWord) {
      bool wordBefore = start > 0 && isWordChar(previousCodePoint(text, start));
      size_t next = stop;
      bool wordAfter =
          stop < text.size() && isWordChar(nextCodePoint(text, next));
      if (wordBefore || wordAfter)
        continue;
    }
    if (token.lstrip) {
      size_t spaces = start;
      while (spaces > 0) {
        size_t at = spaces - 1;
        while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80)
          --at;
        size_t probe = at;
        if (!isWhiteSpace(nextCodePoint(text, probe)))
          break;
        spaces = at;
      }
      start = std::max(spaces, startOffset);
    }
    if (token.rstrip) {
      while (stop < text.size()) {
        size_t next = stop;
        if (!isWhiteSpace(nextCodePoint(text, next)))
          break;
        stop = next;
      }
    }
    if (startOffset < start)
      LLMC_RETURN_IF_ERROR(onSegment(AddedSegment{startOffset, start, -1}));
    LLMC_RETURN_IF_ERROR(onSegment(
        AddedSegment{start, stop, static_cast<int64_t>(entry->token)}));
    startOffset = stop;
  }
  if (startOffset < text.size())
    LLMC_RETURN_IF_ERROR(onSegment(AddedSegment{startOffset, text.size(), -1}));
  return Status::ok();
}

Status AddedVocabulary::parse(const JsonSource &source, const Json &value,
                              const std::string &path, const BpeModel &model,
                              const Normalizer *normalizer) {
  if (value.is_null())
    return Status::ok();
  if (!value.is_array())
    return source.malformed(path, "expected a list of added tokens, got " +
                                      describeJson(value));
  // The ids the package gives (AddedVocabulary::add_tokens): a string that
  // is a token already keeps its id; a new one gets the model's vocabulary
  // size, or one past the largest added id once that reaches it.
  std::optional<uint32_t> largestAdded;
  for (size_t i = 0; i < value.size(); ++i) {
    const Json &item = value[i];
    std::string itemPath = indexPath(path, i);
    LLMC_RETURN_IF_ERROR(expectObject(source, item, itemPath));
    LLMC_RETURN_IF_ERROR(checkKeys(source, item, itemPath,
                                   {"id", "content", "single_word", "lstrip",
                                    "rstrip", "normalized", "special"}));
    AddedToken token;
    uint64_t id = 0;
    LLMC_RETURN_IF_ERROR(readUnsigned(source, item, itemPath, "id", id));
    LLMC_RETURN_IF_ERROR(
        readString(source, item, itemPath, "content", token.content));
    LLMC_RETURN_IF_ERROR(
        readBool(source, item, itemPath, "single_word", token.singleWord));
    LLMC_RETURN_IF_ERROR(readBool(source, item, itemPath, "lstrip", token.lstrip));
    LLMC_RETURN_IF_ERROR(readBool(source, item, itemPath, "rstrip", token.rstrip));
    LLMC_RETURN_IF_ERROR(
        readBool(source, item, itemPath, "normalized", token.normalized));
    LLMC_RETURN_IF_ERROR(
        readBool(source, item, itemPath, "special", token.special));
    if (token.content.empty())
      return source.malformed(childPath(itemPath, "content"),
                              "an added token cannot be empty");
    if (auto seen = byContent_.find(token.content); seen != byContent_.end())
      return source.malformed(itemPath,
                              describeJson(Json(token.content)) +
                                  " is listed twice (also " +
                                  indexPath(path, seen->second) +
                                  "); keep one entry");
    uint32_t assigned;
    if (std::optional<uint32_t> existing = model.tokenToId(token.content)) {
      assigned = *existing;
    } else {
      uint64_t size = model.vocabEntries();
      uint64_t next = !largestAdded             ? size
                      : *largestAdded >= size || size == 0 ? *largestAdded + 1
                                                           : size;
      if (next > UINT32_MAX)
        return source.malformed(itemPath, "no id is left for this token");
      assigned = static_cast<uint32_t>(next);
    }
    if (assigned != id)
      return source.malformed(
          childPath(itemPath, "id"),
          std::to_string(id) + " is not the id of " +
              describeJson(Json(token.content)) +
              ": the tokenizers package gives it " + std::to_string(assigned) +
              " (" +
              (model.tokenToId(token.content)
                   ? std::string("its id in model.vocab")
                   : "the next id after model.vocab and the tokens before "
                     "it") +
              ") and ignores the file's; fix the id");
    if (byId_.count(assigned))
      return source.malformed(childPath(itemPath, "id"),
                              "id " + std::to_string(assigned) +
                                  " is taken by another added token");
    largestAdded = std::max(largestAdded.value_or(0), assigned);
    token.id = assigned;
    byContent_[token.content] = tokens_.size();
    byId_[assigned] = tokens_.size();
    tokens_.push_back(std::move(token));
  }
  // The normalized tokens match their normalized form; the package builds
  // its tries from the special tokens, then the others.
  EncodeState state;
  for (AddedToken &token : tokens_) {
    token.decodeAs = token.content;
    if (token.normalized && normalizer)
      LLMC_RETURN_IF_ERROR(normalizer->normalize(token.decodeAs, state));
  }
  for (bool special : {true, false})
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const AddedToken &token = tokens_[i];
      if (token.special != special)
        continue;
      if (token.normalized)
        normalized_.add(token.decodeAs, i);
      else
        raw_.add(token.content, i);
    }
  return Status::ok();
}

std::optional<uint32_t>
AddedVocabulary::idOf(std::string_view content) const {
  auto it = byContent_.find(std::string(content));
  if (it == byContent_.end())
    return std::nullopt;
  return tokens_[it->second].id;
}

const AddedToken *AddedVocabulary::byId(uint32_t id) const {
  auto it = byId_.find(id);
  return it == byId_.end() ? nullptr : &tokens_[it->second];
}

bool AddedVocabulary::isSpecial(std::string_view content) const {
  auto it = byContent_.find(std::string(content));
  return it != byContent_.end() && tokens_[it->second].special;
}

} // namespace llmc::rt::text
