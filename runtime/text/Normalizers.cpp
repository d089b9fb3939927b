//===- Normalizers.cpp - tokenizer.json normalizers and patterns ----------===//
//
// Patterns (shared with the Split pre-tokenizer) and the normalizers llmc
// implements: Sequence, Prepend and Replace (LLaMA 2's "▁" handling) and the
// four Unicode normalization forms (Qwen 2 uses NFC) through utf8proc.
//
//===----------------------------------------------------------------------===//

#include "runtime/text/Components.h"

#include <utf8proc.h>

#include <cstdlib>

namespace llmc::rt::text {

namespace {

const char *kSupportedNormalizers =
    "llmc implements the normalizers Sequence, Prepend, Replace, NFC, NFD, "
    "NFKC and NFKD";

class SequenceNormalizer : public Normalizer {
public:
  std::vector<std::unique_ptr<Normalizer>> steps;
  Status normalize(std::string &text, EncodeState &state) const override {
    for (const auto &step : steps)
      LLMC_RETURN_IF_ERROR(step->normalize(text, state));
    return Status::ok();
  }
};

class PrependNormalizer : public Normalizer {
public:
  std::string prefix;
  Status normalize(std::string &text, EncodeState &) const override {
    // The package prepends only to a non-empty text.
    if (!text.empty())
      text.insert(0, prefix);
    return Status::ok();
  }
};

class ReplaceNormalizer : public Normalizer {
public:
  Pattern pattern;
  std::string content;
  Status normalize(std::string &text, EncodeState &state) const override {
    std::string out;
    bool matched = false;
    LLMC_RETURN_IF_ERROR(pattern.forEachSegment(
        text, state, [&](const Segment &segment) -> Status {
          matched = matched || segment.isMatch;
          if (segment.isMatch)
            out += content;
          else
            out.append(text, segment.begin, segment.end - segment.begin);
          return Status::ok();
        }));
    if (matched)
      text = std::move(out);
    return Status::ok();
  }
};

class UnicodeNormalizer : public Normalizer {
public:
  int options = 0; // utf8proc_option_t
  Status normalize(std::string &text, EncodeState &) const override {
    // Every form leaves ASCII as it is.
    bool ascii = true;
    for (unsigned char c : text)
      ascii = ascii && c < 0x80;
    if (ascii)
      return Status::ok();
    utf8proc_uint8_t *result = nullptr;
    utf8proc_ssize_t length = utf8proc_map(
        reinterpret_cast<const utf8proc_uint8_t *>(text.data()),
        static_cast<utf8proc_ssize_t>(text.size()), &result,
        static_cast<utf8proc_option_t>(options));
    if (length < 0)
      return Status::error(StatusCode::Internal,
                           std::string("utf8proc cannot normalize the text: ") +
                               utf8proc_errmsg(length));
    text.assign(reinterpret_cast<const char *>(result),
                static_cast<size_t>(length));
    std::free(result);
    return Status::ok();
  }
};

} // namespace

Status Pattern::parse(const JsonSource &source, const Json &value,
                      const std::string &path, Pattern &out) {
  LLMC_RETURN_IF_ERROR(expectObject(source, value, path));
  if (value.size() != 1 ||
      !(member(value, "String") || member(value, "Regex")))
    return source.malformed(path, "expected {\"String\": text} or "
                                  "{\"Regex\": pattern}, got " +
                                      describeJson(value));
  if (const Json *literal = member(value, "String")) {
    if (!literal->is_string())
      return source.malformed(childPath(path, "String"),
                              "expected a string, got " +
                                  describeJson(*literal));
    out.literal_ = literal->get<std::string>();
    out.regex_.reset();
    return Status::ok();
  }
  const Json &regex = *member(value, "Regex");
  std::string regexPath = childPath(path, "Regex");
  if (!regex.is_string())
    return source.malformed(regexPath,
                            "expected a string, got " + describeJson(regex));
  std::string pattern = regex.get<std::string>();
  // Oniguruma's (?m) is PCRE2's (?s), and its (?s) does not exist: the two
  // engines would read such a pattern differently.
  for (size_t at = pattern.find("(?"); at != std::string::npos;
       at = pattern.find("(?", at + 2)) {
    size_t backslashes = 0;
    while (backslashes < at && pattern[at - 1 - backslashes] == '\\')
      ++backslashes;
    if (backslashes % 2)
      continue; // a literal "("
    size_t i = at + 2;
    while (i < pattern.size() &&
           ((pattern[i] >= 'a' && pattern[i] <= 'z') || pattern[i] == '-')) {
      if (pattern[i] == 'm' || pattern[i] == 's')
        return source.unsupported(
            regexPath, "the flag group at offset " + std::to_string(at) +
                           " sets '" + pattern[i] +
                           "', which Oniguruma (the tokenizers package's "
                           "engine) and PCRE2 (llmc's) read differently");
      ++i;
    }
  }
  std::string error;
  std::unique_ptr<Regex> compiled = Regex::compile(pattern, error);
  if (!compiled)
    return source.malformed(regexPath, "the regex does not compile: " + error);
  out.regex_ = std::move(compiled);
  out.literal_.clear();
  return Status::ok();
}

Pattern Pattern::literal(std::string text) {
  Pattern pattern;
  pattern.literal_ = std::move(text);
  return pattern;
}

Status Pattern::forEachSegment(
    std::string_view text, EncodeState &state,
    FunctionRef<Status(const Segment &)> onSegment) const {
  if (text.empty())
    return onSegment(Segment{0, 0, false});
  size_t previous = 0;
  auto onMatch = [&](Range match) -> Status {
    if (previous != match.begin)
      LLMC_RETURN_IF_ERROR(onSegment(Segment{previous, match.begin, false}));
    LLMC_RETURN_IF_ERROR(onSegment(Segment{match.begin, match.end, true}));
    previous = match.end;
    return Status::ok();
  };
  if (regex_) {
    LLMC_RETURN_IF_ERROR(regex_->forEachMatch(text, state.regex, onMatch));
  } else if (!literal_.empty()) {
    for (size_t at = text.find(literal_); at != std::string_view::npos;
         at = text.find(literal_, at + literal_.size()))
      LLMC_RETURN_IF_ERROR(onMatch(Range{at, at + literal_.size()}));
  }
  if (previous != text.size())
    LLMC_RETURN_IF_ERROR(onSegment(Segment{previous, text.size(), false}));
  return Status::ok();
}

Status parseNormalizer(const JsonSource &source, const Json &value,
                       const std::string &path,
                       std::unique_ptr<Normalizer> &out) {
  out.reset();
  if (value.is_null())
    return Status::ok();
  std::string type;
  LLMC_RETURN_IF_ERROR(readType(source, value, path, type));
  if (type == "Sequence")
    return parseSequence<SequenceNormalizer>(source, value, path, "normalizers",
                                             "normalizers", parseNormalizer,
                                             out);
  if (type == "Prepend") {
    LLMC_RETURN_IF_ERROR(checkKeys(source, value, path, {"type", "prepend"}));
    auto prepend = std::make_unique<PrependNormalizer>();
    LLMC_RETURN_IF_ERROR(
        readString(source, value, path, "prepend", prepend->prefix));
    out = std::move(prepend);
    return Status::ok();
  }
  if (type == "Replace") {
    LLMC_RETURN_IF_ERROR(
        checkKeys(source, value, path, {"type", "pattern", "content"}));
    auto replace = std::make_unique<ReplaceNormalizer>();
    const Json *pattern = member(value, "pattern");
    if (!pattern)
      return source.malformed(path, "missing \"pattern\"");
    LLMC_RETURN_IF_ERROR(Pattern::parse(
        source, *pattern, childPath(path, "pattern"), replace->pattern));
    LLMC_RETURN_IF_ERROR(
        readString(source, value, path, "content", replace->content));
    out = std::move(replace);
    return Status::ok();
  }
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    LLMC_RETURN_IF_ERROR(checkKeys(source, value, path, {"type"}));
    auto unicode = std::make_unique<UnicodeNormalizer>();
    int options = UTF8PROC_STABLE;
    options |= type[type.size() - 1] == 'C' ? UTF8PROC_COMPOSE
                                             : UTF8PROC_DECOMPOSE;
    if (type.size() == 4)
      options |= UTF8PROC_COMPAT;
    unicode->options = options;
    out = std::move(unicode);
    return Status::ok();
  }
  return source.unsupported(childPath(path, "type"),
                            "normalizer \"" + type + "\" is not supported; " +
                                kSupportedNormalizers);
}

} // namespace llmc::rt::text
