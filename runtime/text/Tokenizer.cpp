//===- Tokenizer.cpp - Hugging Face tokenizer.json in the runtime ---------===//
//
// Encoding follows the package's Tokenizer::encode for one sequence:
//
//   1. added tokens with "normalized": false are cut out of the raw text;
//   2. each remaining part is normalized, and the normalized added tokens
//      are cut out of it;
//   3. each remaining part goes through the pre-tokenizers, and each
//      pre-token through the BPE model (depth first: see Components.h);
//   4. with SpecialTokens::Add, the post-processor adds its tokens.
//
// Decoding maps ids to token strings (added tokens first, unknown ids
// skipped), drops special tokens when asked, and runs the decoder chain;
// without a decoder the tokens are joined with spaces, as in the package.
//
//===----------------------------------------------------------------------===//

#include "runtime/text/Tokenizer.h"

#include "runtime/io/File.h"
#include "runtime/io/JsonSyntax.h"
#include "runtime/text/AddedTokens.h"
#include "runtime/text/Utf8.h"

namespace llmc::rt {

namespace text {

/// Everything load() read.
struct Pipeline {
  std::unique_ptr<Normalizer> normalizer;
  std::unique_ptr<PreTokenizer> preTokenizer;
  std::unique_ptr<BpeModel> model;
  std::unique_ptr<PostProcessor> postProcessor;
  std::unique_ptr<Decoder> decoder;
  AddedVocabulary added;
  int64_t vocabSize = 0;
  std::optional<uint32_t> endOfText;
};

namespace {

// The names of end-of-text tokens, in the order endOfTextId() tries them:
// GPT-2 and Qwen, LLaMA 3, LLaMA 2 and Mistral, Gemma, others.
const char *const kEndOfTextNames[] = {"<|endoftext|>", "<|end_of_text|>",
                                       "</s>", "<eos>", "<|eos|>"};

Status refuseNonNull(const JsonSource &source, const Json &root,
                     const char *key, const char *why) {
  const Json *value = member(root, key);
  if (!value || value->is_null())
    return Status::ok();
  return source.unsupported(key, std::string(why) + "; set \"" + key +
                                     "\" to null");
}

Status parsePipeline(const JsonSource &source, const Json &root,
                     Pipeline &pipeline) {
  LLMC_RETURN_IF_ERROR(expectObject(source, root, ""));
  LLMC_RETURN_IF_ERROR(checkKeys(source, root, "",
                                 {"version", "truncation", "padding",
                                  "added_tokens", "normalizer",
                                  "pre_tokenizer", "model", "post_processor",
                                  "decoder"}));
  LLMC_RETURN_IF_ERROR(refuseNonNull(
      source, root, "truncation",
      "llmc encodes whole texts and never truncates them"));
  LLMC_RETURN_IF_ERROR(
      refuseNonNull(source, root, "padding", "llmc never pads encodings"));
  const Json *model = member(root, "model");
  if (!model)
    return source.malformed("", "missing \"model\"");
  std::string type;
  if (model->is_object() && !member(*model, "type") && member(*model, "merges"))
    type = "BPE"; // files written before models had a "type"
  else
    LLMC_RETURN_IF_ERROR(readType(source, *model, "model", type));
  if (type != "BPE")
    return source.unsupported(
        "model.type",
        "model \"" + type +
            "\" is not supported; llmc loads BPE models: byte-level BPE "
            "(GPT-2, LLaMA 3, Qwen 2) and BPE with byte fallback (LLaMA 2, "
            "Mistral)");
  LLMC_RETURN_IF_ERROR(BpeModel::parse(source, *model, "model", pipeline.model));
  static const Json kNull;
  auto at = [&](const char *key) -> const Json & {
    const Json *value = member(root, key);
    return value ? *value : kNull;
  };
  LLMC_RETURN_IF_ERROR(parseNormalizer(source, at("normalizer"), "normalizer",
                                       pipeline.normalizer));
  LLMC_RETURN_IF_ERROR(parsePreTokenizer(source, at("pre_tokenizer"),
                                         "pre_tokenizer",
                                         pipeline.preTokenizer));
  LLMC_RETURN_IF_ERROR(parsePostProcessor(source, at("post_processor"),
                                          "post_processor",
                                          pipeline.postProcessor));
  LLMC_RETURN_IF_ERROR(
      parseDecoder(source, at("decoder"), "decoder", pipeline.decoder));
  LLMC_RETURN_IF_ERROR(pipeline.added.parse(source, at("added_tokens"),
                                            "added_tokens", *pipeline.model,
                                            pipeline.normalizer.get()));

  int64_t largest = pipeline.model->maxId();
  for (const AddedToken &token : pipeline.added.tokens())
    largest = std::max<int64_t>(largest, token.id);
  pipeline.vocabSize = largest + 1;
  // Special added tokens first: a vocabulary entry "</s>" that is plain
  // text in some file is a weaker sign than a declared special token.
  for (const char *name : kEndOfTextNames)
    if (!pipeline.endOfText && pipeline.added.isSpecial(name))
      pipeline.endOfText = pipeline.added.idOf(name);
  for (const char *name : kEndOfTextNames) {
    if (pipeline.endOfText)
      break;
    pipeline.endOfText = pipeline.added.idOf(name);
    if (!pipeline.endOfText)
      pipeline.endOfText = pipeline.model->tokenToId(name);
  }
  return Status::ok();
}

} // namespace
} // namespace text

using text::AddedSegment;
using text::EncodeState;
using text::Piece;

EncodeCache::EncodeCache() : state_(std::make_unique<EncodeState>()) {}
EncodeCache::~EncodeCache() = default;
EncodeCache::EncodeCache(EncodeCache &&) noexcept = default;
EncodeCache &EncodeCache::operator=(EncodeCache &&) noexcept = default;

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Status Tokenizer::load(const std::string &path,
                       std::unique_ptr<Tokenizer> &tokenizer) {
  std::vector<uint8_t> bytes;
  LLMC_RETURN_IF_ERROR(readFile(path, bytes));
  return loadFromJson(
      std::string_view(reinterpret_cast<const char *>(bytes.data()),
                       bytes.size()),
      path, tokenizer);
}

Status Tokenizer::loadFromJson(std::string_view json, const std::string &path,
                               std::unique_ptr<Tokenizer> &tokenizer) {
  text::JsonSource source(path);
  text::Json root = text::Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return source.malformed("", "not valid JSON: " + jsonSyntaxError(json));
  }
  auto loaded = std::unique_ptr<Tokenizer>(new Tokenizer());
  loaded->path_ = path;
  loaded->pipeline_ = std::make_unique<text::Pipeline>();
  LLMC_RETURN_IF_ERROR(text::parsePipeline(source, root, *loaded->pipeline_));
  tokenizer = std::move(loaded);
  return Status::ok();
}

