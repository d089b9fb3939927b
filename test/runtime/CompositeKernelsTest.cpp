// Tests of the composite CPU reference kernels (runtime/cpu/Composite*.cpp;
// attention in CompositeAttentionTest.cpp):
// each kernel against a naive f64 reference written here from the op's
// definition (docs/ir.md), on seeded random inputs, for f32, f64, bf16 and
// f16 with the tolerances of CompositeTestSupport.h; hand-worked cases for
// the definitions a reference would only copy (slot assignment, ties,
// ignored targets); and the message of every kind of malformed launch.
#include "CompositeTestSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

namespace {

using namespace llmc::rt;
using namespace llmc::rt::compositetest;

//===----------------------------------------------------------------------===//
// Naive f64 references, written from the definitions
//===----------------------------------------------------------------------===//

/// The slot of every (n, j) pair: for each expert, walk tokens then choices.
std::vector<int64_t> slotsRef(const std::vector<double> &indices, int64_t k,
                              int64_t experts, int64_t capacity) {
  const int64_t tokens = static_cast<int64_t>(indices.size()) / k;
  std::vector<int64_t> slots(indices.size(), -1);
  for (int64_t e = 0; e < experts; ++e) {
    int64_t next = 0;
    for (int64_t n = 0; n < tokens; ++n)
      for (int64_t j = 0; j < k; ++j)
        if (indices[n * k + j] == e && next < capacity)
          slots[n * k + j] = next++;
  }
  return slots;
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

using EmbeddingTest = KernelTest;
INSTANTIATE_FOR_FLOATS(EmbeddingTest);

TEST_P(EmbeddingTest, CopiesRowsAndZerosOutOfRangeIds) {
  auto table = random(dtype(), {7, 5}, rng);
  for (DType idType : {DType::I32, DType::I64}) {
    Buffer ids(idType, {2, 3}, {3, 0, 6, -1, 7, 3});
    Buffer out(dtype(), {2, 3, 5});
    ASSERT_OK(run(KernelKind::Embedding, {}, {table.get(), &ids}, {&out}));
    for (int64_t n = 0; n < 6; ++n) {
      int64_t id = static_cast<int64_t>(ids.at(n));
      for (int64_t d = 0; d < 5; ++d)
        EXPECT_EQ(out.at(n * 5 + d),
                  id >= 0 && id < 7 ? table->at(id * 5 + d) : 0.0)
            << "id " << id << ", column " << d;
    }
  }
}

//===----------------------------------------------------------------------===//
// layer_norm, rms_norm
//===----------------------------------------------------------------------===//

std::vector<double> layerNormRef(const Buffer &x, const Buffer &gamma,
                                 const Buffer *beta, double epsilon) {
  int64_t dim = gamma.size();
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < x.size() / dim; ++r) {
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < dim; ++i)
      mean += x.at(r * dim + i) / dim;
    for (int64_t i = 0; i < dim; ++i)
      var += std::pow(x.at(r * dim + i) - mean, 2) / dim;
    for (int64_t i = 0; i < dim; ++i)
      y[r * dim + i] =
          (x.at(r * dim + i) - mean) / std::sqrt(var + epsilon) * gamma.at(i) +
          (beta ? beta->at(i) : 0.0);
  }
  return y;
}

std::vector<double> rmsNormRef(const Buffer &x, const Buffer &gamma,
                               double epsilon) {
  int64_t dim = gamma.size();
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < x.size() / dim; ++r) {
    double ms = 0.0;
    for (int64_t i = 0; i < dim; ++i)
      ms += x.at(r * dim + i) * x.at(r * dim + i) / dim;
    for (int64_t i = 0; i < dim; ++i)
      y[r * dim + i] =
          x.at(r * dim + i) / std::sqrt(ms + epsilon) * gamma.at(i);
  }
  return y;
}

using NormTest = KernelTest;
INSTANTIATE_FOR_FLOATS(NormTest);

// gamma and beta in f32 whatever x's type (a bf16 model with f32 norm
// weights); rows offset by 3 so that the mean matters.
TEST_P(NormTest, LayerNormWithF32BetaMatchesReference) {
  auto x = random(dtype(), {8, 32, 64}, rng, 1.0, 5.0);
  auto gamma = random(DType::F32, {64}, rng, 0.5, 1.5);
  auto beta = random(DType::F32, {64}, rng);
  Buffer y(dtype(), {8, 32, 64});
  ASSERT_OK(run(KernelKind::LayerNorm, {{}, {1e-5}},
                {x.get(), gamma.get(), beta.get()}, {&y}));
  EXPECT_TRUE(
      allClose(y.values(), layerNormRef(*x, *gamma, beta.get(), 1e-5), tol()));
}

