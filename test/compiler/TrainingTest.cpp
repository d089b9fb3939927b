// Training-loop pieces that lit cannot reach well:
//
// - Gradient accumulation: llmc-autodiff with microbatches = 2 on a model
//   traced for 8 sequences gives the loss and gradients of the same model
//   traced for 16 sequences with microbatches = 1 (the mean cross-entropy of
//   two equal halves is the mean of the whole), and needs a smaller arena.
//   Tolerance: 1e-5 relative (L2 per tensor); both programs run the same f32
//   kernels and differ only in how the batch mean is summed, a few roundings
//   near 1e-7.
// - The buffer plan: the runtime's measured high-water mark over two
//   training steps is the arena llmc-plan-buffers predicted in the IR.
// - Checkpoints: a save that stops half-way (an injected failure, as a crash
//   would) leaves the previous checkpoint as `latest`, intact and loadable;
//   `keep` deletes the oldest; a damaged or foreign checkpoint is refused
//   with the file named.
#include "codegen/BuildExecutable.h"
#include "frontend/config/RunDescription.h"
#include "frontend/models/Models.h"
#include "ir/Registration.h"
#include "passes/Passes.h"
#include "runtime/Session.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Evaluate.h"
#include "runtime/train/Init.h"
#include "runtime/train/Trainer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "TrainingTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace mlir;
namespace rt = llmc::rt;
namespace fs = std::filesystem;
using llmc::test::CheckpointTest;
using llmc::test::TrainingTest;
using llmc::test::tinyGpt2;

namespace {

double relativeL2(const std::vector<float> &a, const std::vector<float> &b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

TEST_F(TrainingTest, MicrobatchesAverageTheGradients) {
  rt::Executable whole = compile(/*batch=*/16, /*microbatches=*/1, false);
  rt::Executable halves = compile(/*batch=*/8, /*microbatches=*/2, false);
  ASSERT_FALSE(whole.arguments.empty());
  ASSERT_FALSE(halves.arguments.empty());
  // Both take 16 sequences per step.
  const rt::ValueInfo &tokens =
      halves.ranks.front()
          .values[halves.arguments[halves.findArgument("tokens")].value];
  EXPECT_EQ(tokens.shape, (rt::Shape{16, kSeq}));
  std::unique_ptr<rt::Session> a = start(whole), b = start(halves);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->run());
  ASSERT_TRUE(b->run());
  double worst = relativeL2(output(*b, "loss"), output(*a, "loss"));
  EXPECT_LT(worst, 1e-5) << "loss";
  for (const rt::OutputInfo &out : whole.outputs) {
    if (out.name == "loss")
      continue;
    double error = relativeL2(output(*b, out.name), output(*a, out.name));
    worst = std::max(worst, error);
    EXPECT_LT(error, 1e-5) << out.name;
  }
  // One microbatch's activations are live at a time: with activations
  // larger than the parameters and gradients (here), the arena shrinks.
  uint64_t wholeBytes = whole.ranks.front().arenaBytes;
  uint64_t halvesBytes = halves.ranks.front().arenaBytes;
  EXPECT_LT(halvesBytes, wholeBytes);
  std::printf("microbatches 2x8 vs 1x16: worst relative error %.2e; arena "
              "%llu vs %llu bytes\n",
              worst, static_cast<unsigned long long>(halvesBytes),
              static_cast<unsigned long long>(wholeBytes));
}

TEST_F(TrainingTest, TheRuntimeUsesExactlyThePlannedArena) {
  // The whole pipeline, buffer plan included, then two training steps with
  // the new parameters and moments fed back as the training loop does.
  OwningOpRef<ModuleOp> module =
      llmc::buildLossModule(context, tinyGpt2(), 4, kSeq);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  llmc::buildCompilePipeline(pm, llmc::CompilePipelineOptions());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  auto step = module->lookupSymbol<func::FuncOp>("train_step");
  ASSERT_TRUE(step);
  auto recorded = step->getAttrOfType<IntegerAttr>("llmc.arena_bytes");
  ASSERT_TRUE(recorded) << "llmc-plan-buffers did not run";
  auto memory = step->getAttrOfType<DictionaryAttr>("llmc.memory");
  ASSERT_TRUE(memory);
  llmc::CodegenOptions codegen;
  codegen.function = "train_step";
  FailureOr<rt::Executable> exe = llmc::buildExecutable(*module, codegen);
  ASSERT_TRUE(succeeded(exe));
  uint64_t predicted = static_cast<uint64_t>(recorded.getInt());
  EXPECT_EQ(exe->ranks.front().arenaBytes, predicted);

  std::unique_ptr<rt::Session> session = start(*exe);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->arenaBytes(), predicted);
  for (int t = 1; t <= 2; ++t) {
    float stepNumber = static_cast<float>(t);
    ASSERT_TRUE(session->setArgument("optimizer.step", rt::DType::F32, {},
                                     &stepNumber, 4));
    ASSERT_TRUE(session->run());
    for (size_t i = 0; i < exe->arguments.size(); ++i) {
      const rt::ArgumentInfo &arg = exe->arguments[i];
      if (arg.role == rt::ArgumentRole::Input)
        continue;
      int out = exe->findOutput(arg.name);
      ASSERT_GE(out, 0) << arg.name;
      rt::TensorRef tensor;
      ASSERT_TRUE(session->output(static_cast<size_t>(out), tensor));
      ASSERT_TRUE(session->setArgument(arg.name, tensor.dtype, tensor.shape,
                                       tensor.data,
                                       tensor.numElements() *
                                           rt::dtypeSize(tensor.dtype)));
    }
  }
  // Measured: the highest byte any binding, constant or command touched.
  EXPECT_EQ(session->highWaterBytes(), predicted);
  // Every parameter and moment is updated in its own buffer (donated), so
  // feeding it back copies nothing.
  int donated = 0;
  for (const rt::ArgumentInfo &arg : exe->arguments) {
    if (arg.role == rt::ArgumentRole::Input)
      continue;
    int out = exe->findOutput(arg.name);
    const rt::RankProgram &rank = exe->ranks.front();
    donated += rank.values[arg.value].offset ==
               rank.values[exe->outputs[out].value].offset;
  }
  EXPECT_EQ(donated, static_cast<int>(memory.getAs<DictionaryAttr>("donations")
                                          .size()));
  std::printf("arena %llu bytes predicted and measured; peak live %lld; %d of "
              "the parameters and moments updated in place\n",
              static_cast<unsigned long long>(predicted),
              static_cast<long long>(
                  memory.getAs<IntegerAttr>("peak_live").getInt()),
              donated);
}


