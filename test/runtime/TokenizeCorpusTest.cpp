// Tests of tokenizeCorpus (runtime/text/TokenizeCorpus.h) that check what
// fails before any work, with each message whole: a missing input, an
// output folder that cannot be made or already holds shards, --eot without
// an end-of-text token, a val fraction that selects no document, and text
// that is not UTF-8. The shards themselves are checked against the
// tokenizers package by test/text/tokenize_cli_test.py.
#include "runtime/text/TokenizeCorpus.h"

#include "IoTestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

using namespace llmc::rt;
using llmc::test::TempDir;

// One merge and no end-of-text token.
const char *kNoEndOfText = R"({"version": "1.0", "truncation": null,
  "padding": null, "added_tokens": [], "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
    "trim_offsets": true, "use_regex": true},
  "post_processor": null, "decoder": {"type": "ByteLevel",
    "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3},
    "merges": ["a b"]}})";

class TokenizeCorpusTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(
        Tokenizer::loadFromJson(kNoEndOfText, "t.json", tokenizer_).isOk());
    for (const char *name : {"a.txt", "b.txt", "c.txt"}) {
      std::string text = std::string("ab ab ") + name;
      llmc::test::writeBytes(dir_.file(name), text.data(), text.size());
      options_.inputs.push_back(dir_.file(name));
    }
    options_.outputDir = dir_.file("out");
  }
  Status run() {
    TokenizeSummary summary;
    return tokenizeCorpus(*tokenizer_, options_, nullptr, summary);
  }
  bool outputExists() const {
    return std::filesystem::exists(options_.outputDir);
  }

  TempDir dir_;
  std::unique_ptr<Tokenizer> tokenizer_;
  TokenizeOptions options_;
};

TEST_F(TokenizeCorpusTest, WritesShards) {
  TokenizeSummary summary;
  ASSERT_TRUE(tokenizeCorpus(*tokenizer_, options_, nullptr, summary).isOk());
  EXPECT_EQ(summary.trainShards,
            std::vector<std::string>{options_.outputDir + "/train_000000.bin"});
  EXPECT_EQ(summary.trainDocuments, 3u);
  EXPECT_TRUE(summary.valShards.empty());
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Large documents stream from this thread; the shards must be the same as
// when workers encode them whole (both with --lines and whole files).
TEST_F(TokenizeCorpusTest, StreamedDocumentsWriteTheSameShards) {
  std::string text;
  for (int i = 0; i < 30000; ++i)
    text += i % 5 ? "ab ab\n" : "abab b a\n";
  llmc::test::writeBytes(dir_.file("b.txt"), text.data(), text.size());
  for (bool lines : {false, true}) {
    std::vector<std::string> shards[2];
    for (size_t limit : {size_t{64} << 20, size_t{4}}) {
      options_.lines = lines;
      options_.shardTokens = 7000;
      options_.valFraction = lines ? 0.1 : 0.0;
      options_.streamDocumentBytes = limit;
      options_.outputDir = dir_.file("out-" + std::to_string(lines) + "-" +
                                     std::to_string(limit));
      TokenizeSummary summary;
      ASSERT_TRUE(
          tokenizeCorpus(*tokenizer_, options_, nullptr, summary).isOk());
      for (const auto *paths : {&summary.trainShards, &summary.valShards})
        for (const std::string &path : *paths)
          shards[limit == 4].push_back(readAll(path));
    }
    EXPECT_GT(shards[0].size(), 2u);
    EXPECT_EQ(shards[0], shards[1]) << "lines " << lines;
  }
}

TEST_F(TokenizeCorpusTest, MissingInputFailsBeforeWork) {
  options_.inputs.insert(options_.inputs.begin() + 1, dir_.file("none.txt"));
  Status status = run();
  EXPECT_EQ(status.code(), StatusCode::NotFound);
  EXPECT_EQ(status.message(),
            dir_.file("none.txt") +
                ": cannot open: No such file or directory; check the path");
  EXPECT_FALSE(outputExists());
}

TEST_F(TokenizeCorpusTest, OutputThatCannotBeMade) {
  options_.outputDir = dir_.file("a.txt") + "/out";
  EXPECT_EQ(run().message(),
            options_.outputDir +
                ": cannot create the output folder: Not a directory; give -o "
                "a folder that can be written");
}

TEST_F(TokenizeCorpusTest, OutputWithShardsOfAnEarlierRun) {
  ASSERT_TRUE(run().isOk());
  EXPECT_EQ(run().message(),
            options_.outputDir +
                " already holds shards (train_000000.bin); remove them or "
                "give -o another folder, so that old and new shards do not "
                "mix");
}

TEST_F(TokenizeCorpusTest, EndOfTextThatTheTokenizerLacks) {
  options_.eot = true;
  EXPECT_EQ(run().message(),
            "t.json declares no end-of-text token (none of <|endoftext|>, "
            "<|end_of_text|>, </s>, <eos>, <|eos|>); leave out --eot, or add "
            "the model's end-of-text token to its added_tokens");
  EXPECT_FALSE(outputExists());
}

TEST_F(TokenizeCorpusTest, OptionsOutOfRange) {
  options_.valFraction = 0.1;
  EXPECT_EQ(run().message(),
            "--val-fraction 0.100000 of 3 documents selects none; give more "
            "documents (--lines makes each line one), a larger fraction, or "
            "a single file (whose leading tokens then go to val)");
  options_.valFraction = 1.0;
  EXPECT_EQ(run().message(), "--val-fraction 1.000000 is outside [0, 1)");
  options_.valFraction = 0.0;
  options_.shardTokens = 0;
  EXPECT_EQ(run().message(),
            "--shard-tokens 0 is outside 1 .. 2147483647 (a shard header "
            "counts its tokens in an int32)");
  EXPECT_FALSE(outputExists());
}

TEST_F(TokenizeCorpusTest, TextThatIsNotUtf8) {
  std::string text = "ab\nab\nb\xc3(\n";
  llmc::test::writeBytes(dir_.file("b.txt"), text.data(), text.size());
  EXPECT_EQ(run().message(),
            dir_.file("b.txt") +
                ": byte 7 (line 3) is not UTF-8; convert the file to UTF-8 "
                "(iconv -f LATIN1 -t UTF-8, for example)");
}

} // namespace
