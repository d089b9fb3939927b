//===- Trainer.cpp - the training loop of the runtime ---------------------===//
#include "runtime/train/Trainer.h"

#include "runtime/Session.h"
#include "runtime/Sharding.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Evaluate.h"
#include "runtime/train/Init.h"
#include "runtime/train/Sample.h"
#include "runtime/train/StopSignal.h"
#include "runtime/train/TextCodec.h"
#include "runtime/train/TrainTrace.h"
#include "runtime/train/Utilization.h"
#include "runtime/train/Weights.h"

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>


namespace llmc::rt {

namespace {

Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, message);
}

/// CPU seconds of this process so far, every thread.
double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// The argument and output tables a training step must have.
struct StepLayout {
  int tokens = -1, targets = -1, step = -1;
  int loss = -1, gradNorm = -1, lr = -1;
  /// fp16 dynamic loss scaling (docs/precision.md): -1 when absent.
  int lossScale = -1;
  /// (output index, argument index): new values fed back each step.
  std::vector<std::pair<int, int>> feedback;
  int64_t batchSize = 0, seqLen = 0;
};

Status layoutOf(const Executable &exe, StepLayout &layout) {
  const char *hint = "; a training artifact comes from `llmc compile "
                     "RUN.toml -o FILE.llmcx` (the whole pipeline, no --emit)";
  auto argument = [&](const char *name, int &index) -> Status {
    index = exe.findArgument(name);
    return index < 0 ? invalid(std::string("the program has no argument '") +
                               name + "'" + hint)
                     : Status::ok();
  };
  auto output = [&](const char *name, int &index) -> Status {
    index = exe.findOutput(name);
    return index < 0 ? invalid(std::string("the program has no output '") +
                               name + "'" + hint)
                     : Status::ok();
  };
  LLMC_RETURN_IF_ERROR(argument("tokens", layout.tokens));
  LLMC_RETURN_IF_ERROR(argument("targets", layout.targets));
  LLMC_RETURN_IF_ERROR(argument("optimizer.step", layout.step));
  LLMC_RETURN_IF_ERROR(output("loss", layout.loss));
  LLMC_RETURN_IF_ERROR(output("grad_norm", layout.gradNorm));
  LLMC_RETURN_IF_ERROR(output("lr", layout.lr));
  layout.lossScale = exe.findOutput("loss_scale.scale");
  // The global batch: a data-parallel program splits it over its ranks.
  const ValueInfo &tokens =
      exe.ranks.front().values[exe.arguments[layout.tokens].value];
  Shape tokensShape;
  LLMC_RETURN_IF_ERROR(argumentGlobalShape(exe, layout.tokens, tokensShape));
  if (tokensShape.size() != 2 || tokens.dtype != DType::I32)
    return invalid("expected argument 'tokens' of type i32[B, T], got " +
                   std::string(dtypeName(tokens.dtype)) +
                   formatShape(tokensShape));
  layout.batchSize = tokensShape[0];
  layout.seqLen = tokensShape[1];
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const ArgumentInfo &arg = exe.arguments[i];
    if (arg.role == ArgumentRole::Input)
      continue;
    int out = exe.findOutput(arg.name);
    if (out < 0)
      return invalid("the program returns no new value for '" + arg.name +
                     "'" + hint);
    layout.feedback.push_back({out, static_cast<int>(i)});
  }
  return Status::ok();
}

