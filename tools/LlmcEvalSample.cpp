//===- LlmcEvalSample.cpp - llmc eval and llmc sample ---------------------===//
#include "tools/LlmcEvalSample.h"
#include "tools/LlmcDriver.h"

#include "runtime/Session.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Evaluate.h"
#include "runtime/train/Sample.h"
#include "runtime/train/TextCodec.h"
#include "runtime/train/Weights.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <chrono>

namespace llmc::driver {

namespace {

int fail(const char *tool, const llmc::rt::Status &status) {
  llvm::errs() << "llmc " << tool << ": " << status.message() << "\n";
  return kExitRejected;
}

bool isFile(const std::string &dir, const char *name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return llvm::sys::fs::exists(path);
}

std::string join(const std::string &dir, const char *name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path.str());
}

/// The model of `input` (a run description or a model folder), traced but
/// not compiled: its description and the pipeline options a compile uses.
int loadModel(Session &session, const std::string &input,
              const std::string &devices, Compiled &compiled) {
  CompileRequest request;
  request.input = input;
  request.stopAfter = "loss";
  request.forward = true;
  request.devices = devices;
  if (int code = compileModule(session, request, compiled))
    return code;
  if (!compiled.description) {
    llvm::errs() << input
                 << ": error: expected a run description (.toml) or a Hugging "
                    "Face model folder, got llmc IR\n";
    return kExitUsage;
  }
  return kExitOk;
}

} // namespace

int runEval(const EvalCommand &options) {
  Session session;
  Compiled compiled;
  if (int code = loadModel(session, options.input, options.device, compiled))
    return code;
  RunDescription &run = *compiled.description;
  if (!options.val.empty())
    run.data.val.assign(options.val.begin(), options.val.end());
  if (run.data.val.empty()) {
    llvm::errs() << "llmc eval: " << options.input
                 << " names no validation set; pass --val FILE|GLOB or set "
                    "[data] val\n";
    return kExitUsage;
  }
  if (!options.tokenizer.empty())
    run.data.tokenizer = options.tokenizer;
  // The eval program alone, held by an artifact of its own.
  llmc::rt::Executable holder;
  if (int code = buildEvalCompanion(compiled, options.input, holder))
    return code;
  llmc::rt::TrainOptions train;
  train.settings = trainSettingsFor(run);
  if (options.steps > 0)
    train.settings.evalSteps = options.steps;
  if (!options.device.empty())
    train.settings.devices = options.device;
  train.threads = options.threads;
  train.log = stderr;
#ifdef LLMC_HAVE_CUDA
  train.cudaSession = llmc::rt::cuda::createCudaDeviceSession;
  train.cudaDeviceCount = llmc::rt::cuda::cudaDeviceCount;
#endif
  std::string device;
  const llmc::rt::Executable &program = holder.companions.front();
  if (llmc::rt::Status status =
          llmc::rt::resolveDevice(train, program.ranks.size(), device);
      !status)
    return fail("eval", status);
  llmc::rt::TextCodec codec;
  if (!train.settings.tokenizer.empty())
    if (llmc::rt::Status status =
            llmc::rt::TextCodec::load(train.settings.tokenizer, codec);
        !status)
      return fail("eval", status);
  std::unique_ptr<llmc::rt::Evaluator> evaluator;
  if (llmc::rt::Status status =
          llmc::rt::Evaluator::create(holder, train, device, codec, evaluator);
      !status)
    return fail("eval", status);

  // The weights: a checkpoint, or a model folder / safetensors file.
  std::string what;
  if (!options.resume.empty()) {
    std::string path;
    llmc::rt::CheckpointState state;
    if (llmc::rt::Status status =
            llmc::rt::resolveCheckpoint(options.resume, path);
        !status)
      return fail("eval", status);
    if (llmc::rt::Status status =
            llmc::rt::loadCheckpoint(path, evaluator->session(), state);
        !status)
      return fail("eval", status);
    what = "at step " + std::to_string(state.step) + " of " + path;
  } else {
    bool strict = true;
    std::string weights =
        llmc::rt::initialWeights(program, options.weights, strict);
    if (weights.empty() && run.model.hfDirectory.size())
      weights = run.model.hfDirectory;
    if (weights.empty()) {
      llvm::errs() << "llmc eval: nothing to evaluate: pass --resume "
                      "CHECKPOINT or --weights FILE, or give a Hugging Face "
                      "model folder\n";
      return kExitUsage;
    }
    llmc::rt::WeightsReport report;
    if (llmc::rt::Status status =
            llmc::rt::bindWeights(evaluator->session(), weights, strict,
                                  stderr, options.threads, report);
        !status)
      return fail("eval", status);
    what = "of " + weights;
  }
  double loss = 0;
  auto begin = std::chrono::steady_clock::now();
  if (llmc::rt::Status status = evaluator->evaluate(loss); !status)
    return fail("eval", status);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - begin)
                       .count();
  llvm::outs() << llvm::format("val loss %.9g ", loss) << what << " ("
               << evaluator->batches() << " batches of "
               << evaluator->batchSize() << " x " << run.train.seqLen
               << " tokens of " << evaluator->corpus().describe()
               << llvm::format(", %.2f s)\n", seconds);
  return kExitOk;
}

