// Tests of the tokenizer.json loader (runtime/text/Tokenizer.h) that need no
// reference package: every refusal and every malformed-file message, whole,
// on a small hand-written file with one thing changed; the UTF-8 helpers
// against the results Rust gives; encodeStreaming against encode; and the
// shard header (runtime/data/TokenShardFormat.h). The id-for-id comparison
// with the tokenizers package is test/text/tokenizer_parity.py.
#include "runtime/data/TokenShardFormat.h"
#include "runtime/text/Tokenizer.h"
#include "runtime/text/Utf8.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <functional>

namespace {

using namespace llmc::rt;
using Json = nlohmann::json;

/// A byte-level tokenizer small enough to read: the letters a, b, c, the
/// space character Ġ, merges "a b" and "Ġ ab", and <|endoftext|>.
Json smallByteLevel() {
  return Json::parse(R"({
    "version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [{"id": 6, "content": "<|endoftext|>",
      "single_word": false, "lstrip": false, "rstrip": false,
      "normalized": false, "special": true}],
    "normalizer": null,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
      "trim_offsets": true, "use_regex": true},
    "post_processor": null,
    "decoder": {"type": "ByteLevel", "add_prefix_space": true,
      "trim_offsets": true, "use_regex": true},
    "model": {"type": "BPE", "dropout": null, "unk_token": null,
      "continuing_subword_prefix": null, "end_of_word_suffix": null,
      "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
      "vocab": {"a": 0, "b": 1, "c": 2, "Ġ": 3, "ab": 4, "Ġab": 5},
      "merges": ["a b", ["Ġ", "ab"]]}
  })");
}

Status load(const Json &config, std::unique_ptr<Tokenizer> &tokenizer) {
  return Tokenizer::loadFromJson(config.dump(), "t.json", tokenizer);
}

/// The message of loading `config` after `edit`, which must fail with
/// `code`.
std::string failure(const std::function<void(Json &)> &edit,
                    StatusCode code) {
  Json config = smallByteLevel();
  edit(config);
  std::unique_ptr<Tokenizer> tokenizer;
  Status status = load(config, tokenizer);
  EXPECT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), code) << status.toString();
  return status.message();
}

std::string refusal(const std::function<void(Json &)> &edit) {
  return failure(edit, StatusCode::Unimplemented);
}

std::string malformed(const std::function<void(Json &)> &edit) {
  return failure(edit, StatusCode::InvalidArgument);
}

TEST(TokenizerLoad, SmallFileEncodesAndDecodes) {
  std::unique_ptr<Tokenizer> tokenizer;
  ASSERT_TRUE(load(smallByteLevel(), tokenizer).isOk());
  std::vector<uint32_t> ids;
  ASSERT_TRUE(tokenizer->encode("ab ab<|endoftext|>c", ids).isOk());
  // "ab" merges; " ab" is Ġab; the special token is cut out first.
  EXPECT_EQ(ids, (std::vector<uint32_t>{4, 5, 6, 2}));
  EXPECT_EQ(tokenizer->decode({4, 5, 6, 2}), "ab ab<|endoftext|>c");
  EXPECT_EQ(tokenizer->decode({4, 5, 6, 2}, DecodeSpecial::Skip), "ab abc");
  // Unknown and negative ids are skipped.
  EXPECT_EQ(tokenizer->decode({4, -1, 99, 2}), "abc");
  EXPECT_EQ(tokenizer->vocabSize(), 7);
  EXPECT_EQ(tokenizer->endOfTextId(), std::optional<uint32_t>(6));
  EXPECT_EQ(tokenizer->tokenToId("Ġab"), std::optional<uint32_t>(5));
  EXPECT_EQ(tokenizer->idToToken(6),
            std::optional<std::string>("<|endoftext|>"));
  EXPECT_EQ(tokenizer->describe(),
            "byte-level BPE, 7 ids, 2 merges, 1 added tokens");
  // A character the vocabulary lacks (no unk token) is dropped, as the
  // package drops it.
  ids.clear();
  ASSERT_TRUE(tokenizer->encode("abd", ids).isOk());
  EXPECT_EQ(ids, (std::vector<uint32_t>{4}));
}