TEST_P(NormTest, LayerNormWithoutBetaMatchesReference) {
  auto x = random(dtype(), {5, 48}, rng);
  auto gamma = random(dtype(), {48}, rng, 0.5, 1.5);
  Buffer y(dtype(), {5, 48});
  ASSERT_OK(
      run(KernelKind::LayerNorm, {{}, {1e-3}}, {x.get(), gamma.get()}, {&y}));
  EXPECT_TRUE(
      allClose(y.values(), layerNormRef(*x, *gamma, nullptr, 1e-3), tol()));
}

TEST_P(NormTest, RmsNormMatchesReference) {
  auto x = random(dtype(), {4, 64, 64}, rng);
  auto gamma = random(DType::F32, {64}, rng, 0.5, 1.5);
  Buffer y(dtype(), {4, 64, 64});
  ASSERT_OK(
      run(KernelKind::RmsNorm, {{}, {1e-6}}, {x.get(), gamma.get()}, {&y}));
  EXPECT_TRUE(allClose(y.values(), rmsNormRef(*x, *gamma, 1e-6), tol()));
}

//===----------------------------------------------------------------------===//
// softmax
//===----------------------------------------------------------------------===//

using SoftmaxTest = KernelTest;
INSTANTIATE_FOR_FLOATS(SoftmaxTest);

// Logits around 500 overflow exp() unless the max is subtracted.
TEST_P(SoftmaxTest, EveryDimMatchesReference) {
  const Shape shape{6, 40, 50};
  auto x = random(dtype(), shape, rng, 495.0, 505.0);
  for (int64_t dim = 0; dim < 3; ++dim) {
    Buffer y(dtype(), shape);
    ASSERT_OK(run(KernelKind::Softmax, {{dim}, {}}, {x.get()}, {&y}));
    std::vector<double> want(x->size());
    int64_t inner = 1;
    for (int64_t d = dim + 1; d < 3; ++d)
      inner *= shape[d];
    for (int64_t base = 0; base < x->size(); ++base) {
      if ((base / inner) % shape[dim] != 0)
        continue; // not the first element of a row
      std::vector<double> row;
      for (int64_t i = 0; i < shape[dim]; ++i)
        row.push_back(x->at(base + i * inner));
      std::vector<double> p = softmaxRef(row);
      for (int64_t i = 0; i < shape[dim]; ++i)
        want[base + i * inner] = p[i];
    }
    EXPECT_TRUE(allClose(y.values(), want, tol())) << "dim " << dim;
  }
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

/// out[i] = x[i] cos - x[i + D/2] sin, out[i + D/2] = x[i + D/2] cos + x[i] sin
/// with angle p * theta^(-2i/D), or p * invFreq[i] when given.
std::vector<double> ropeRef(const Buffer &x, const std::vector<double> &pos,
                            double theta,
                            const std::vector<double> &invFreq = {}) {
  const int64_t seq = x.ref().shape[x.ref().rank() - 2];
  const int64_t dim = x.ref().shape.back(), half = dim / 2;
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < x.size() / dim; ++r)
    for (int64_t i = 0; i < half; ++i) {
      double angle = pos[r % seq] * (invFreq.empty()
                                         ? std::pow(theta, -2.0 * i / dim)
                                         : invFreq[i]);
      double a = x.at(r * dim + i), b = x.at(r * dim + i + half);
      out[r * dim + i] = a * std::cos(angle) - b * std::sin(angle);
      out[r * dim + i + half] = b * std::cos(angle) + a * std::sin(angle);
    }
  return out;
}

using RopeTest = KernelTest;
INSTANTIATE_FOR_FLOATS(RopeTest);

TEST_P(RopeTest, WithoutPositionsMatchesReference) {
  auto x = random(dtype(), {2, 3, 6, 8}, rng);
  Buffer out(dtype(), {2, 3, 6, 8});
  ASSERT_OK(run(KernelKind::Rope, {{}, {10000.0}}, {x.get()}, {&out}));
  EXPECT_TRUE(
      allClose(out.values(), ropeRef(*x, {0, 1, 2, 3, 4, 5}, 10000.0), tol()));
}

TEST_P(RopeTest, WithPositionsMatchesReference) {
  const std::vector<double> pos{3, 0, 17, 1000, 5, 2};
  auto x = random(dtype(), {2, 6, 16}, rng);
  for (DType posType : {DType::I32, DType::I64}) {
    Buffer positions(posType, {6}, pos);
    Buffer out(dtype(), {2, 6, 16});
    ASSERT_OK(
        run(KernelKind::Rope, {{}, {500000.0}}, {x.get(), &positions}, {&out}));
    EXPECT_TRUE(allClose(out.values(), ropeRef(*x, pos, 500000.0), tol()))
        << dtypeName(posType) << " positions";
  }
}

