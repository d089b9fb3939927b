// Tests of the CPU kernel of llmc.cross_entropy_grad
// (runtime/cpu/CrossEntropy.cpp) against the expansion autodiff emitted
// before the op existed, run with the primitive CPU kernels: the logits
// widened to the compute type (f64 for f64 logits, else f32), softmax,
// minus the one-hot, times the per-position weight g, g / max(count, 1) or
// g[n] (0 where ignored) computed in the compute type, cast back to the
// logits' type. The kernel computes in f64 and rounds once, the expansion
// rounds after each op, so they agree within a few roundings of the
// compute type (the tolerance of each test says which).
#include "CompositeTestSupport.h"

#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace llmc::rt;
using namespace llmc::rt::compositetest;

constexpr int64_t kMean = 0, kSum = 1, kNone = 2;

/// The old expansion of d(cross_entropy)/d(logits) with the primitive CPU
/// kernels; `dloss` holds one value (mean, sum) or one per position (none).
std::vector<double> expansion(const Buffer &logits, const Buffer &targets,
                              const std::vector<double> &dloss,
                              int64_t reduction, int64_t ignore) {
  const Shape &shape = logits.ref().shape;
  const int64_t vocab = shape.back(), rows = targets.size();
  const int64_t last = static_cast<int64_t>(shape.size()) - 1;
  DType compute =
      logits.ref().dtype == DType::F64 ? DType::F64 : DType::F32;
  // 1. The widened logits and their softmax (the Softmax kernel).
  Buffer wide(compute, shape), probs(compute, shape);
  EXPECT_TRUE(
      run(KernelKind::Cast, {}, {&logits}, {&wide}).isOk());
  EXPECT_TRUE(
      run(KernelKind::Softmax, {{last}, {}}, {&wide}, {&probs}).isOk());
  // 2. The weight per position, rounded to the compute type as the
  //    expansion's f32 (or f64) ops round it: count and max are exact, the
  //    division rounds once.
  auto round = [&](double v) {
    return compute == DType::F32 ? static_cast<double>(static_cast<float>(v))
                                 : v;
  };
  std::vector<double> weight(rows);
  double count = 0.0;
  for (int64_t n = 0; n < rows; ++n)
    count += targets.at(n) == ignore ? 0.0 : 1.0;
  for (int64_t n = 0; n < rows; ++n) {
    double g = reduction == kNone ? dloss[n] : dloss[0];
    if (reduction == kMean)
      g = round(g / std::max(count, 1.0));
    weight[n] = targets.at(n) == ignore ? 0.0 : g;
  }
  // 3. (probs - onehot) * weight with the Sub and Mul kernels, then the
  //    cast back.
  Buffer onehot(compute, shape), weights(compute, shape);
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t v = 0; v < vocab; ++v) {
      onehot.set(n * vocab + v, targets.at(n) == v ? 1.0 : 0.0);
      weights.set(n * vocab + v, weight[n]);
    }
  Buffer diff(compute, shape), scaled(compute, shape),
      out(logits.ref().dtype, shape);
  EXPECT_TRUE(run(KernelKind::Sub, {}, {&probs, &onehot}, {&diff}).isOk());
  EXPECT_TRUE(run(KernelKind::Mul, {}, {&diff, &weights}, {&scaled}).isOk());
  EXPECT_TRUE(run(KernelKind::Cast, {}, {&scaled}, {&out}).isOk());
  return out.values();
}

/// |got - want| <= rel * |want| + abs * |w| elementwise: `rel` one rounding
/// of the result type (the expansion rounds to the compute type first,
/// then to the result type: one ulp of a bf16 or f16 result apart at
/// most), `abs` a few roundings of the compute type relative to the weight
/// (the softmax, the subtraction and the product of the expansion).
::testing::AssertionResult gradClose(const std::vector<double> &got,
                                     const std::vector<double> &want,
                                     DType dtype, double weight) {
  double rel = dtype == DType::F64   ? 1e-12
               : dtype == DType::F32 ? 1e-6
               : dtype == DType::BF16 ? std::ldexp(1.0, -7)
                                      : std::ldexp(1.0, -10);
  double abs = (dtype == DType::F64 ? 1e-14 : 4e-7) * std::fabs(weight);
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= rel * std::fabs(want[i]) + abs))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i]
             << " (bound " << rel * std::fabs(want[i]) + abs << ")";
  return ::testing::AssertionSuccess();
}