/// Binds parameters from `weightsPath` (when given) or their initializers,
/// and the optimizer state to zeros.
/// Binds every parameter and optimizer state argument; `drawSeconds` gets
/// the time spent drawing initial values on the host (the rest is binding:
/// the copies to the device), `deviceDrawn` the number of arguments the
/// session drew where they live (enqueued: their time joins the first step).
Status bindInitialState(const Executable &exe, DeviceSession &session,
                        const TrainOptions &options, double &drawSeconds,
                        int &deviceDrawn) {
  using Clock = std::chrono::steady_clock;
  // Hugging Face weights (--weights, or the folder the run names): every
  // parameter, converted to its type (runtime/train/Weights.h).
  bool strict = true;
  std::string weights = initialWeights(exe, options.weightsPath, strict);
  WeightsReport loaded;
  if (!weights.empty())
    LLMC_RETURN_IF_ERROR(bindWeights(session, weights, strict, options.log,
                                     options.threads, loaded));
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const ArgumentInfo &arg = exe.arguments[i];
    if (arg.role == ArgumentRole::Input ||
        (arg.role == ArgumentRole::Parameter && !weights.empty()))
      continue;
    const ValueInfo &value = exe.ranks.front().values[arg.value];
    // AdamW moments start at zero: cleared where they live.
    if (arg.role == ArgumentRole::OptimizerState &&
        arg.init.kind != InitSpec::Kind::Constant) {
      LLMC_RETURN_IF_ERROR(session.zeroArgument(arg.name));
      continue;
    }
    // Drawn where it lives when the session can (the CUDA session: the
    // same values, no host draw or copy), else drawn globally on the host
    // (the single-device values) and split when bound.
    bool drawn = false;
    LLMC_RETURN_IF_ERROR(
        session.drawArgument(i, options.settings.seed, drawn));
    if (drawn) {
      ++deviceDrawn;
      continue;
    }
    std::vector<uint8_t> bytes;
    Shape shape;
    LLMC_RETURN_IF_ERROR(argumentGlobalShape(exe, i, shape));
    Clock::time_point drawBegin = Clock::now();
    LLMC_RETURN_IF_ERROR(
        initialArgumentBytes(exe, i, options.settings.seed, bytes));
    drawSeconds +=
        std::chrono::duration<double>(Clock::now() - drawBegin).count();
    LLMC_RETURN_IF_ERROR(session.setArgument(arg.name, value.dtype, shape,
                                             bytes.data(), bytes.size()));
  }
  return Status::ok();
}

/// Generates `sampleTokens` tokens with the trained parameters through the
/// artifact's "logits" program, from a prompt of the data's first tokens,
/// and prints them through the run's codec.
Status printSample(const Executable &exe, const DeviceSession &trained,
                   const TokenCorpus &data, const TextCodec &codec,
                   const TrainOptions &options, TrainReport &report) {
  const TrainSettings &settings = options.settings;
  const Executable *logits = exe.companion("logits");
  if (!logits)
    return invalid("cannot print a sample: the artifact has no \"logits\" "
                   "program; compile it with `llmc compile RUN.toml -o "
                   "FILE.llmcx`, or pass --sample-tokens 0");
  SessionOptions sessionOptions;
  sessionOptions.threads = options.threads;
  std::unique_ptr<Session> session;
  LLMC_RETURN_IF_ERROR(Session::create(*logits, sessionOptions, session));
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const ArgumentInfo &arg = exe.arguments[i];
    if (arg.role != ArgumentRole::Parameter)
      continue;
    // The sample runs on the CPU: a few hundred tiny steps, not worth
    // a second device program. Device parameters come to the host here.
    HostTensor host;
    LLMC_RETURN_IF_ERROR(trained.argumentToHost(i, host));
    const TensorRef &tensor = host.view;
    LLMC_RETURN_IF_ERROR(session->setArgument(
        arg.name, tensor.dtype, tensor.shape, tensor.data,
        static_cast<size_t>(tensor.numElements()) * dtypeSize(tensor.dtype)));
  }
  // The prompt: the data's first line (byte text), at most 16 tokens.
  const TokenShard &first = data.shard(0);
  const bool bytes = first.format() == TokenFormat::Text &&
                     first.tokenBytes() == 1;
  std::vector<int32_t> prompt;
  for (uint64_t i = 0; i < first.size() && prompt.size() < 16; ++i) {
    int32_t token = static_cast<int32_t>(first[i]);
    if (bytes && token == '\n')
      break;
    prompt.push_back(token);
  }
  SampleOptions sample;
  sample.tokens = settings.sampleTokens;
  sample.seed = settings.seed;
  LLMC_RETURN_IF_ERROR(generate(*session, prompt, sample, report.sample));
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), report.sample.begin(), report.sample.end());
  if (codec.hasTokenizer() || bytes) {
    report.sampleText = codec.decode(all);
  } else {
    // Token shards without a tokenizer: the ids.
    for (size_t i = 0; i < all.size(); ++i)
      report.sampleText += (i ? " " : "") + std::to_string(all[i]);
  }
  if (options.log)
    std::fprintf(options.log,
                 "sample (%lld tokens after a prompt of %zu, temperature "
                 "%.1f):\n%s\n",
                 static_cast<long long>(sample.tokens), prompt.size(),
                 sample.temperature, report.sampleText.c_str());
  return Status::ok();
}

