// Tests of the logits program (buildLogitsModule) against the loss program of
// the same model, for the three tiny examples: @logits takes exactly @loss's
// parameter arguments, and the mean cross-entropy computed on the host from
// its logits is @loss's value, both compiled and run on the CPU runtime with
// the same random weights.
//
// Tolerance: 1e-5 relative. Both sides run the same f32 kernels up to the
// head; the only difference is the final cross-entropy (the runtime's f32
// kernel against a host f64 sum over B*T rows of V logits), so they agree to
// f32 rounding of a value near log(V).
#include "codegen/BuildExecutable.h"
#include "frontend/config/RunDescription.h"
#include "frontend/models/Models.h"
#include "ir/Registration.h"
#include "runtime/Session.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace mlir;
namespace rt = llmc::rt;

namespace {

struct Parameter {
  std::string name;
  rt::Shape shape;
};

class LogitsTest : public ::testing::TestWithParam<const char *> {
protected:
  LogitsTest() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  llmc::RunDescription example() {
    std::string path = std::string(LLMC_EXAMPLES_DIR) + "/" + GetParam();
    llmc::ParseOutcome outcome = llmc::parseRunDescription(path);
    EXPECT_TRUE(outcome.ok()) << path;
    return outcome.ok() ? *outcome.description : llmc::RunDescription{};
  }

  /// The parameter arguments of `fn` in order.
  static std::vector<Parameter> parameters(func::FuncOp fn) {
    std::vector<Parameter> result;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto role = fn.getArgAttrOfType<StringAttr>(i, "llmc.role");
      if (!role || role.getValue() != "parameter")
        continue;
      auto type = cast<RankedTensorType>(fn.getArgument(i).getType());
      result.push_back(
          {fn.getArgAttrOfType<StringAttr>(i, "llmc.name").getValue().str(),
           rt::Shape(type.getShape().begin(), type.getShape().end())});
    }
    return result;
  }

  MLIRContext context;
};

TEST_P(LogitsTest, ParametersAreThoseOfTheLoss) {
  llmc::RunDescription run = example();
  const llmc::TrainConfig &train = run.train;
  OwningOpRef<ModuleOp> loss = llmc::buildLossModule(
      context, run.model, train.batchSize, train.seqLen);
  OwningOpRef<ModuleOp> logits = llmc::buildLogitsModule(
      context, run.model, train.batchSize, train.seqLen);
  ASSERT_TRUE(loss && logits);
  auto lossFn = loss->lookupSymbol<func::FuncOp>("loss");
  auto logitsFn = logits->lookupSymbol<func::FuncOp>("logits");
  ASSERT_TRUE(lossFn && logitsFn);

  // Every parameter argument, attributes and type included, in order; then
  // the single input "tokens" where @loss has "tokens" and "targets".
  size_t numParams = parameters(lossFn).size();
  ASSERT_GT(numParams, 0u);
  ASSERT_EQ(logitsFn.getNumArguments(), numParams + 1);
  ASSERT_EQ(lossFn.getNumArguments(), numParams + 2);
  for (unsigned i = 0; i < numParams; ++i) {
    EXPECT_EQ(logitsFn.getArgument(i).getType(),
              lossFn.getArgument(i).getType())
        << "argument " << i;
    EXPECT_EQ(logitsFn.getArgAttrDict(i), lossFn.getArgAttrDict(i))
        << "argument " << i;
  }
  EXPECT_EQ(logitsFn.getArgAttrDict(numParams),
            lossFn.getArgAttrDict(numParams));
  auto tokens = logitsFn.getArgAttrOfType<StringAttr>(numParams, "llmc.name");
  ASSERT_TRUE(tokens);
  EXPECT_EQ(tokens.getValue(), "tokens");

  auto result = dyn_cast<RankedTensorType>(
      logitsFn.getFunctionType().getResult(0));
  ASSERT_TRUE(result);
  EXPECT_EQ(result.getShape(),
            ArrayRef<int64_t>({train.batchSize, train.seqLen,
                               run.model.vocabSize}));
  EXPECT_TRUE(result.getElementType().isF32());
}

