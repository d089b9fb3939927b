//===- PreTokenizers.cpp - tokenizer.json pre-tokenizers ------------------===//
//
// ByteLevel (GPT-2's regex split and byte-to-character map), Split (LLaMA 3
// and Qwen 2 ship their regex this way), Metaspace (SentencePiece's "▁")
// and Sequence, each as the package's pre_tokenizers/ define them. The
// behaviours of a split (Removed, Isolated, MergedWithPrevious,
// MergedWithNext, Contiguous) are the package's NormalizedString::split.
//
//===----------------------------------------------------------------------===//

#include "runtime/text/Components.h"

#include "runtime/text/Utf8.h"

#include <algorithm>

namespace llmc::rt::text {

namespace {

const char *kSupportedPreTokenizers =
    "llmc implements the pre-tokenizers Sequence, ByteLevel, Split and "
    "Metaspace";

// GPT-2's pattern, as pre_tokenizers/byte_level.rs has it.
const char *kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| "
                           "?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

enum class Behavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};

/// Sends the non-empty parts of `piece` that `pattern` and `behavior` keep
/// to `emit`. The package folds the whole list of segments; each behaviour
/// needs to hold back at most one segment, so this streams:
///   Isolated            every segment
///   Removed             the unmatched segments
///   Contiguous          runs of matched, or of unmatched, segments joined
///   MergedWithPrevious  a match joins the unmatched segment before it
///   MergedWithNext      a match joins the unmatched segment after it
Status splitPiece(const Piece &piece, EncodeState &state,
                  const Pattern &pattern, Behavior behavior, bool invert,
                  PieceSink emit) {
  auto out = [&](size_t begin, size_t end) -> Status {
    if (end <= begin)
      return Status::ok();
    return emit(Piece{piece.text.substr(begin, end - begin),
                      piece.atOrigin && begin == 0});
  };
  bool pending = false, previousMatch = false;
  Segment held{0, 0, false};
  auto onSegment = [&](const Segment &found) -> Status {
    Segment segment = found;
    if (invert)
      segment.isMatch = !segment.isMatch;
    switch (behavior) {
    case Behavior::Isolated:
      return out(segment.begin, segment.end);
    case Behavior::Removed:
      return segment.isMatch ? Status::ok() : out(segment.begin, segment.end);
    case Behavior::Contiguous:
    case Behavior::MergedWithPrevious: {
      bool join = behavior == Behavior::Contiguous
                      ? segment.isMatch == previousMatch
                      : segment.isMatch && !previousMatch;
      previousMatch = segment.isMatch;
      if (pending && join) {
        held.end = segment.end;
        return Status::ok();
      }
      if (pending)
        LLMC_RETURN_IF_ERROR(out(held.begin, held.end));
      held = segment;
      pending = true;
      return Status::ok();
    }
    case Behavior::MergedWithNext:
      // Only a match is held back, waiting for what follows it.
      if (pending) {
        pending = false;
        if (!segment.isMatch)
          return out(held.begin, segment.end);
        LLMC_RETURN_IF_ERROR(out(held.begin, held.end));
      }
      if (segment.isMatch) {
        held = segment;
        pending = true;
        return Status::ok();
      }
      return out(segment.begin, segment.end);
    }
    return Status::ok();
  };
  LLMC_RETURN_IF_ERROR(pattern.forEachSegment(piece.text, state, onSegment));
  return pending ? out(held.begin, held.end) : Status::ok();
}

class SequencePreTokenizer : public PreTokenizer {
public:
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  Status preTokenize(const Piece &piece, EncodeState &state,
                     PieceSink emit) const override {
    return run(0, piece, state, emit);
  }

private:
  Status run(size_t step, const Piece &piece, EncodeState &state,
             PieceSink emit) const {
    if (step == steps.size())
      return emit(piece);
    auto next = [&](const Piece &sub) {
      return run(step + 1, sub, state, emit);
    };
    return steps[step]->preTokenize(piece, state, next);
  }
};

class SplitPreTokenizer : public PreTokenizer {
public:
  Pattern pattern;
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  Status preTokenize(const Piece &piece, EncodeState &state,
                     PieceSink emit) const override {
    return splitPiece(piece, state, pattern, behavior, invert, emit);
  }
};

class ByteLevelPreTokenizer : public PreTokenizer {
public:
  bool addPrefixSpace = true;
  bool useRegex = true;
  Pattern gpt2;
  Status preTokenize(const Piece &piece, EncodeState &state,
                     PieceSink emit) const override {
    std::string prefixed;
    Piece whole = piece;
    if (addPrefixSpace && (piece.text.empty() || piece.text[0] != ' ')) {
      prefixed.reserve(piece.text.size() + 1);
      prefixed += ' ';
      prefixed += piece.text;
      whole.text = prefixed;
    }
    std::string mapped;
    const std::string *chars = &byteLevelChar(0); // the 256 of them
    auto map = [&](const Piece &sub) -> Status {
      mapped.clear();
      for (unsigned char byte : sub.text)
        mapped += chars[byte];
      return emit(Piece{mapped, sub.atOrigin});
    };
    if (useRegex)
      return splitPiece(whole, state, gpt2, Behavior::Isolated, false, map);
    return map(whole);
  }
};


class MetaspacePreTokenizer : public PreTokenizer {
public:
  std::string replacement;
  PrependScheme scheme = PrependScheme::Always;
  bool split = true;
  Pattern onReplacement;
  Status preTokenize(const Piece &piece, EncodeState &state,
                     PieceSink emit) const override {
    std::string replaced;
    replaced.reserve(piece.text.size() + replacement.size());
    bool starts = piece.text.substr(0, 1) == " " ||
                  piece.text.substr(0, replacement.size()) == replacement;
    if (!starts && (scheme == PrependScheme::Always ||
                    (scheme == PrependScheme::First && piece.atOrigin)))
      replaced += replacement;
    for (char c : piece.text) {
      if (c == ' ')
        replaced += replacement;
      else
        replaced += c;
    }
    Piece whole{replaced, piece.atOrigin};
    if (split)
      return splitPiece(whole, state, onReplacement, Behavior::MergedWithNext,
                        false, emit);
    return emit(whole);
  }
};

Status parseBehavior(const JsonSource &source, const Json &value,
                     const std::string &path, Behavior &behavior) {
  std::string name;
  LLMC_RETURN_IF_ERROR(readString(source, value, path, "behavior", name));
  static const std::pair<const char *, Behavior> kNames[] = {
      {"Removed", Behavior::Removed},
      {"Isolated", Behavior::Isolated},
      {"MergedWithPrevious", Behavior::MergedWithPrevious},
      {"MergedWithNext", Behavior::MergedWithNext},
      {"Contiguous", Behavior::Contiguous}};
  for (const auto &[known, value] : kNames)
    if (name == known) {
      behavior = value;
      return Status::ok();
    }
  return source.malformed(childPath(path, "behavior"),
                          "expected Removed, Isolated, MergedWithPrevious, "
                          "MergedWithNext or Contiguous, got \"" +
                              name + "\"");
}

Status parseMetaspace(const JsonSource &source, const Json &value,
                      const std::string &path,
                      std::unique_ptr<PreTokenizer> &out) {
  MetaspaceOptions options;
  LLMC_RETURN_IF_ERROR(readMetaspaceOptions(source, value, path, options));
  auto metaspace = std::make_unique<MetaspacePreTokenizer>();
  metaspace->replacement = options.replacement;
  metaspace->scheme = options.scheme;
  metaspace->split = options.split;
  metaspace->onReplacement = Pattern::literal(metaspace->replacement);
  out = std::move(metaspace);
  return Status::ok();
}

} // namespace

