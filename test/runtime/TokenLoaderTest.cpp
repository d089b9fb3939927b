// Tests of runtime/data: token shards (llm.c v1 and v2, nanoGPT's headerless
// uint16, text), corpora of globbed shards, the consecutive and shuffled
// batch orders, exact resume across shard and epoch boundaries, per-rank
// rows, the read-ahead thread, a 10^10-token corpus of sparse files, and
// every refusal with its message.
#include "runtime/data/TokenLoader.h"

#include "IoTestUtil.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <unistd.h>

namespace {

using namespace llmc::rt;
using llmc::test::TempDir;
using llmc::test::writeBytes;

/// Fresh random tokens in [1, vocab), seeded so a failure reproduces.
std::vector<uint32_t> randomTokens(size_t count, uint32_t vocab,
                                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> token(1, vocab - 1);
  std::vector<uint32_t> tokens(count);
  for (uint32_t &t : tokens)
    t = token(rng);
  return tokens;
}

void putInt32(std::vector<uint8_t> &bytes, size_t index, int32_t value) {
  for (int i = 0; i < 4; ++i)
    bytes[4 * index + i] = static_cast<uint8_t>(uint32_t(value) >> (8 * i));
}

/// A shard as llm.c writes it: 256 little-endian int32 (magic, version,
/// count, zeros), then uint16 (v1) or uint32 (v2) tokens. The header fields
/// can be forced.
std::vector<uint8_t> shardBytes(const std::vector<uint32_t> &tokens,
                                bool wide = false,
                                std::optional<int32_t> magic = {},
                                std::optional<int32_t> version = {},
                                std::optional<int32_t> count = {}) {
  std::vector<uint8_t> bytes(shard::kHeaderBytes, 0);
  putInt32(bytes, 0, magic ? *magic : wide ? shard::kMagicU32 : shard::kMagicU16);
  putInt32(bytes, 1,
           version ? *version : wide ? shard::kVersionU32 : shard::kVersionU16);
  putInt32(bytes, 2, count ? *count : static_cast<int32_t>(tokens.size()));
  for (uint32_t t : tokens)
    for (int i = 0; i < (wide ? 4 : 2); ++i)
      bytes.push_back(static_cast<uint8_t>(t >> (8 * i)));
  return bytes;
}

class TokenLoaderTest : public ::testing::Test {
protected:
  std::string write(const std::string &name,
                    const std::vector<uint8_t> &bytes) {
    std::string path = dir.file(name);
    writeBytes(path, bytes);
    return path;
  }
  /// Writes shards train_000000.bin ... of the given sizes; returns the
  /// tokens of each.
  std::vector<std::vector<uint32_t>>
  writeShards(const std::vector<size_t> &sizes, uint32_t vocab = 50257,
              bool wide = false) {
    std::vector<std::vector<uint32_t>> all;
    for (size_t i = 0; i < sizes.size(); ++i) {
      all.push_back(randomTokens(sizes[i], vocab, 100 + i));
      char name[32];
      std::snprintf(name, sizeof(name), "train_%06zu.bin", i);
      write(name, shardBytes(all.back(), wide));
    }
    return all;
  }
  Status openCorpus(std::vector<std::string> patterns, TokenCorpus &corpus,
                    int64_t vocab = 50257,
                    TokenFormat format = TokenFormat::Auto) {
    CorpusOptions options;
    options.patterns = std::move(patterns);
    options.vocabSize = vocab;
    options.format = format;
    return TokenCorpus::open(options, corpus);
  }
  static std::unique_ptr<TokenLoader> loader(const TokenCorpus &corpus,
                                             int64_t B, int64_t T,
                                             bool shuffle, uint64_t seed = 7,
                                             int prefetch = 2,
                                             std::vector<int64_t> rows = {}) {
    TokenLoaderOptions options;
    options.batchSize = B;
    options.seqLen = T;
    options.shuffle = shuffle;
    options.seed = seed;
    options.prefetch = prefetch;
    options.rows = std::move(rows);
    std::unique_ptr<TokenLoader> result;
    Status status = TokenLoader::open(corpus, options, result);
    EXPECT_TRUE(status.isOk()) << status.toString();
    return result;
  }
  TempDir dir;
};

/// Expects row `row` of `batch` to be tokens[offset..offset+T] of `tokens`.
void expectRow(const TokenBatch &batch, int64_t row,
               const std::vector<uint32_t> &tokens, uint64_t offset) {
  const int64_t T = batch.seqLen;
  for (int64_t i = 0; i < T; ++i) {
    ASSERT_EQ(batch.tokens[row * T + i], int32_t(tokens[offset + i]))
        << "row " << row << " token " << i;
    ASSERT_EQ(batch.targets[row * T + i], int32_t(tokens[offset + i + 1]))
        << "row " << row << " target " << i;
  }
}

//===----------------------------------------------------------------------===//
// Shards and corpora.
//===----------------------------------------------------------------------===//

TEST_F(TokenLoaderTest, ConsecutiveOrderIsLlmcsAcrossShardsAndEpochs) {
  // B*T = 8: shard 0 holds (41-1)/8 = 5 batches, shard 1 (20-1)/8 = 2,
  // shard 2 is too short and skipped; then epoch 1 starts over.
  auto tokens = writeShards({41, 20, 8});
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_*.bin")}, corpus).isOk());
  ASSERT_EQ(corpus.numShards(), 3u);
  EXPECT_EQ(corpus.totalTokens(), 69u);
  auto l = loader(corpus, 2, 4, /*shuffle=*/false);
  EXPECT_EQ(l->order().batchesPerEpoch(), 7u);
  ASSERT_EQ(l->order().skippedShards(), std::vector<size_t>{2});
  std::vector<std::pair<size_t, uint64_t>> expected = {
      {0, 0}, {0, 8}, {0, 16}, {0, 24}, {0, 32}, {1, 0}, {1, 8}, {0, 0}};
  TokenBatch batch;
  for (size_t b = 0; b < expected.size(); ++b) {
    ASSERT_TRUE(l->next(batch).isOk());
    auto [shard, offset] = expected[b];
    expectRow(batch, 0, tokens[shard], offset);
    expectRow(batch, 1, tokens[shard], offset + 4);
  }
  EXPECT_EQ(l->position().epoch, 1u);
}

TEST_F(TokenLoaderTest, Version2ShardsHoldUint32Tokens) {
  auto tokens = writeShards({33}, /*vocab=*/128256, /*wide=*/true);
  ASSERT_GT(*std::max_element(tokens[0].begin(), tokens[0].end()), 65535u);
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_000000.bin")}, corpus, 128256).isOk());
  EXPECT_EQ(corpus.shard(0).tokenBytes(), 4u);
  auto l = loader(corpus, 2, 8, false);
  TokenBatch batch;
  ASSERT_TRUE(l->next(batch).isOk());
  expectRow(batch, 0, tokens[0], 0);
  expectRow(batch, 1, tokens[0], 8);
  // llm.c writes version 7; version 2 (an earlier number) reads too.
  std::string legacy = write("legacy.bin", shardBytes(tokens[0], true, {}, 2));
  TokenCorpus old;
  ASSERT_TRUE(openCorpus({legacy}, old, 128256).isOk());
  EXPECT_EQ(old.shard(0)[5], tokens[0][5]);
}

TEST_F(TokenLoaderTest, HeaderlessUint16AndText) {
  std::vector<uint32_t> tokens = randomTokens(40, 50257, 3);
  std::vector<uint8_t> bytes;
  for (uint32_t t : tokens) {
    bytes.push_back(static_cast<uint8_t>(t));
    bytes.push_back(static_cast<uint8_t>(t >> 8));
  }
  std::string path = write("train.bin", bytes);
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({path}, corpus, 50257, TokenFormat::U16).isOk());
  EXPECT_EQ(corpus.totalTokens(), 40u);
  auto l = loader(corpus, 1, 16, false);
  TokenBatch batch;
  ASSERT_TRUE(l->next(batch).isOk());
  expectRow(batch, 0, tokens, 0);

