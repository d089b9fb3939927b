//===- Decoders.cpp - tokenizer.json decoders and post-processors ---------===//
//
// Decoders turn the token strings of ids back into text, one decode_chain
// step each, as the package's decoders/ do: ByteLevel (GPT-2's characters
// back to bytes; bytes that are not UTF-8 become U+FFFD), ByteFallback
// (<0xNN> tokens), Fuse, Strip, Replace, Metaspace and Sequence. Where the
// package panics (Strip asked to remove more than a token has), llmc
// removes what there is.
//
// Post-processors add the tokens around one encoded sequence: ByteLevel
// (offsets only: no ids), TemplateProcessing's "single" template, Sequence.
//
//===----------------------------------------------------------------------===//

#include "runtime/text/Components.h"

#include "runtime/text/Utf8.h"

namespace llmc::rt::text {

namespace {

const char *kSupportedDecoders =
    "llmc implements the decoders Sequence, ByteLevel, ByteFallback, Fuse, "
    "Strip, Replace and Metaspace";
const char *kSupportedPostProcessors =
    "llmc implements the post-processors Sequence, ByteLevel and "
    "TemplateProcessing";

class SequenceDecoder : public Decoder {
public:
  std::vector<std::unique_ptr<Decoder>> steps;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (const auto &step : steps)
      step->decodeChain(tokens);
  }
};

class ByteLevelDecoder : public Decoder {
public:
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::string bytes;
    for (const std::string &token : tokens) {
      // A token with a character outside the map (an added token such as
      // "hello world") contributes its own bytes.
      size_t start = bytes.size();
      bool mapped = true;
      for (size_t i = 0; i < token.size() && mapped;) {
        int byte = byteOfByteLevelChar(nextCodePoint(token, i));
        if (byte < 0)
          mapped = false;
        else
          bytes += static_cast<char>(byte);
      }
      if (!mapped) {
        bytes.resize(start);
        bytes += token;
      }
    }
    tokens.assign(1, fromUtf8Lossy(bytes));
  }
};

class ByteFallbackDecoder : public Decoder {
public:
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::vector<std::string> out;
    std::string pending; // bytes of consecutive <0xNN> tokens
    auto flush = [&] {
      if (pending.empty())
        return;
      if (firstInvalidUtf8(pending) == std::string::npos)
        out.push_back(pending);
      else // one U+FFFD per byte, as the package does
        for (size_t i = 0; i < pending.size(); ++i)
          out.push_back("\xef\xbf\xbd");
      pending.clear();
    };
    for (std::string &token : tokens) {
      int byte = parseByteToken(token);
      if (byte >= 0) {
        pending += static_cast<char>(byte);
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    tokens = std::move(out);
  }

private:
  /// The byte of "<0xNN>", or -1. NN is read as Rust's u8::from_str_radix
  /// reads it: hex digits of either case, or a '+' and one digit.
  static int parseByteToken(const std::string &token) {
    if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 ||
        token[5] != '>')
      return -1;
    auto digit = [](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    if (token[3] == '+')
      return digit(token[4]);
    int high = digit(token[3]), low = digit(token[4]);
    return high < 0 || low < 0 ? -1 : high * 16 + low;
  }
};

class FuseDecoder : public Decoder {
public:
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::string joined;
    for (const std::string &token : tokens)
      joined += token;
    tokens.assign(1, std::move(joined));
  }
};

class StripDecoder : public Decoder {
public:
  char32_t content = ' ';
  uint64_t start = 0, stop = 0;
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (std::string &token : tokens) {
      std::vector<size_t> starts; // byte offset of each character
      for (size_t i = 0; i < token.size();) {
        starts.push_back(i);
        nextCodePoint(token, i);
      }
      size_t count = starts.size(), first = 0, last = count;
      auto at = [&](size_t k) {
        size_t i = starts[k];
        return nextCodePoint(token, i);
      };
      while (first < count && first < start && at(first) == content)
        ++first;
      for (uint64_t k = 0; k < stop && last > first && at(last - 1) == content;
           ++k)
        --last;
      size_t begin = first < count ? starts[first] : token.size();
      size_t end = last < count ? starts[last] : token.size();
      token = token.substr(begin, end - begin);
    }
  }
};

class ReplaceDecoder : public Decoder {
public:
  std::string pattern, content;
  void decodeChain(std::vector<std::string> &tokens) const override {
    if (pattern.empty())
      return;
    for (std::string &token : tokens) {
      std::string out;
      size_t from = 0;
      for (size_t at = token.find(pattern); at != std::string::npos;
           at = token.find(pattern, from)) {
        out.append(token, from, at - from);
        out += content;
        from = at + pattern.size();
      }
      out.append(token, from, std::string::npos);
      token = std::move(out);
    }
  }
};

