// End-to-end check of --llmc-optimizer: a small f32 linear model (x·W + b,
// mean squared error) goes through --llmc-autodiff and --llmc-optimizer,
// @train_step is compiled for the CPU backend and run for 3 steps, the
// returned parameters and state fed back as arguments; after every step the
// parameters, m, v, the loss and grad_norm are compared with a plain AdamW
// in f64 on the host (gradients of the model derived by hand).
//
// Tolerance: relative error max|x - ref| / max|ref| < 1e-6 per tensor. The
// program computes in f32 (unit roundoff 6e-8); every output is a handful of
// roundings deep per step (the gradient sums over 4 rows, the update chain
// is ~10 ops), and 3 steps compound that to a few 1e-7 at most. A wrong
// formula (no bias correction, decay on the bias, clipping not applied, the
// wrong learning rate) is off by 1e-3 or more.
#include "codegen/BuildExecutable.h"
#include "ir/Registration.h"
#include "passes/Passes.h"
#include "runtime/Session.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace mlir;
namespace rt = llmc::rt;

namespace {

constexpr int64_t kRows = 4, kIn = 3, kOut = 2;
constexpr double kTolerance = 1e-6;
constexpr double kGradClip = 1.0, kWeightDecay = 0.1;
constexpr double kBeta1 = 0.9, kBeta2 = 0.95, kEpsilon = 1e-8;
// The schedule the program computes (llmc.lr_schedule): linear, 1 warmup
// step to 0.1, then down to 0.02 at step 3: 0.1, 0.06, 0.02.
constexpr double kPeakRate = 0.1, kMinRate = 0.02;
constexpr double kRates[] = {0.1, 0.06, 0.02};

constexpr const char *kModule = R"mlir(
func.func @loss(%w: tensor<3x2xf32> {llmc.name = "fc.weight", llmc.role = "parameter"},
                %b: tensor<2xf32> {llmc.name = "fc.bias", llmc.role = "parameter"},
                %x: tensor<4x3xf32> {llmc.name = "x", llmc.role = "input"},
                %y: tensor<4x2xf32> {llmc.name = "y", llmc.role = "input"}) -> tensor<f32> {
  %xw = llmc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %bb = llmc.broadcast %b dims [1] : tensor<2xf32> -> tensor<4x2xf32>
  %p = llmc.add %xw, %bb : tensor<4x2xf32>
  %r = llmc.sub %p, %y : tensor<4x2xf32>
  %s = llmc.mul %r, %r : tensor<4x2xf32>
  %l = llmc.reduce_mean %s dims [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

using Vec = std::vector<double>;

/// The parameters and AdamW state of the reference, in f64.
struct State {
  Vec w = Vec(kIn * kOut), b = Vec(kOut);
  Vec mw = Vec(kIn * kOut), vw = Vec(kIn * kOut), mb = Vec(kOut),
      vb = Vec(kOut);
};

struct Reference {
  double loss = 0, norm = 0;
};

/// One AdamW step of the reference on `s`: loss and gradients of
/// mean((x·W + b − y)²), clipping, then the update (decay on W only: b is
/// rank 1).
Reference referenceStep(State &s, const Vec &x, const Vec &y, int t,
                        double lr) {
  Reference out;
  Vec gw(kIn * kOut, 0.0), gb(kOut, 0.0);
  for (int64_t n = 0; n < kRows; ++n)
    for (int64_t j = 0; j < kOut; ++j) {
      double pred = s.b[j];
      for (int64_t i = 0; i < kIn; ++i)
        pred += x[n * kIn + i] * s.w[i * kOut + j];
      double r = pred - y[n * kOut + j];
      out.loss += r * r / (kRows * kOut);
      double dr = 2 * r / (kRows * kOut);
      gb[j] += dr;
      for (int64_t i = 0; i < kIn; ++i)
        gw[i * kOut + j] += x[n * kIn + i] * dr;
    }
  double sumsq = 0;
  for (double g : gw)
    sumsq += g * g;
  for (double g : gb)
    sumsq += g * g;
  out.norm = std::sqrt(sumsq);
  double clip = std::min(1.0, kGradClip / (out.norm + 1e-6));
  auto adamw = [&](Vec &p, Vec &m, Vec &v, const Vec &g, double decay) {
    for (size_t i = 0; i < p.size(); ++i) {
      double gc = g[i] * clip;
      m[i] = kBeta1 * m[i] + (1 - kBeta1) * gc;
      v[i] = kBeta2 * v[i] + (1 - kBeta2) * gc * gc;
      double mhat = m[i] / (1 - std::pow(kBeta1, t));
      double vhat = v[i] / (1 - std::pow(kBeta2, t));
      p[i] -= lr * (mhat / (std::sqrt(vhat) + kEpsilon) + decay * p[i]);
    }
  };
  adamw(s.w, s.mw, s.vw, gw, kWeightDecay);
  adamw(s.b, s.mb, s.vb, gb, 0.0);
  return out;
}

double relativeError(const float *got, const Vec &want) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::fabs(got[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return diff / scale;
}

enum class Clipping { Inactive, Active };

/// Names the case in test output instead of dumping its bytes.
void PrintTo(Clipping c, std::ostream *os) {
  *os << (c == Clipping::Active ? "Active" : "Inactive");
}

class OptimizerSteps : public ::testing::TestWithParam<Clipping> {
protected:
  OptimizerSteps() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  MLIRContext context;
};

TEST_P(OptimizerSteps, MatchAdamWInF64) {
  bool clipped = GetParam() == Clipping::Active;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModule, &context);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  pm.addPass(llmc::createAutodiffPass());
  llmc::OptimizerPassOptions options;
  options.beta1 = kBeta1;
  options.beta2 = kBeta2;
  options.epsilon = kEpsilon;
  options.weightDecay = kWeightDecay;
  options.gradClip = kGradClip;
  options.learningRate = kPeakRate;
  options.minLearningRate = kMinRate;
  options.warmupSteps = 1;
  options.totalSteps = 3;
  options.schedule = "linear";
  pm.addPass(llmc::createOptimizerPass(options));
  ASSERT_TRUE(succeeded(pm.run(*module)));

  llmc::CodegenOptions codegen;
  codegen.function = "train_step";
  FailureOr<rt::Executable> exe = llmc::buildExecutable(*module, codegen);
  ASSERT_TRUE(succeeded(exe));
  // loss, norm, lr, w, b, mw, vw, mb, vb
  ASSERT_EQ(exe->outputs.size(), 9u);
  rt::SessionOptions sessionOptions;
  sessionOptions.threads = 1;
  std::unique_ptr<rt::Session> session;
  ASSERT_TRUE(rt::Session::create(*exe, sessionOptions, session));

  // Fresh random values, never zero; the state starts nonzero too (v > 0),
  // as after earlier steps. Large targets give gradients with norm >> 1.
  std::mt19937_64 rng(clipped ? 17 : 5);
  std::uniform_real_distribution<double> magnitude(0.5, 1.5);
  std::bernoulli_distribution negative(0.5);
  auto fill = [&](Vec &v, double scale, bool positive = false) {
    for (double &e : v)
      e = scale * magnitude(rng) * (!positive && negative(rng) ? -1 : 1);
  };
  State s;
  Vec x(kRows * kIn), y(kRows * kOut);
  fill(s.w, 0.5);
  fill(s.b, 0.5);
  fill(x, 0.3);
  fill(y, clipped ? 100.0 : 0.3);
  fill(s.mw, 0.01);
  fill(s.mb, 0.01);
  fill(s.vw, 1e-4, /*positive=*/true);
  fill(s.vb, 1e-4, /*positive=*/true);
  // What the program sees is the f32 rounding of every input; the reference
  // starts from the same values.
  auto toF32 = [](const Vec &v) {
    return std::vector<float>(v.begin(), v.end());
  };
  auto round = [&](Vec &v) {
    std::vector<float> f = toF32(v);
    v.assign(f.begin(), f.end());
  };
  for (Vec *v : {&s.w, &s.b, &s.mw, &s.vw, &s.mb, &s.vb, &x, &y})
    round(*v);

  auto bind = [&](const std::string &name, const rt::Shape &shape,
                  const std::vector<float> &data) {
    rt::Status status = session->setArgument(
        name, rt::DType::F32, shape, data.data(), data.size() * sizeof(float));
    ASSERT_TRUE(status) << name << ": " << status.message();
  };
  const rt::Shape wShape = {kIn, kOut}, bShape = {kOut};
  bind("x", {kRows, kIn}, toF32(x));
  bind("y", {kRows, kOut}, toF32(y));
  std::vector<std::vector<float>> fed = {toF32(s.w),  toF32(s.b),  toF32(s.mw),
                                         toF32(s.vw), toF32(s.mb), toF32(s.vb)};
  double worst = 0;
  for (int t = 1; t <= 3; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    double lr = kRates[t - 1];
    bind("fc.weight", wShape, fed[0]);
    bind("fc.bias", bShape, fed[1]);
    bind("optimizer.m.fc.weight", wShape, fed[2]);
    bind("optimizer.v.fc.weight", wShape, fed[3]);
    bind("optimizer.m.fc.bias", bShape, fed[4]);
    bind("optimizer.v.fc.bias", bShape, fed[5]);
    bind("optimizer.step", {}, {float(t)});
    rt::Status status = session->run();
    ASSERT_TRUE(status) << status.message();

    Reference ref = referenceStep(s, x, y, t, lr);
    if (clipped)
      ASSERT_GT(ref.norm, 10 * kGradClip) << "clipping must be active";
    else
      ASSERT_LT(ref.norm, kGradClip) << "clipping must be inactive";

    auto output = [&](size_t index) {
      rt::TensorRef tensor;
      rt::Status s = session->output(index, tensor);
      EXPECT_TRUE(s) << s.message();
      return static_cast<const float *>(tensor.data);
    };
    const char *names[] = {"loss", "grad_norm", "lr",  "w",  "b",
                           "m.w",  "v.w",       "m.b", "v.b"};
    Vec loss = {ref.loss}, norm = {ref.norm}, rate = {lr};
    std::vector<const Vec *> wants = {&loss, &norm, &rate, &s.w, &s.b,
                                      &s.mw, &s.vw, &s.mb, &s.vb};
    for (size_t i = 0; i < wants.size(); ++i) {
      double error = relativeError(output(i), *wants[i]);
      worst = std::max(worst, error);
      EXPECT_LT(error, kTolerance) << names[i];
    }
    // The next step starts from what this one returned.
    for (size_t i = 0; i < fed.size(); ++i) {
      const float *data = output(i + 3);
      fed[i].assign(data, data + fed[i].size());
    }
  }
  std::printf("max relative error over 3 steps (%s): %.2e\n",
              clipped ? "clipping active" : "clipping inactive", worst);
}

INSTANTIATE_TEST_SUITE_P(Clipping, OptimizerSteps,
                         ::testing::Values(Clipping::Inactive,
                                           Clipping::Active),
                         [](const ::testing::TestParamInfo<Clipping> &info) {
                           return info.param == Clipping::Active ? "Active"
                                                                 : "Inactive";
                         });

// The pass rewrites @train_step; without it there is nothing to update.
TEST(OptimizerPass, FailsWithoutATrainStep) {
  DialectRegistry registry;
  llmc::registerLlmcDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModule, &context);
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  PassManager pm(&context);
  pm.addPass(llmc::createOptimizerPass());
  EXPECT_TRUE(failed(pm.run(*module)));
  EXPECT_EQ(message, "expected a function @train_step to add the optimizer "
                     "to, found none; run --llmc-autodiff first");
}

} // namespace