  std::string text = "hello, world\nhello again\n";
  std::string textPath = write("corpus.txt", {text.begin(), text.end()});
  TokenCorpus textCorpus;
  ASSERT_TRUE(openCorpus({textPath}, textCorpus, 256).isOk());
  EXPECT_EQ(textCorpus.shard(0).format(), TokenFormat::Text);
  auto tl = loader(textCorpus, 1, 5, false);
  ASSERT_TRUE(tl->next(batch).isOk());
  std::vector<uint32_t> textTokens(text.begin(), text.end());
  expectRow(batch, 0, textTokens, 0);
}

TEST_F(TokenLoaderTest, TextIsEncodedWithTheGivenEncoder) {
  std::string path = write("corpus.txt", {'a', 'b', 'c', 'd', 'e', 'f'});
  CorpusOptions options;
  options.patterns = {path};
  options.vocabSize = 1000;
  // A stand-in tokenizer: each byte becomes two ids.
  options.encode = [](std::string_view text, std::vector<uint32_t> &ids) {
    for (char c : text) {
      ids.push_back(static_cast<uint32_t>(c) + 500);
      ids.push_back(1);
    }
    return Status::ok();
  };
  TokenCorpus corpus;
  ASSERT_TRUE(TokenCorpus::open(options, corpus).isOk());
  ASSERT_EQ(corpus.totalTokens(), 12u);
  EXPECT_EQ(corpus.shard(0)[0], uint32_t('a') + 500);
  EXPECT_EQ(corpus.shard(0)[1], 1u);
}