TEST_F(CheckpointTest, ACrashDuringASaveKeepsThePreviousCheckpoint) {
  rt::Executable exe = compile(2, 1, /*optimizer=*/true);
  ASSERT_FALSE(exe.arguments.empty());
  std::unique_ptr<rt::Session> session = start(exe);
  const std::string weight = "transformer.h.0.mlp.c_fc.weight";
  const std::string moment = "optimizer.v." + weight;
  fill(*session, weight, 0.25f);
  fill(*session, moment, 0.5f);
  rt::CheckpointState state;
  state.step = 4;
  state.data.epoch = 2;
  state.data.shard = 3;
  state.data.offset = 123;
  state.data.batch = 5;
  state.data.seed = 77;
  state.dataShards = 4;
  state.dataTokens = 1000;
  state.files["tokenizer.json"] = "{}";
  state.seed = 9;
  std::string path;
  rt::Status status = rt::saveCheckpoint(directory.string(), *session, state,
                                         {}, path);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(path, (directory / "step-00000004").string());

  // Step 8 stops after its first file, as a crash would.
  fill(*session, weight, -1.0f);
  state.step = 8;
  rt::CheckpointOptions crash;
  crash.failAfterFiles = 1;
  EXPECT_FALSE(rt::saveCheckpoint(directory.string(), *session, state, crash,
                                  path));
  EXPECT_FALSE(fs::exists(directory / "step-00000008"));
  EXPECT_TRUE(fs::exists(directory / ".step-00000008.partial"));

  // What a resume finds is step 4, whole.
  std::string resolved;
  ASSERT_TRUE(rt::resolveCheckpoint(directory.string(), resolved));
  EXPECT_EQ(resolved, (directory / "step-00000004").string());
  std::unique_ptr<rt::Session> restored = start(exe);
  rt::CheckpointState loaded;
  status = rt::loadCheckpoint(resolved, *restored, loaded);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(loaded.step, 4);
  EXPECT_EQ(loaded.data, state.data);
  EXPECT_EQ(loaded.dataShards, 4u);
  EXPECT_EQ(loaded.dataTokens, 1000u);
  EXPECT_TRUE(fs::exists(directory / "step-00000004" / "tokenizer.json"));
  EXPECT_EQ(loaded.seed, 9u);
  for (float v : argument(*restored, weight))
    ASSERT_EQ(v, 0.25f);
  for (float v : argument(*restored, moment))
    ASSERT_EQ(v, 0.5f);

  // The next save succeeds and removes the partial directory; keep = 2
  // leaves the two newest.
  rt::CheckpointOptions keep2;
  keep2.keep = 2;
  for (int64_t step : {8, 12, 16}) {
    state.step = step;
    status = rt::saveCheckpoint(directory.string(), *session, state, keep2,
                                path);
    ASSERT_TRUE(status) << status.message();
  }
  EXPECT_FALSE(fs::exists(directory / ".step-00000008.partial"));
  EXPECT_FALSE(fs::exists(directory / "step-00000004"));
  EXPECT_FALSE(fs::exists(directory / "step-00000008"));
  EXPECT_TRUE(fs::exists(directory / "step-00000012"));
  EXPECT_TRUE(fs::exists(directory / "step-00000016"));
  ASSERT_TRUE(rt::resolveCheckpoint(directory.string(), resolved));
  EXPECT_EQ(resolved, (directory / "step-00000016").string());
}

