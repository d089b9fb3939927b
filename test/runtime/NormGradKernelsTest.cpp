// Tests of the CPU reference kernels of llmc.layer_norm_grad and
// llmc.rms_norm_grad (runtime/cpu/NormGrads.cpp): against the
// closed form written here from the definition (docs/ir.md), for every
// float storage type with CompositeTestSupport.h's tolerances; in f64
// against central finite differences of the forward kernels themselves
// (the derivative, not a copy of the formula); the same bits for any thread
// count; and the malformed launches' messages. The old primitive expansion
// is compared through the autodiff finite-difference tests
// (test/compiler/AutodiffTest.cpp, "layer_norm", "rms_norm").
#include "CompositeTestSupport.h"

#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace llmc::rt;
using namespace llmc::rt::compositetest;

struct NormGradRef {
  std::vector<double> dx, dgamma, dbeta;
};

/// The derivative of y = xhat * gamma (+ beta) for the cotangent dy, from
/// the definition: xhat = (x - mean) / sqrt(var + eps) per row (mean 0 for
/// rms_norm); dx = r (g - mean(g) - xhat mean(g xhat)), g = dy gamma.
NormGradRef normGradRef(const Buffer &x, const Buffer &gamma, const Buffer &dy,
                        double epsilon, bool centered) {
  int64_t dim = gamma.size(), rows = x.size() / dim;
  NormGradRef r{std::vector<double>(x.size()), std::vector<double>(dim),
                std::vector<double>(dim)};
  for (int64_t row = 0; row < rows; ++row) {
    auto at = [&](const Buffer &b, int64_t i) { return b.at(row * dim + i); };
    double mean = 0.0, var = 0.0;
    if (centered)
      for (int64_t i = 0; i < dim; ++i)
        mean += at(x, i) / dim;
    for (int64_t i = 0; i < dim; ++i)
      var += std::pow(at(x, i) - mean, 2) / dim;
    double rstd = 1.0 / std::sqrt(var + epsilon);
    double gMean = 0.0, gxMean = 0.0;
    for (int64_t i = 0; i < dim; ++i) {
      double g = at(dy, i) * gamma.at(i);
      double xhat = (at(x, i) - mean) * rstd;
      gMean += g / dim;
      gxMean += g * xhat / dim;
      r.dgamma[i] += at(dy, i) * xhat;
      r.dbeta[i] += at(dy, i);
    }
    for (int64_t i = 0; i < dim; ++i) {
      double g = at(dy, i) * gamma.at(i);
      double xhat = (at(x, i) - mean) * rstd;
      r.dx[row * dim + i] =
          rstd * (g - (centered ? gMean : 0.0) - xhat * gxMean);
    }
  }
  return r;
}

using NormGradTest = KernelTest;
INSTANTIATE_FOR_FLOATS(NormGradTest);

// gamma f32 whatever x's type (mixed precision keeps norm weights f32);
// rows offset by 3 so that the mean matters; 200 rows: several chunks of
// the column sums, the last one partial; an odd row length.
TEST_P(NormGradTest, LayerNormGradMatchesReference) {
  auto x = random(dtype(), {8, 25, 37}, rng, 1.0, 5.0);
  auto gamma = random(DType::F32, {37}, rng, 0.5, 1.5);
  auto dy = random(dtype(), {8, 25, 37}, rng);
  Buffer dx(dtype(), {8, 25, 37}), dgamma(DType::F32, {37}),
      dbeta(DType::F32, {37});
  ASSERT_OK(run(KernelKind::LayerNormGrad, {{}, {1e-5}},
                {x.get(), gamma.get(), dy.get()}, {&dx, &dgamma, &dbeta}));
  NormGradRef want = normGradRef(*x, *gamma, *dy, 1e-5, /*centered=*/true);
  EXPECT_TRUE(allClose(dx.values(), want.dx, tol()));
  // The column sums are f32 (gamma's type): f32's bound.
  double columnTol = std::max(tol(), tolerance(DType::F32));
  EXPECT_TRUE(allClose(dgamma.values(), want.dgamma, columnTol));
  EXPECT_TRUE(allClose(dbeta.values(), want.dbeta, columnTol));
}