Status Tokenizer::encode(std::string_view text,
                         std::vector<uint32_t> &ids) const {
  return encode(text, ids, SpecialTokens::Omit, nullptr);
}

namespace {

// encodeStreaming() hands ids to its sink in blocks of about this many.
constexpr size_t kStreamBlock = 1 << 16;

Status checkUtf8(std::string_view text) {
  size_t bad = text::firstInvalidUtf8(text);
  if (bad == std::string::npos)
    return Status::ok();
  static const char kHex[] = "0123456789abcdef";
  unsigned char byte = static_cast<unsigned char>(text[bad]);
  return Status::error(StatusCode::InvalidArgument,
                       std::string("the text is not UTF-8: byte ") +
                           std::to_string(bad) + " (0x" + kHex[byte >> 4] +
                           kHex[byte & 15] +
                           ") does not start a valid sequence; convert the "
                           "text to UTF-8 first");
}

} // namespace

Status Tokenizer::encode(std::string_view text, std::vector<uint32_t> &ids,
                         SpecialTokens special, EncodeCache *cache) const {
  LLMC_RETURN_IF_ERROR(checkUtf8(text));
  EncodeCache local;
  EncodeState &state = cache ? *cache->state_ : *local.state_;
  std::vector<uint32_t> before, after;
  if (special == SpecialTokens::Add && pipeline_->postProcessor)
    pipeline_->postProcessor->wrap(before, after);
  ids.insert(ids.end(), before.begin(), before.end());
  LLMC_RETURN_IF_ERROR(encodeText(text, state, ids, nullptr));
  ids.insert(ids.end(), after.begin(), after.end());
  return Status::ok();
}

Status Tokenizer::encodeStreaming(
    std::string_view text, SpecialTokens special, EncodeCache &cache,
    const std::function<Status(const uint32_t *, size_t)> &sink) const {
  LLMC_RETURN_IF_ERROR(checkUtf8(text));
  std::vector<uint32_t> ids, after;
  if (special == SpecialTokens::Add && pipeline_->postProcessor)
    pipeline_->postProcessor->wrap(ids, after);
  std::function<Status()> flush = [&]() -> Status {
    Status status = sink(ids.data(), ids.size());
    ids.clear();
    return status;
  };
  LLMC_RETURN_IF_ERROR(encodeText(text, *cache.state_, ids, &flush));
  ids.insert(ids.end(), after.begin(), after.end());
  return ids.empty() ? Status::ok() : flush();
}