/// The data side of a run: the codec, the training corpus and its loader
/// (this process's rows), and the validation.
struct RunData {
  TextCodec codec;
  TokenCorpus train;
  std::unique_ptr<TokenLoader> loader;
  std::unique_ptr<Evaluator> eval;
};

Status openRunData(const Executable &exe, const DeviceSession &session,
                   const std::string &device, const StepLayout &layout,
                   const TrainOptions &options, RunData &data) {
  const TrainSettings &settings = options.settings;
  if (!settings.tokenizer.empty()) {
    LLMC_RETURN_IF_ERROR(TextCodec::load(settings.tokenizer, data.codec));
    if (data.codec.vocabSize() > settings.vocabSize)
      return invalid(settings.tokenizer + ": the tokenizer has " +
                     std::to_string(data.codec.vocabSize()) +
                     " token ids, but the model's vocab_size is " +
                     std::to_string(settings.vocabSize) +
                     "; set [model] vocab_size to at least " +
                     std::to_string(data.codec.vocabSize()));
  }
  LLMC_RETURN_IF_ERROR(TokenCorpus::open(
      corpusOptionsFor(settings, "train", data.codec), data.train));
  TokenLoaderOptions loaderOptions;
  loaderOptions.batchSize = layout.batchSize;
  loaderOptions.seqLen = layout.seqLen;
  // The built-in corpus keeps the order the demo has always had.
  loaderOptions.shuffle = settings.shuffle && !settings.trainData.empty();
  loaderOptions.seed = settings.seed;
  loaderOptions.prefetch = options.prefetch;
  LLMC_RETURN_IF_ERROR(
      batchRowsOf(exe, session.localRanks(), loaderOptions.rows));
  LLMC_RETURN_IF_ERROR(
      TokenLoader::open(data.train, loaderOptions, data.loader));
  if (options.log)
    for (size_t s : data.loader->order().skippedShards())
      std::fprintf(options.log,
                   "note: %s holds %llu tokens, fewer than one %s: never "
                   "read\n",
                   data.train.shard(s).path().c_str(),
                   static_cast<unsigned long long>(data.train.shard(s).size()),
                   loaderOptions.shuffle ? "sequence" : "batch");
  if (!settings.valData.empty())
    LLMC_RETURN_IF_ERROR(
        Evaluator::create(exe, options, device, data.codec, data.eval));
  return Status::ok();
}

/// --resume: the checkpoint's state, the data position checked against this
/// run's corpus and order, and the directory new checkpoints go to.
Status resumeRun(const TrainOptions &options, DeviceSession &session,
                 RunData &data, CheckpointState &state, std::string &path) {
  if (!options.weightsPath.empty())
    return invalid("--resume " + options.resume + " and --weights " +
                   options.weightsPath +
                   " both give the starting parameters, and a checkpoint "
                   "holds its own: drop --weights to resume, or --resume to "
                   "start a new run from the weights");
  LLMC_RETURN_IF_ERROR(resolveCheckpoint(options.resume, path));
  LLMC_RETURN_IF_ERROR(loadCheckpoint(path, session, state));
  if (state.dataShards != 0 &&
      (state.dataShards != data.train.numShards() ||
       state.dataTokens != data.train.totalTokens()))
    return invalid(path + ": the checkpoint was saved training on " +
                   std::to_string(state.dataShards) + " file(s) of " +
                   std::to_string(state.dataTokens) + " tokens in all, and " +
                   data.train.describe() +
                   "; resume with the data the run started with");
  return data.loader->setPosition(state.data);
}