TEST(TokenizerLoad, StreamingGivesTheIdsOfEncode) {
  std::unique_ptr<Tokenizer> tokenizer;
  ASSERT_TRUE(load(smallByteLevel(), tokenizer).isOk());
  std::string text;
  for (int i = 0; i < 100000; ++i)
    text += i % 7 ? "ab " : "cab<|endoftext|>";
  std::vector<uint32_t> whole, streamed;
  ASSERT_TRUE(tokenizer->encode(text, whole).isOk());
  EncodeCache cache;
  size_t blocks = 0;
  ASSERT_TRUE(tokenizer
                  ->encodeStreaming(text, SpecialTokens::Omit, cache,
                                    [&](const uint32_t *ids, size_t count) {
                                      ++blocks;
                                      streamed.insert(streamed.end(), ids,
                                                      ids + count);
                                      return Status::ok();
                                    })
                  .isOk());
  EXPECT_EQ(streamed, whole);
  EXPECT_GT(blocks, 1u); // it did stream
}

TEST(TokenizerLoad, TextThatIsNotUtf8) {
  std::unique_ptr<Tokenizer> tokenizer;
  ASSERT_TRUE(load(smallByteLevel(), tokenizer).isOk());
  std::vector<uint32_t> ids;
  Status status = tokenizer->encode("ab\xff", ids);
  EXPECT_EQ(status.message(),
            "the text is not UTF-8: byte 2 (0xff) does not start a valid "
            "sequence; convert the text to UTF-8 first");
}

TEST(TokenizerLoad, MissingFile) {
  std::unique_ptr<Tokenizer> tokenizer;
  Status status = Tokenizer::load("/nonexistent/tokenizer.json", tokenizer);
  EXPECT_EQ(status.code(), StatusCode::NotFound);
  EXPECT_NE(status.message().find("/nonexistent/tokenizer.json"),
            std::string::npos);
}

TEST(TokenizerRefusals, Models) {
  for (const char *type : {"Unigram", "WordPiece", "WordLevel"})
    EXPECT_EQ(refusal([&](Json &c) { c["model"]["type"] = type; }),
              std::string("t.json: model.type: model \"") + type +
                  "\" is not supported; llmc loads BPE models: byte-level "
                  "BPE (GPT-2, LLaMA 3, Qwen 2) and BPE with byte fallback "
                  "(LLaMA 2, Mistral)");
}

TEST(TokenizerRefusals, BpeOptions) {
  EXPECT_EQ(refusal([](Json &c) { c["model"]["dropout"] = 0.1; }),
            "t.json: model.dropout: BPE dropout (0.1) makes encoding "
            "random; llmc encodes deterministically, set \"dropout\" to "
            "null");
  EXPECT_EQ(refusal([](Json &c) {
              c["model"]["continuing_subword_prefix"] = "##";
            }),
            "t.json: model.continuing_subword_prefix: \"##\": llmc does not "
            "implement continuing_subword_prefix (it loads BPE models "
            "without affixes: GPT-2, LLaMA, Qwen, Mistral); use null");
  EXPECT_EQ(refusal([](Json &c) { c["model"]["end_of_word_suffix"] = "</w>"; }),
            "t.json: model.end_of_word_suffix: \"</w>\": llmc does not "
            "implement end_of_word_suffix (it loads BPE models without "
            "affixes: GPT-2, LLaMA, Qwen, Mistral); use null");
  EXPECT_EQ(refusal([](Json &c) { c["model"]["cache_capacity"] = 10; }),
            "t.json: model.cache_capacity: unknown option (llmc reads type, "
            "dropout, unk_token, continuing_subword_prefix, "
            "end_of_word_suffix, fuse_unk, byte_fallback, ignore_merges, "
            "vocab, merges here); remove it if the tokenizers package "
            "ignores it too");
}

