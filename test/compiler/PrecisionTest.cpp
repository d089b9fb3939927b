// Mixed precision end to end (docs/precision.md).
//
// 1. fp16 dynamic loss scaling: a small fp16 model is compiled with the
//    pipeline (llmc-assign-precision, autodiff seeded with the scale, the
//    optimizer with loss scaling) and run on the CPU backend. An initial
//    scale of 1e30 overflows the fp16 backward, so the step must be skipped:
//    parameters and moments unchanged bit for bit, the scale halved, the
//    good-step count 0. With a normal scale a step updates the parameters,
//    and after growth-interval finite steps the scale doubles.
// 2. bf16 training of the built-in run's GPT-2 (2 layers, width 96, vocab
//    128, 16 x 64 tokens, the built-in corpus) for 200 steps stays within 2%
//    of the f32 loss (the mean of the last 10 steps). bf16 has 8 mantissa
//    bits (relative rounding 4e-3 per op); the issue's bound is 2%.
#include "codegen/BuildExecutable.h"
#include "frontend/Source.h"
#include "ir/LlmcOps.h"
#include "ir/Registration.h"
#include "passes/Passes.h"
#include "runtime/Session.h"
#include "runtime/train/Init.h"
#include "runtime/train/Trainer.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
namespace rt = llmc::rt;

namespace {

constexpr const char *kModule = R"mlir(
func.func @loss(%w: tensor<8x8xf32> {llmc.name = "fc.weight", llmc.role = "parameter", llmc.init = {kind = "normal", scale = 0.5 : f64}},
                %b: tensor<8xf32> {llmc.name = "fc.bias", llmc.role = "parameter", llmc.init = {kind = "normal", scale = 0.5 : f64}},
                %x: tensor<4x8xf32> {llmc.name = "x", llmc.role = "input"},
                %y: tensor<4x8xf32> {llmc.name = "y", llmc.role = "input"}) -> tensor<f32> {
  %xw = llmc.matmul %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %bb = llmc.broadcast %b dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %p = llmc.add %xw, %bb : tensor<4x8xf32>
  %r = llmc.sub %p, %y : tensor<4x8xf32>
  %s = llmc.mul %r, %r : tensor<4x8xf32>
  %l = llmc.reduce_mean %s dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";

class Precision : public ::testing::Test {
protected:
  Precision() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The fp16 training step of kModule with loss scaling.
  rt::Executable compileFp16(double initialScale, int64_t growthInterval) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kModule, &context);
    EXPECT_TRUE(module);
    llmc::CompilePipelineOptions options;
    options.precision.policy = "fp16";
    options.precision.initialLossScale = initialScale;
    options.precision.lossScaleGrowthInterval = growthInterval;
    options.optimizer.schedule = "constant";
    options.optimizer.learningRate = 0.01;
    PassManager pm(&context);
    llmc::buildCompilePipeline(pm, options);
    EXPECT_TRUE(succeeded(pm.run(*module)));
    llmc::CodegenOptions codegen;
    codegen.function = "train_step";
    FailureOr<rt::Executable> exe = llmc::buildExecutable(*module, codegen);
    EXPECT_TRUE(succeeded(exe));
    return succeeded(exe) ? std::move(*exe) : rt::Executable();
  }

  MLIRContext context;
};

/// Runs `exe` step by step, feeding back every output named like an
/// argument, as the training loop does.
struct Stepper {
  const rt::Executable &exe;
  std::unique_ptr<rt::Session> session;

  explicit Stepper(const rt::Executable &exe) : exe(exe) {
    rt::SessionOptions options;
    options.threads = 1;
    rt::Status status = rt::Session::create(exe, options, session);
    EXPECT_TRUE(status) << status.message();
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> magnitude(0.5f, 1.5f);
    for (size_t i = 0; i < exe.arguments.size(); ++i) {
      const rt::ArgumentInfo &arg = exe.arguments[i];
      const rt::ValueInfo &value = exe.ranks.front().values[arg.value];
      std::vector<uint8_t> bytes;
      if (arg.role != rt::ArgumentRole::Input) {
        status = rt::initialArgumentBytes(exe, i, 7, bytes);
        EXPECT_TRUE(status) << status.message();
      } else {
        std::vector<float> data(rt::numElements(value.shape));
        for (float &v : data)
          v = magnitude(rng) * (rng() % 2 ? -1.f : 1.f);
        bytes.resize(data.size() * 4);
        std::memcpy(bytes.data(), data.data(), bytes.size());
      }
      status = session->setArgument(arg.name, value.dtype, value.shape,
                                    bytes.data(), bytes.size());
      EXPECT_TRUE(status) << arg.name << ": " << status.message();
    }
  }

