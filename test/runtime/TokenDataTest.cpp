// Tests of runtime/data/TokenData: batches from llm.c/nanoGPT token shards
// and from plain text, exact resume from a saved position, and every error
// with its exact message.
#include "runtime/data/TokenData.h"

#include "IoTestUtil.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>

namespace {

using namespace llmc::rt;
using llmc::test::TempDir;
using llmc::test::writeBytes;

constexpr int64_t kGpt2Vocab = 50257;

/// Fresh random tokens in [1, vocab), seeded so a failure reproduces.
std::vector<uint16_t> randomTokens(size_t count, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> token(1, static_cast<int>(vocab) - 1);
  std::vector<uint16_t> tokens(count);
  for (uint16_t &t : tokens)
    t = static_cast<uint16_t>(token(rng));
  return tokens;
}

/// A shard as llm.c writes it: 256 little-endian int32 (magic, version,
/// count, zeros), then the uint16 tokens. The header fields can be forced.
std::vector<uint8_t> shardBytes(const std::vector<uint16_t> &tokens,
                                int32_t magic = kTokenShardMagic,
                                int32_t version = kTokenShardVersion,
                                std::optional<int32_t> count = {}) {
  std::vector<uint8_t> bytes(kTokenShardHeaderBytes, 0);
  auto put = [&](size_t index, int32_t value) {
    for (int i = 0; i < 4; ++i)
      bytes[4 * index + i] = static_cast<uint8_t>(uint32_t(value) >> (8 * i));
  };
  put(0, magic);
  put(1, version);
  put(2, count ? *count : static_cast<int32_t>(tokens.size()));
  for (uint16_t t : tokens) {
    bytes.push_back(static_cast<uint8_t>(t & 0xff));
    bytes.push_back(static_cast<uint8_t>(t >> 8));
  }
  return bytes;
}

/// Checks `batch` against the window of `data` that starts at `start`.
template <typename Data>
void expectWindow(const TokenBatch &batch, const Data &data, size_t start,
                  int64_t batchSize, int64_t seqLen) {
  ASSERT_EQ(batch.batchSize, batchSize);
  ASSERT_EQ(batch.seqLen, seqLen);
  size_t count = static_cast<size_t>(batchSize * seqLen);
  ASSERT_EQ(batch.tokens.size(), count);
  ASSERT_EQ(batch.targets.size(), count);
  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(batch.tokens[i], int32_t(data[start + i])) << "token " << i;
    EXPECT_EQ(batch.targets[i], int32_t(data[start + i + 1])) << "target " << i;
  }
}

class TokenDataTest : public ::testing::Test {
protected:
  std::string writeShard(const std::vector<uint8_t> &bytes,
                         const std::string &name = "train.bin") {
    std::string path = dir.file(name);
    writeBytes(path, bytes);
    return path;
  }

  // Opens a loader and expects it to fail with exactly `message`.
  void expectOpenError(const TokenLoaderOptions &options, StatusCode code,
                       const std::string &message) {
    TokenLoader loader;
    Status status = TokenLoader::open(options, loader);
    ASSERT_FALSE(status.isOk()) << message;
    EXPECT_EQ(status.code(), code) << status.toString();
    EXPECT_EQ(status.message(), message);
  }

  TempDir dir;
};

//===----------------------------------------------------------------------===//
// Batches.
//===----------------------------------------------------------------------===//

TEST_F(TokenDataTest, ShardBatchesAreConsecutiveWindowsThatWrap) {
  std::vector<uint16_t> tokens = randomTokens(100, kGpt2Vocab, /*seed=*/11);
  std::string path = writeShard(shardBytes(tokens));
  TokenLoader loader;
  Status status =
      TokenLoader::open({path, TokenFormat::Shard, 3, 5, kGpt2Vocab}, loader);
  ASSERT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(loader.data().size(), 100u);

  // B*T = 15: windows of 16 start at 0, 15, ..., 75; the one at 90 would
  // need token 105, so the loader starts again at 0 (6 batches an epoch).
  TokenBatch batch;
  for (int step = 0; step < 14; ++step) {
    size_t start = 15 * (step % 6);
    ASSERT_EQ(loader.position(), start) << "step " << step;
    ASSERT_TRUE(loader.next(batch).isOk());
    expectWindow(batch, tokens, start, 3, 5);
  }
}