TEST(TokenizerRefusals, Components) {
  EXPECT_EQ(refusal([](Json &c) { c["normalizer"] = {{"type", "Lowercase"}}; }),
            "t.json: normalizer.type: normalizer \"Lowercase\" is not "
            "supported; llmc implements the normalizers Sequence, Prepend, "
            "Replace, NFC, NFD, NFKC and NFKD");
  EXPECT_EQ(refusal([](Json &c) {
              c["normalizer"] = Json::parse(
                  R"({"type": "Sequence", "normalizers": [{"type": "NFC"},
                      {"type": "BertNormalizer"}]})");
            }),
            "t.json: normalizer.normalizers[1].type: normalizer "
            "\"BertNormalizer\" is not supported; llmc implements the "
            "normalizers Sequence, Prepend, Replace, NFC, NFD, NFKC and "
            "NFKD");
  EXPECT_EQ(refusal([](Json &c) {
              c["pre_tokenizer"] = {{"type", "Whitespace"}};
            }),
            "t.json: pre_tokenizer.type: pre-tokenizer \"Whitespace\" is not "
            "supported; llmc implements the pre-tokenizers Sequence, "
            "ByteLevel, Split and Metaspace");
  EXPECT_EQ(refusal([](Json &c) {
              c["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}};
            }),
            "t.json: decoder.type: decoder \"WordPiece\" is not supported; "
            "llmc implements the decoders Sequence, ByteLevel, ByteFallback, "
            "Fuse, Strip, Replace and Metaspace");
  EXPECT_EQ(refusal([](Json &c) {
              c["post_processor"] = {{"type", "BertProcessing"}};
            }),
            "t.json: post_processor.type: post-processor \"BertProcessing\" "
            "is not supported; llmc implements the post-processors "
            "Sequence, ByteLevel and TemplateProcessing");
  EXPECT_EQ(refusal([](Json &c) { c["pre_tokenizer"]["prefix"] = true; }),
            "t.json: pre_tokenizer.prefix: unknown option (llmc reads type, "
            "add_prefix_space, trim_offsets, use_regex here); remove it if "
            "the tokenizers package ignores it too");
  EXPECT_EQ(refusal([](Json &c) {
              c["decoder"] = Json::parse(
                  R"({"type": "Replace", "pattern": {"Regex": "x+"},
                      "content": " "})");
            }),
            "t.json: decoder.pattern: a Replace decoder with a Regex pattern "
            "is not supported; llmc replaces {\"String\": text}");
}

TEST(TokenizerRefusals, TruncationPaddingAndRegexFlags) {
  EXPECT_EQ(refusal([](Json &c) { c["truncation"] = {{"max_length", 512}}; }),
            "t.json: truncation: llmc encodes whole texts and never "
            "truncates them; set \"truncation\" to null");
  EXPECT_EQ(refusal([](Json &c) { c["padding"] = {{"length", 8}}; }),
            "t.json: padding: llmc never pads encodings; set \"padding\" to "
            "null");
  EXPECT_EQ(refusal([](Json &c) {
              c["pre_tokenizer"] = Json::parse(
                  R"j({"type": "Split", "pattern": {"Regex": "a(?s:.)"},
                      "behavior": "Isolated", "invert": false})j");
            }),
            "t.json: pre_tokenizer.pattern.Regex: the flag group at offset 1 "
            "sets 's', which Oniguruma (the tokenizers package's engine) and "
            "PCRE2 (llmc's) read differently");
  EXPECT_EQ(refusal([](Json &c) { c["chat_template"] = "{{x}}"; }),
            "t.json: chat_template: unknown option (llmc reads version, "
            "truncation, padding, added_tokens, normalizer, pre_tokenizer, "
            "model, post_processor, decoder here); remove it if the "
            "tokenizers package ignores it too");
}

TEST(TokenizerMalformed, Json) {
  std::unique_ptr<Tokenizer> tokenizer;
  Status status = Tokenizer::loadFromJson("{\"model\": [1, 2,", "t.json",
                                          tokenizer);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message().rfind("t.json: not valid JSON: parse error at "
                                   "line 1, column 17: ",
                                   0),
            0u)
      << status.message();
  status = Tokenizer::loadFromJson("[1]", "t.json", tokenizer);
  EXPECT_EQ(status.message(),
            "t.json: expected an object, got an array of 1 value");
  EXPECT_EQ(malformed([](Json &c) { c.erase("model"); }),
            "t.json: missing \"model\"");
  EXPECT_EQ(malformed([](Json &c) { c["model"]["type"] = 5; }),
            "t.json: model.type: expected a string, got 5");
}

