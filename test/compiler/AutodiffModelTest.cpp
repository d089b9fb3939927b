// An end-to-end gradient check: a one-layer GPT-2 traced by the frontend
// (embedding, layer_norm, attention, gelu, tied weights) goes through
// --llmc-autodiff, and every parameter's gradient is compared with central
// finite differences of @loss, in f64.
//
// The builders emit f32 and cross_entropy's result is f32 by definition, so
// the printed module is turned into f64 text, and its cross_entropy (mean,
// no ignored positions) is rewritten as the same loss in f64 primitives
// (logsumexp minus the picked logit). Everything else is the traced model.
// cross_entropy's own rule is checked in AutodiffTest.cpp.
//
// Tolerance: relative error max|g - fd| / max|fd| < 1e-6 per parameter, with
// h = 1e-5 and parameters of magnitude [0.1, 0.5] (so the logits stay O(1)
// and the truncation error h²·|f'''|/6 stays near 1e-10).
#include "codegen/BuildExecutable.h"
#include "frontend/models/Models.h"
#include "ir/Registration.h"
#include "passes/Passes.h"
#include "runtime/Session.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>

using namespace mlir;
namespace rt = llmc::rt;

namespace {

constexpr int64_t kBatch = 2, kSeq = 3, kVocab = 11;

/// The f64 text of the traced module, with its cross_entropy rewritten.
std::string f64Module(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  text = std::regex_replace(text, std::regex("f32>"), "f64>");
  std::smatch m;
  std::regex ce(
      R"((%\w+) = llmc\.cross_entropy (%\w+), (%\w+) reduction mean[^\n]*)");
  EXPECT_TRUE(std::regex_search(text, m, ce)) << text;
  std::string logits = m[2], targets = m[3];
  std::string v = "tensor<2x3x11xf64>", k = "tensor<2x3x1xf64>",
              vi = "tensor<2x3x11xi32>";
  std::string loss =
      "%ce_max = llmc.reduce_max " + logits + " dims [2] keep_dims : " + v +
      " -> " + k + "\n" +
      "%ce_maxb = llmc.broadcast %ce_max dims [0, 1, 2] : " + k + " -> " + v +
      "\n%ce_sh = llmc.sub " + logits + ", %ce_maxb : " + v +
      "\n%ce_e = llmc.exp %ce_sh : " + v +
      "\n%ce_s = llmc.reduce_sum %ce_e dims [2] keep_dims : " + v + " -> " + k +
      "\n%ce_l = llmc.log %ce_s : " + k +
      "\n%ce_lse = llmc.add %ce_l, %ce_max : " + k +
      "\n%ce_i = llmc.iota dim 2 : " + vi + "\n%ce_t = llmc.reshape " +
      targets +
      " : tensor<2x3xi32> -> tensor<2x3x1xi32>"
      "\n%ce_tb = llmc.broadcast %ce_t dims [0, 1, 2] : tensor<2x3x1xi32> -> " +
      vi + "\n%ce_m = llmc.compare eq %ce_i, %ce_tb : (" + vi + ", " + vi +
      ") -> tensor<2x3x11xi1>"
      "\n%ce_z = llmc.constant dense<0.0> : " +
      v + "\n%ce_pick = llmc.select %ce_m, " + logits +
      ", %ce_z : (tensor<2x3x11xi1>, " + v + ", " + v + ") -> " + v +
      "\n%ce_p = llmc.reduce_sum %ce_pick dims [2] keep_dims : " + v + " -> " +
      k + "\n%ce_d = llmc.sub %ce_lse, %ce_p : " + k + "\n" +
      std::string(m[1]) + " = llmc.reduce_mean %ce_d dims [0, 1, 2] : " + k +
      " -> tensor<f64>";
  return m.prefix().str() + loss + m.suffix().str();
}

TEST(AutodiffModel, Gpt2OneLayerMatchesFiniteDifferencesInF64) {
  DialectRegistry registry;
  llmc::registerLlmcDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llmc::ModelConfig model;
  model.family = llmc::ModelFamily::Gpt2;
  model.vocabSize = kVocab;
  model.numLayers = 1;
  model.hiddenSize = 8;
  model.numHeads = 2;
  model.numKvHeads = 2;
  model.maxPositions = 4;
  model.intermediateSize = 32;
  OwningOpRef<ModuleOp> traced =
      llmc::buildLossModule(context, model, kBatch, kSeq);
  ASSERT_TRUE(traced);
  std::string text = f64Module(*traced);
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

  // Parameters in argument order, with fresh seeded values.
  auto fn = module->lookupSymbol<func::FuncOp>("loss");
  std::vector<std::string> names;
  std::vector<rt::Shape> shapes;
  std::vector<std::vector<double>> params;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> magnitude(0.1, 0.5);
  std::bernoulli_distribution negative(0.5);
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto role = fn.getArgAttrOfType<StringAttr>(i, "llmc.role");
    if (!role || role.getValue() != "parameter")
      continue;
    names.push_back(
        fn.getArgAttrOfType<StringAttr>(i, "llmc.name").getValue().str());
    auto type = cast<RankedTensorType>(fn.getArgument(i).getType());
    shapes.emplace_back(type.getShape().begin(), type.getShape().end());
    params.emplace_back(type.getNumElements());
    for (double &v : params.back())
      v = negative(rng) ? -magnitude(rng) : magnitude(rng);
  }
  ASSERT_EQ(stepExe->outputs.size(), params.size() + 1);
  // A repeated token, so the tied embedding accumulates.
  std::vector<int32_t> tokens = {3, 7, 3, 0, 10, 5};
  std::vector<int32_t> targets = {7, 3, 0, 10, 5, 1};

