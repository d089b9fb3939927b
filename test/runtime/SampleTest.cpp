// Tests of generation (runtime/train/Sample.h) on a hand-built logits program
// that needs no compiler: logits[0, p, :] = table[tokens[0, p], :] + bias[p, :]
// (an embedding plus a per-position constant), so the next token depends on
// both the last token and the position it is read at, and a host reference
// can predict every greedy step.
#include "runtime/train/Sample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace {

using namespace llmc::rt;

constexpr int64_t kContext = 6, kVocab = 13;

uint64_t aligned(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

/// Values: 0 table [V, V] (parameter), 1 tokens [1, T] i32, 2 the embedded
/// rows, 3 the bias constant [1, T, V], 4 logits [1, T, V].
Executable logitsProgram(const std::vector<float> &bias,
                         Shape tokensShape = {1, kContext},
                         Shape logitsShape = {1, kContext, kVocab}) {
  Executable exe;
  exe.source = "hand-built logits";
  exe.arguments = {{"table", ArgumentRole::Parameter, 0, {}},
                   {"tokens", ArgumentRole::Input, 1, {}}};
  exe.outputs = {{"output0", 4}};
  RankProgram &rank = exe.ranks.emplace_back();
  std::vector<std::pair<DType, Shape>> types = {{DType::F32, {kVocab, kVocab}},
                                                {DType::I32, tokensShape},
                                                {DType::F32, logitsShape},
                                                {DType::F32, logitsShape},
                                                {DType::F32, logitsShape}};
  for (auto &[dtype, shape] : types) {
    ValueInfo value{dtype, shape, rank.arenaBytes};
    rank.arenaBytes += aligned(value.bytes());
    rank.values.push_back(value);
  }
  ConstantData constant{3, std::vector<uint8_t>(rank.values[3].bytes())};
  std::memcpy(constant.bytes.data(), bias.data(),
              std::min(constant.bytes.size(), bias.size() * sizeof(float)));
  rank.constants.push_back(constant);
  Command embed;
  embed.kernel = KernelKind::Embedding;
  embed.inputs = {0, 1};
  embed.outputs = {2};
  embed.origin = "embed";
  rank.commands.push_back(embed);
  Command add;
  add.kernel = KernelKind::Add;
  add.inputs = {2, 3};
  add.outputs = {4};
  add.origin = "bias";
  rank.commands.push_back(add);
  return exe;
}

class SampleTest : public ::testing::Test {
protected:
  SampleTest() : table(kVocab * kVocab), bias(kContext * kVocab) {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float &v : table)
      v = normal(rng);
    for (float &v : bias)
      v = normal(rng);
    exe = logitsProgram(bias);
  }

  void SetUp() override {
    SessionOptions options;
    options.threads = 1;
    Status status = Session::create(exe, options, session);
    ASSERT_TRUE(status) << status.message();
    status = session->setArgument("table", DType::F32, {kVocab, kVocab},
                                  table.data(), table.size() * sizeof(float));
    ASSERT_TRUE(status) << status.message();
  }

  /// The host's greedy continuation: the last min(n, T) tokens, read at the
  /// last of them.
  std::vector<int32_t> hostGreedy(std::vector<int32_t> sequence,
                                  int64_t count) const {
    std::vector<int32_t> result;
    for (int64_t step = 0; step < count; ++step) {
      int64_t used = std::min<int64_t>(sequence.size(), kContext);
      int32_t last = sequence.back();
      int32_t best = 0;
      float bestValue = -INFINITY;
      for (int32_t v = 0; v < kVocab; ++v) {
        float value = table[last * kVocab + v] + bias[(used - 1) * kVocab + v];
        if (value > bestValue) {
          bestValue = value;
          best = v;
        }
      }
      sequence.push_back(best);
      result.push_back(best);
    }
    return result;
  }

  std::vector<int32_t> run(const std::vector<int32_t> &prompt,
                           const SampleOptions &options) {
    std::vector<int32_t> out;
    Status status = generate(*session, prompt, options, out);
    EXPECT_TRUE(status) << status.message();
    return out;
  }

  std::vector<float> table, bias;
  Executable exe;
  std::unique_ptr<Session> session;
};