  void step(int t) {
    float step = static_cast<float>(t);
    ASSERT_TRUE(session->setArgument("optimizer.step", rt::DType::F32, {},
                                     &step, sizeof(step)));
    rt::Status status = session->run();
    ASSERT_TRUE(status) << status.message();
    for (size_t o = 0; o < exe.outputs.size(); ++o) {
      if (exe.findArgument(exe.outputs[o].name) < 0)
        continue;
      rt::TensorRef out;
      ASSERT_TRUE(session->output(o, out));
      ASSERT_TRUE(session->setArgument(
          exe.outputs[o].name, out.dtype, out.shape, out.data,
          static_cast<size_t>(out.numElements()) * rt::dtypeSize(out.dtype)));
    }
  }

  /// The bytes of output `name` after the last step.
  std::vector<uint8_t> output(const std::string &name) {
    int index = exe.findOutput(name);
    EXPECT_GE(index, 0) << name;
    rt::TensorRef out;
    EXPECT_TRUE(session->output(index, out));
    const auto *data = static_cast<const uint8_t *>(out.data);
    return std::vector<uint8_t>(
        data, data + out.numElements() * rt::dtypeSize(out.dtype));
  }
  float scalar(const std::string &name) {
    std::vector<uint8_t> bytes = output(name);
    float v = 0;
    std::memcpy(&v, bytes.data(), sizeof(v));
    return v;
  }
};

const char *const kState[] = {"fc.weight", "fc.bias",
                              "optimizer.m.fc.weight", "optimizer.v.fc.weight",
                              "optimizer.m.fc.bias", "optimizer.v.fc.bias"};

TEST_F(Precision, Fp16OverflowSkipsTheStepAndHalvesTheScale) {
  // 1e30·(gradients of order 1) is far beyond fp16's 65504: the backward
  // overflows to inf.
  rt::Executable exe = compileFp16(/*initialScale=*/1e30, 2000);
  Stepper run(exe);
  run.step(1); // the moments become non-zero only after a finite step...
  // ...which this is not: everything stays as initialized.
  EXPECT_FALSE(std::isfinite(run.scalar("grad_norm")));
  EXPECT_EQ(run.scalar("loss_scale.scale"), 5e29f);
  EXPECT_EQ(run.scalar("loss_scale.good_steps"), 0.0f);
  std::map<std::string, std::vector<uint8_t>> before;
  for (const char *name : kState) {
    std::vector<uint8_t> initial;
    int arg = exe.findArgument(name);
    ASSERT_TRUE(rt::initialArgumentBytes(exe, arg, 7, initial));
    EXPECT_EQ(run.output(name), initial) << name << " changed bitwise";
  }
  // Backing off by 0.5 per step, 1e30 reaches a finite range after about
  // 85 steps; every skipped step leaves the parameters as they were.
  int skipped = 1, t = 2;
  for (; t < 200 && !std::isfinite(run.scalar("grad_norm")); ++t) {
    run.step(t);
    skipped += !std::isfinite(run.scalar("grad_norm"));
  }
  ASSERT_TRUE(std::isfinite(run.scalar("grad_norm")));
  std::printf("fp16 with initial scale 1e30: %d steps skipped, first finite "
              "step %d at scale %g\n",
              skipped, t - 1, run.scalar("loss_scale.scale"));
  std::vector<uint8_t> initial;
  ASSERT_TRUE(
      rt::initialArgumentBytes(exe, exe.findArgument("fc.weight"), 7, initial));
  EXPECT_NE(run.output("fc.weight"), initial) << "a finite step must update";
  EXPECT_EQ(run.scalar("loss_scale.good_steps"), 1.0f);
}

TEST_F(Precision, Fp16ScaleGrowsAfterTheGrowthInterval) {
  rt::Executable exe = compileFp16(/*initialScale=*/1024, /*interval=*/3);
  Stepper run(exe);
  const float want[][2] = {{1024, 1}, {1024, 2}, {2048, 0}, {2048, 1},
                           {2048, 2}, {4096, 0}};
  for (int t = 1; t <= 6; ++t) {
    std::vector<uint8_t> weight =
        t == 1 ? std::vector<uint8_t>() : run.output("fc.weight");
    run.step(t);
    ASSERT_TRUE(std::isfinite(run.scalar("grad_norm"))) << "step " << t;
    EXPECT_EQ(run.scalar("loss_scale.scale"), want[t - 1][0]) << "step " << t;
    EXPECT_EQ(run.scalar("loss_scale.good_steps"), want[t - 1][1])
        << "step " << t;
    if (t > 1) {
      EXPECT_NE(run.output("fc.weight"), weight) << "step " << t;
    }
  }
}

