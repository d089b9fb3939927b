// Gradient checks of every primitive and composite derivative rule: for
// each op a small
// f64 function loss = reduce_sum(op(p...) * r) goes through --llmc-autodiff,
// @train_step and @loss are compiled for the CPU backend, and every gradient
// is compared with central finite differences of @loss.
//
// Tolerance: relative error max|g - fd| / max|fd| < 1e-6 per gradient. The
// step is h = 1e-5 (absolute; the inputs have magnitudes in [0.5, 1.5]): the
// truncation error of central differences is h²·|f'''|/6 ≈ 1e-10, and the
// rounding error about ε·|loss|/h ≈ 1e-16·10/1e-5 = 1e-10, both far below
// the tolerance, so a failure means a wrong rule rather than noise. Inputs of
// piecewise ops (abs, max, min, reduce_max, the compare under select) are
// kept further than h from their kinks. cross_entropy's result is f32 by
// definition, so its differences use an f64 host reference of the loss
// instead of @loss (its rule's own error is the f32 rounding of r, 6e-8).
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
#include <functional>
#include <random>

using namespace mlir;
namespace rt = llmc::rt;

namespace {

using Shape = std::vector<int64_t>;
using Values = std::vector<std::vector<double>>;

constexpr double kStep = 1e-5;
constexpr double kTolerance = 1e-6;

enum class Sign { Any, Positive };

struct GradCase {
  std::string name;
  std::vector<Shape> params; // %p0, %p1, ...: f64 parameters
  Shape out;                 // the shape of %y
  std::string body;          // defines %y
  Sign sign = Sign::Any;
  /// Moves inputs away from the kinks of piecewise ops.
  std::function<void(Values &)> adjust;
  /// When set, the finite differences evaluate this f64 host reference of
  /// @loss instead of running it: for ops whose result is f32 by definition
  /// (cross_entropy), whose rounding would swamp the differences.
  std::function<double(const Values &, const std::vector<double> &)> reference;
};

/// Names the case in test output instead of dumping its bytes.
void PrintTo(const GradCase &c, std::ostream *os) { *os << c.name; }

std::string typeOf(const Shape &shape, const char *element = "f64") {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + element + ">";
}

int64_t count(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string moduleText(const GradCase &c) {
  std::string text = "func.func @loss(";
  for (size_t i = 0; i < c.params.size(); ++i)
    text += "%p" + std::to_string(i) + ": " + typeOf(c.params[i]) +
            " {llmc.name = \"p" + std::to_string(i) +
            "\", llmc.role = \"parameter\"}, ";
  std::string out = typeOf(c.out);
  text += "%r: " + out +
          " {llmc.name = \"r\", llmc.role = \"input\"}) -> "
          "tensor<f64> {\n";
  text += c.body + "\n";
  text += "  %m = llmc.mul %y, %r : " + out + "\n";
  std::string dims;
  for (size_t d = 0; d < c.out.size(); ++d)
    dims += (d ? ", " : "") + std::to_string(d);
  text += "  %l = llmc.reduce_sum %m dims [" + dims + "] : " + out +
          " -> tensor<f64>\n  return %l : tensor<f64>\n}\n";
  return text;
}

/// Separates two operands so that max/min/compare never see a near-tie.
void separate(Values &v) {
  for (size_t i = 0; i < v[0].size(); ++i)
    if (std::fabs(v[0][i] - v[1][i]) < 0.1)
      v[1][i] += v[1][i] > v[0][i] ? 0.2 : -0.2;
}

/// Cross-entropy of logits [N..., V] (flattened rows) against targets, with
/// -100 ignored, reduced like the op, dotted with r: the host reference.
double crossEntropyLoss(const std::vector<double> &logits,
                        const std::vector<int> &targets, int64_t vocab,
                        const char *reduction, const std::vector<double> &r) {
  std::vector<double> losses(targets.size(), 0.0);
  double counted = 0;
  for (size_t n = 0; n < targets.size(); ++n) {
    if (targets[n] == -100)
      continue;
    const double *row = &logits[n * vocab];
    double max = *std::max_element(row, row + vocab), sum = 0;
    for (int64_t v = 0; v < vocab; ++v)
      sum += std::exp(row[v] - max);
    losses[n] = max + std::log(sum) - row[targets[n]];
    counted += 1;
  }
  double total = 0;
  if (std::string(reduction) == "none") {
    for (size_t n = 0; n < losses.size(); ++n)
      total += losses[n] * r[n];
    return total;
  }
  for (double l : losses)
    total += l;
  if (std::string(reduction) == "mean")
    total /= std::max(counted, 1.0);
  return total * r[0];
}

// Long: the table of every op's case, one entry a few lines; split, it
// would only be harder to scan.
std::vector<GradCase> cases() {
  std::vector<GradCase> all;
  auto unary = [&](const char *op, Sign sign) {
    all.push_back({op,
                   {{3, 4}},
                   {3, 4},
                   std::string("  %y = llmc.") + op + " %p0 : tensor<3x4xf64>",
                   sign,
                   nullptr});
  };
  unary("neg", Sign::Any);
  unary("abs", Sign::Any);
  unary("exp", Sign::Any);
  unary("log", Sign::Positive);
  unary("tanh", Sign::Any);
  unary("sqrt", Sign::Positive);
  unary("rsqrt", Sign::Positive);
  auto binary = [&](const char *op, std::function<void(Values &)> adjust) {
    all.push_back(
        {op,
         {{3, 4}, {3, 4}},
         {3, 4},
         std::string("  %y = llmc.") + op + " %p0, %p1 : tensor<3x4xf64>",
         Sign::Any,
         adjust});
  };
  binary("add", nullptr);
  binary("sub", nullptr);
  binary("mul", nullptr);
  binary("div", nullptr);
  binary("max", separate);
  binary("min", separate);
  all.push_back({"cast",
                 {{3, 4}},
                 {3, 4},
                 "  %y = llmc.cast %p0 : tensor<3x4xf64> -> tensor<3x4xf64>"});
  all.push_back({"broadcast",
                 {{3, 1}},
                 {2, 3, 4},
                 "  %y = llmc.broadcast %p0 dims [1, 2] : tensor<3x1xf64> -> "
                 "tensor<2x3x4xf64>"});
  all.push_back(
      {"reshape",
       {{3, 4}},
       {2, 6},
       "  %y = llmc.reshape %p0 : tensor<3x4xf64> -> tensor<2x6xf64>"});
  all.push_back({"transpose",
                 {{2, 3, 4}},
                 {4, 2, 3},
                 "  %y = llmc.transpose %p0 perm [2, 0, 1] : tensor<2x3x4xf64> "
                 "-> tensor<4x2x3xf64>"});
  all.push_back({"slice",
                 {{4, 5}},
                 {2, 2},
                 "  %y = llmc.slice %p0 starts [1, 2] limits [3, 4] : "
                 "tensor<4x5xf64> -> tensor<2x2xf64>"});
  all.push_back({"slice_edge",
                 {{4, 5}},
                 {3, 4},
                 "  %y = llmc.slice %p0 starts [0, 1] limits [3, 5] : "
                 "tensor<4x5xf64> -> tensor<3x4xf64>"});
  all.push_back({"concat",
                 {{2, 3}, {2, 2}},
                 {2, 5},
                 "  %y = llmc.concat %p0, %p1 dim 1 : (tensor<2x3xf64>, "
                 "tensor<2x2xf64>) -> tensor<2x5xf64>"});
  all.push_back({"reduce_sum",
                 {{3, 4}},
                 {3},
                 "  %y = llmc.reduce_sum %p0 dims [1] : tensor<3x4xf64> -> "
                 "tensor<3xf64>"});
  all.push_back({"reduce_sum_keep",
                 {{3, 4}},
                 {1, 4},
                 "  %y = llmc.reduce_sum %p0 dims [0] keep_dims : "
                 "tensor<3x4xf64> -> tensor<1x4xf64>"});
  all.push_back({"reduce_mean",
                 {{2, 3, 4}},
                 {3},
                 "  %y = llmc.reduce_mean %p0 dims [0, 2] : tensor<2x3x4xf64> "
                 "-> tensor<3xf64>"});
  all.push_back({"reduce_max",
                 {{3, 4}},
                 {3},
                 "  %y = llmc.reduce_max %p0 dims [1] : tensor<3x4xf64> -> "
                 "tensor<3xf64>"});
  all.push_back({"reduce_max_keep",
                 {{3, 4}},
                 {1, 4},
                 "  %y = llmc.reduce_max %p0 dims [0] keep_dims : "
                 "tensor<3x4xf64> -> tensor<1x4xf64>"});
  auto matmul = [&](const char *name, Shape a, Shape b, Shape c,
                    const char *flags) {
    all.push_back({name,
                   {a, b},
                   c,
                   std::string("  %y = llmc.matmul %p0, %p1") + flags + " : " +
                       typeOf(a) + ", " + typeOf(b) + " -> " + typeOf(c)});
  };
  matmul("matmul", {3, 4}, {4, 5}, {3, 5}, "");
  matmul("matmul_ta", {4, 3}, {4, 5}, {3, 5}, " transpose_a");
  matmul("matmul_tb", {3, 4}, {5, 4}, {3, 5}, " transpose_b");
  matmul("matmul_ta_tb", {4, 3}, {5, 4}, {3, 5}, " transpose_a transpose_b");
  matmul("matmul_batched", {2, 3, 4}, {2, 4, 5}, {2, 3, 5}, "");
  matmul("matmul_batched_ta_tb", {2, 4, 3}, {2, 5, 4}, {2, 3, 5},
         " transpose_a transpose_b");
  matmul("matmul_shared_rhs", {2, 3, 4}, {4, 5}, {2, 3, 5}, "");
  matmul("matmul_shared_rhs_ta", {2, 4, 3}, {4, 5}, {2, 3, 5}, " transpose_a");
  matmul("matmul_shared_rhs_tb", {2, 3, 4}, {5, 4}, {2, 3, 5}, " transpose_b");
  // Repeated indices: their gradients must accumulate.
  all.push_back(
      {"gather",
       {{5, 3}},
       {4, 3},
       "  %i = llmc.constant dense<[4, 0, 4, 2]> : tensor<4xi32>\n"
       "  %y = llmc.gather %p0[%i] dim 0 : (tensor<5x3xf64>, tensor<4xi32>) "
       "-> tensor<4x3xf64>"});
  all.push_back(
      {"gather_dim1",
       {{3, 5}},
       {3, 2, 2},
       "  %i = llmc.constant dense<[[1, 3], [3, 0]]> : tensor<2x2xi32>\n"
       "  %y = llmc.gather %p0[%i] dim 1 : (tensor<3x5xf64>, tensor<2x2xi32>) "
       "-> tensor<3x2x2xf64>"});
  all.push_back({"scatter_add",
                 {{5, 3}, {4, 3}},
                 {5, 3},
                 "  %i = llmc.constant dense<[1, 3, 1, 0]> : tensor<4xi32>\n"
                 "  %y = llmc.scatter_add %p0[%i], %p1 dim 0 : "
                 "(tensor<5x3xf64>, tensor<4xi32>, tensor<4x3xf64>) -> "
                 "tensor<5x3xf64>"});
  // The condition comes from the parameters: compare passes no gradient.
  all.push_back({"select",
                 {{3, 4}, {3, 4}},
                 {3, 4},
                 "  %c = llmc.compare gt %p0, %p1 : (tensor<3x4xf64>, "
                 "tensor<3x4xf64>) -> tensor<3x4xi1>\n"
                 "  %y = llmc.select %c, %p0, %p1 : (tensor<3x4xi1>, "
                 "tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>",
                 Sign::Any,
                 separate});
  // A chain with a weight used twice (w·wᵀ): the two cotangents add up.
  all.push_back({"tied_chain",
                 {{3, 4}, {3}},
                 {3, 3},
                 "  %a = llmc.matmul %p0, %p0 transpose_b : tensor<3x4xf64>, "
                 "tensor<3x4xf64> -> tensor<3x3xf64>\n"
                 "  %b = llmc.broadcast %p1 dims [1] : tensor<3xf64> -> "
                 "tensor<3x3xf64>\n"
                 "  %s = llmc.add %a, %b : tensor<3x3xf64>\n"
                 "  %y = llmc.tanh %s : tensor<3x3xf64>"});
  return all;
}

class AutodiffGradients : public ::testing::TestWithParam<GradCase> {
protected:
  AutodiffGradients() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  MLIRContext context;
};

/// Binds the parameters and `r`, runs, and returns output `index` as f64.
std::vector<double> runOnce(rt::Session &session, const GradCase &c,
                            const Values &params, const std::vector<double> &r,
                            size_t index) {
  for (size_t i = 0; i < params.size(); ++i) {
    rt::Status s = session.setArgument("p" + std::to_string(i), rt::DType::F64,
                                       c.params[i], params[i].data(),
                                       params[i].size() * sizeof(double));
    EXPECT_TRUE(s) << s.message();
  }
  rt::Status s = session.setArgument("r", rt::DType::F64, c.out, r.data(),
                                     r.size() * sizeof(double));
  EXPECT_TRUE(s) << s.message();
  s = session.run();
  EXPECT_TRUE(s) << s.message();
  rt::TensorRef out;
  s = session.output(index, out);
  EXPECT_TRUE(s) << s.message();
  const auto *data = static_cast<const double *>(out.data);
  return std::vector<double>(data, data + out.numElements());
}

TEST_P(AutodiffGradients, MatchFiniteDifferencesInF64) {
  const GradCase &c = GetParam();
  std::string text = moduleText(c);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module) << text;
  PassManager pm(&context);
  pm.addPass(llmc::createAutodiffPass());
  ASSERT_TRUE(succeeded(pm.run(*module))) << text;

  llmc::CodegenOptions lossOptions, stepOptions;
  stepOptions.function = "train_step";
  FailureOr<rt::Executable> lossExe =
      llmc::buildExecutable(*module, lossOptions);
  FailureOr<rt::Executable> stepExe =
      llmc::buildExecutable(*module, stepOptions);
  ASSERT_TRUE(succeeded(lossExe) && succeeded(stepExe));
  rt::SessionOptions sessionOptions;
  sessionOptions.threads = 1;
  std::unique_ptr<rt::Session> lossRun, stepRun;
  ASSERT_TRUE(rt::Session::create(*lossExe, sessionOptions, lossRun));
  ASSERT_TRUE(rt::Session::create(*stepExe, sessionOptions, stepRun));
  ASSERT_EQ(stepExe->outputs.size(), c.params.size() + 1);

  // Fresh random inputs per case, seeded by its name; never zero.
  std::mt19937_64 rng(std::hash<std::string>()(c.name));
  std::uniform_real_distribution<double> magnitude(0.5, 1.5);
  std::bernoulli_distribution negative(0.5);
  auto draw = [&](Sign sign) {
    double v = magnitude(rng);
    return sign == Sign::Any && negative(rng) ? -v : v;
  };
  Values params;
  for (const Shape &shape : c.params) {
    params.emplace_back(count(shape));
    for (double &v : params.back())
      v = draw(c.sign);
  }
  if (c.adjust)
    c.adjust(params);
  std::vector<double> r(count(c.out));
  for (double &v : r)
    v = draw(Sign::Any);

  double loss = runOnce(*lossRun, c, params, r, 0)[0];
  EXPECT_NEAR(runOnce(*stepRun, c, params, r, 0)[0], loss,
              1e-12 * std::max(1.0, std::fabs(loss)));
  for (size_t p = 0; p < params.size(); ++p) {
    std::vector<double> grad = runOnce(*stepRun, c, params, r, p + 1);
    ASSERT_EQ(grad.size(), params[p].size());
    double maxDiff = 0, maxFd = 0;
    for (size_t i = 0; i < grad.size(); ++i) {
      Values plus = params, minus = params;
      plus[p][i] += kStep;
      minus[p][i] -= kStep;
      auto lossAt = [&](const Values &at) {
        return c.reference ? c.reference(at, r)
                           : runOnce(*lossRun, c, at, r, 0)[0];
      };
      double fd = (lossAt(plus) - lossAt(minus)) / (2 * kStep);
      maxDiff = std::max(maxDiff, std::fabs(grad[i] - fd));
      maxFd = std::max(maxFd, std::fabs(fd));
    }
    double relative = maxDiff / std::max(maxFd, 1e-300);
    std::printf("[ fd       ] %s d/dp%zu relative error %.3g\n", c.name.c_str(),
                p, relative);
    EXPECT_LT(relative, kTolerance) << c.name << " d/dp" << p << "\n" << text;
  }
}

/// The composite ops, each in f64 with integer operands as constants.
std::vector<GradCase> compositeCases() {
  std::vector<GradCase> all;
  // Repeated ids accumulate; the out-of-range id 7 (a zero row) gets nothing.
  all.push_back(
      {"embedding",
       {{5, 3}},
       {2, 3, 3},
       "  %i = llmc.constant dense<[[4, 0, 4], [2, 7, 1]]> : tensor<2x3xi32>\n"
       "  %y = llmc.embedding %p0[%i] : (tensor<5x3xf64>, tensor<2x3xi32>) "
       "-> tensor<2x3x3xf64>"});
  auto elementwise = [&](const char *name, const std::string &op) {
    all.push_back(
        {name, {{3, 4}}, {3, 4}, "  %y = llmc." + op + " : tensor<3x4xf64>"});
  };
  elementwise("silu", "silu %p0");
  elementwise("gelu_tanh", "gelu %p0 tanh");
  elementwise("gelu_erf", "gelu %p0 erf");
  all.push_back({"swiglu",
                 {{3, 4}, {3, 4}},
                 {3, 4},
                 "  %y = llmc.swiglu %p0, %p1 : tensor<3x4xf64>"});
  all.push_back({"softmax",
                 {{2, 3, 4}},
                 {2, 3, 4},
                 "  %y = llmc.softmax %p0 dim 1 : tensor<2x3x4xf64>"});
  all.push_back({"softmax_last",
                 {{3, 5}},
                 {3, 5},
                 "  %y = llmc.softmax %p0 dim 1 : tensor<3x5xf64>"});
  all.push_back({"layer_norm",
                 {{2, 3, 6}, {6}, {6}},
                 {2, 3, 6},
                 "  %y = llmc.layer_norm %p0, %p1, %p2 epsilon 1.0e-05 : "
                 "(tensor<2x3x6xf64>, tensor<6xf64>, tensor<6xf64>) -> "
                 "tensor<2x3x6xf64>"});
  all.push_back({"layer_norm_no_beta",
                 {{4, 5}, {5}},
                 {4, 5},
                 "  %y = llmc.layer_norm %p0, %p1 epsilon 1.0e-05 : "
                 "(tensor<4x5xf64>, tensor<5xf64>) -> tensor<4x5xf64>"});
  all.push_back({"rms_norm",
                 {{2, 3, 6}, {6}},
                 {2, 3, 6},
                 "  %y = llmc.rms_norm %p0, %p1 epsilon 1.0e-06 : "
                 "(tensor<2x3x6xf64>, tensor<6xf64>) -> tensor<2x3x6xf64>"});
  // The result is f32 by definition: the gradient is checked against the
  // f64 host reference (the rule's own error is the f32 rounding of r,
  // 6e-8 relative). Position [0, 2] is ignored.
  auto crossEntropy = [&](const char *name, const char *reduction) {
    bool none = std::string(reduction) == "none";
    std::string body =
        "  %t = llmc.constant dense<[[1, 4, -100], [0, 2, 3]]> : "
        "tensor<2x3xi32>\n"
        "  %c = llmc.cross_entropy %p0, %t ignore_index -100 reduction " +
        std::string(reduction) + " : (tensor<2x3x5xf64>, tensor<2x3xi32>) -> " +
        (none ? "tensor<2x3xf32>" : "tensor<f32>") + "\n";
    if (none)
      body += "  %y = llmc.cast %c : tensor<2x3xf32> -> tensor<2x3xf64>";
    else
      body += "  %w = llmc.cast %c : tensor<f32> -> tensor<f64>\n"
              "  %y = llmc.reshape %w : tensor<f64> -> tensor<1xf64>";
    GradCase c{name, {{2, 3, 5}}, none ? Shape{2, 3} : Shape{1}, body};
    c.reference = [reduction](const Values &p, const std::vector<double> &r) {
      return crossEntropyLoss(p[0], {1, 4, -100, 0, 2, 3}, 5, reduction, r);
    };
    all.push_back(c);
  };
  crossEntropy("cross_entropy_mean", "mean");
  crossEntropy("cross_entropy_sum", "sum");
  crossEntropy("cross_entropy_none", "none");
  all.push_back({"rope",
                 {{2, 3, 6}},
                 {2, 3, 6},
                 "  %y = llmc.rope %p0 theta 1.0e+04 : (tensor<2x3x6xf64>) -> "
                 "tensor<2x3x6xf64>"});
  all.push_back(
      {"rope_positions",
       {{2, 3, 4}},
       {2, 3, 4},
       "  %q = llmc.constant dense<[5, 2, 9]> : tensor<3xi32>\n"
       "  %y = llmc.rope %p0 positions %q theta 1.0e+02 : (tensor<2x3x4xf64>, "
       "tensor<3xi32>) -> tensor<2x3x4xf64>"});
  // A scaled rope's per-pair frequencies (LLaMA 3): the derivative rotates
  // back with the same frequencies.
  all.push_back(
      {"rope_inverse_frequencies",
       {{2, 3, 6}},
       {2, 3, 6},
       "  %q = llmc.constant dense<[5, 2, 9]> : tensor<3xi32>\n"
       "  %y = llmc.rope %p0 positions %q theta 1.0e+04 inv_freq [0.7, 0.13, "
       "0.0021] : (tensor<2x3x6xf64>, tensor<3xi32>) -> tensor<2x3x6xf64>"});
  auto attention = [&](const char *name, Shape q, Shape kv, const char *flags) {
    all.push_back({name,
                   {q, kv, kv},
                   q,
                   std::string("  %y = llmc.attention %p0, %p1, %p2") + flags +
                       " : (" + typeOf(q) + ", " + typeOf(kv) + ", " +
                       typeOf(kv) + ") -> " + typeOf(q)});
  };
  attention("attention", {1, 2, 3, 4}, {1, 2, 5, 4}, " scale 3.0e-01");
  attention("attention_causal", {2, 2, 4, 3}, {2, 2, 4, 3}, " causal");
  attention("attention_gqa", {1, 4, 3, 4}, {1, 2, 3, 4}, "");
  attention("attention_gqa_causal", {1, 4, 3, 4}, {1, 2, 3, 4}, " causal");
  // Mixture of experts. The routing [[0, 1], [1, 2], [0, 1], [0, 2]] over 3
  // experts of capacity 2 drops the pairs (2, 0) and (2, 1): they must get
  // no gradient. Top-k with random logits never sees a tie within h.
  const char *routing = "  %e = llmc.constant dense<[[0, 1], [1, 2], [0, 1], "
                        "[0, 2]]> : tensor<4x2xi32>\n";
  all.push_back({"moe_topk",
                 {{4, 5}},
                 {4, 2},
                 "  %y, %e = llmc.moe_topk %p0 k 2 : tensor<4x5xf64> -> "
                 "tensor<4x2xf64>, tensor<4x2xi32>"});
  all.push_back({"moe_topk_normalize",
                 {{4, 5}},
                 {4, 3},
                 "  %y, %e = llmc.moe_topk %p0 k 3 normalize : tensor<4x5xf64> "
                 "-> tensor<4x3xf64>, tensor<4x3xi32>"});
  all.push_back({"moe_dispatch",
                 {{4, 3}},
                 {3, 2, 3},
                 std::string(routing) +
                     "  %y = llmc.moe_dispatch %p0, %e : (tensor<4x3xf64>, "
                     "tensor<4x2xi32>) -> tensor<3x2x3xf64>"});
  all.push_back({"moe_combine",
                 {{3, 2, 3}, {4, 2}},
                 {4, 3},
                 std::string(routing) +
                     "  %y = llmc.moe_combine %p0, %p1, %e : "
                     "(tensor<3x2x3xf64>, tensor<4x2xf64>, tensor<4x2xi32>) "
                     "-> tensor<4x3xf64>"});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Primitives, AutodiffGradients,
                         ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GradCase> &info) {
                           return info.param.name;
                         });
INSTANTIATE_TEST_SUITE_P(Composites, AutodiffGradients,
                         ::testing::ValuesIn(compositeCases()),
                         [](const ::testing::TestParamInfo<GradCase> &info) {
                           return info.param.name;
                         });

// The pass needs the function it was told to differentiate.
TEST(AutodiffPass, FailsWithoutALossFunction) {
  DialectRegistry registry;
  llmc::registerLlmcDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "func.func @other(%a: tensor<f32>) -> tensor<f32> {\n"
      "  return %a : tensor<f32>\n}\n",
      &context);
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  PassManager pm(&context);
  pm.addPass(llmc::createAutodiffPass());
  EXPECT_TRUE(failed(pm.run(*module)));
  EXPECT_EQ(message, "expected a function @loss to differentiate, found none");
}

} // namespace