TEST_F(SampleTest, GreedyIsTheArgMaxOfTheProgramsLogits) {
  SampleOptions options;
  options.tokens = 20;
  options.temperature = 0.0;
  // A short prompt (read at positions 0..), and one longer than the context
  // (only its last T tokens are used).
  for (std::vector<int32_t> prompt :
       {std::vector<int32_t>{4},
        std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    std::vector<int32_t> generated = run(prompt, options);
    EXPECT_EQ(generated, hostGreedy(prompt, options.tokens));
  }
}

TEST_F(SampleTest, TopKOneIsGreedy) {
  SampleOptions greedy, topOne;
  greedy.tokens = topOne.tokens = 30;
  greedy.temperature = 0.0;
  topOne.temperature = 1.5;
  topOne.topK = 1;
  topOne.seed = 99;
  EXPECT_EQ(run({2, 7}, topOne), run({2, 7}, greedy));
}

TEST_F(SampleTest, TheSeedDecides) {
  SampleOptions options;
  options.tokens = 60;
  options.temperature = 1.0;
  options.seed = 5;
  std::vector<int32_t> first = run({3}, options);
  EXPECT_EQ(run({3}, options), first);
  options.seed = 6;
  // Identical 60-token samples from two seeds at temperature 1 over 13
  // tokens would be a near-impossible coincidence.
  EXPECT_NE(run({3}, options), first);
  options.topK = 4;
  for (int32_t token : run({3}, options))
    EXPECT_TRUE(token >= 0 && token < kVocab) << token;
}

TEST_F(SampleTest, NoTokensGivesNothing) {
  SampleOptions options;
  options.tokens = 0;
  EXPECT_TRUE(run({3}, options).empty());
}

TEST(SampleToken, DrawsFollowTheSoftmax) {
  // Probabilities 0.5, 0.3, 0.15, 0.05 as logits; 40000 draws put each
  // frequency within 0.01 of its probability (over 4 standard deviations).
  std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
  std::vector<float> logits;
  for (double q : p)
    logits.push_back(static_cast<float>(std::log(q)));
  SampleRng rng(1234);
  std::vector<int> counts(p.size());
  const int draws = 40000;
  for (int i = 0; i < draws; ++i)
    ++counts[sampleToken(logits.data(), 4, 1.0, 0, rng)];
  for (size_t i = 0; i < p.size(); ++i)
    EXPECT_NEAR(counts[i] / double(draws), p[i], 0.01) << "token " << i;
  // Top-2 renormalizes over the two largest: 0.5 / 0.8 and 0.3 / 0.8.
  std::fill(counts.begin(), counts.end(), 0);
  for (int i = 0; i < draws; ++i)
    ++counts[sampleToken(logits.data(), 4, 1.0, 2, rng)];
  EXPECT_NEAR(counts[0] / double(draws), 0.625, 0.01);
  EXPECT_EQ(counts[2] + counts[3], 0);
}

TEST(SampleRng, IsSplitMix64) {
  // The first outputs of splitmix64 seeded with 0 (Vigna's reference code).
  SampleRng rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(rng.next(), 0x06c45d188009454fULL);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

void expectError(Session &session, const std::vector<int32_t> &prompt,
                 const SampleOptions &options, const std::string &message) {
  std::vector<int32_t> out = {42};
  Status status = generate(session, prompt, options, out);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(), message);
  EXPECT_TRUE(out.empty());
}

TEST_F(SampleTest, BadOptionsAndPrompts) {
  SampleOptions options;
  expectError(*session, {}, options,
              "generate: the prompt is empty; give at least one token (a byte "
              "model can start from '\\n')");
  expectError(*session, {1, 13}, options,
              "generate: prompt token 1 is 13, outside the model's vocabulary "
              "[0, 13)");
  options.temperature = -1.0;
  expectError(*session, {1}, options,
              "generate: temperature is -1.000000, expected a finite number >= "
              "0 (0 is greedy)");
  options.temperature = 1.0;
  options.topK = -2;
  expectError(*session, {1}, options,
              "generate: top-k is -2, expected 0 (all tokens) or more");
  options.topK = 0;
  options.tokens = -1;
  expectError(*session, {1}, options,
              "generate: number of tokens is -1, expected 0 or more");
}

TEST(SampleErrors, TheProgramMustBeALogitsProgram) {
  std::vector<float> bias(kContext * kVocab, 0.0f);
  SessionOptions sessionOptions;
  sessionOptions.threads = 1;
  SampleOptions options;

  Executable renamed = logitsProgram(bias);
  renamed.arguments[1].name = "ids";
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(renamed, sessionOptions, session));
  expectError(*session, {1}, options,
              "generate: the program has no argument \"tokens\"; compile the "
              "logits program (buildLogitsModule, function \"logits\")");

  Executable batched = logitsProgram(bias, {2, 3}, {2, 3, kVocab});
  ASSERT_TRUE(Session::create(batched, sessionOptions, session));
  expectError(*session, {1}, options,
              "generate: argument \"tokens\" is i32 [2, 3], expected i32 [1, "
              "T]: compile the logits program with batch size 1");

  // Output 0 is not [1, T, V] (generate checks before running, so the
  // program need not be runnable).
  Executable flat = logitsProgram(bias, {1, kContext}, {1, 1, kVocab});
  ASSERT_TRUE(Session::create(flat, sessionOptions, session));
  expectError(*session, {1}, options,
              "generate: output 0 is f32 [1, 1, 13], expected the f32 logits "
              "[1, 6, V]; is this the logits program rather than the loss?");
}

} // namespace