Status parsePreTokenizer(const JsonSource &source, const Json &value,
                         const std::string &path,
                         std::unique_ptr<PreTokenizer> &out) {
  out.reset();
  if (value.is_null())
    return Status::ok();
  std::string type;
  LLMC_RETURN_IF_ERROR(readType(source, value, path, type));
  if (type == "Sequence")
    return parseSequence<SequencePreTokenizer>(
        source, value, path, "pretokenizers", "pre-tokenizers",
        parsePreTokenizer, out);
  if (type == "ByteLevel") {
    LLMC_RETURN_IF_ERROR(checkKeys(
        source, value, path,
        {"type", "add_prefix_space", "trim_offsets", "use_regex"}));
    auto byteLevel = std::make_unique<ByteLevelPreTokenizer>();
    LLMC_RETURN_IF_ERROR(readOptionalBool(source, value, path,
                                          "add_prefix_space",
                                          byteLevel->addPrefixSpace));
    bool trimOffsets = true; // offsets only: no effect on ids
    LLMC_RETURN_IF_ERROR(
        readOptionalBool(source, value, path, "trim_offsets", trimOffsets));
    LLMC_RETURN_IF_ERROR(readOptionalBool(source, value, path, "use_regex",
                                          byteLevel->useRegex));
    if (byteLevel->useRegex)
      LLMC_RETURN_IF_ERROR(Pattern::parse(source, Json{{"Regex", kGpt2Pattern}},
                                          path, byteLevel->gpt2));
    out = std::move(byteLevel);
    return Status::ok();
  }
  if (type == "Split") {
    LLMC_RETURN_IF_ERROR(checkKeys(source, value, path,
                                   {"type", "pattern", "behavior", "invert"}));
    auto split = std::make_unique<SplitPreTokenizer>();
    const Json *pattern = member(value, "pattern");
    if (!pattern)
      return source.malformed(path, "missing \"pattern\"");
    LLMC_RETURN_IF_ERROR(Pattern::parse(
        source, *pattern, childPath(path, "pattern"), split->pattern));
    LLMC_RETURN_IF_ERROR(parseBehavior(source, value, path, split->behavior));
    LLMC_RETURN_IF_ERROR(
        readOptionalBool(source, value, path, "invert", split->invert));
    out = std::move(split);
    return Status::ok();
  }
  if (type == "Metaspace")
    return parseMetaspace(source, value, path, out);
  return source.unsupported(childPath(path, "type"),
                            "pre-tokenizer \"" + type +
                                "\" is not supported; " +
                                kSupportedPreTokenizers);
}