// Per-pair inverse frequencies (a scaled rope, e.g. LLaMA 3's) replace
// theta^(-2i/D); theta no longer matters. Frequencies far from the default
// ones, so that a kernel that ignored them fails by O(1).
TEST_P(RopeTest, InverseFrequenciesReplaceTheta) {
  const std::vector<double> pos{3, 0, 17, 1000, 5, 2};
  const std::vector<double> invFreq{0.9, 0.31, 0.004, 2.5e-5};
  auto x = random(dtype(), {2, 6, 8}, rng);
  Buffer positions(DType::I64, {6}, pos);
  Buffer out(dtype(), {2, 6, 8});
  std::vector<double> floats = {10000.0};
  floats.insert(floats.end(), invFreq.begin(), invFreq.end());
  ASSERT_OK(run(KernelKind::Rope, {{}, floats}, {x.get(), &positions}, {&out}));
  EXPECT_TRUE(allClose(out.values(), ropeRef(*x, pos, 10000.0, invFreq), tol()));
  EXPECT_FALSE(allClose(out.values(), ropeRef(*x, pos, 10000.0), tol()));
  Buffer implicit(dtype(), {2, 6, 8});
  ASSERT_OK(run(KernelKind::Rope, {{}, floats}, {x.get()}, {&implicit}));
  EXPECT_TRUE(allClose(implicit.values(),
                       ropeRef(*x, {0, 1, 2, 3, 4, 5}, 10000.0, invFreq),
                       tol()));
}

// positions t + 5 rotate exactly as rows 5.. of a longer sequence without
// positions: the shard of a sequence that starts at 5.
TEST_P(RopeTest, PositionsFromFiveEqualShiftedSequence) {
  const int64_t seq = 6, dim = 8, shift = 5;
  auto x = random(dtype(), {2, seq, dim}, rng);
  Buffer positions(DType::I32, {seq}, {5, 6, 7, 8, 9, 10});
  Buffer shifted(dtype(), {2, seq, dim});
  ASSERT_OK(run(KernelKind::Rope, {{}, {10000.0}}, {x.get(), &positions},
                {&shifted}));

  Buffer longX(dtype(), {2, seq + shift, dim});
  auto filler = random(dtype(), {longX.size()}, rng);
  for (int64_t i = 0; i < longX.size(); ++i)
    longX.set(i, filler->at(i));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < seq * dim; ++i)
      longX.set((b * (seq + shift) + shift) * dim + i,
                x->at(b * seq * dim + i));
  Buffer longOut(dtype(), {2, seq + shift, dim});
  ASSERT_OK(run(KernelKind::Rope, {{}, {10000.0}}, {&longX}, {&longOut}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < seq * dim; ++i)
      EXPECT_EQ(shifted.at(b * seq * dim + i),
                longOut.at((b * (seq + shift) + shift) * dim + i));
}

//===----------------------------------------------------------------------===//
// gelu, silu, swiglu
//===----------------------------------------------------------------------===//

using ActivationTest = KernelTest;
INSTANTIATE_FOR_FLOATS(ActivationTest);