TEST_F(TokenDataTest, AWindowThatEndsOnTheLastTokenIsUsed) {
  // 2*4+1 = 9 tokens per window, advancing by 8: 25 tokens hold exactly 3.
  std::vector<uint16_t> tokens = randomTokens(25, kGpt2Vocab, /*seed=*/12);
  std::string path = writeShard(shardBytes(tokens));
  TokenLoader loader;
  ASSERT_TRUE(
      TokenLoader::open({path, TokenFormat::Shard, 2, 4, kGpt2Vocab}, loader)
          .isOk());
  TokenBatch batch;
  for (size_t start : {0, 8, 16, 0}) {
    EXPECT_EQ(loader.position(), start);
    ASSERT_TRUE(loader.next(batch).isOk());
    expectWindow(batch, tokens, start, 2, 4);
  }
}

TEST_F(TokenDataTest, TextGivesOneTokenPerByte) {
  std::mt19937 rng(13);
  std::string text(301, '\0');
  for (char &c : text)
    c = static_cast<char>(1 + rng() % 255); // every byte value but 0
  std::string path = dir.file("input.txt");
  writeBytes(path, text.data(), text.size());

  TokenLoader loader;
  Status status =
      TokenLoader::open({path, TokenFormat::Text, 4, 8, 256}, loader);
  ASSERT_TRUE(status.isOk()) << status.toString();
  ASSERT_EQ(loader.data().size(), text.size());
  EXPECT_EQ(loader.data().byteOffset(17), 17u);
  std::vector<uint8_t> bytes(text.begin(), text.end());
  TokenBatch batch;
  for (int step = 0; step < 20; ++step) { // 9 batches an epoch
    size_t start = 32 * (step % 9);
    ASSERT_EQ(loader.position(), start);
    ASSERT_TRUE(loader.next(batch).isOk());
    expectWindow(batch, bytes, start, 4, 8);
  }
}

TEST_F(TokenDataTest, ShardTokensAreLittleEndianAfterTheHeader) {
  std::vector<uint16_t> tokens = {0x1234, 0xbeef, 0x00ff, 0xff00, 0x0101};
  std::string path = writeShard(shardBytes(tokens));
  TokenData data;
  ASSERT_TRUE(readTokenData(path, TokenFormat::Shard, 65536, data).isOk());
  ASSERT_EQ(data.size(), tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i)
    EXPECT_EQ(data[i], tokens[i]) << i;
  EXPECT_EQ(data.byteOffset(3), 1024u + 6u);
  EXPECT_EQ(data.path(), path);
  EXPECT_EQ(data.format(), TokenFormat::Shard);
}

TEST_F(TokenDataTest, ASavedPositionResumesExactly) {
  std::vector<uint16_t> tokens = randomTokens(1000, kGpt2Vocab, /*seed=*/14);
  std::string path = writeShard(shardBytes(tokens));
  TokenLoaderOptions options{path, TokenFormat::Shard, 4, 16, kGpt2Vocab};

  // Run A saves its position after 13 batches and goes on; run B starts
  // from the saved position. An epoch is 15 batches of 64 tokens, so the 30
  // batches compared cross two wraps.
  TokenLoader first;
  ASSERT_TRUE(TokenLoader::open(options, first).isOk());
  TokenBatch batch;
  for (int step = 0; step < 13; ++step)
    ASSERT_TRUE(first.next(batch).isOk());
  uint64_t saved = first.position();

  TokenLoader resumed;
  ASSERT_TRUE(TokenLoader::open(options, resumed).isOk());
  Status status = resumed.setPosition(saved);
  ASSERT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(resumed.position(), saved);
  TokenBatch expected;
  for (int step = 0; step < 30; ++step) { // across the wrap
    ASSERT_TRUE(first.next(expected).isOk());
    ASSERT_TRUE(resumed.next(batch).isOk());
    EXPECT_EQ(batch.tokens, expected.tokens) << "step " << step;
    EXPECT_EQ(batch.targets, expected.targets) << "step " << step;
    EXPECT_EQ(resumed.position(), first.position());
  }
}