class MetaspaceDecoder : public Decoder {
public:
  std::string replacement;
  bool prependScheme = true; ///< prepend_scheme is not "never"
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (size_t t = 0; t < tokens.size(); ++t) {
      std::string out;
      const std::string &token = tokens[t];
      for (size_t i = 0; i < token.size();) {
        if (token.compare(i, replacement.size(), replacement) == 0) {
          // The package drops every replacement of the first token.
          if (!(t == 0 && prependScheme))
            out += ' ';
          i += replacement.size();
        } else {
          size_t length =
              utf8SequenceLength(static_cast<unsigned char>(token[i]));
          out.append(token, i, length);
          i += length;
        }
      }
      tokens[t] = std::move(out);
    }
  }
};

Status parseMetaspaceDecoder(const JsonSource &source, const Json &value,
                             const std::string &path,
                             std::unique_ptr<Decoder> &out) {
  MetaspaceOptions options;
  LLMC_RETURN_IF_ERROR(readMetaspaceOptions(source, value, path, options));
  auto metaspace = std::make_unique<MetaspaceDecoder>();
  metaspace->replacement = options.replacement;
  metaspace->prependScheme = options.scheme != PrependScheme::Never;
  out = std::move(metaspace);
  return Status::ok();
}

Status parseStripDecoder(const JsonSource &source, const Json &value,
                         const std::string &path,
                         std::unique_ptr<Decoder> &out) {
  LLMC_RETURN_IF_ERROR(
      checkKeys(source, value, path, {"type", "content", "start", "stop"}));
  auto strip = std::make_unique<StripDecoder>();
  std::string content;
  LLMC_RETURN_IF_ERROR(readOneChar(source, value, path, "content", content));
  size_t i = 0;
  strip->content = nextCodePoint(content, i);
  LLMC_RETURN_IF_ERROR(readUnsigned(source, value, path, "start", strip->start));
  LLMC_RETURN_IF_ERROR(readUnsigned(source, value, path, "stop", strip->stop));
  out = std::move(strip);
  return Status::ok();
}

Status parseReplaceDecoder(const JsonSource &source, const Json &value,
                           const std::string &path,
                           std::unique_ptr<Decoder> &out) {
  LLMC_RETURN_IF_ERROR(
      checkKeys(source, value, path, {"type", "pattern", "content"}));
  auto replace = std::make_unique<ReplaceDecoder>();
  const Json *pattern = member(value, "pattern");
  std::string patternPath = childPath(path, "pattern");
  if (!pattern)
    return source.malformed(path, "missing \"pattern\"");
  // Decoding returns text, not a Status: a regex, which can fail, is not
  // taken here (the files llmc targets replace a string).
  if (pattern->is_object() && member(*pattern, "Regex"))
    return source.unsupported(patternPath,
                              "a Replace decoder with a Regex pattern is not "
                              "supported; llmc replaces {\"String\": text}");
  if (!pattern->is_object() || pattern->size() != 1 ||
      !member(*pattern, "String") || !member(*pattern, "String")->is_string())
    return source.malformed(patternPath, "expected {\"String\": text}, got " +
                                             describeJson(*pattern));
  replace->pattern = member(*pattern, "String")->get<std::string>();
  LLMC_RETURN_IF_ERROR(
      readString(source, value, path, "content", replace->content));
  out = std::move(replace);
  return Status::ok();
}

class SequenceProcessor : public PostProcessor {
public:
  std::vector<std::unique_ptr<PostProcessor>> steps;
  void wrap(std::vector<uint32_t> &before,
            std::vector<uint32_t> &after) const override {
    for (const auto &step : steps)
      step->wrap(before, after);
  }
};

class NoTokensProcessor : public PostProcessor {
public:
  void wrap(std::vector<uint32_t> &, std::vector<uint32_t> &) const override {}
};

class TemplateProcessor : public PostProcessor {
public:
  std::vector<uint32_t> before, after; ///< around the sequence
  void wrap(std::vector<uint32_t> &outerBefore,
            std::vector<uint32_t> &outerAfter) const override {
    outerBefore.insert(outerBefore.begin(), before.begin(), before.end());
    outerAfter.insert(outerAfter.end(), after.begin(), after.end());
  }
};