TEST_F(TokenLoaderTest, GlobsAreInNameOrderAndListsInTheirOrder) {
  writeShards({20, 20, 20});
  std::vector<std::string> files;
  ASSERT_TRUE(expandPatterns({dir.file("train_00000[21].bin"),
                              dir.file("train_000000.bin")},
                             "[data] train", files)
                  .isOk());
  EXPECT_EQ(files, (std::vector<std::string>{dir.file("train_000001.bin"),
                                             dir.file("train_000002.bin"),
                                             dir.file("train_000000.bin")}));
  Status status = expandPatterns({dir.file("val_*.bin")}, "[data] val", files);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.message(),
            "[data] val: the pattern '" + dir.file("val_*.bin") +
                "' matches no file; check the directory and the name (shards "
                "from llmc tokenize are DIR/train_000000.bin, "
                "DIR/val_000000.bin)");
}

//===----------------------------------------------------------------------===//
// Shuffling.
//===----------------------------------------------------------------------===//

TEST(PermuteIndex, IsABijectionForManySizes) {
  for (uint64_t n : {1u, 2u, 3u, 5u, 16u, 17u, 100u, 1000u, 4097u}) {
    for (uint64_t key : {0ull, 1ull, 0xdeadbeefull}) {
      std::set<uint64_t> seen;
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t p = permuteIndex(i, n, key);
        ASSERT_LT(p, n);
        seen.insert(p);
      }
      EXPECT_EQ(seen.size(), n) << "n " << n << " key " << key;
    }
  }
  // Not the identity, and another key gives another order.
  int fixed = 0, same = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    fixed += permuteIndex(i, 1000, 5) == i;
    same += permuteIndex(i, 1000, 5) == permuteIndex(i, 1000, 6);
  }
  EXPECT_LT(fixed, 20);
  EXPECT_LT(same, 20);
}

/// The (shard, offset) of every row of `batches` batches.
std::vector<std::pair<size_t, uint64_t>> windowsOf(TokenLoader &l,
                                                   int batches) {
  std::vector<std::pair<size_t, uint64_t>> windows;
  for (int b = 0; b < batches; ++b) {
    DataPosition p = l.position();
    for (int64_t row = 0; row < l.order().batchSize(); ++row) {
      size_t shard;
      uint64_t offset;
      l.order().window(p, row, shard, offset);
      windows.push_back({shard, offset});
    }
    TokenBatch batch;
    EXPECT_TRUE(l.next(batch).isOk());
  }
  return windows;
}

