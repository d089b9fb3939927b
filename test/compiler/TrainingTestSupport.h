// The fixtures of the training-tests (TrainingTest.cpp,
// CheckpointReliabilityTest.cpp): a tiny GPT-2 compiled to a training step,
// a session with every argument bound, and a checkpoint directory per test.
#ifndef LLMC_TEST_COMPILER_TRAININGTESTSUPPORT_H
#define LLMC_TEST_COMPILER_TRAININGTESTSUPPORT_H

#include "codegen/BuildExecutable.h"
#include "frontend/models/Models.h"
#include "ir/Registration.h"
#include "passes/Passes.h"
#include "runtime/Session.h"
#include "runtime/train/Init.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace llmc::test {

using namespace mlir;
namespace rt = llmc::rt;
namespace fs = std::filesystem;

inline llmc::ModelConfig tinyGpt2() {
  llmc::ModelConfig model;
  model.family = llmc::ModelFamily::Gpt2;
  model.vocabSize = 64;
  model.numLayers = 1;
  model.hiddenSize = 32;
  model.numHeads = 2;
  model.numKvHeads = 2;
  model.intermediateSize = 128;
  model.maxPositions = 16;
  return model;
}

class TrainingTest : public ::testing::Test {
protected:
  TrainingTest() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The training step of the tiny GPT-2: @loss traced for `batch`
  /// sequences, autodiff with `microbatches`, with or without the optimizer.
  rt::Executable compile(int64_t batch, int64_t microbatches, bool optimizer,
                         int64_t dp = 1) {
    OwningOpRef<ModuleOp> module =
        llmc::buildLossModule(context, tinyGpt2(), batch, kSeq);
    EXPECT_TRUE(module);
    llmc::CompilePipelineOptions options;
    options.microbatches = microbatches;
    options.parallel.dp = dp;
    options.stopAfter = optimizer ? -1 : 3; // 03-llmc-autodiff
    PassManager pm(&context);
    llmc::buildCompilePipeline(pm, options);
    if (!optimizer) {
      // The clean-up the full pipeline runs after the optimizer: merges
      // the constants each microbatch's copy brought.
      pm.addPass(createCanonicalizerPass());
      pm.addPass(createCSEPass());
    }
    EXPECT_TRUE(succeeded(pm.run(*module)));
    llmc::CodegenOptions codegen;
    codegen.function = "train_step";
    FailureOr<rt::Executable> exe = llmc::buildExecutable(*module, codegen);
    EXPECT_TRUE(succeeded(exe));
    return succeeded(exe) ? std::move(*exe) : rt::Executable();
  }

  /// A session with every parameter and state argument from its
  /// initializer (seed 7) and random tokens and targets.
  std::unique_ptr<rt::Session> start(const rt::Executable &exe) {
    rt::SessionOptions options;
    options.threads = 1;
    std::unique_ptr<rt::Session> session;
    rt::Status status = rt::Session::create(exe, options, session);
    EXPECT_TRUE(status) << status.message();
    std::mt19937 rng(3);
    for (size_t i = 0; i < exe.arguments.size(); ++i) {
      const rt::ArgumentInfo &arg = exe.arguments[i];
      const rt::ValueInfo &value = exe.ranks.front().values[arg.value];
      std::vector<uint8_t> bytes;
      if (arg.role != rt::ArgumentRole::Input) {
        status = rt::initialArgumentBytes(exe, i, 7, bytes);
      } else if (value.dtype == rt::DType::I32) {
        std::vector<int32_t> ids(rt::numElements(value.shape));
        for (int32_t &id : ids)
          id = static_cast<int32_t>(rng() % 64);
        bytes.resize(ids.size() * 4);
        std::memcpy(bytes.data(), ids.data(), bytes.size());
      } else {
        float step = 1.0f; // optimizer.step
        bytes.resize(4);
        std::memcpy(bytes.data(), &step, 4);
      }
      EXPECT_TRUE(status) << status.message();
      status = session->setArgument(arg.name, value.dtype, value.shape,
                                    bytes.data(), bytes.size());
      EXPECT_TRUE(status) << arg.name << ": " << status.message();
    }
    return session;
  }

  static std::vector<float> output(const rt::Session &session,
                                   const std::string &name) {
    int index = session.executable().findOutput(name);
    EXPECT_GE(index, 0) << name;
    rt::TensorRef tensor;
    EXPECT_TRUE(session.output(static_cast<size_t>(index), tensor));
    const float *data = static_cast<const float *>(tensor.data);
    return std::vector<float>(data, data + tensor.numElements());
  }

  static std::vector<float> argument(const rt::Session &session,
                                     const std::string &name) {
    int index = session.executable().findArgument(name);
    EXPECT_GE(index, 0) << name;
    rt::TensorRef tensor;
    EXPECT_TRUE(session.argument(static_cast<size_t>(index), tensor));
    const float *data = static_cast<const float *>(tensor.data);
    return std::vector<float>(data, data + tensor.numElements());
  }

  static constexpr int64_t kSeq = 16;
  MLIRContext context;
};

class CheckpointTest : public TrainingTest {
protected:
  void SetUp() override {
    directory = fs::temp_directory_path() /
                ("llmc-checkpoint-test-" + std::to_string(::getpid()));
    fs::remove_all(directory);
  }
  void TearDown() override { fs::remove_all(directory); }

  /// Sets every element of parameter `name` to `value`.
  static void fill(rt::Session &session, const std::string &name,
                   float value) {
    std::vector<float> data = argument(session, name);
    std::fill(data.begin(), data.end(), value);
    const rt::Executable &exe = session.executable();
    const rt::ValueInfo &info =
        exe.ranks.front().values[exe.arguments[exe.findArgument(name)].value];
    ASSERT_TRUE(session.setArgument(name, rt::DType::F32, info.shape,
                                    data.data(), data.size() * 4));
  }

  fs::path directory;
};

} // namespace llmc::test

#endif // LLMC_TEST_COMPILER_TRAININGTESTSUPPORT_H