Status Tokenizer::encodeText(std::string_view text, EncodeState &state,
                             std::vector<uint32_t> &ids,
                             const std::function<Status()> *flush) const {
  const text::Pipeline &pipeline = *pipeline_;
  auto toModel = [&](const Piece &piece) -> Status {
    LLMC_RETURN_IF_ERROR(
        pipeline.model->tokenize(piece.text, state.bpe, ids));
    if (flush && ids.size() >= kStreamBlock)
      return (*flush)();
    return Status::ok();
  };
  auto preTokenize = [&](const Piece &piece) -> Status {
    if (piece.text.empty())
      return Status::ok();
    if (!pipeline.preTokenizer)
      return toModel(piece);
    return pipeline.preTokenizer->preTokenize(piece, state, toModel);
  };
  // Steps 1 and 2.
  auto onRawSegment = [&](const AddedSegment &raw) -> Status {
    if (raw.token >= 0) {
      ids.push_back(pipeline.added.tokens()[raw.token].id);
      return Status::ok();
    }
    std::string_view part = text.substr(raw.begin, raw.end - raw.begin);
    if (part.empty())
      return Status::ok();
    std::string normalized;
    if (pipeline.normalizer) {
      normalized.assign(part);
      LLMC_RETURN_IF_ERROR(pipeline.normalizer->normalize(normalized, state));
      part = normalized;
    }
    return pipeline.added.splitNormalized(
        part, [&](const AddedSegment &inner) -> Status {
          if (inner.token >= 0) {
            ids.push_back(pipeline.added.tokens()[inner.token].id);
            return Status::ok();
          }
          // Step 3.
          return preTokenize(
              Piece{part.substr(inner.begin, inner.end - inner.begin),
                    raw.begin == 0 && inner.begin == 0});
        });
  };
  return pipeline.added.splitRaw(text, onRawSegment);
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids) const {
  return decode(ids, DecodeSpecial::Keep);
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids,
                              DecodeSpecial special) const {
  const text::Pipeline &pipeline = *pipeline_;
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0)
      continue;
    const std::string *token = nullptr;
    if (const text::AddedToken *added =
            pipeline.added.byId(static_cast<uint32_t>(id)))
      token = &added->decodeAs;
    else
      token = pipeline.model->idToToken(static_cast<uint32_t>(id));
    if (!token)
      continue;
    // As in the package, the test is on the decoded string: a normalized
    // special token whose normalized form differs is kept.
    if (special == DecodeSpecial::Skip && pipeline.added.isSpecial(*token))
      continue;
    tokens.push_back(*token);
  }
  if (!pipeline.decoder) {
    std::string joined;
    for (size_t i = 0; i < tokens.size(); ++i)
      joined += (i ? " " : "") + tokens[i];
    return joined;
  }
  pipeline.decoder->decodeChain(tokens);
  std::string joined;
  for (const std::string &token : tokens)
    joined += token;
  return joined;
}

int64_t Tokenizer::vocabSize() const { return pipeline_->vocabSize; }

std::optional<uint32_t> Tokenizer::tokenToId(std::string_view token) const {
  if (std::optional<uint32_t> id = pipeline_->added.idOf(token))
    return id;
  return pipeline_->model->tokenToId(token);
}

std::optional<std::string> Tokenizer::idToToken(uint32_t id) const {
  if (const text::AddedToken *added = pipeline_->added.byId(id))
    return added->decodeAs;
  if (const std::string *token = pipeline_->model->idToToken(id))
    return *token;
  return std::nullopt;
}

std::optional<uint32_t> Tokenizer::endOfTextId() const {
  return pipeline_->endOfText;
}

std::string Tokenizer::describe() const {
  const text::Pipeline &pipeline = *pipeline_;
  std::string kind =
      pipeline.preTokenizer && text::isByteLevel(*pipeline.preTokenizer)
          ? "byte-level BPE"
      : pipeline.model->byteFallback() ? "BPE with byte fallback"
                                       : "BPE";
  return kind + ", " + std::to_string(pipeline.vocabSize) + " ids, " +
         std::to_string(pipeline.model->mergeCount()) + " merges, " +
         std::to_string(pipeline.added.tokens().size()) + " added tokens";
}

} // namespace llmc::rt