Status parseTemplate(const JsonSource &source, const Json &value,
                     const std::string &path,
                     std::unique_ptr<PostProcessor> &out) {
  LLMC_RETURN_IF_ERROR(checkKeys(source, value, path,
                                 {"type", "single", "pair", "special_tokens"}));
  const Json *single = member(value, "single");
  std::string singlePath = childPath(path, "single");
  if (!single || !single->is_array())
    return source.malformed(singlePath,
                            "expected a list of {\"SpecialToken\": ...} and "
                            "{\"Sequence\": ...}, got " +
                                (single ? describeJson(*single) : "nothing"));
  const Json *specials = member(value, "special_tokens");
  std::string specialsPath = childPath(path, "special_tokens");
  if (!specials || !specials->is_object())
    return source.malformed(specialsPath,
                            "expected an object of name -> {\"ids\": [...]}, "
                            "got " +
                                (specials ? describeJson(*specials)
                                          : "nothing"));
  auto processor = std::make_unique<TemplateProcessor>();
  bool sawSequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const Json &piece = (*single)[i];
    std::string piecePath = indexPath(singlePath, i);
    if (piece.is_object() && piece.size() == 1 && member(piece, "Sequence")) {
      std::string id;
      const Json &sequence = *member(piece, "Sequence");
      LLMC_RETURN_IF_ERROR(expectObject(source, sequence, piecePath));
      LLMC_RETURN_IF_ERROR(readString(source, sequence,
                                      childPath(piecePath, "Sequence"), "id",
                                      id));
      if (id != "A" || sawSequence)
        return source.malformed(piecePath, "the single template holds the "
                                           "sequence \"A\" once");
      sawSequence = true;
      continue;
    }
    if (!piece.is_object() || piece.size() != 1 ||
        !member(piece, "SpecialToken"))
      return source.malformed(piecePath,
                              "expected {\"SpecialToken\": {\"id\": ...}} or "
                              "{\"Sequence\": {\"id\": \"A\"}}, got " +
                                  describeJson(piece));
    std::string name;
    std::string tokenPath = childPath(piecePath, "SpecialToken");
    const Json &token = *member(piece, "SpecialToken");
    LLMC_RETURN_IF_ERROR(expectObject(source, token, tokenPath));
    LLMC_RETURN_IF_ERROR(readString(source, token, tokenPath, "id", name));
    const Json *special = member(*specials, name);
    if (!special)
      return source.malformed(tokenPath, "\"" + name +
                                             "\" is not in " + specialsPath);
    std::string idsPath = childPath(keyPath(specialsPath, name), "ids");
    const Json *ids = special->is_object() ? member(*special, "ids") : nullptr;
    if (!ids || !ids->is_array())
      return source.malformed(idsPath, "expected a list of ids");
    for (size_t k = 0; k < ids->size(); ++k) {
      const Json &id = (*ids)[k];
      if (!id.is_number_unsigned() || id.get<uint64_t>() > UINT32_MAX)
        return source.malformed(indexPath(idsPath, k),
                                "expected an id, got " + describeJson(id));
      (sawSequence ? processor->after : processor->before)
          .push_back(static_cast<uint32_t>(id.get<uint64_t>()));
    }
  }
  if (!sawSequence)
    return source.malformed(singlePath, "the single template has no "
                                        "{\"Sequence\": {\"id\": \"A\"}}");
  out = std::move(processor);
  return Status::ok();
}

} // namespace

Status parseDecoder(const JsonSource &source, const Json &value,
                    const std::string &path, std::unique_ptr<Decoder> &out) {
  out.reset();
  if (value.is_null())
    return Status::ok();
  std::string type;
  LLMC_RETURN_IF_ERROR(readType(source, value, path, type));
  if (type == "Sequence")
    return parseSequence<SequenceDecoder>(source, value, path, "decoders",
                                          "decoders", parseDecoder, out);
  if (type == "ByteLevel") {
    LLMC_RETURN_IF_ERROR(
        checkKeys(source, value, path,
                  {"type", "add_prefix_space", "trim_offsets", "use_regex"}));
    out = std::make_unique<ByteLevelDecoder>();
    return Status::ok();
  }
  if (type == "ByteFallback" || type == "Fuse") {
    LLMC_RETURN_IF_ERROR(checkKeys(source, value, path, {"type"}));
    if (type == "Fuse")
      out = std::make_unique<FuseDecoder>();
    else
      out = std::make_unique<ByteFallbackDecoder>();
    return Status::ok();
  }
  if (type == "Strip")
    return parseStripDecoder(source, value, path, out);
  if (type == "Replace")
    return parseReplaceDecoder(source, value, path, out);
  if (type == "Metaspace")
    return parseMetaspaceDecoder(source, value, path, out);
  return source.unsupported(childPath(path, "type"),
                            "decoder \"" + type + "\" is not supported; " +
                                kSupportedDecoders);
}

Status parsePostProcessor(const JsonSource &source, const Json &value,
                          const std::string &path,
                          std::unique_ptr<PostProcessor> &out) {
  out.reset();
  if (value.is_null())
    return Status::ok();
  std::string type;
  LLMC_RETURN_IF_ERROR(readType(source, value, path, type));
  if (type == "Sequence")
    return parseSequence<SequenceProcessor>(source, value, path, "processors",
                                            "post-processors",
                                            parsePostProcessor, out);
  if (type == "ByteLevel") {
    LLMC_RETURN_IF_ERROR(checkKeys(
        source, value, path,
        {"type", "add_prefix_space", "trim_offsets", "use_regex"}));
    out = std::make_unique<NoTokensProcessor>();
    return Status::ok();
  }
  if (type == "TemplateProcessing")
    return parseTemplate(source, value, path, out);
  return source.unsupported(childPath(path, "type"),
                            "post-processor \"" + type +
                                "\" is not supported; " +
                                kSupportedPostProcessors);
}

} // namespace llmc::rt::text