/// One step: the batch, the program, the metrics; new values fed back.
Status runStep(const Executable &exe, DeviceSession &session,
               const StepLayout &layout, TokenLoader &loader, int64_t step,
               TrainTrace *trace, StepMetrics &m) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point begin = Clock::now();
  double cpuBegin = processCpuSeconds();
  TracePhase data(trace, "data: the batch, bound");
  TokenBatch batch;
  LLMC_RETURN_IF_ERROR(loader.next(batch));
  Shape shape = {layout.batchSize, layout.seqLen};
  size_t bytes = batch.tokens.size() * sizeof(int32_t);
  LLMC_RETURN_IF_ERROR(session.setArgument("tokens", DType::I32, shape,
                                           batch.tokens.data(), bytes));
  LLMC_RETURN_IF_ERROR(session.setArgument("targets", DType::I32, shape,
                                           batch.targets.data(), bytes));
  float t = static_cast<float>(step);
  LLMC_RETURN_IF_ERROR(
      session.setArgument("optimizer.step", DType::F32, {}, &t, sizeof(t)));
  data.end();
  TracePhase run(trace, "run: the compiled step");
  if (Status status = session.run(); !status)
    return Status::error(status.code(), "step " + std::to_string(step) +
                                            ": " + status.message());
  run.end();
  TracePhase outputs(trace, "outputs: loss and feedback");
  m.step = step;
  HostTensor out;
  LLMC_RETURN_IF_ERROR(session.outputToHost(layout.loss, out));
  m.loss = scalarAsDouble(out.view);
  LLMC_RETURN_IF_ERROR(session.outputToHost(layout.gradNorm, out));
  m.gradNorm = scalarAsDouble(out.view);
  LLMC_RETURN_IF_ERROR(session.outputToHost(layout.lr, out));
  m.lr = scalarAsDouble(out.view);
  if (layout.lossScale >= 0) {
    // With loss scaling the program itself skips a step whose gradients
    // overflowed (and lowers the scale); the loop only reports it.
    LLMC_RETURN_IF_ERROR(session.outputToHost(layout.lossScale, out));
    m.lossScale = scalarAsDouble(out.view);
    m.hasLossScale = true;
    m.skipped = !std::isfinite(m.gradNorm);
  }
  if (!m.skipped && (!std::isfinite(m.loss) || !std::isfinite(m.gradNorm)))
    return Status::error(
        StatusCode::Internal,
        "step " + std::to_string(step) + ": the loss (" +
            std::to_string(m.loss) + ") or gradient norm (" +
            std::to_string(m.gradNorm) +
            ") is not finite; lower [train] learning_rate or check the data; "
            "the last checkpoint is unchanged");
  // New parameters and optimizer state stay on the device.
  for (auto [outIndex, argIndex] : layout.feedback)
    LLMC_RETURN_IF_ERROR(session.setArgumentFromOutput(
        exe.arguments[argIndex].name, static_cast<size_t>(outIndex)));
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  m.msPerStep = 1e3 * seconds;
  m.cpuMsPerStep = 1e3 * (processCpuSeconds() - cpuBegin);
  m.tokens = layout.batchSize * layout.seqLen;
  m.tokensPerSecond = seconds > 0 ? static_cast<double>(m.tokens) / seconds : 0;
  return Status::ok();
}