// Gradients in gamma's own type when it is x's; one row (rank 1).
TEST_P(NormGradTest, LayerNormGradOneRowMatchesReference) {
  auto x = random(dtype(), {33}, rng);
  auto gamma = random(dtype(), {33}, rng, 0.5, 1.5);
  auto dy = random(dtype(), {33}, rng);
  Buffer dx(dtype(), {33}), dgamma(dtype(), {33}), dbeta(dtype(), {33});
  ASSERT_OK(run(KernelKind::LayerNormGrad, {{}, {1e-3}},
                {x.get(), gamma.get(), dy.get()}, {&dx, &dgamma, &dbeta}));
  NormGradRef want = normGradRef(*x, *gamma, *dy, 1e-3, true);
  EXPECT_TRUE(allClose(dx.values(), want.dx, tol()));
  EXPECT_TRUE(allClose(dgamma.values(), want.dgamma, tol()));
  EXPECT_TRUE(allClose(dbeta.values(), want.dbeta, tol()));
}

TEST_P(NormGradTest, RmsNormGradMatchesReference) {
  auto x = random(dtype(), {3, 70, 48}, rng);
  auto gamma = random(DType::F32, {48}, rng, 0.5, 1.5);
  auto dy = random(dtype(), {3, 70, 48}, rng);
  Buffer dx(dtype(), {3, 70, 48}), dgamma(DType::F32, {48});
  ASSERT_OK(run(KernelKind::RmsNormGrad, {{}, {1e-6}},
                {x.get(), gamma.get(), dy.get()}, {&dx, &dgamma}));
  NormGradRef want = normGradRef(*x, *gamma, *dy, 1e-6, /*centered=*/false);
  EXPECT_TRUE(allClose(dx.values(), want.dx, tol()));
  EXPECT_TRUE(allClose(dgamma.values(),
                       want.dgamma, std::max(tol(), tolerance(DType::F32))));
}

/// sum(forward(x) * dy) in f64 through the forward CPU kernel.
double forwardDot(KernelKind forward, const Buffer &x, const Buffer &gamma,
                  const Buffer &dy, double epsilon) {
  Buffer y(DType::F64, x.ref().shape);
  Status status = run(forward, {{}, {epsilon}}, {&x, &gamma}, {&y});
  EXPECT_TRUE(status.isOk()) << status.message();
  double dot = 0.0;
  for (int64_t i = 0; i < y.size(); ++i)
    dot += y.at(i) * dy.at(i);
  return dot;
}