TEST_F(TokenDataTest, SetPositionRejectsAPositionWithoutAFullBatch) {
  std::vector<uint16_t> tokens = randomTokens(100, kGpt2Vocab, /*seed=*/15);
  std::string path = writeShard(shardBytes(tokens));
  TokenLoader loader;
  ASSERT_TRUE(
      TokenLoader::open({path, TokenFormat::Shard, 3, 5, kGpt2Vocab}, loader)
          .isOk());
  ASSERT_TRUE(loader.setPosition(84).isOk()); // 84 + 16 = 100: fits
  for (uint64_t position : {85ull, 100ull, 1000000ull}) {
    Status status = loader.setPosition(position);
    ASSERT_FALSE(status.isOk());
    EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
    EXPECT_EQ(status.message(),
              path + ": cannot continue from token " +
                  std::to_string(position) +
                  ": the file holds 100 tokens and a batch of B=3 x T=5 "
                  "needs 16 from there; was the position saved for other "
                  "data or another batch shape?");
    EXPECT_EQ(loader.position(), 84u) << "a rejected position changes nothing";
  }
}

//===----------------------------------------------------------------------===//
// Errors.
//===----------------------------------------------------------------------===//

TEST_F(TokenDataTest, MissingFile) {
  std::string path = dir.file("absent.bin");
  expectOpenError({path, TokenFormat::Shard, 1, 4, kGpt2Vocab},
                  StatusCode::NotFound,
                  path + ": cannot open: No such file or directory; check the "
                         "path");
}

TEST_F(TokenDataTest, TruncatedHeader) {
  std::vector<uint8_t> bytes = shardBytes(randomTokens(10, kGpt2Vocab, 16));
  bytes.resize(1000);
  std::string path = writeShard(bytes);
  expectOpenError({path, TokenFormat::Shard, 1, 4, kGpt2Vocab},
                  StatusCode::DataLoss,
                  path + ": file is 1000 bytes, shorter than the 1024-byte "
                         "header of a token shard (256 int32); the file is "
                         "truncated");
}

TEST_F(TokenDataTest, WrongMagic) {
  std::string path =
      writeShard(shardBytes(randomTokens(10, kGpt2Vocab, 17), 20240801));
  expectOpenError({path, TokenFormat::Shard, 1, 4, kGpt2Vocab},
                  StatusCode::InvalidArgument,
                  path + ": magic number is 20240801, expected 20240520 (an "
                         "llm.c/nanoGPT token shard); for a plain text file "
                         "use the text format");
}

TEST_F(TokenDataTest, WrongVersion) {
  std::string path = writeShard(
      shardBytes(randomTokens(10, kGpt2Vocab, 18), kTokenShardMagic, 2));
  expectOpenError({path, TokenFormat::Shard, 1, 4, kGpt2Vocab},
                  StatusCode::InvalidArgument,
                  path + ": shard version is 2, expected 1 (uint16 tokens), "
                         "the only version this runtime reads");
}

TEST_F(TokenDataTest, HeaderCountsMoreTokensThanTheFileHolds) {
  std::string path =
      writeShard(shardBytes(randomTokens(10, kGpt2Vocab, 19), kTokenShardMagic,
                            kTokenShardVersion, 12));
  expectOpenError({path, TokenFormat::Shard, 1, 4, kGpt2Vocab},
                  StatusCode::DataLoss,
                  path + ": header says 12 tokens (24 bytes after the "
                         "1024-byte header) but the file has 20 bytes after "
                         "it; the file is truncated");
}

TEST_F(TokenDataTest, HeaderCountsFewerTokensThanTheFileHolds) {
  std::string path =
      writeShard(shardBytes(randomTokens(10, kGpt2Vocab, 20), kTokenShardMagic,
                            kTokenShardVersion, 9));
  expectOpenError({path, TokenFormat::Shard, 1, 4, kGpt2Vocab},
                  StatusCode::DataLoss,
                  path + ": header says 9 tokens (18 bytes after the "
                         "1024-byte header) but the file has 20 bytes after "
                         "it; the file is corrupt or not a version-1 shard");
}

TEST_F(TokenDataTest, NegativeTokenCount) {
  std::string path =
      writeShard(shardBytes(randomTokens(10, kGpt2Vocab, 21), kTokenShardMagic,
                            kTokenShardVersion, -3));
  expectOpenError({path, TokenFormat::Shard, 1, 4, kGpt2Vocab},
                  StatusCode::DataLoss,
                  path + ": header says -3 tokens; the file is corrupt");
}