TEST(TokenizerMalformed, Merges) {
  EXPECT_EQ(malformed([](Json &c) { c["model"]["merges"][1] = 42; }),
            "t.json: model.merges[1]: expected \"left right\" or [\"left\", "
            "\"right\"], got 42");
  EXPECT_EQ(malformed([](Json &c) { c["model"]["merges"][0] = "a b c"; }),
            "t.json: model.merges[0]: expected \"left right\" (two tokens "
            "and one space), got \"a b c\"");
  EXPECT_EQ(malformed([](Json &c) { c["model"]["merges"][0] = {"a", "x"}; }),
            "t.json: model.merges[0]: \"x\" is not in model.vocab (every "
            "merge's parts and result must be tokens)");
  EXPECT_EQ(malformed([](Json &c) { c["model"]["merges"][0] = "b c"; }),
            "t.json: model.merges[0]: \"bc\" is not in model.vocab (every "
            "merge's parts and result must be tokens)");
  EXPECT_EQ(malformed([](Json &c) { c["model"]["merges"] = "a b"; }),
            "t.json: model.merges: expected a list of \"left right\" or "
            "[\"left\", \"right\"], got \"a b\"");
  EXPECT_EQ(malformed([](Json &c) { c["model"].erase("merges"); }),
            "t.json: model: missing \"merges\" (a list of \"left right\" or "
            "[\"left\", \"right\"])");
}

TEST(TokenizerMalformed, Vocab) {
  EXPECT_EQ(malformed([](Json &c) { c["model"]["vocab"]["a"] = -1; }),
            "t.json: model.vocab[\"a\"]: expected an id (an integer from 0 "
            "to 4294967295), got -1");
  EXPECT_EQ(malformed([](Json &c) { c["model"]["vocab"]["Ġ"] = "3"; }),
            "t.json: model.vocab[\"Ġ\"]: expected an id (an integer from 0 "
            "to 4294967295), got \"3\"");
  EXPECT_EQ(malformed([](Json &c) { c["model"]["vocab"] = Json::array(); }),
            "t.json: model.vocab: expected an object of token -> id, got an "
            "empty array");
  EXPECT_EQ(malformed([](Json &c) { c["model"]["fuse_unk"] = "yes"; }),
            "t.json: model.fuse_unk: expected true or false, got \"yes\"");
}

TEST(TokenizerMalformed, AddedTokens) {
  EXPECT_EQ(malformed([](Json &c) { c["added_tokens"][0]["id"] = 9; }),
            "t.json: added_tokens[0].id: 9 is not the id of "
            "\"<|endoftext|>\": the tokenizers package gives it 6 (the next "
            "id after model.vocab and the tokens before it) and ignores the "
            "file's; fix the id");
  EXPECT_EQ(malformed([](Json &c) { c["added_tokens"][0].erase("lstrip"); }),
            "t.json: added_tokens[0]: missing \"lstrip\" (true or false)");
  EXPECT_EQ(malformed([](Json &c) {
              c["added_tokens"].push_back(c["added_tokens"][0]);
            }),
            "t.json: added_tokens[1]: \"<|endoftext|>\" is listed twice "
            "(also added_tokens[0]); keep one entry");
  EXPECT_EQ(malformed([](Json &c) {
              c["added_tokens"] = Json::array({Json::array({1, 2})});
            }),
            "t.json: added_tokens[0]: expected an object, got an array of 2 "
            "values");
}

TEST(TokenizerMalformed, Components) {
  auto split = [](const char *pattern, const char *behavior) {
    return [=](Json &c) {
      c["pre_tokenizer"] = Json::parse(
          std::string(R"({"type": "Split", "pattern": )") + pattern +
          R"(, "behavior": ")" + behavior + R"(", "invert": false})");
    };
  };
  EXPECT_EQ(malformed(split(R"({"Regex": "(a"})", "Isolated")),
            "t.json: pre_tokenizer.pattern.Regex: the regex does not "
            "compile: missing closing parenthesis at offset 2");
  EXPECT_EQ(malformed(split(R"({"String": 1})", "Isolated")),
            "t.json: pre_tokenizer.pattern.String: expected a string, got 1");
  EXPECT_EQ(malformed(split(R"({"Text": "a"})", "Isolated")),
            "t.json: pre_tokenizer.pattern: expected {\"String\": text} or "
            "{\"Regex\": pattern}, got an object");
  EXPECT_EQ(malformed(split(R"({"String": " "})", "Merged")),
            "t.json: pre_tokenizer.behavior: expected Removed, Isolated, "
            "MergedWithPrevious, MergedWithNext or Contiguous, got "
            "\"Merged\"");
  EXPECT_EQ(malformed([](Json &c) {
              c["pre_tokenizer"] = Json::parse(
                  R"({"type": "Metaspace", "replacement": "__",
                      "prepend_scheme": "always", "split": true})");
            }),
            "t.json: pre_tokenizer.replacement: expected exactly one "
            "character, got \"__\"");
  EXPECT_EQ(malformed([](Json &c) {
              c["pre_tokenizer"] = Json::parse(
                  R"({"type": "Sequence", "pretokenizers": [{"type":
                      "Metaspace", "replacement": "▁", "prepend_scheme":
                      "sometimes", "split": true}]})");
            }),
            "t.json: pre_tokenizer.pretokenizers[0].prepend_scheme: expected "
            "\"always\", \"first\" or \"never\", got \"sometimes\"");
  EXPECT_EQ(malformed([](Json &c) {
              c["post_processor"] = Json::parse(
                  R"({"type": "TemplateProcessing", "single": [{"SpecialToken":
                      {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A",
                      "type_id": 0}}], "pair": [], "special_tokens": {}})");
            }),
            "t.json: post_processor.single[0].SpecialToken: \"<s>\" is not "
            "in post_processor.special_tokens");
  EXPECT_EQ(malformed([](Json &c) {
              c["decoder"] = Json::parse(
                  R"({"type": "Strip", "content": " ", "start": -1,
                      "stop": 0})");
            }),
            "t.json: decoder.start: expected a non-negative integer, got -1");
}