// The derivative itself: central differences of sum(norm(x) * dy) in f64
// (step 1e-6, error O(h^2) plus 1e-16 / h rounding: 1e-7 relative is
// ample) for dx and dgamma, for both norms.
TEST(NormGradFiniteDifferences, MatchTheForwardKernels) {
  std::mt19937 rng(7);
  const double h = 1e-6, epsilon = 1e-5;
  for (bool centered : {true, false}) {
    KernelKind forward = centered ? KernelKind::LayerNorm : KernelKind::RmsNorm;
    KernelKind grad =
        centered ? KernelKind::LayerNormGrad : KernelKind::RmsNormGrad;
    auto x = random(DType::F64, {3, 11}, rng, -2.0, 3.0);
    auto gamma = random(DType::F64, {11}, rng, 0.5, 1.5);
    auto dy = random(DType::F64, {3, 11}, rng);
    Buffer dx(DType::F64, {3, 11}), dgamma(DType::F64, {11}),
        dbeta(DType::F64, {11});
    std::vector<const Buffer *> outputs{&dx, &dgamma};
    if (centered)
      outputs.push_back(&dbeta);
    ASSERT_OK(run(grad, {{}, {epsilon}}, {x.get(), gamma.get(), dy.get()},
                  outputs));
    auto numeric = [&](Buffer &b, int64_t i) {
      double saved = b.at(i);
      b.set(i, saved + h);
      double up = forwardDot(forward, *x, *gamma, *dy, epsilon);
      b.set(i, saved - h);
      double down = forwardDot(forward, *x, *gamma, *dy, epsilon);
      b.set(i, saved);
      return (up - down) / (2 * h);
    };
    std::vector<double> wantDx, wantDgamma;
    for (int64_t i = 0; i < x->size(); ++i)
      wantDx.push_back(numeric(*x, i));
    for (int64_t i = 0; i < gamma->size(); ++i)
      wantDgamma.push_back(numeric(*gamma, i));
    EXPECT_TRUE(allClose(dx.values(), wantDx, 1e-7)) << "centered " << centered;
    EXPECT_TRUE(allClose(dgamma.values(), wantDgamma, 1e-7))
        << "centered " << centered;
  }
}

// The column sums go by fixed chunks of rows in chunk order: the same bits
// for any number of threads.
TEST(NormGradDeterminism, SameResultForAnyThreadCount) {
  std::mt19937 rng(3);
  auto x = random(DType::F32, {300, 24}, rng, -1.0, 2.0);
  auto gamma = random(DType::F32, {24}, rng, 0.5, 1.5);
  auto dy = random(DType::F32, {300, 24}, rng);
  std::vector<std::vector<double>> results;
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    Buffer dx(DType::F32, {300, 24}), dgamma(DType::F32, {24}),
        dbeta(DType::F32, {24});
    ASSERT_OK(run(KernelKind::LayerNormGrad, {{}, {1e-5}},
                  {x.get(), gamma.get(), dy.get()}, {&dx, &dgamma, &dbeta},
                  pool));
    std::vector<double> all = dx.values();
    for (const Buffer *b : {&dgamma, &dbeta})
      for (double v : b->values())
        all.push_back(v);
    results.push_back(all);
  }
  EXPECT_EQ(results[0], results[1]);
}

void expectError(const Status &status, const std::string &message) {
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  EXPECT_EQ(status.message(), message);
}

TEST(NormGradErrors, Messages) {
  Buffer x(DType::F32, {2, 4}), g4(DType::F32, {4}), g3(DType::F32, {3}),
      dyBf16(DType::BF16, {2, 4}), dx(DType::F32, {2, 4}),
      d4(DType::F32, {4}), d4Bf16(DType::BF16, {4});
  expectError(run(KernelKind::LayerNormGrad, {{}, {1e-5}}, {&x, &g3, &x},
                  {&dx, &d4, &d4}),
              "LayerNormGrad kernel: expected gamma of shape [4], got [3]");
  expectError(run(KernelKind::LayerNormGrad, {{}, {1e-5}}, {&x, &g4, &dyBf16},
                  {&dx, &d4, &d4}),
              "LayerNormGrad kernel: expected dresult element type f32, got "
              "bf16");
  expectError(run(KernelKind::LayerNormGrad, {{}, {1e-5}}, {&x, &g4, &x},
                  {&dx, &d4, &d4Bf16}),
              "LayerNormGrad kernel: expected dbeta element type f32, got "
              "bf16");
  expectError(run(KernelKind::RmsNormGrad, {{}, {1e-6}}, {&x, &g4, &x},
                  {&dx, &d4, &d4}),
              "RmsNormGrad kernel: expected 3 inputs and 2 outputs, got 3 "
              "and 3");
  expectError(run(KernelKind::RmsNormGrad, {{}, {0.0}}, {&x, &g4, &x},
                  {&dx, &d4}),
              "RmsNormGrad kernel: expected a positive epsilon, got 0");
}

} // namespace