TEST_P(LogitsTest, HostCrossEntropyOfTheLogitsIsTheLoss) {
  llmc::RunDescription run = example();
  const int64_t batch = run.train.batchSize, seq = run.train.seqLen,
                vocab = run.model.vocabSize;
  // MoE's loss adds the balancing term; without it, it is the cross-entropy
  // alone (the weight does not change the parameters).
  llmc::ModelConfig lossModel = run.model;
  lossModel.auxLossWeight = 0.0;
  OwningOpRef<ModuleOp> lossModule =
      llmc::buildLossModule(context, lossModel, batch, seq);
  OwningOpRef<ModuleOp> logitsModule =
      llmc::buildLogitsModule(context, run.model, batch, seq);
  ASSERT_TRUE(lossModule && logitsModule);
  llmc::CodegenOptions lossOptions, logitsOptions;
  logitsOptions.function = "logits";
  FailureOr<rt::Executable> lossExe =
      llmc::buildExecutable(*lossModule, lossOptions);
  FailureOr<rt::Executable> logitsExe =
      llmc::buildExecutable(*logitsModule, logitsOptions);
  ASSERT_TRUE(succeeded(lossExe) && succeeded(logitsExe));
  rt::SessionOptions sessionOptions;
  sessionOptions.threads = 1;
  std::unique_ptr<rt::Session> lossRun, logitsRun;
  ASSERT_TRUE(rt::Session::create(*lossExe, sessionOptions, lossRun));
  ASSERT_TRUE(rt::Session::create(*logitsExe, sessionOptions, logitsRun));

  // 1. The same fresh random weights into both, by name.
  std::mt19937_64 rng(20261129);
  std::normal_distribution<float> normal(0.0f, 0.2f);
  for (const Parameter &p :
       parameters(lossModule->lookupSymbol<func::FuncOp>("loss"))) {
    std::vector<float> values(rt::numElements(p.shape));
    for (float &v : values)
      v = normal(rng);
    for (rt::Session *session : {lossRun.get(), logitsRun.get()}) {
      rt::Status s =
          session->setArgument(p.name, rt::DType::F32, p.shape, values.data(),
                               values.size() * sizeof(float));
      ASSERT_TRUE(s) << p.name << ": " << s.message();
    }
  }
  // 2. Random tokens, with targets the next token of the same stream.
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(vocab - 1));
  std::vector<int32_t> stream(batch * seq + 1);
  for (int32_t &t : stream)
    t = id(rng);
  std::vector<int32_t> tokens(stream.begin(), stream.end() - 1);
  std::vector<int32_t> targets(stream.begin() + 1, stream.end());
  size_t idBytes = tokens.size() * sizeof(int32_t);
  ASSERT_TRUE(lossRun->setArgument("tokens", rt::DType::I32, {batch, seq},
                                   tokens.data(), idBytes));
  ASSERT_TRUE(lossRun->setArgument("targets", rt::DType::I32, {batch, seq},
                                   targets.data(), idBytes));
  ASSERT_TRUE(logitsRun->setArgument("tokens", rt::DType::I32, {batch, seq},
                                     tokens.data(), idBytes));
  EXPECT_EQ(logitsRun->findArgument("targets"), -1);

  // 3. Run both; the host cross-entropy, in f64, of the logits.
  rt::Status s = lossRun->run();
  ASSERT_TRUE(s) << s.message();
  s = logitsRun->run();
  ASSERT_TRUE(s) << s.message();
  rt::TensorRef lossOut, logitsOut;
  ASSERT_TRUE(lossRun->output(0, lossOut));
  ASSERT_TRUE(logitsRun->output(0, logitsOut));
  ASSERT_EQ(logitsOut.dtype, rt::DType::F32);
  ASSERT_EQ(logitsOut.shape, (rt::Shape{batch, seq, vocab}));
  const auto *logits = static_cast<const float *>(logitsOut.data);
  double total = 0.0;
  for (int64_t row = 0; row < batch * seq; ++row) {
    const float *z = logits + row * vocab;
    double max = z[0];
    for (int64_t v = 0; v < vocab; ++v) {
      ASSERT_TRUE(std::isfinite(z[v])) << "row " << row << " logit " << v;
      max = std::max(max, static_cast<double>(z[v]));
    }
    double sum = 0.0;
    for (int64_t v = 0; v < vocab; ++v)
      sum += std::exp(z[v] - max);
    total += std::log(sum) + max - z[targets[row]];
  }
  double hostLoss = total / static_cast<double>(batch * seq);
  double programLoss = *static_cast<const float *>(lossOut.data);
  EXPECT_NEAR(hostLoss, programLoss, 1e-5 * std::fabs(programLoss))
      << GetParam();
  std::printf("[ logits   ] %s: loss %.7f, host cross-entropy %.7f\n",
              GetParam(), programLoss, hostLoss);
}

INSTANTIATE_TEST_SUITE_P(TinyExamples, LogitsTest,
                         ::testing::Values("gpt2-tiny.toml", "llama-tiny.toml",
                                           "moe-tiny.toml"),
                         [](const ::testing::TestParamInfo<const char *> &info) {
                           std::string name = info.param;
                           name = name.substr(0, name.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

} // namespace