TEST_F(CheckpointTest, DamagedOrForeignCheckpointsAreRefused) {
  rt::Executable exe = compile(2, 1, /*optimizer=*/true);
  ASSERT_FALSE(exe.arguments.empty());
  std::unique_ptr<rt::Session> session = start(exe);
  rt::CheckpointState state;
  state.step = 1;
  std::string path;
  ASSERT_TRUE(rt::saveCheckpoint(directory.string(), *session, state, {},
                                 path));

  // Truncated model file.
  fs::path model = fs::path(path) / "model.safetensors";
  fs::resize_file(model, fs::file_size(model) / 2);
  rt::CheckpointState loaded;
  rt::Status status = rt::loadCheckpoint(path, *session, loaded);
  EXPECT_FALSE(status);
  EXPECT_NE(status.message().find(model.string()), std::string::npos)
      << status.message();

  // A checkpoint of the 2-layer model does not fit the 1-layer program's
  // arguments... and the other way round: the 1-layer checkpoint lacks
  // layer 1.
  llmc::ModelConfig bigger = tinyGpt2();
  bigger.numLayers = 2;
  OwningOpRef<ModuleOp> module =
      llmc::buildLossModule(context, bigger, 2, kSeq);
  ASSERT_TRUE(module);
  llmc::CompilePipelineOptions options;
  PassManager pm(&context);
  llmc::buildCompilePipeline(pm, options);
  ASSERT_TRUE(succeeded(pm.run(*module)));
  llmc::CodegenOptions codegen;
  codegen.function = "train_step";
  FailureOr<rt::Executable> other = llmc::buildExecutable(*module, codegen);
  ASSERT_TRUE(succeeded(other));
  std::unique_ptr<rt::Session> otherSession = start(*other);
  state.step = 2;
  ASSERT_TRUE(rt::saveCheckpoint(directory.string(), *session, state, {},
                                 path));
  status = rt::loadCheckpoint(path, *otherSession, loaded);
  EXPECT_FALSE(status);
  EXPECT_NE(status.message().find("no tensor 'transformer.h.1."),
            std::string::npos)
      << status.message();
}

/// The last "tokens" a OneProcessOfTwo bound (it lives beyond the session,
/// which rt::train destroys before returning).
std::vector<int32_t> boundTokens;

/// A DeviceSession that runs a CPU Session of every rank but says it runs
/// only `ranks` in this process, as one process of a multi-process run does,
/// and keeps the last tokens bound in boundTokens.
class OneProcessOfTwo : public rt::DeviceSession {
public:
  OneProcessOfTwo(std::unique_ptr<rt::Session> inner, std::vector<int> ranks)
      : inner_(std::move(inner)), ranks_(std::move(ranks)) {}
  const rt::Executable &executable() const override {
    return inner_->executable();
  }
  std::string deviceName() const override { return "cpu (one process)"; }
  rt::Status setArgument(const std::string &name, rt::DType dtype,
                         const rt::Shape &shape, const void *data,
                         size_t bytes) override {
    if (name == "tokens")
      boundTokens.assign(static_cast<const int32_t *>(data),
                         static_cast<const int32_t *>(data) + bytes / 4);
    return inner_->setArgument(name, dtype, shape, data, bytes);
  }
  rt::Status setArgumentFromOutput(const std::string &name,
                                   size_t output) override {
    return inner_->setArgumentFromOutput(name, output);
  }
  rt::Status run() override { return inner_->run(); }
  rt::Status outputToHost(size_t index,
                          rt::HostTensor &tensor) const override {
    return inner_->outputToHost(index, tensor);
  }
  rt::Status argumentToHost(size_t index,
                            rt::HostTensor &tensor) const override {
    return inner_->argumentToHost(index, tensor);
  }
  std::vector<int> localRanks() const override { return ranks_; }

private:
  std::unique_ptr<rt::Session> inner_;
  std::vector<int> ranks_;
};