/// Saves the checkpoint of `step` (the primary process), or takes part in
/// its gathers (the others, in the order saveCheckpoint reads arguments).
Status checkpointAt(const Executable &exe, const DeviceSession &session,
                    const TrainOptions &options, const std::string &directory,
                    const RunData &data, int64_t step,
                    const std::string &lineage, TrainReport &report) {
  if (!options.primary) {
    for (size_t i = 0; i < exe.arguments.size(); ++i) {
      if (exe.arguments[i].role == ArgumentRole::Input)
        continue;
      HostTensor ignored;
      LLMC_RETURN_IF_ERROR(session.argumentToHost(i, ignored));
    }
    return Status::ok();
  }
  CheckpointState state;
  state.step = step;
  state.data = data.loader->position();
  state.dataShards = data.train.numShards();
  state.dataTokens = data.train.totalTokens();
  state.seed = options.settings.seed;
  state.source = exe.source;
  state.lineage = lineage;
  if (data.codec.hasTokenizer()) {
    // The tokenizer travels with the checkpoint: llmc sample reads it there.
    std::ifstream in(data.codec.path(), std::ios::binary);
    std::ostringstream contents;
    contents << in.rdbuf();
    if (!in)
      return invalid("cannot read the tokenizer '" + data.codec.path() +
                     "' to save it with the checkpoint");
    state.files["tokenizer.json"] = contents.str();
  }
  CheckpointOptions checkpointOptions;
  checkpointOptions.keep = options.settings.checkpointKeep;
  checkpointOptions.log = options.log;
  std::string path;
  LLMC_RETURN_IF_ERROR(
      saveCheckpoint(directory, session, state, checkpointOptions, path));
  report.lastCheckpoint = path;
  if (options.log) {
    std::fprintf(options.log, "saved checkpoint %s\n", path.c_str());
    std::fflush(options.log);
  }
  return Status::ok();
}

} // namespace

Status resolveDevice(const TrainOptions &options, size_t ranks,
                     std::string &device) {
  const std::string &wanted = options.settings.devices;
  // A program of several ranks in one process runs on virtual CPU devices;
  // several GPUs are one process each (llmc launch, docs/distributed.md).
  if (wanted == "auto" && ranks > 1) {
    device = "cpu";
    return Status::ok();
  }
  // "cuda:N": the program decides how many ranks; a one-rank one runs on
  // the first GPU (one process's CudaSession refuses more ranks; under a
  // launcher the tool's factory is the multi-process session).
  bool gpu = wanted.rfind("cuda", 0) == 0;
  if (!gpu && wanted != "auto") {
    device = "cpu";
    return Status::ok();
  }
  if (!options.cudaSession || !options.cudaDeviceCount) {
    if (gpu)
      return invalid("devices = \"" + wanted +
                     "\": this build has no CUDA backend "
                     "(configure with the CUDA toolkit, LLMC_CUDA=ON), or "
                     "train with --device cpu");
    if (options.log)
      std::fprintf(options.log, "devices = \"auto\": this build has no CUDA "
                                "backend; training on the CPU\n");
    device = "cpu";
    return Status::ok();
  }
  if (options.cudaDeviceCount() > 0) {
    device = "cuda";
    return Status::ok();
  }
  if (gpu)
    return Status::error(StatusCode::NotFound,
                         "devices = \"" + wanted +
                             "\": no CUDA device on this machine "
                             "(cudaGetDeviceCount found none); train with "
                             "--device cpu or --device auto");
  if (options.log)
    std::fprintf(options.log,
                 "devices = \"auto\": no CUDA device; training on the CPU\n");
  device = "cpu";
  return Status::ok();
}