TEST_F(TokenLoaderTest, ShuffledEpochsVisitEveryWindowOnceInASeededOrder) {
  // T = 4: windows per shard (n - 1) / 4 = 10, 7, 2: 19 in all; B = 3 gives
  // 6 batches an epoch (one window waits for the next epoch).
  auto tokens = writeShards({41, 30, 12});
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_*.bin")}, corpus).isOk());
  auto a = loader(corpus, 3, 4, true, /*seed=*/11);
  ASSERT_EQ(a->order().batchesPerEpoch(), 6u);
  auto epoch0 = windowsOf(*a, 6);
  std::set<std::pair<size_t, uint64_t>> distinct(epoch0.begin(), epoch0.end());
  EXPECT_EQ(distinct.size(), 18u);
  for (auto [shard, offset] : epoch0) {
    EXPECT_EQ(offset % 4, 0u);
    EXPECT_LE(offset + 5, tokens[shard].size());
  }
  auto epoch1 = windowsOf(*a, 6);
  EXPECT_NE(epoch0, epoch1); // each epoch has its own order
  // The same seed gives the same batches; another seed others; the rows
  // hold the windows' tokens.
  auto b = loader(corpus, 3, 4, true, 11);
  EXPECT_EQ(windowsOf(*b, 6), epoch0);
  auto c = loader(corpus, 3, 4, true, 12);
  EXPECT_NE(windowsOf(*c, 6), epoch0);
  auto d = loader(corpus, 3, 4, true, 11);
  TokenBatch batch;
  ASSERT_TRUE(d->next(batch).isOk());
  for (int64_t row = 0; row < 3; ++row)
    expectRow(batch, row, tokens[epoch0[row].first], epoch0[row].second);
}

//===----------------------------------------------------------------------===//
// Resume, rows, read-ahead.
//===----------------------------------------------------------------------===//

/// The batches 0..count-1 of a fresh loader, and the position before each.
void record(TokenLoader &l, int count, std::vector<TokenBatch> &batches,
            std::vector<DataPosition> &positions) {
  for (int i = 0; i < count; ++i) {
    positions.push_back(l.position());
    batches.emplace_back();
    ASSERT_TRUE(l.next(batches.back()).isOk());
  }
}

TEST_F(TokenLoaderTest, ASavedPositionResumesExactlyAcrossShardsAndEpochs) {
  writeShards({41, 20, 8, 33});
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_*.bin")}, corpus).isOk());
  for (bool shuffle : {false, true}) {
    SCOPED_TRACE(shuffle ? "shuffled" : "consecutive");
    auto run = loader(corpus, 2, 4, shuffle);
    const int total = 3 * static_cast<int>(run->order().batchesPerEpoch());
    std::vector<TokenBatch> batches;
    std::vector<DataPosition> positions;
    record(*run, total, batches, positions);
    std::set<uint64_t> epochs, shards;
    for (int start = 1; start < total; ++start) {
      auto resumed = loader(corpus, 2, 4, shuffle);
      ASSERT_TRUE(resumed->setPosition(positions[start]).isOk());
      epochs.insert(positions[start].epoch);
      shards.insert(positions[start].shard);
      TokenBatch batch;
      for (int i = start; i < std::min(total, start + 4); ++i) {
        ASSERT_TRUE(resumed->next(batch).isOk());
        ASSERT_EQ(batch.tokens, batches[i].tokens) << "batch " << i;
        ASSERT_EQ(batch.targets, batches[i].targets) << "batch " << i;
      }
    }
    EXPECT_EQ(epochs.size(), 3u); // resumed in every epoch
    if (!shuffle)
      EXPECT_EQ(shards.size(), 3u); // and in every shard that holds a batch
  }
}

TEST_F(TokenLoaderTest, SetPositionRefusesAPositionOfAnotherOrder) {
  writeShards({41});
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_*.bin")}, corpus).isOk());
  auto l = loader(corpus, 2, 4, false);
  DataPosition p;
  p.offset = 4; // not a multiple of B*T
  Status status = l->setPosition(p);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("a batch of B*T+1 = 9 tokens does not "
                                  "start there in a shard of 41 tokens"),
            std::string::npos)
      << status.message();
  auto s = loader(corpus, 2, 4, true, /*seed=*/3);
  DataPosition q = s->position();
  q.seed = 4;
  status = s->setPosition(q);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("it was shuffled with seed 4, this run's "
                                  "seed is 3"),
            std::string::npos)
      << status.message();
}