int runSample(const SampleCommand &options) {
  // 1. What to sample: a checkpoint (its config.json, weights, tokenizer),
  //    a model folder, or a run description with --resume.
  std::string input = options.target, weights, tokenizer;
  bool folder = llvm::sys::fs::is_directory(input);
  if (folder && (isFile(input, "latest") || isFile(input, "optimizer.safetensors"))) {
    std::string path;
    if (llmc::rt::Status status = llmc::rt::resolveCheckpoint(input, path);
        !status)
      return fail("sample", status);
    if (!isFile(path, "config.json")) {
      llvm::errs() << "llmc sample: " << path
                   << " has no config.json (a checkpoint from before llmc "
                      "wrote one); sample with `llmc sample RUN.toml --resume "
                   << path << "`\n";
      return kExitUsage;
    }
    input = path;
  }
  if (!options.resume.empty()) {
    if (llvm::sys::fs::is_directory(input) && folder) {
      llvm::errs() << "llmc sample: --resume goes with a run description; "
                      "give the checkpoint itself as the target\n";
      return kExitUsage;
    }
    if (llmc::rt::Status status =
            llmc::rt::resolveCheckpoint(options.resume, weights);
        !status)
      return fail("sample", status);
  }
  Session session;
  Compiled compiled;
  if (int code = loadModel(session, input, "cpu", compiled))
    return code;
  const RunDescription &run = *compiled.description;
  if (weights.empty())
    weights = llvm::sys::fs::is_directory(input) ? input : run.model.hfDirectory;
  if (weights.empty()) {
    llvm::errs() << "llmc sample: " << input
                 << " has no trained weights; give a checkpoint, a model "
                    "folder, or --resume CHECKPOINT\n";
    return kExitUsage;
  }
  tokenizer = options.tokenizer;
  if (tokenizer.empty() && llvm::sys::fs::is_directory(input) &&
      isFile(input, "tokenizer.json"))
    tokenizer = join(input, "tokenizer.json");
  if (tokenizer.empty())
    tokenizer = run.data.tokenizer.empty() ? run.model.tokenizerPath
                                           : run.data.tokenizer;

  // 2. The logits program for one sequence of the window.
  int64_t window = options.seqLen;
  if (window <= 0)
    window = input.size() > 5 && llvm::StringRef(input).ends_with(".toml")
                 ? run.train.seqLen
                 : std::min<int64_t>(1024, run.model.maxPositions > 0
                                               ? run.model.maxPositions
                                               : 1024);
  mlir::FailureOr<llmc::rt::Executable> built =
      buildLogitsExecutable(session.context, run.model, 1, window, input);
  if (mlir::failed(built))
    return kExitRejected;
  llmc::rt::SessionOptions sessionOptions;
  sessionOptions.threads = options.threads;
  std::unique_ptr<llmc::rt::Session> cpu;
  if (llmc::rt::Status status =
          llmc::rt::Session::create(*built, sessionOptions, cpu);
      !status)
    return fail("sample", status);
  llmc::rt::WeightsReport report;
  if (llmc::rt::Status status = llmc::rt::bindWeights(
          *cpu, weights, /*strict=*/true, stderr, options.threads, report);
      !status)
    return fail("sample", status);

  // 3. The prompt in, the text out.
  llmc::rt::TextCodec codec;
  if (!tokenizer.empty()) {
    if (llmc::rt::Status status = llmc::rt::TextCodec::load(tokenizer, codec);
        !status)
      return fail("sample", status);
  } else if (run.model.vocabSize > 256) {
    llvm::errs() << "llmc sample: the model has " << run.model.vocabSize
                 << " token ids and no tokenizer was found (no tokenizer.json "
                    "beside the weights, no [data] tokenizer); pass "
                    "--tokenizer FILE\n";
    return kExitUsage;
  }
  std::vector<uint32_t> encoded;
  if (llmc::rt::Status status = codec.encodePrompt(options.prompt, encoded); !status)
    return fail("sample", status);
  if (encoded.empty()) {
    llvm::errs() << "llmc sample: the prompt encodes to no tokens; give a "
                    "non-empty --prompt\n";
    return kExitUsage;
  }
  std::vector<int32_t> prompt(encoded.begin(), encoded.end()), generated;
  llmc::rt::SampleOptions sample;
  sample.tokens = options.tokens;
  sample.temperature = options.temperature;
  sample.topK = options.topK;
  sample.seed = options.seed;
  auto begin = std::chrono::steady_clock::now();
  if (llmc::rt::Status status =
          llmc::rt::generate(*cpu, prompt, sample, generated);
      !status)
    return fail("sample", status);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - begin)
                       .count();
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), generated.begin(), generated.end());
  llvm::outs() << codec.decode(all) << "\n";
  llvm::errs() << llvm::format(
      "sampled %lld tokens after a prompt of %zu in %.2f s (%.1f tokens/s; "
      "no KV cache: each token runs a window of %lld)\n",
      static_cast<long long>(generated.size()), prompt.size(), seconds,
      seconds > 0 ? generated.size() / seconds : 0.0,
      static_cast<long long>(window));
  return kExitOk;
}

} // namespace llmc::driver