Status checkTrainable(const Executable &executable) {
  StepLayout layout;
  return layoutOf(executable, layout);
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

/// Step 1 of train: the session on the resolved device.
Status createSession(const Executable &exe, const TrainOptions &options,
                     const std::string &device,
                     std::unique_ptr<DeviceSession> &session) {
  if (device == "cuda")
    return options.cudaSession(exe, session);
  SessionOptions sessionOptions;
  sessionOptions.threads = options.threads;
  std::unique_ptr<Session> cpu;
  LLMC_RETURN_IF_ERROR(Session::create(exe, sessionOptions, cpu));
  session = std::move(cpu);
  return Status::ok();
}

/// Step 3 of train: the state to start from, a checkpoint (then `settings`
/// gets its directory when it names none, and `complete` is set when it is
/// already at the last step) or the initial one; `first` is the first step
/// to run. Prints the start-up line with the times of steps 1-3.
Status startState(const Executable &exe, DeviceSession &session,
                  const std::string &device, const TrainOptions &options,
                  RunData &data,
                  TrainSettings &settings, double sessionSeconds,
                  double dataSeconds, int64_t &first, bool &complete,
                  std::string &lineage) {
  Clock::time_point stateBegin = Clock::now();
  double drawSeconds = 0;
  int deviceDrawn = 0;
  first = 1;
  complete = false;
  if (!options.resume.empty()) {
    std::string path;
    CheckpointState state;
    LLMC_RETURN_IF_ERROR(resumeRun(options, session, data, state, path));
    first = state.step + 1;
    // The lineage goes on (a checkpoint from before lineages starts one).
    lineage = state.lineage.empty()
                  ? newCheckpointLineage(exe.source, settings.seed)
                  : state.lineage;
    // A resumed run goes on saving where it resumed from, unless told.
    if (settings.checkpointDir.empty())
      settings.checkpointDir =
          std::filesystem::path(path).parent_path().string();
    if (state.step >= settings.steps) {
      complete = true;
      if (options.log)
        std::fprintf(options.log,
                     "%s is at step %lld of %lld: the run is complete, "
                     "nothing to train (raise [train] steps to go on)\n",
                     path.c_str(), static_cast<long long>(state.step),
                     static_cast<long long>(settings.steps));
      return Status::ok();
    }
    if (options.log)
      std::fprintf(options.log, "resumed from %s (step %lld, data at %s)\n",
                   path.c_str(), static_cast<long long>(state.step),
                   data.loader->order().describe(state.data).c_str());
  } else {
    lineage = newCheckpointLineage(exe.source, settings.seed);
    LLMC_RETURN_IF_ERROR(
        bindInitialState(exe, session, options, drawSeconds, deviceDrawn));
  }
  if (!options.log)
    return Status::ok();
  double stateSeconds = since(stateBegin);
  std::fprintf(options.log,
               "ready in %.2f s: %s session %.2f s, data %.2f s, %s %.2f s "
               "(%.2f s of it drawn on the host%s)\n",
               sessionSeconds + dataSeconds + stateSeconds,
               device.c_str(),
               sessionSeconds, dataSeconds,
               options.resume.empty() ? "initial state" : "checkpoint",
               stateSeconds, drawSeconds,
               deviceDrawn ? (", " + std::to_string(deviceDrawn) +
                              " tensors drawn on the device")
                                 .c_str()
                           : "");
  std::string notes = session.backendNotes();
  if (!notes.empty())
    std::fprintf(options.log, "%s\n", notes.c_str());
  return Status::ok();
}

/// The lines that say what the run trains on: steps, batch, data, device,
/// and the validation.
void printRunHeader(const Executable &exe, const DeviceSession &session,
                    const RunData &data, const StepLayout &layout,
                    const TrainSettings &settings, int64_t first,
                    int64_t last, std::FILE *log) {
  std::fprintf(log,
               "training %s: steps %lld-%lld of %lld, %lld sequences x %lld "
               "tokens per step, data %s%s, on %s\n",
               exe.source.c_str(), static_cast<long long>(first),
               static_cast<long long>(last),
               static_cast<long long>(settings.steps),
               static_cast<long long>(layout.batchSize),
               static_cast<long long>(layout.seqLen),
               data.train.describe().c_str(),
               data.loader->order().shuffled() ? ", shuffled" : "",
               session.deviceName().c_str());
  if (data.eval)
    std::fprintf(log,
                 "validation: %s, %lld batches of %lld x %lld tokens %s\n",
                 data.eval->corpus().describe().c_str(),
                 static_cast<long long>(data.eval->batches()),
                 static_cast<long long>(data.eval->batchSize()),
                 static_cast<long long>(layout.seqLen),
                 settings.evalEvery > 0
                     ? ("every " + std::to_string(settings.evalEvery) +
                        " steps and at the end")
                           .c_str()
                     : "at the end");
}

/// The validation loss after `step` into m.valLoss, with its line.
Status validate(const DeviceSession &session, RunData &data, int64_t step,
                int64_t steps, std::FILE *log, StepMetrics &m) {
  Clock::time_point begin = Clock::now();
  double valLoss = 0;
  LLMC_RETURN_IF_ERROR(data.eval->bindParameters(session));
  LLMC_RETURN_IF_ERROR(data.eval->evaluate(valLoss));
  m.valLoss = valLoss;
  if (log)
    std::fprintf(log, "val  %*lld/%lld  val loss %.4f  (%lld batches, %.2f s)\n",
                 static_cast<int>(std::to_string(steps).size()),
                 static_cast<long long>(step), static_cast<long long>(steps),
                 valLoss, static_cast<long long>(data.eval->batches()),
                 since(begin));
  return Status::ok();
}

/// Locks the checkpoint directory (CheckpointLock) and refuses, for a run
/// that starts afresh, one that already holds a run's `latest`.
Status openCheckpointDir(const std::string &directory, bool fresh,
                         CheckpointLock &lock) {
  LLMC_RETURN_IF_ERROR(lock.acquire(directory));
  std::error_code error;
  std::filesystem::path latest = std::filesystem::path(directory) / "latest";
  if (!fresh || !std::filesystem::exists(latest, error))
    return Status::ok();
  std::ifstream in(latest);
  std::string name;
  std::getline(in, name);
  return invalid("the checkpoint directory '" + directory +
                 "' already holds a run (its latest is " +
                 (name.empty() ? std::string("unreadable") : name) +
                 "): --resume it or choose another dir");
}

/// The status a run stopped by `signal` after `step` ends with.
Status stoppedBy(int signal, int64_t step, const TrainSettings &settings,
                 const TrainReport &report) {
  std::string where =
      report.lastCheckpoint.empty()
          ? std::string("no checkpoint was written (no [checkpoint] dir or "
                        "--checkpoint-dir)")
          : "resume with --resume " + settings.checkpointDir;
  return Status::error(StatusCode::Cancelled,
                       std::string(signal == SIGTERM ? "SIGTERM" : "SIGINT") +
                           ": stopped after step " + std::to_string(step) +
                           " of " + std::to_string(settings.steps) + "; " +
                           where);
}

} // namespace