// 3000 elements in [-6, 6]: several 512-element blocks, both tails.
TEST_P(ActivationTest, MatchReferences) {
  auto x = random(dtype(), {3, 1000}, rng, -6.0, 6.0);
  auto up = random(dtype(), {3, 1000}, rng, -6.0, 6.0);
  std::vector<double> tanhWant, erfWant, siluWant, swigluWant;
  for (int64_t i = 0; i < x->size(); ++i) {
    double v = x->at(i);
    double c = std::sqrt(2.0 / std::acos(-1.0)) * (v + 0.044715 * v * v * v);
    tanhWant.push_back(0.5 * v * (1.0 + std::tanh(c)));
    erfWant.push_back(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    siluWant.push_back(v / (1.0 + std::exp(-v)));
    swigluWant.push_back(siluWant.back() * up->at(i));
  }
  Buffer y(dtype(), {3, 1000});
  ASSERT_OK(run(KernelKind::Gelu, {{0}, {}}, {x.get()}, {&y}));
  EXPECT_TRUE(allClose(y.values(), tanhWant, tol())) << "gelu tanh";
  ASSERT_OK(run(KernelKind::Gelu, {{1}, {}}, {x.get()}, {&y}));
  EXPECT_TRUE(allClose(y.values(), erfWant, tol())) << "gelu erf";
  ASSERT_OK(run(KernelKind::Silu, {}, {x.get()}, {&y}));
  EXPECT_TRUE(allClose(y.values(), siluWant, tol())) << "silu";
  ASSERT_OK(run(KernelKind::Swiglu, {}, {x.get(), up.get()}, {&y}));
  EXPECT_TRUE(allClose(y.values(), swigluWant, tol())) << "swiglu";
}

// Published values (torch.nn.functional.gelu, silu) at 1 and -2.
TEST(ActivationValues, MatchKnownValues) {
  Buffer x(DType::F64, {2}, {1.0, -2.0}), y(DType::F64, {2});
  ASSERT_OK(run(KernelKind::Gelu, {{0}, {}}, {&x}, {&y}));
  EXPECT_NEAR(y.at(0), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(y.at(1), -0.04540230591222494, 1e-15);
  ASSERT_OK(run(KernelKind::Gelu, {{1}, {}}, {&x}, {&y}));
  EXPECT_NEAR(y.at(0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(y.at(1), -0.04550026389635842, 1e-15);
  ASSERT_OK(run(KernelKind::Silu, {}, {&x}, {&y}));
  EXPECT_NEAR(y.at(0), 0.7310585786300049, 1e-15);
  EXPECT_NEAR(y.at(1), -0.2384058440442351, 1e-15);
}

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

constexpr int64_t kMean = 0, kSum = 1, kNone = 2;

/// Per-position losses; ignored positions give NaN here so that a test
/// must handle them explicitly.
std::vector<double> crossEntropyRef(const Buffer &logits, const Buffer &targets,
                                    int64_t ignore) {
  const int64_t vocab = logits.ref().shape.back();
  std::vector<double> losses;
  for (int64_t n = 0; n < targets.size(); ++n) {
    int64_t target = static_cast<int64_t>(targets.at(n));
    if (target == ignore) {
      losses.push_back(NAN);
      continue;
    }
    double sum = 0.0;
    for (int64_t c = 0; c < vocab; ++c)
      sum += std::exp(logits.at(n * vocab + c));
    losses.push_back(std::log(sum) - logits.at(n * vocab + target));
  }
  return losses;
}

using CrossEntropyTest = KernelTest;
INSTANTIATE_FOR_FLOATS(CrossEntropyTest);

TEST_P(CrossEntropyTest, ReductionsWithIgnoreIndexMatchReference) {
  auto logits = random(dtype(), {3, 5, 11}, rng, -4.0, 4.0);
  std::vector<double> t;
  std::uniform_int_distribution<int> cls(0, 10);
  for (int i = 0; i < 15; ++i)
    t.push_back(i % 4 == 1 ? -100 : cls(rng));
  for (DType targetType : {DType::I32, DType::I64}) {
    SCOPED_TRACE(dtypeName(targetType));
    Buffer targets(targetType, {3, 5}, t);
    std::vector<double> want = crossEntropyRef(*logits, targets, -100);
    double sum = 0.0;
    int counted = 0;
    for (double &w : want) {
      if (std::isnan(w)) {
        w = 0.0;
        continue;
      }
      sum += w;
      ++counted;
    }
    ASSERT_EQ(counted, 11);

    Buffer none(DType::F32, {3, 5}), total(DType::F32, {}),
        mean(DType::F32, {});
    ASSERT_OK(run(KernelKind::CrossEntropy, {{kNone, 1, -100}, {}},
                  {logits.get(), &targets}, {&none}));
    ASSERT_OK(run(KernelKind::CrossEntropy, {{kSum, 1, -100}, {}},
                  {logits.get(), &targets}, {&total}));
    ASSERT_OK(run(KernelKind::CrossEntropy, {{kMean, 1, -100}, {}},
                  {logits.get(), &targets}, {&mean}));
    // The result is f32 whatever the logits: 1e-5 for every input type.
    EXPECT_TRUE(allClose(none.values(), want, 1e-5));
    EXPECT_TRUE(allClose(total.values(), {sum}, 1e-5));
    EXPECT_TRUE(allClose(mean.values(), {sum / counted}, 1e-5));
  }
}

// Every position ignored: nothing is counted, so mean and sum are 0 (a
// defined value, not 0/0) and every per-position loss is 0.
TEST_P(CrossEntropyTest, AllIgnoredGivesZero) {
  auto logits = random(dtype(), {4, 6}, rng);
  Buffer targets(DType::I32, {4}, {-1, -1, -1, -1});
  for (int64_t reduction : {kMean, kSum}) {
    Buffer out(DType::F32, {});
    out.set(0, 7.0);
    ASSERT_OK(run(KernelKind::CrossEntropy, {{reduction, 1, -1}, {}},
                  {logits.get(), &targets}, {&out}));
    EXPECT_EQ(out.at(0), 0.0) << "reduction " << reduction;
  }
  Buffer none(DType::F32, {4}, {7, 7, 7, 7});
  ASSERT_OK(run(KernelKind::CrossEntropy, {{kNone, 1, -1}, {}},
                {logits.get(), &targets}, {&none}));
  EXPECT_EQ(none.values(), std::vector<double>(4, 0.0));
}

// Without has_ignore, -100 is an ordinary (bad) target.
TEST(CrossEntropyErrors, BadTargetNamesPositionAndValue) {
  Buffer logits(DType::F32, {2, 3, 11}, std::vector<double>(66, 0.5));
  Buffer targets(DType::I64, {2, 3}, {0, 10, -100, 4, 5, 11});
  Buffer out(DType::F32, {});
  Status ignoring = run(KernelKind::CrossEntropy, {{kMean, 1, -100}, {}},
                        {&logits, &targets}, {&out});
  EXPECT_EQ(ignoring.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(ignoring.message(),
            "CrossEntropy kernel: expected targets in [0, 11) or the "
            "ignore_index -100, got 11 at position [1, 2]");
  Status strict = run(KernelKind::CrossEntropy, {{kMean, 0, -100}, {}},
                      {&logits, &targets}, {&out});
  EXPECT_EQ(strict.message(), "CrossEntropy kernel: expected targets in "
                              "[0, 11), got -100 at position [0, 2]");
}

// The sum is taken in position order: one thread or three, same bits.
TEST(CrossEntropyDeterminism, SameResultForAnyThreadCount) {
  std::mt19937 rng(7);
  auto logits = random(DType::F32, {64, 512}, rng, -8.0, 8.0);
  Buffer targets(DType::I32, {64});
  for (int64_t n = 0; n < 64; ++n)
    targets.set(n, (n * 37) % 512);
  ThreadPool single(1);
  Buffer one(DType::F32, {}), three(DType::F32, {});
  ASSERT_OK(run(KernelKind::CrossEntropy, {{kMean, 0, 0}, {}},
                {logits.get(), &targets}, {&one}, single));
  ASSERT_OK(run(KernelKind::CrossEntropy, {{kMean, 0, 0}, {}},
                {logits.get(), &targets}, {&three}));
  EXPECT_EQ(one.at(0), three.at(0));
}

//===----------------------------------------------------------------------===//
// moe_topk
//===----------------------------------------------------------------------===//

using MoeTopKTest = KernelTest;
INSTANTIATE_FOR_FLOATS(MoeTopKTest);

TEST_P(MoeTopKTest, MatchesReference) {
  const int64_t tokens = 9, experts = 8;
  auto logits = random(dtype(), {tokens, experts}, rng, -3.0, 3.0);
  for (int64_t k : {1, 2, 3})
    for (int64_t normalize : {0, 1}) {
      SCOPED_TRACE("k " + std::to_string(k) + ", normalize " +
                   std::to_string(normalize));
      Buffer weights(dtype(), {tokens, k});
      Buffer indices(k == 2 ? DType::I64 : DType::I32, {tokens, k});
      ASSERT_OK(run(KernelKind::MoeTopK, {{k, normalize}, {}}, {logits.get()},
                    {&weights, &indices}));
      std::vector<double> wantWeights, wantIndices;
      const std::vector<double> all = logits->values();
      for (int64_t n = 0; n < tokens; ++n) {
        std::vector<double> row(all.begin() + n * experts,
                                all.begin() + (n + 1) * experts);
        std::vector<double> p = softmaxRef(row);
        // Stable sort by descending logit keeps the lower id first on ties.
        std::vector<int64_t> order(experts);
        for (int64_t e = 0; e < experts; ++e)
          order[e] = e;
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return row[a] > row[b]; });
        double kept = 0.0;
        for (int64_t j = 0; j < k; ++j)
          kept += p[order[j]];
        for (int64_t j = 0; j < k; ++j) {
          wantIndices.push_back(order[j]);
          wantWeights.push_back(p[order[j]] / (normalize ? kept : 1.0));
        }
      }
      EXPECT_EQ(indices.values(), wantIndices);
      EXPECT_TRUE(allClose(weights.values(), wantWeights, tol()));
    }
}

// Hand-worked: ties go to the lower expert id; logits (0, ln 3) give
// probabilities (1/4, 3/4).
TEST(MoeTopKValues, TiesAndProbabilities) {
  Buffer logits(DType::F64, {2, 5}, {1, 3, 3, 0, 3, 2, 2, 2, 2, 2});
  Buffer weights(DType::F64, {2, 3}), indices(DType::I32, {2, 3});
  ASSERT_OK(
      run(KernelKind::MoeTopK, {{3, 0}, {}}, {&logits}, {&weights, &indices}));
  EXPECT_EQ(indices.values(), (std::vector<double>{1, 2, 4, 0, 1, 2}));
  for (int64_t j = 3; j < 6; ++j)
    EXPECT_NEAR(weights.at(j), 0.2, 1e-15);

  Buffer pair(DType::F32, {1, 2}, {0.0, std::log(3.0)});
  Buffer w1(DType::F32, {1, 1}), i1(DType::I64, {1, 1});
  ASSERT_OK(run(KernelKind::MoeTopK, {{1, 0}, {}}, {&pair}, {&w1, &i1}));
  EXPECT_EQ(i1.at(0), 1.0);
  EXPECT_NEAR(w1.at(0), 0.75, 1e-7);
  ASSERT_OK(run(KernelKind::MoeTopK, {{1, 1}, {}}, {&pair}, {&w1, &i1}));
  EXPECT_EQ(w1.at(0), 1.0);
}

//===----------------------------------------------------------------------===//
// moe_dispatch, moe_combine
//===----------------------------------------------------------------------===//

// N = 5 tokens, k = 2, E = 3 experts of capacity C = 2, D = 2. Pairs in
// order (token, choice) -> expert: slot
//   (0,0)->0: 0   (0,1)->1: 0   (1,0)->2: 0   (1,1)->0: 1
//   (2,0)->0: dropped (full)    (2,1)->1: 1   (3,0)->1: dropped
//   (3,1)->0: dropped           (4,0)->3 and (4,1)->-1: out of range
// so expert 0 holds tokens [0, 1], expert 1 [0, 2], expert 2 [1, zero].
TEST(MoeRouting, HandWorkedDispatchAndCombine) {
  Buffer indices(DType::I32, {5, 2}, {0, 1, 2, 0, 0, 1, 1, 0, 3, -1});
  Buffer x(DType::F32, {5, 2}, {1, 2, 11, 12, 21, 22, 31, 32, 41, 42});
  Buffer buffers(DType::F32, {3, 2, 2});
  ASSERT_OK(run(KernelKind::MoeDispatch, {}, {&x, &indices}, {&buffers}));
  EXPECT_EQ(buffers.values(), (std::vector<double>{1, 2, 11, 12,    // expert 0
                                                   1, 2, 21, 22,    // expert 1
                                                   11, 12, 0, 0})); // expert 2

  // expert_out[e][c] = (100e + 10c + 1, 100e + 10c + 2).
  Buffer expertOut(DType::F32, {3, 2, 2},
                   {1, 2, 11, 12, 101, 102, 111, 112, 201, 202, 211, 212});
  Buffer weights(DType::F32, {5, 2},
                 {0.5, 0.25, 0.75, 2.0, 1.0, 0.5, 3.0, 4.0, 1.0, 1.0});
  Buffer y(DType::F32, {5, 2});
  ASSERT_OK(
      run(KernelKind::MoeCombine, {}, {&expertOut, &weights, &indices}, {&y}));
  EXPECT_EQ(y.values(),
            (std::vector<double>{0.5 * 1 + 0.25 * 101, 0.5 * 2 + 0.25 * 102, //
                                 0.75 * 201 + 2 * 11, 0.75 * 202 + 2 * 12,   //
                                 0.5 * 111, 0.5 * 112,                       //
                                 0, 0,                                       //
                                 0, 0}));
}

using MoeRoutingTest = KernelTest;
INSTANTIATE_FOR_FLOATS(MoeRoutingTest);

// 40 tokens, k = 2 over 4 experts: 20 pairs per expert on average against a
// capacity of 12, so every expert drops pairs.
TEST_P(MoeRoutingTest, CapacityOverflowMatchesReference) {
  const int64_t tokens = 40, k = 2, experts = 4, capacity = 12, dim = 6;
  std::vector<double> idx;
  std::uniform_int_distribution<int> pick(0, experts - 1);
  for (int64_t i = 0; i < tokens * k; ++i)
    idx.push_back(pick(rng));
  Buffer indices(DType::I64, {tokens, k}, idx);
  std::vector<int64_t> slots = slotsRef(idx, k, experts, capacity);
  ASSERT_GT(std::count(slots.begin(), slots.end(), -1), 10);

  auto x = random(dtype(), {tokens, dim}, rng);
  Buffer buffers(dtype(), {experts, capacity, dim});
  ASSERT_OK(run(KernelKind::MoeDispatch, {}, {x.get(), &indices}, {&buffers}));
  std::vector<double> wantBuffers(buffers.size(), 0.0);
  for (int64_t p = 0; p < tokens * k; ++p)
    if (slots[p] >= 0)
      for (int64_t d = 0; d < dim; ++d)
        wantBuffers[(int64_t(idx[p]) * capacity + slots[p]) * dim + d] =
            x->at((p / k) * dim + d);
  EXPECT_EQ(buffers.values(), wantBuffers);

  auto expertOut = random(dtype(), {experts, capacity, dim}, rng);
  auto weights = random(DType::F32, {tokens, k}, rng, 0.0, 1.0);
  Buffer y(dtype(), {tokens, dim});
  ASSERT_OK(run(KernelKind::MoeCombine, {},
                {expertOut.get(), weights.get(), &indices}, {&y}));
  std::vector<double> want(y.size(), 0.0);
  for (int64_t p = 0; p < tokens * k; ++p)
    if (slots[p] >= 0)
      for (int64_t d = 0; d < dim; ++d)
        want[(p / k) * dim + d] +=
            weights->at(p) *
            expertOut->at((int64_t(idx[p]) * capacity + slots[p]) * dim + d);
  EXPECT_TRUE(allClose(y.values(), want, tol()));
}

//===----------------------------------------------------------------------===//
// Malformed launches: InvalidArgument naming the kernel, never a crash
//===----------------------------------------------------------------------===//

void expectError(const Status &status, const std::string &message) {
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  EXPECT_EQ(status.message(), message);
}

TEST(CompositeErrors, Norms) {
  Buffer x(DType::F32, {2, 4}, std::vector<double>(8, 1.5));
  Buffer g3(DType::F32, {3}, {1, 2, 3}), g4(DType::F32, {4}, {1, 2, 3, 4});
  Buffer b4(DType::BF16, {4}, {1, 2, 3, 4}), y(DType::F32, {2, 4});
  Buffer ints(DType::I32, {2, 4}), yBf16(DType::BF16, {2, 4});
  expectError(run(KernelKind::LayerNorm, {{}, {1e-5}}, {&x, &g3}, {&y}),
              "LayerNorm kernel: expected gamma of shape [4], got [3]");
  expectError(run(KernelKind::LayerNorm, {{}, {1e-5}}, {&x, &g4, &b4}, {&y}),
              "LayerNorm kernel: expected beta element type f32, got bf16");
  expectError(
      run(KernelKind::LayerNorm, {{}, {1e-5}}, {&x, &g4, &g4, &g4}, {&y}),
      "LayerNorm kernel: expected 2 or 3 inputs and 1 outputs, got 4 and 1");
  expectError(run(KernelKind::LayerNorm, {{}, {0.0}}, {&x, &g4}, {&y}),
              "LayerNorm kernel: expected a positive epsilon, got 0");
  expectError(run(KernelKind::RmsNorm, {{}, {}}, {&x, &g4}, {&y}),
              "RmsNorm kernel: expected 0 integer and 1 float attributes, "
              "got 0 and 0");
  expectError(run(KernelKind::RmsNorm, {{}, {1e-5}}, {&ints, &g4}, {&y}),
              "RmsNorm kernel: expected input of a float type, got i32");
  expectError(run(KernelKind::RmsNorm, {{}, {1e-5}}, {&x, &g4}, {&yBf16}),
              "RmsNorm kernel: expected result element type f32, got bf16");
  expectError(run(KernelKind::Softmax, {{2}, {}}, {&x}, {&y}),
              "Softmax kernel: expected dim in [0, 2), got 2");
}

TEST(CompositeErrors, AttentionGrad) {
  Buffer q(DType::F32, {1, 2, 4, 8}), k(DType::F32, {1, 1, 4, 8});
  Buffer dq(DType::F32, {1, 2, 4, 8}), dk(DType::F32, {1, 1, 4, 8});
  Buffer wrong(DType::F32, {1, 2, 4, 4});
  expectError(run(KernelKind::AttentionGrad, {{1}, {0.5}},
                  {&q, &k, &k, &q, &q}, {&dq, &dk}),
              "AttentionGrad kernel: expected 5-6 inputs and 3 outputs (1 "
              "when packed), got 5 and 2");
  expectError(run(KernelKind::AttentionGrad, {{1}, {0.5}},
                  {&q, &k, &k, &wrong, &q}, {&dq, &dk, &dk}),
              "AttentionGrad kernel: expected the query-side result of shape "
              "[1, 2, 4, 8], got [1, 2, 4, 4]");
  expectError(run(KernelKind::AttentionGrad, {{1}, {0.5}},
                  {&q, &k, &k, &q, &q}, {&dq, &dq, &dk}),
              "AttentionGrad kernel: expected dkey of shape [1, 1, 4, 8], got "
              "[1, 2, 4, 8]");
}

TEST(CompositeErrors, AttentionAndRope) {
  Buffer q(DType::F32, {1, 3, 4, 8}), k(DType::F32, {1, 2, 4, 8});
  Buffer k5(DType::F32, {1, 1, 5, 8}), v5(DType::F32, {1, 1, 5, 8});
  Buffer out(DType::F32, {1, 3, 4, 8});
  expectError(run(KernelKind::Attention, {{0}, {0.5}}, {&q, &k, &k}, {&out}),
              "Attention kernel: expected the query heads to be a multiple "
              "of the key/value heads, got 3 and 2");
  expectError(run(KernelKind::Attention, {{1}, {0.5}}, {&q, &k5, &v5}, {&out}),
              "Attention kernel: expected equal query and key lengths for "
              "causal attention, got 4 and 5");
  expectError(run(KernelKind::Attention, {{0}, {0.5}}, {&q, &k5, &k}, {&out}),
              "Attention kernel: expected value of shape [1, 1, 5, 8], got "
              "[1, 2, 4, 8]");
  expectError(run(KernelKind::Attention, {{0}, {}}, {&q, &k5, &v5}, {&out}),
              "Attention kernel: expected 1 integer and 1 float attributes, "
              "got 1 and 0");

  Buffer odd(DType::F32, {4, 7}), oddOut(DType::F32, {4, 7});
  expectError(run(KernelKind::Rope, {{}, {1e4}}, {&odd}, {&oddOut}),
              "Rope kernel: expected an even head dimension, got 7");
  Buffer x(DType::F32, {2, 4, 8}), y(DType::F32, {2, 4, 8});
  Buffer pos3(DType::I32, {3}, {0, 1, 2}), posF(DType::F32, {4});
  expectError(run(KernelKind::Rope, {{}, {1e4}}, {&x, &pos3}, {&y}),
              "Rope kernel: expected positions of shape [4], got [3]");
  expectError(run(KernelKind::Rope, {{}, {1e4}}, {&x, &posF}, {&y}),
              "Rope kernel: expected positions of type i32 or i64, got f32");
  expectError(run(KernelKind::Rope, {{}, {1e4, 1.0, 0.5}}, {&x}, {&y}),
              "Rope kernel: expected no integer attributes and 1 float "
              "(theta) or 5 (theta and one inverse frequency per pair), got 0 "
              "and 3");
  expectError(run(KernelKind::Rope, {{}, {1e4, 1.0, 0.5, 0.0, 0.1}}, {&x},
                  {&y}),
              "Rope kernel: expected positive finite inverse frequencies, got "
              "0 at pair 2");
}

TEST(CompositeErrors, ActivationsAndLoss) {
  Buffer x(DType::F32, {2, 4}), y(DType::F32, {2, 4}), up(DType::F32, {4, 2});
  expectError(run(KernelKind::Gelu, {{2}, {}}, {&x}, {&y}),
              "Gelu kernel: expected approximation 0 (tanh) or 1 (erf), got 2");
  expectError(run(KernelKind::Swiglu, {}, {&x, &up}, {&y}),
              "Swiglu kernel: expected operand #1 of shape [2, 4], got [4, 2]");

  Buffer logits(DType::F32, {2, 3, 5}), t23(DType::I32, {2, 3});
  Buffer t32(DType::I32, {3, 2}), scalar(DType::F32, {}),
      scalarBf(DType::BF16, {});
  expectError(
      run(KernelKind::CrossEntropy, {{kMean, 0, 0}, {}}, {&logits, &t32},
          {&scalar}),
      "CrossEntropy kernel: expected targets of shape [2, 3], got [3, 2]");
  expectError(
      run(KernelKind::CrossEntropy, {{kMean, 0, 0}, {}}, {&logits, &t23},
          {&scalarBf}),
      "CrossEntropy kernel: expected result element type f32, got bf16");
  expectError(run(KernelKind::CrossEntropy, {{kNone, 0, 0}, {}},
                  {&logits, &t23}, {&scalar}),
              "CrossEntropy kernel: expected result of shape [2, 3], got []");
  expectError(run(KernelKind::CrossEntropy, {{3, 0, 0}, {}}, {&logits, &t23},
                  {&scalar}),
              "CrossEntropy kernel: expected reduction 0 (mean), 1 (sum) or 2 "
              "(none), got 3");

  Buffer table(DType::F32, {10, 4}), ids(DType::I32, {3}),
      rows(DType::F32, {3, 5});
  expectError(run(KernelKind::Embedding, {}, {&table, &ids}, {&rows}),
              "Embedding kernel: expected result of shape [3, 4], got [3, 5]");
}

TEST(CompositeErrors, Moe) {
  Buffer logits(DType::F32, {4, 3}), w(DType::F32, {4, 4}),
      i(DType::I32, {4, 4});
  expectError(run(KernelKind::MoeTopK, {{4, 1}, {}}, {&logits}, {&w, &i}),
              "MoeTopK kernel: expected k in [1, 3], got 4");
  Buffer w2(DType::F32, {4, 2}), i2(DType::I32, {4, 2}),
      i2f(DType::F32, {4, 2});
  expectError(run(KernelKind::MoeTopK, {{2, 1}, {}}, {&logits}, {&w2, &i2f}),
              "MoeTopK kernel: expected indices of type i32 or i64, got f32");

  Buffer x(DType::F32, {4, 6}), buffers(DType::F32, {3, 2, 5});
  Buffer i3(DType::I32, {3, 2});
  expectError(run(KernelKind::MoeDispatch, {}, {&x, &i2}, {&buffers}),
              "MoeDispatch kernel: expected result feature size 6, got 5");
  Buffer good(DType::F32, {3, 2, 6});
  expectError(run(KernelKind::MoeDispatch, {}, {&x, &i3}, {&good}),
              "MoeDispatch kernel: expected indices for 4 tokens, got 3");
  Buffer y(DType::F32, {4, 6}), w3(DType::F32, {4, 3});
  expectError(
      run(KernelKind::MoeCombine, {}, {&good, &w3, &i2}, {&y}),
      "MoeCombine kernel: expected weights of shape [4, 2], got [4, 3]");
}

// A tensor with elements but no buffer is rejected before any access.
TEST(CompositeErrors, MissingBuffer) {
  Buffer y(DType::F32, {2, 4});
  TensorRef x{nullptr, DType::F32, {2, 4}};
  std::vector<TensorRef> outputs{y.ref()};
  expectError(runCpuKernel(KernelKind::Silu, {}, {x}, outputs, testPool()),
              "Silu kernel: expected a buffer for input #0 of shape [2, 4], "
              "got none");
}

} // namespace