TEST_F(TokenDataTest, TokenBeyondTheVocabulary) {
  std::vector<uint16_t> tokens = randomTokens(50, 1000, /*seed=*/22);
  tokens[37] = 1000;
  std::string path = writeShard(shardBytes(tokens));
  expectOpenError({path, TokenFormat::Shard, 2, 8, 1000},
                  StatusCode::InvalidArgument,
                  path + ": token 37 (byte offset 1098) is 1000, not below "
                         "the vocabulary size 1000; the data was tokenized "
                         "for a larger vocabulary than the model's");
}

TEST_F(TokenDataTest, ByteBeyondTheVocabulary) {
  std::string text = "hello, world; hello, llmc";
  text[9] = '\xc3';
  std::string path = dir.file("input.txt");
  writeBytes(path, text.data(), text.size());
  expectOpenError({path, TokenFormat::Text, 2, 4, 128},
                  StatusCode::InvalidArgument,
                  path + ": token 9 (byte offset 9) is 195, not below the "
                         "vocabulary size 128; a text file gives one token "
                         "per byte, so the model needs a vocabulary of 256");
}

TEST_F(TokenDataTest, ShardShorterThanOneBatch) {
  std::string path = writeShard(shardBytes(randomTokens(64, kGpt2Vocab, 23)));
  expectOpenError({path, TokenFormat::Shard, 4, 16, kGpt2Vocab},
                  StatusCode::InvalidArgument,
                  path + " holds 64 tokens, but one batch of B=4 x T=16 needs "
                         "65 (B*T+1); use a smaller batch or sequence length, "
                         "or more data");
}

TEST_F(TokenDataTest, EmptyShard) {
  std::string path = writeShard(shardBytes({}));
  expectOpenError({path, TokenFormat::Shard, 1, 1, kGpt2Vocab},
                  StatusCode::InvalidArgument,
                  path + " holds 0 tokens, but one batch of B=1 x T=1 needs 2 "
                         "(B*T+1); use a smaller batch or sequence length, or "
                         "more data");
}

TEST_F(TokenDataTest, TextShorterThanOneBatch) {
  std::string path = dir.file("input.txt");
  writeBytes(path, "short text", 10);
  expectOpenError({path, TokenFormat::Text, 2, 8, 256},
                  StatusCode::InvalidArgument,
                  path + " holds 10 tokens, but one batch of B=2 x T=8 needs "
                         "17 (B*T+1); use a smaller batch or sequence length, "
                         "or more data");
}

TEST_F(TokenDataTest, EmptyTextFile) {
  std::string path = dir.file("empty.txt");
  writeBytes(path, "", 0);
  expectOpenError({path, TokenFormat::Text, 1, 4, 256},
                  StatusCode::InvalidArgument,
                  path + ": text file is empty; it gives one token per byte, "
                         "and one batch needs batch size x sequence length + "
                         "1 of them");
}

TEST_F(TokenDataTest, InvalidBatchShape) {
  std::string path = writeShard(shardBytes(randomTokens(10, kGpt2Vocab, 24)));
  const std::pair<int64_t, int64_t> shapes[] = {
      {0, 4}, {2, -1}, {65536, 65536}};
  for (auto [batchSize, seqLen] : shapes)
    expectOpenError({path, TokenFormat::Shard, batchSize, seqLen, kGpt2Vocab},
                    StatusCode::InvalidArgument,
                    path + ": batch B=" + std::to_string(batchSize) +
                        " x T=" + std::to_string(seqLen) +
                        " is not valid; both must be positive and B*T below "
                        "2^31");
}

TEST_F(TokenDataTest, InvalidVocabularySize) {
  std::string path = writeShard(shardBytes(randomTokens(10, kGpt2Vocab, 25)));
  expectOpenError({path, TokenFormat::Shard, 1, 4, 0},
                  StatusCode::InvalidArgument,
                  path + ": vocabulary size is 0, expected a positive number");
}

TEST_F(TokenDataTest, NextOnALoaderThatIsNotOpen) {
  TokenLoader loader;
  TokenBatch batch;
  Status status = loader.next(batch);
  EXPECT_EQ(status.code(), StatusCode::Internal);
  EXPECT_EQ(status.message(), "TokenLoader::next called on a loader that is "
                              "not open; call TokenLoader::open first");
}

} // namespace