/// The final loss (mean of the last 10 of `steps`) of the built-in run's
/// GPT-2 under `policy`; @train_step's scaled_matmul count in
/// `scaledMatmuls` when given.
double trainBuiltin(MLIRContext &context, const std::string &policy,
                    int64_t steps, int64_t *scaledMatmuls = nullptr) {
  // The model of `llmc train` with no file (kBuiltinRun in tools/llmc.cpp).
  constexpr const char *kBuiltinRun = R"toml(
[model]
family = "gpt2"
vocab_size = 128
layers = 2
width = 96
heads = 4
max_positions = 64

[train]
batch_size = 16
seq_len = 64
)toml";
  llmc::LoadedSource loaded =
      llmc::loadRunDescriptionText(kBuiltinRun, "<built-in run>", context);
  OwningOpRef<ModuleOp> module = std::move(loaded.module);
  EXPECT_TRUE(module);
  if (!module)
    return NAN;
  llmc::CompilePipelineOptions options;
  options.precision.policy = policy;
  llmc::OptimizerSettings &o = options.optimizer;
  o.learningRate = 3e-3;
  o.minLearningRate = 3e-4;
  o.warmupSteps = 20;
  o.totalSteps = 500;
  o.schedule = "cosine";
  o.weightDecay = 0.0;
  PassManager pm(&context);
  llmc::buildCompilePipeline(pm, options);
  EXPECT_TRUE(succeeded(pm.run(*module)));
  if (scaledMatmuls) {
    *scaledMatmuls = 0;
    if (Operation *step = module->lookupSymbol("train_step"))
      step->walk([&](llmc::ScaledMatmulOp) { ++*scaledMatmuls; });
  }
  llmc::CodegenOptions codegen;
  codegen.function = "train_step";
  FailureOr<rt::Executable> exe = llmc::buildExecutable(*module, codegen);
  EXPECT_TRUE(succeeded(exe));
  if (failed(exe))
    return NAN;
  rt::TrainOptions train;
  train.settings.steps = 500;
  train.settings.vocabSize = 128;
  train.settings.logEvery = 100;
  train.stopAfterStep = steps;
  train.threads = 2;
  train.log = nullptr;
  rt::TrainReport report;
  rt::Status status = rt::train(*exe, train, report);
  EXPECT_TRUE(status) << status.message();
  if (!status || report.steps.size() < 10)
    return NAN;
  double sum = 0;
  for (size_t i = report.steps.size() - 10; i < report.steps.size(); ++i)
    sum += report.steps[i].loss;
  return sum / 10;
}

TEST_F(Precision, Bf16TrainingOfTheBuiltinRunStaysWithin2PercentOfF32) {
  constexpr int64_t kSteps = 200;
  double f32 = trainBuiltin(context, "fp32", kSteps);
  double bf16 = trainBuiltin(context, "bf16", kSteps);
  double relative = std::fabs(bf16 - f32) / f32;
  std::printf("loss after %lld steps (mean of the last 10): f32 %.4f, bf16 "
              "%.4f, relative difference %.2f%%\n",
              static_cast<long long>(kSteps), f32, bf16, 100 * relative);
  EXPECT_LT(relative, 0.02);
}

// fp8 against bf16 on the same run, 50 steps: every linear layer of the
// two blocks (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj) computes its
// forward and both gradients as FP8 products (3 x 8 = 24 scaled_matmul in
// the step; the LM head stays bf16). E4M3 keeps 3 mantissa bits (relative
// rounding 6e-2 per element) and E5M2 2; the tensorwise scales keep the
// values in range, so the loss follows bf16's closely: measured bf16 2.1659,
// fp8 2.1583 (0.35%; docs/precision.md). The bound, 1.5%, is 4x that.
TEST_F(Precision, Fp8TrainingOfTheBuiltinRunStaysWithin1Point5PercentOfBf16) {
  constexpr int64_t kSteps = 50;
  int64_t scaled = 0;
  double bf16 = trainBuiltin(context, "bf16", kSteps);
  double fp8 = trainBuiltin(context, "fp8", kSteps, &scaled);
  double relative = std::fabs(fp8 - bf16) / bf16;
  std::printf("loss after %lld steps (mean of the last 10): bf16 %.4f, fp8 "
              "%.4f, relative difference %.2f%%\n",
              static_cast<long long>(kSteps), bf16, fp8, 100 * relative);
  EXPECT_EQ(scaled, 24);
  EXPECT_LT(relative, 0.015);
}

} // namespace