Status train(const Executable &exe, const TrainOptions &options,
             TrainReport &report) {
  TrainSettings settings = options.settings;
  StepLayout layout;
  LLMC_RETURN_IF_ERROR(layoutOf(exe, layout));

  // 1. The session.
  Clock::time_point sessionBegin = Clock::now();
  std::string device;
  LLMC_RETURN_IF_ERROR(resolveDevice(options, exe.ranks.size(), device));
  std::unique_ptr<DeviceSession> session;
  LLMC_RETURN_IF_ERROR(createSession(exe, options, device, session));
  double sessionSeconds = since(sessionBegin);

  // 2. The data: the training corpus, this process's rows, validation.
  Clock::time_point dataBegin = Clock::now();
  RunData data;
  LLMC_RETURN_IF_ERROR(
      openRunData(exe, *session, device, layout, options, data));
  double dataSeconds = since(dataBegin);

  // 3. Where to start: a checkpoint, or the initial state.
  int64_t first = 1;
  std::string lineage;
  LLMC_RETURN_IF_ERROR(startState(exe, *session, device, options, data,
                                  settings,
                                  sessionSeconds, dataSeconds, first,
                                  report.alreadyComplete, lineage));
  if (report.alreadyComplete)
    return Status::ok();
  // The checkpoint directory, before step 1: created, locked and written
  // (a bad --checkpoint-dir fails now, not at the first save), and for a
  // run that does not resume, not holding another run.
  CheckpointLock lock;
  if (!settings.checkpointDir.empty() && options.primary)
    LLMC_RETURN_IF_ERROR(openCheckpointDir(settings.checkpointDir,
                                           options.resume.empty(), lock));
  TrainOptions saving = options; // the checkpoints' settings
  saving.settings = settings;

  // The last step of this call (--steps stops earlier).
  int64_t last = settings.steps;
  if (options.stopAfterStep > 0)
    last = std::min(last, options.stopAfterStep);
  if (options.stopAfterStep > 0 && options.stopAfterStep < first)
    return Status::error(
        StatusCode::InvalidArgument,
        "--steps " + std::to_string(options.stopAfterStep) +
            " stops before the step this run starts at (" +
            std::to_string(first) +
            ", after the checkpoint): --steps is the step to stop after, not "
            "a number of steps; pass --steps " +
            std::to_string(first - 1 + options.stopAfterStep) + " for " +
            std::to_string(options.stopAfterStep) + " more");

  // 4. The metrics: a resumed run keeps the lines up to its checkpoint.
  MetricsFile metrics;
  if (!options.metricsPath.empty() && options.primary)
    LLMC_RETURN_IF_ERROR(metrics.open(options.metricsPath, first - 1));
  Utilization utilization =
      utilizationFor(exe.metadata, session->hardwareName(),
                     static_cast<int64_t>(exe.ranks.size()));
  if (options.log && first <= last) {
    printRunHeader(exe, *session, data, layout, settings, first, last,
                   options.log);
    std::fprintf(options.log, "%s\n",
                 utilization
                     .describe(layout.batchSize * layout.seqLen)
                     .c_str());
  }

  // 5. The steps: run, validate, log, save, and stop when asked; some
  //    of them traced (--trace).
  std::unique_ptr<TrainTrace> trace;
  LLMC_RETURN_IF_ERROR(TrainTrace::create(exe, *session, options.tracePath,
                                          options.traceSteps, first, last,
                                          options.log, trace));
  Clock::time_point started = Clock::now();
  for (int64_t step = first; step <= last; ++step) {
    StepMetrics m;
    if (trace)
      trace->beginStep(step);
    auto stepPhase = std::make_unique<TracePhase>(
        trace.get(), "step " + std::to_string(step));
    LLMC_RETURN_IF_ERROR(
        runStep(exe, *session, layout, *data.loader, step, trace.get(), m));
    m.devices = utilization.devices;
    m.mfu = utilization.mfu(m.msPerStep / 1e3);
    // Every process of a multi-process run stops after the same step.
    int signal = stopRequested();
    LLMC_RETURN_IF_ERROR(session->agreeOnStop(signal));
    bool stopping = signal != 0 && step < last;
    // Every evalEvery steps and at the run's last step (not at a --steps
    // stop: a resumed run's metrics are then those of an uninterrupted one).
    if (data.eval &&
        ((settings.evalEvery > 0 && step % settings.evalEvery == 0) ||
         step == settings.steps)) {
      TracePhase eval(trace.get(), "eval");
      LLMC_RETURN_IF_ERROR(
          validate(*session, data, step, settings.steps, options.log, m));
    }
    report.steps.push_back(m);
    LLMC_RETURN_IF_ERROR(metrics.write(m));
    if (options.log && (step == first || step == last || stopping ||
                        step % settings.logEvery == 0)) {
      double done = static_cast<double>(step - first + 1);
      printStepLine(options.log, m, settings.steps,
                    since(started) / done * static_cast<double>(last - step));
    }
    bool due = settings.checkpointEvery > 0 &&
               step % settings.checkpointEvery == 0;
    // Also at the last step of this call, and when a signal stops the run:
    // it can be resumed from where it stopped.
    if (!settings.checkpointDir.empty() && (due || step == last || stopping)) {
      TracePhase save(trace.get(), "checkpoint save");
      LLMC_RETURN_IF_ERROR(checkpointAt(exe, *session, saving,
                                        settings.checkpointDir, data, step,
                                        lineage, report));
    }
    stepPhase.reset();
    if (trace)
      LLMC_RETURN_IF_ERROR(trace->endStep(step, stopping));
    if (stopping) {
      report.stoppedBySignal = signal;
      report.tokensRead = data.loader->tokensRead();
      LLMC_RETURN_IF_ERROR(metrics.close());
      printRunSummary(options.log, report, since(started), utilization);
      return stoppedBy(signal, step, settings, report);
    }
  }

  // 6. The end: memory, the sample.
  report.tokensRead = data.loader->tokensRead();
  LLMC_RETURN_IF_ERROR(metrics.close());
  if (options.log && first <= last) {
    printRunSummary(options.log, report, since(started), utilization);
    std::string memory = session->memorySummary();
    if (!memory.empty())
      std::fprintf(options.log, "%s\n", memory.c_str());
  }
  if (settings.sampleTokens > 0)
    LLMC_RETURN_IF_ERROR(printSample(exe, *session, data.train, data.codec,
                                     options, report));
  return Status::ok();
}

} // namespace llmc::rt