TEST_F(TokenLoaderTest, AProcessReadsOnlyItsRanksRows) {
  auto tokens = writeShards({200});
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_*.bin")}, corpus).isOk());
  for (bool shuffle : {false, true}) {
    // No read-ahead, so that tokensRead() counts these five batches only.
    auto all = loader(corpus, 4, 8, shuffle, 7, 0);
    auto half = loader(corpus, 4, 8, shuffle, 7, 0, {2, 3});
    for (int b = 0; b < 5; ++b) {
      TokenBatch full, mine;
      ASSERT_TRUE(all->next(full).isOk());
      ASSERT_TRUE(half->next(mine).isOk());
      for (size_t i = 0; i < mine.tokens.size(); ++i) {
        bool held = i >= 16; // rows 2 and 3 of [4, 8]
        EXPECT_EQ(mine.tokens[i], held ? full.tokens[i] : 0) << i;
        EXPECT_EQ(mine.targets[i], held ? full.targets[i] : 0) << i;
      }
    }
    EXPECT_EQ(half->tokensRead(), 5u * 2 * 9); // 2 rows of T + 1 a batch
    EXPECT_EQ(all->tokensRead(), 5u * 4 * 9);
  }
}

TEST_F(TokenLoaderTest, ReadAheadGivesTheSameBatchesAsReadingInPlace) {
  writeShards({300, 150});
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_*.bin")}, corpus).isOk());
  for (bool shuffle : {false, true}) {
    auto ahead = loader(corpus, 3, 8, shuffle, 7, /*prefetch=*/3);
    auto inPlace = loader(corpus, 3, 8, shuffle, 7, /*prefetch=*/0);
    TokenBatch a, b;
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(ahead->next(a).isOk());
      ASSERT_TRUE(inPlace->next(b).isOk());
      ASSERT_EQ(a.tokens, b.tokens) << i;
      ASSERT_EQ(ahead->position(), inPlace->position()) << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// Scale: 10^10 tokens in 100 sparse shards.
//===----------------------------------------------------------------------===//

/// Anonymous resident memory of this process, in bytes (page cache of
/// mapped files is not counted: the kernel reclaims it at will).
uint64_t anonymousResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("RssAnon:", 0) == 0)
      return std::stoull(line.substr(8)) * 1024;
  return 0;
}

TEST_F(TokenLoaderTest, TenBillionTokensOpenInUnderASecond) {
  // 100 shards of 10^8 uint16 tokens (20 GB as files; sparse, so a few
  // blocks on disk): the header is real, the tokens are holes (zeros).
  const int32_t perShard = 100000000;
  for (int i = 0; i < 100; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "train_%06d.bin", i);
    std::vector<uint8_t> header = shardBytes({}, false, {}, {}, perShard);
    std::string path = write(name, header);
    int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(shard::kHeaderBytes) +
                                  2 * static_cast<off_t>(perShard)),
              0);
    ::close(fd);
  }
  uint64_t before = anonymousResidentBytes();
  auto begin = std::chrono::steady_clock::now();
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_*.bin")}, corpus).isOk());
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - begin)
                       .count();
  EXPECT_EQ(corpus.totalTokens(), 10000000000ull);
  EXPECT_FALSE(corpus.scanned()); // checked batch by batch instead
  EXPECT_LT(seconds, 1.0);
  // GPT-2's shape: B = 16, T = 1024; a few shuffled batches from anywhere.
  auto l = loader(corpus, 16, 1024, true);
  EXPECT_EQ(l->order().batchesPerEpoch(),
            100u * ((perShard - 1) / 1024) / 16);
  TokenBatch batch;
  for (int i = 0; i < 8; ++i)
    ASSERT_TRUE(l->next(batch).isOk());
  // A batch is 2 x 16 x 1024 int32 = 128 KiB; the read-ahead holds a few.
  uint64_t grown = anonymousResidentBytes() - before;
  EXPECT_LT(grown, 16u << 20) << grown << " bytes";
}

//===----------------------------------------------------------------------===//
// Refusals.
//===----------------------------------------------------------------------===//