bool isByteLevel(const PreTokenizer &preTokenizer) {
  if (dynamic_cast<const ByteLevelPreTokenizer *>(&preTokenizer))
    return true;
  if (auto *sequence =
          dynamic_cast<const SequencePreTokenizer *>(&preTokenizer))
    for (const auto &step : sequence->steps)
      if (isByteLevel(*step))
        return true;
  return false;
}

namespace {

struct ByteLevelTables {
  std::string chars[256];
  int bytes[0x200]; // every character of the map is below U+0200
  ByteLevelTables() {
    // bytes_char() of pre_tokenizers/byte_level.rs: printable bytes map to
    // themselves, the others to U+0100 and up in byte order.
    std::fill(std::begin(bytes), std::end(bytes), -1);
    auto printable = [](unsigned b) {
      return (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) ||
             (b >= 0xae && b <= 0xff);
    };
    unsigned next = 0;
    for (unsigned b = 0; b < 256; ++b) {
      char32_t c = printable(b) ? b : 256 + next++;
      appendUtf8(chars[b], c);
      bytes[c] = static_cast<int>(b);
    }
  }
};

const ByteLevelTables &byteLevelTables() {
  static const ByteLevelTables tables;
  return tables;
}

} // namespace

const std::string &byteLevelChar(unsigned char byte) {
  return byteLevelTables().chars[byte];
}

int byteOfByteLevelChar(char32_t c) {
  return c < 0x200 ? byteLevelTables().bytes[c] : -1;
}

// Metaspace's options (Components.h), for the pre-tokenizer and the decoder.
Status readMetaspaceOptions(const JsonSource &source, const Json &value,
                            const std::string &path, MetaspaceOptions &out) {
  LLMC_RETURN_IF_ERROR(checkKeys(source, value, path,
                                 {"type", "replacement", "prepend_scheme",
                                  "split", "add_prefix_space", "str_rep"}));
  LLMC_RETURN_IF_ERROR(
      readOneChar(source, value, path, "replacement", out.replacement));
  // Files written before prepend_scheme existed say add_prefix_space.
  std::optional<std::string> scheme;
  LLMC_RETURN_IF_ERROR(
      readOptionalString(source, value, path, "prepend_scheme", scheme));
  if (scheme) {
    if (*scheme == "always")
      out.scheme = PrependScheme::Always;
    else if (*scheme == "first")
      out.scheme = PrependScheme::First;
    else if (*scheme == "never")
      out.scheme = PrependScheme::Never;
    else
      return source.malformed(childPath(path, "prepend_scheme"),
                              "expected \"always\", \"first\" or \"never\", "
                              "got \"" +
                                  *scheme + "\"");
  } else {
    bool addPrefixSpace = true;
    LLMC_RETURN_IF_ERROR(readOptionalBool(source, value, path,
                                          "add_prefix_space", addPrefixSpace));
    out.scheme = addPrefixSpace ? PrependScheme::Always : PrependScheme::Never;
  }
  LLMC_RETURN_IF_ERROR(
      readOptionalBool(source, value, path, "split", out.split));
  return Status::ok();
}

} // namespace llmc::rt::text