using CrossEntropyGradTest = KernelTest;
INSTANTIATE_FOR_FLOATS(CrossEntropyGradTest);

// Every reduction with ignored positions, i32 and i64 targets, an odd
// vocabulary; dloss is not 1 so that a missing factor shows.
TEST_P(CrossEntropyGradTest, MatchesTheOldExpansion) {
  auto logits = random(dtype(), {3, 5, 37}, rng, -6.0, 6.0);
  std::vector<double> t;
  std::uniform_int_distribution<int> cls(0, 36);
  for (int i = 0; i < 15; ++i)
    t.push_back(i % 4 == 1 ? -100 : cls(rng));
  for (DType targetType : {DType::I32, DType::I64}) {
    SCOPED_TRACE(dtypeName(targetType));
    Buffer targets(targetType, {3, 5}, t);
    for (int64_t reduction : {kMean, kSum, kNone}) {
      SCOPED_TRACE("reduction " + std::to_string(reduction));
      std::vector<double> g = {0.75};
      Shape gShape = {};
      if (reduction == kNone) {
        g.clear();
        for (int i = 0; i < 15; ++i)
          g.push_back(0.25 + 0.125 * (i % 5));
        gShape = {3, 5};
      }
      Buffer dloss(DType::F32, gShape, g);
      Buffer got(dtype(), {3, 5, 37});
      ASSERT_OK(run(KernelKind::CrossEntropyGrad, {{reduction, 1, -100}, {}},
                    {logits.get(), &targets, &dloss}, {&got}));
      std::vector<double> want =
          expansion(*logits, targets, g, reduction, -100);
      EXPECT_TRUE(gradClose(got.values(), want, dtype(), 1.0));
      // Ignored rows are exactly zero, and every counted row sums to ~0
      // (softmax sums to 1, the one-hot too).
      for (int64_t n = 0; n < 15; ++n) {
        double sum = 0.0;
        for (int64_t v = 0; v < 37; ++v)
          sum += got.at(n * 37 + v);
        if (t[n] == -100)
          EXPECT_EQ(sum, 0.0) << "row " << n;
        else
          EXPECT_NEAR(sum, 0.0, 37 * 4e-3) << "row " << n;
      }
    }
  }
}

// Without an ignore_index every position counts: the mean divides by B*T.
TEST_P(CrossEntropyGradTest, MeanWithoutIgnoreDividesByEveryPosition) {
  auto logits = random(dtype(), {4, 1030}, rng, -3.0, 3.0);
  Buffer targets(DType::I32, {4}, {0, 1029, 17, 512});
  Buffer dloss(DType::F32, {}, {2.0});
  Buffer got(dtype(), {4, 1030});
  ASSERT_OK(run(KernelKind::CrossEntropyGrad, {{kMean, 0, 0}, {}},
                {logits.get(), &targets, &dloss}, {&got}));
  std::vector<double> want = expansion(*logits, targets, {2.0}, kMean, -1);
  EXPECT_TRUE(gradClose(got.values(), want, dtype(), 0.5));
}

