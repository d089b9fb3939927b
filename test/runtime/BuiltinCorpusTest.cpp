// Tests of the built-in corpus (runtime/data/BuiltinCorpus.h): the same bytes
// on every call and every platform (a pinned FNV-1a hash), only printable
// ASCII and '\n', a size in the documented range, a small vocabulary of
// words, and the token loader reading it without a file.
#include "runtime/data/BuiltinCorpus.h"
#include "runtime/data/TokenLoader.h"

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
  CorpusOptions options; // no patterns: the built-in corpus
  options.vocabSize = 128;
  TokenCorpus corpus;
  Status status = TokenCorpus::open(options, corpus);
  ASSERT_TRUE(status) << status.message();
  ASSERT_EQ(corpus.numShards(), 1u);
  EXPECT_EQ(corpus.shard(0).path(), "<built-in corpus>");
  EXPECT_EQ(corpus.shard(0).format(), TokenFormat::Text);
  EXPECT_EQ(corpus.totalTokens(), builtinCorpus().size());
  TokenLoaderOptions loaderOptions;
  loaderOptions.batchSize = 4;
  loaderOptions.seqLen = 64;
  std::unique_ptr<TokenLoader> loader;
  ASSERT_TRUE(TokenLoader::open(corpus, loaderOptions, loader));
  const std::string &text = builtinCorpus();
  for (int b = 0; b < 3; ++b) {
    uint64_t start = loader->position().offset;
    TokenBatch batch;
    ASSERT_TRUE(loader->next(batch));
    ASSERT_EQ(batch.tokens.size(), 4u * 64);
    for (size_t i = 0; i < batch.tokens.size(); ++i) {
      EXPECT_EQ(batch.tokens[i], static_cast<unsigned char>(text[start + i]));
      EXPECT_EQ(batch.targets[i],
                static_cast<unsigned char>(text[start + i + 1]));
      EXPECT_LT(batch.tokens[i], 128);
      EXPECT_GE(batch.tokens[i], 0);
    }
  }
}

TEST(BuiltinCorpus, ErrorsNameIt) {
  CorpusOptions options;
  options.vocabSize = 100; // 'z' is 122
  TokenCorpus corpus;
  Status status = TokenCorpus::open(options, corpus);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message().rfind("<built-in corpus>: token ", 0), 0u)
      << status.message();
  options.vocabSize = 128;
  ASSERT_TRUE(TokenCorpus::open(options, corpus));
  TokenLoaderOptions loaderOptions;
  loaderOptions.batchSize = 1 << 20;
  loaderOptions.seqLen = 64;
  std::unique_ptr<TokenLoader> loader;
  status = TokenLoader::open(corpus, loaderOptions, loader);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message().rfind("<built-in corpus>: too little data", 0),
            0u)
      << status.message();
}

} // namespace
