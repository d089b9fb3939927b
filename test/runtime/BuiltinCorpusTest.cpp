// Tests of the built-in corpus (runtime/data/BuiltinCorpus.h): the same bytes
// on every call and every platform (a pinned FNV-1a hash), only printable
// ASCII and '\n', a size in the documented range, a small vocabulary of
// words, and the token loader reading it without a file.
#include "runtime/data/BuiltinCorpus.h"
#include "runtime/data/TokenData.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

namespace {

using namespace llmc::rt;

uint64_t fnv1a(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001b3ULL;
  return hash;
}

TEST(BuiltinCorpus, IsTheSameBytesEveryTime) {
  const std::string &corpus = builtinCorpus();
  EXPECT_EQ(&builtinCorpus(), &corpus);
  // Pinned: a change of the generator (or a platform that computes it
  // differently) changes these. Update them only on purpose.
  EXPECT_EQ(corpus.size(), 204966u);
  EXPECT_EQ(fnv1a(corpus), 0x0a4d715fe977a593ull) << std::hex << fnv1a(corpus);
  EXPECT_EQ(corpus.substr(0, 40), "Once there was a small sailor. The small");
}

TEST(BuiltinCorpus, IsPrintableAsciiInRange) {
  const std::string &corpus = builtinCorpus();
  EXPECT_GE(corpus.size(), 100u * 1024);
  EXPECT_LE(corpus.size(), 300u * 1024);
  for (size_t i = 0; i < corpus.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(corpus[i]);
    ASSERT_TRUE(c == '\n' || (c >= 32 && c <= 126))
        << "byte " << i << " is " << int(c);
  }
  EXPECT_EQ(corpus.substr(corpus.size() - 2), "\n\n");
}

TEST(BuiltinCorpus, HasASmallVocabulary) {
  // Few distinct words, each seen often: what makes it learnable by a tiny
  // model in a minute.
  std::istringstream words(builtinCorpus());
  std::set<std::string> distinct;
  size_t count = 0;
  for (std::string word; words >> word; ++count)
    distinct.insert(word);
  EXPECT_GT(count, 30000u);
  EXPECT_LT(distinct.size(), 400u);
}

TEST(BuiltinCorpus, TheLoaderReadsItWithoutAFile) {
  TokenLoaderOptions options;
  options.path = "/no/such/file";
  options.builtin = true;
  options.batchSize = 4;
  options.seqLen = 64;
  options.vocabSize = 128;
  TokenLoader loader;
  Status status = TokenLoader::open(options, loader);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(loader.data().path(), "<built-in corpus>");
  EXPECT_EQ(loader.data().format(), TokenFormat::Text);
  EXPECT_EQ(loader.data().size(), builtinCorpus().size());
  const std::string &corpus = builtinCorpus();
  for (int b = 0; b < 3; ++b) {
    uint64_t start = loader.position();
    TokenBatch batch;
    ASSERT_TRUE(loader.next(batch));
    ASSERT_EQ(batch.tokens.size(), 4u * 64);
    for (size_t i = 0; i < batch.tokens.size(); ++i) {
      EXPECT_EQ(batch.tokens[i], static_cast<unsigned char>(corpus[start + i]));
      EXPECT_EQ(batch.targets[i],
                static_cast<unsigned char>(corpus[start + i + 1]));
      EXPECT_LT(batch.tokens[i], 128);
      EXPECT_GE(batch.tokens[i], 0);
    }
  }
}

TEST(BuiltinCorpus, ErrorsNameIt) {
  TokenLoaderOptions options;
  options.builtin = true;
  options.batchSize = 4;
  options.seqLen = 64;
  options.vocabSize = 100; // 'z' is 122
  TokenLoader loader;
  Status status = TokenLoader::open(options, loader);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message().rfind("<built-in corpus>: token ", 0), 0u)
      << status.message();
  options.vocabSize = 128;
  options.batchSize = 1 << 20;
  status = TokenLoader::open(options, loader);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message().rfind("<built-in corpus> holds 204966 tokens", 0),
            0u)
      << status.message();
}

} // namespace