// The forward's optional lse result: logsumexp of every row in f64,
// rounded once to f32 (ignored rows too), and the loss unchanged by it. The
// gradient given that lse agrees with the gradient that recomputes it
// within the f32 rounding of the lse (half an f32 ulp of a value below 8:
// about 5e-7 absolute in the exponent, so 1e-6 relative) and the rounding
// of the result.
TEST_P(CrossEntropyGradTest, LseResultFeedsTheGradient) {
  auto logits = random(dtype(), {2, 3, 41}, rng, -6.0, 6.0);
  Buffer targets(DType::I64, {2, 3}, {0, -100, 40, 7, 7, 19});
  Buffer loss(DType::F32, {}), alone(DType::F32, {});
  Buffer lse(DType::F32, {2, 3});
  const KernelAttrs attrs{{kMean, 1, -100}, {}};
  ASSERT_OK(run(KernelKind::CrossEntropy, attrs, {logits.get(), &targets},
                {&loss, &lse}));
  ASSERT_OK(run(KernelKind::CrossEntropy, attrs, {logits.get(), &targets},
                {&alone}));
  EXPECT_EQ(loss.at(0), alone.at(0));
  for (int64_t n = 0; n < 6; ++n) {
    double max = -INFINITY, sum = 0.0;
    for (int64_t v = 0; v < 41; ++v)
      max = std::max(max, logits->at(n * 41 + v));
    for (int64_t v = 0; v < 41; ++v)
      sum += std::exp(logits->at(n * 41 + v) - max);
    EXPECT_EQ(lse.at(n), static_cast<double>(static_cast<float>(
                             max + std::log(sum))))
        << "row " << n;
  }
  Buffer dloss(DType::F32, {}, {1.5});
  Buffer with(dtype(), {2, 3, 41}), without(dtype(), {2, 3, 41});
  ASSERT_OK(run(KernelKind::CrossEntropyGrad, attrs,
                {logits.get(), &targets, &dloss, &lse}, {&with}));
  ASSERT_OK(run(KernelKind::CrossEntropyGrad, attrs,
                {logits.get(), &targets, &dloss}, {&without}));
  // The f32 lse bounds the agreement at 2^-20 relative even for f64.
  double rel = std::max(std::ldexp(1.0, -20),
                        dtype() == DType::BF16  ? std::ldexp(1.0, -7)
                        : dtype() == DType::F16 ? std::ldexp(1.0, -10)
                                                : 0.0);
  for (int64_t i = 0; i < with.size(); ++i)
    ASSERT_LE(std::fabs(with.at(i) - without.at(i)),
              rel * std::fabs(without.at(i)) + 6e-7)
        << "element " << i;
  // A wrong-shaped lse is named.
  Buffer flat(DType::F32, {6});
  Status bad = run(KernelKind::CrossEntropyGrad, attrs,
                   {logits.get(), &targets, &dloss, &flat}, {&with});
  EXPECT_EQ(bad.message(), "CrossEntropyGrad kernel: expected lse of shape "
                           "[2, 3], got [6]");
}

// Every position ignored: zeros, whatever the reduction (the mean's
// divisor is then 1, as the forward's mean is 0).
TEST(CrossEntropyGradEdges, AllIgnoredGivesZeros) {
  std::mt19937 rng(3);
  auto logits = random(DType::F32, {4, 6}, rng);
  Buffer targets(DType::I32, {4}, {-1, -1, -1, -1});
  Buffer dloss(DType::F32, {}, {1.0});
  for (int64_t reduction : {kMean, kSum}) {
    Buffer out(DType::F32, {4, 6}, std::vector<double>(24, 7.0));
    ASSERT_OK(run(KernelKind::CrossEntropyGrad, {{reduction, 1, -1}, {}},
                  {logits.get(), &targets, &dloss}, {&out}));
    EXPECT_EQ(out.values(), std::vector<double>(24, 0.0));
  }
}

TEST(CrossEntropyGradEdges, ErrorsNameTheOperand) {
  Buffer logits(DType::F32, {2, 11}, std::vector<double>(22, 0.5));
  Buffer targets(DType::I32, {2}, {3, 11});
  Buffer scalar(DType::F32, {}, {1.0});
  Buffer out(DType::F32, {2, 11});
  Status bad = run(KernelKind::CrossEntropyGrad, {{kMean, 0, 0}, {}},
                   {&logits, &targets, &scalar}, {&out});
  EXPECT_EQ(bad.message(), "CrossEntropyGrad kernel: expected targets in "
                           "[0, 11), got 11 at position [1]");
  Buffer good(DType::I32, {2}, {3, 4});
  Status none = run(KernelKind::CrossEntropyGrad, {{kNone, 0, 0}, {}},
                    {&logits, &good, &scalar}, {&out});
  EXPECT_EQ(none.message(), "CrossEntropyGrad kernel: expected dloss of "
                            "shape [2], got []");
  Buffer bf16Out(DType::BF16, {2, 11});
  Status type = run(KernelKind::CrossEntropyGrad, {{kSum, 0, 0}, {}},
                    {&logits, &good, &scalar}, {&bf16Out});
  EXPECT_EQ(type.message(), "CrossEntropyGrad kernel: expected dlogits "
                            "element type f32, got bf16");
}

} // namespace