TEST_F(TokenLoaderTest, BadHeadersAreRefusedWithTheFix) {
  std::vector<uint32_t> tokens = randomTokens(20, 50257, 9);
  struct Case {
    std::vector<uint8_t> bytes;
    std::string message;
  } cases[] = {
      {shardBytes(tokens, false, 42),
       ": magic number at byte 0 is 42, expected 20240520 (llm.c shard, "
       "uint16 tokens) or 20240801 (uint32 tokens); for nanoGPT's headerless "
       "train.bin set [data] format = \"u16\", for plain text format = "
       "\"text\""},
      {shardBytes(tokens, false, {}, 2),
       ": shard version at byte 4 is 2, expected 1 for magic 20240520; the "
       "file was written by a tool whose format this runtime does not read"},
      {shardBytes(tokens, false, {}, {}, 30),
       ": header says 30 tokens (60 bytes after the 1024-byte header) but "
       "the file has 40 bytes after it; the file is truncated: write it "
       "again (llmc tokenize) or download it again"},
      {std::vector<uint8_t>(100, 0),
       ": file is 100 bytes, shorter than the 1024-byte header of an llm.c "
       "token shard (256 int32); the file is truncated, or it is nanoGPT's "
       "headerless uint16 file (set [data] format = \"u16\")"},
  };
  for (const Case &c : cases) {
    std::string path = write("bad.bin", c.bytes);
    TokenCorpus corpus;
    Status status = openCorpus({path}, corpus);
    ASSERT_FALSE(status.isOk());
    EXPECT_EQ(status.message(), path + c.message);
  }
  std::string odd = write("odd.bin", std::vector<uint8_t>(7, 1));
  TokenCorpus corpus;
  Status status = openCorpus({odd}, corpus, 50257, TokenFormat::U16);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.message(),
            odd + ": 7 bytes, an odd number, cannot be uint16 tokens; the "
                  "file is truncated, or it is not a headerless uint16 file "
                  "(an llm.c shard has format = \"tokens\")");
  std::string shard = write("shard.bin", shardBytes(tokens));
  status = openCorpus({shard}, corpus, 50257, TokenFormat::U16);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("starts with an llm.c shard header"),
            std::string::npos);
}

TEST_F(TokenLoaderTest, ATokenOutsideTheVocabularyIsFoundBeforeTheFirstStep) {
  std::vector<uint32_t> tokens = randomTokens(40, 1000, 4);
  tokens[17] = 5000;
  std::string path = write("train_000000.bin", shardBytes(tokens));
  TokenCorpus corpus;
  Status status = openCorpus({path}, corpus, 1000);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.message(),
            path + ": token 17 (byte offset 1,058) is 5000, not below the "
                   "vocabulary size 1000; the data was tokenized for a larger "
                   "vocabulary than the model's: set vocab_size to at least "
                   "the tokenizer's, or tokenize the data with the model's "
                   "tokenizer");
  std::string text = write("corpus.txt", {'a', 'b', 0xe9, 'c'});
  status = openCorpus({text}, corpus, 128);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.message(),
            text + ": token 2 (byte offset 2) is 233, not below the "
                   "vocabulary size 128; a text file without a tokenizer "
                   "gives one token per byte, so the model needs vocab_size "
                   ">= 256, or set [data] tokenizer");
}

TEST_F(TokenLoaderTest, TooLittleDataForOneBatch) {
  writeShards({8, 9});
  TokenCorpus corpus;
  ASSERT_TRUE(openCorpus({dir.file("train_*.bin")}, corpus).isOk());
  std::unique_ptr<TokenLoader> l;
  TokenLoaderOptions options;
  options.batchSize = 2;
  options.seqLen = 8;
  Status status = TokenLoader::open(corpus, options, l);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.message(),
            dir.file("train_*.bin") +
                ": 2 files, 17 tokens (uint16): too little data: needs a "
                "shard of B*T+1 = 17 tokens for one batch (B=2, T=8), and the "
                "largest holds fewer; use a smaller batch or sequence length, "
                "or more data (in fewer, larger shards)");
  options.shuffle = true;
  status = TokenLoader::open(corpus, options, l);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("windows of T+1 = 9 tokens, 1 in all, "
                                  "fewer than the 2 rows of one batch"),
            std::string::npos)
      << status.message();
}

TEST_F(TokenLoaderTest, MissingFileAndDirectory) {
  TokenCorpus corpus;
  Status status = openCorpus({dir.file("none.bin")}, corpus);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), StatusCode::NotFound);
  EXPECT_EQ(status.message(), dir.file("none.bin") +
                                  ": cannot open: No such file or directory; check the path");
  status = openCorpus({dir.path()}, corpus);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.message(), dir.path() + ": not a regular file (a directory)");
}

} // namespace