TEST_F(TrainingTest, EachDataParallelRankReadsOnlyItsRows) {
  // dp = 2 over 2 microbatches of 4 rows: the batch is 2 groups of 4 rows,
  // each split in 2, so rank 0 holds rows 0, 1, 4, 5 and rank 1 2, 3, 6, 7.
  // @loss traced for 4 rows, two microbatches: a global batch of 8.
  rt::Executable exe = compile(4, 2, /*optimizer=*/true, /*dp=*/2);
  ASSERT_EQ(exe.ranks.size(), 2u);
  std::vector<int64_t> rows;
  ASSERT_TRUE(rt::batchRowsOf(exe, {0}, rows));
  EXPECT_EQ(rows, (std::vector<int64_t>{0, 1, 4, 5}));
  ASSERT_TRUE(rt::batchRowsOf(exe, {1}, rows));
  EXPECT_EQ(rows, (std::vector<int64_t>{2, 3, 6, 7}));
  ASSERT_TRUE(rt::batchRowsOf(exe, {0, 1}, rows));
  EXPECT_TRUE(rows.empty()); // every row: read them all

  // The loop in a process that runs rank 1 only reads rank 1's rows: half
  // the tokens of the process that runs both, and the other rows stay 0.
  // Data: a text file of bytes 1..60 (below the vocabulary of 64, never 0,
  // so that a row read is never all 0), in order.
  fs::path dir = fs::temp_directory_path() /
                 ("llmc-rows-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string text;
  for (int i = 0; i < 4000; ++i)
    text += static_cast<char>(1 + (i * 7 + i / 13) % 60);
  std::ofstream((dir / "data.txt").string()) << text;
  rt::TrainOptions options;
  ASSERT_TRUE(rt::readTrainSettings(
      {{"train.steps", "3"}, {"model.vocab_size", "64"}}, options.settings));
  options.settings.trainData = {(dir / "data.txt").string()};
  options.settings.shuffle = false;
  options.settings.devices = "cuda"; // the factory below: "one process"
  options.cudaDeviceCount = [] { return 1; };
  options.cudaSession = [](const rt::Executable &program,
                           std::unique_ptr<rt::DeviceSession> &session) {
    rt::SessionOptions sessionOptions;
    sessionOptions.threads = 1;
    std::unique_ptr<rt::Session> cpu;
    LLMC_RETURN_IF_ERROR(rt::Session::create(program, sessionOptions, cpu));
    session = std::make_unique<OneProcessOfTwo>(std::move(cpu),
                                                std::vector<int>{1});
    return rt::Status::ok();
  };
  options.prefetch = 0;
  options.log = nullptr;
  rt::TrainReport report;
  rt::Status status = rt::train(exe, options, report);
  ASSERT_TRUE(status) << status.message();
  ASSERT_EQ(report.steps.size(), 3u);
  EXPECT_EQ(report.tokensRead, 3u * 4 * (kSeq + 1));
  ASSERT_EQ(boundTokens.size(), static_cast<size_t>(8 * kSeq));
  for (int64_t row = 0; row < 8; ++row) {
    bool mine = row == 2 || row == 3 || row == 6 || row == 7;
    int64_t nonzero = 0;
    for (int64_t t = 0; t < kSeq; ++t)
      nonzero += boundTokens[row * kSeq + t] != 0;
    std::string dump;
    for (int64_t t = 0; t < kSeq; ++t)
      dump += std::to_string(boundTokens[row * kSeq + t]) + " ";
    if (mine)
      EXPECT_GT(nonzero, 0) << "row " << row << ": " << dump;
    else
      EXPECT_EQ(nonzero, 0) << "row " << row << ": " << dump;
  }

  // Both ranks in the process: every row, twice the tokens.
  options.cudaSession = nullptr;
  options.cudaDeviceCount = nullptr;
  options.settings.devices = "cpu";
  rt::TrainReport both;
  status = rt::train(exe, options, both);
  ASSERT_TRUE(status) << status.message();
  EXPECT_EQ(both.tokensRead, 2 * report.tokensRead);
  fs::remove_all(dir);
}

} // namespace