  auto run = [&](rt::Session &session,
                 const std::vector<std::vector<double>> &values, size_t index) {
    for (size_t p = 0; p < values.size(); ++p) {
      rt::Status s = session.setArgument(names[p], rt::DType::F64, shapes[p],
                                         values[p].data(),
                                         values[p].size() * sizeof(double));
      EXPECT_TRUE(s) << s.message();
    }
    for (auto [name, ids] :
         {std::pair{"tokens", &tokens}, std::pair{"targets", &targets}}) {
      rt::Status s =
          session.setArgument(name, rt::DType::I32, {kBatch, kSeq}, ids->data(),
                              ids->size() * sizeof(int32_t));
      EXPECT_TRUE(s) << s.message();
    }
    rt::Status s = session.run();
    EXPECT_TRUE(s) << s.message();
    rt::TensorRef out;
    s = session.output(index, out);
    EXPECT_TRUE(s) << s.message();
    const auto *data = static_cast<const double *>(out.data);
    return std::vector<double>(data, data + out.numElements());
  };

  constexpr double kStep = 1e-5, kTolerance = 1e-6;
  double loss = run(*lossRun, params, 0)[0];
  EXPECT_NEAR(run(*stepRun, params, 0)[0], loss, 1e-12 * std::fabs(loss));
  double worst = 0;
  for (size_t p = 0; p < params.size(); ++p) {
    std::vector<double> grad = run(*stepRun, params, p + 1);
    ASSERT_EQ(grad.size(), params[p].size());
    double maxDiff = 0, maxFd = 0;
    for (size_t i = 0; i < grad.size(); ++i) {
      auto plus = params, minus = params;
      plus[p][i] += kStep;
      minus[p][i] -= kStep;
      double fd = (run(*lossRun, plus, 0)[0] - run(*lossRun, minus, 0)[0]) /
                  (2 * kStep);
      maxDiff = std::max(maxDiff, std::fabs(grad[i] - fd));
      maxFd = std::max(maxFd, std::fabs(fd));
    }
    double relative = maxDiff / std::max(maxFd, 1e-300);
    worst = std::max(worst, relative);
    EXPECT_LT(relative, kTolerance) << names[p];
  }
  std::printf("[ fd       ] gpt2 one layer: worst relative error %.3g over %zu "
              "parameters\n",
              worst, params.size());
}

} // namespace