TEST(TokenizerUtf8, LossyAsRust) {
  using text::fromUtf8Lossy;
  const std::string kReplacement = "\xef\xbf\xbd";
  // Rust's String::from_utf8_lossy on the same bytes.
  EXPECT_EQ(fromUtf8Lossy("ab\xe2\x82\xac"), "ab\xe2\x82\xac");
  EXPECT_EQ(fromUtf8Lossy("\xe2\x82"), kReplacement);          // truncated
  EXPECT_EQ(fromUtf8Lossy("\xf0\x9f" "a"), kReplacement + "a"); // one subpart
  EXPECT_EQ(fromUtf8Lossy("\xed\xa0\x80"),                      // surrogate
            kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(fromUtf8Lossy("\xc0\xaf"), kReplacement + kReplacement);
  EXPECT_EQ(fromUtf8Lossy("\xf4\x90\x80\x80"), // past U+10FFFF
            kReplacement + kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(text::firstInvalidUtf8("abcdefghij\xe2\x82\xac\xff"), 13u);
  EXPECT_EQ(text::firstInvalidUtf8("abc"), std::string_view::npos);
}

TEST(TokenShardFormat, HeaderRoundTripAndErrors) {
  uint8_t header[shard::kHeaderBytes];
  shard::encodeHeader(shard::TokenType::U32, 123456, header);
  // Little-endian int32s: 20240801 = 0x0134D9A1.
  EXPECT_EQ(header[0], 0xa1);
  EXPECT_EQ(header[3], 0x01);
  EXPECT_EQ(header[8], 123456 & 0xff);
  EXPECT_EQ(header[4], 7);
  shard::TokenType type;
  int64_t tokens = 0;
  std::string why;
  ASSERT_TRUE(shard::decodeHeader(header, type, tokens, why));
  EXPECT_EQ(type, shard::TokenType::U32);
  EXPECT_EQ(tokens, 123456);
  header[4] = 2; // the version issue #22 named: still read
  EXPECT_TRUE(shard::decodeHeader(header, type, tokens, why));
  header[4] = 3;
  EXPECT_FALSE(shard::decodeHeader(header, type, tokens, why));
  EXPECT_EQ(why, "version is 3, expected 7 (or 2) for magic 20240801");
  shard::encodeHeader(shard::TokenType::U16, 5, header);
  header[4] = 2;
  EXPECT_FALSE(shard::decodeHeader(header, type, tokens, why));
  EXPECT_EQ(why, "version is 2, expected 1 for magic 20240520");
  shard::encodeHeader(shard::TokenType::U32, 5, header);
  header[0] = 0;
  EXPECT_FALSE(shard::decodeHeader(header, type, tokens, why));
  EXPECT_EQ(why, "magic number is 20240640, expected 20240520 (uint16 "
                 "tokens) or 20240801 (uint32 tokens)");
  EXPECT_EQ(shard::tokenTypeForVocab(65536), shard::TokenType::U16);
  EXPECT_EQ(shard::tokenTypeForVocab(65537), shard::TokenType::U32);
}

} // namespace
