//===- Trainer.cpp - the training loop of the runtime ---------------------===//
#include "runtime/train/Trainer.h"

#include "runtime/Session.h"
#include "runtime/Sharding.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Init.h"
#include "runtime/train/Sample.h"
#include "runtime/train/Weights.h"

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>

namespace llmc::rt {

namespace {

Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, message);
}

Status parseInt(const std::map<std::string, std::string> &metadata,
                const char *key, int64_t &value, bool required) {
  auto it = metadata.find(key);
  if (it == metadata.end())
    return required ? invalid(std::string("the artifact has no training "
                                          "setting '") +
                              key +
                              "'; compile it from a run description with "
                              "`llmc compile RUN.toml -o FILE.llmcx`")
                    : Status::ok();
  char *end = nullptr;
  long long parsed = std::strtoll(it->second.c_str(), &end, 10);
  if (!end || *end || it->second.empty())
    return invalid(std::string("the artifact's training setting '") + key +
                   "' is '" + it->second + "', not an integer");
  value = parsed;
  return Status::ok();
}

/// A rank-0 float tensor as a double.
/// CPU seconds of this process so far, every thread.
double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double scalarOf(const TensorRef &tensor) {
  switch (tensor.dtype) {
  case DType::F64:
    return *static_cast<const double *>(tensor.data);
  case DType::BF16:
    return bf16ToFloat(*static_cast<const uint16_t *>(tensor.data));
  case DType::F16:
    return f16ToFloat(*static_cast<const uint16_t *>(tensor.data));
  default:
    return *static_cast<const float *>(tensor.data);
  }
}

/// "1:05" / "1:02:03".
std::string formatDuration(double seconds) {
  long long s = static_cast<long long>(seconds + 0.5);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", s / 3600,
                  s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof(text), "%lld:%02lld", s / 60, s % 60);
  return text;
}

/// Byte-level text as it can be printed: other bytes as \xNN.
std::string printableText(const std::vector<int32_t> &tokens) {
  std::string text;
  for (int32_t token : tokens) {
    if (token == '\n' || (token >= 32 && token < 127)) {
      text += static_cast<char>(token);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", token & 0xff);
      text += escaped;
    }
  }
  return text;
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
/// and prints them (as text when the data is text).
Status printSample(const Executable &exe, const DeviceSession &trained,
                   const TokenData &data, const TrainSettings &settings,
                   const TrainOptions &options, TrainReport &report) {
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
  // The prompt: the data's first line, at most 16 tokens.
  std::vector<int32_t> prompt;
  bool text = data.format() == TokenFormat::Text;
  for (uint64_t i = 0; i < data.size() && prompt.size() < 16; ++i) {
    int32_t token = static_cast<int32_t>(data[i]);
    if (text && token == '\n')
      break;
    prompt.push_back(token);
  }
  SampleOptions sample;
  sample.tokens = settings.sampleTokens;
  sample.seed = settings.seed;
  LLMC_RETURN_IF_ERROR(generate(*session, prompt, sample, report.sample));
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), report.sample.begin(), report.sample.end());
  if (text) {
    report.sampleText = printableText(all);
  } else {
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

} // namespace

Status readTrainSettings(const std::map<std::string, std::string> &metadata,
                         TrainSettings &settings) {
  int64_t seed = 0;
  LLMC_RETURN_IF_ERROR(parseInt(metadata, "train.steps", settings.steps, true));
  LLMC_RETURN_IF_ERROR(
      parseInt(metadata, "train.log_every", settings.logEvery, false));
  LLMC_RETURN_IF_ERROR(parseInt(metadata, "train.seed", seed, false));
  LLMC_RETURN_IF_ERROR(
      parseInt(metadata, "model.vocab_size", settings.vocabSize, true));
  LLMC_RETURN_IF_ERROR(
      parseInt(metadata, "checkpoint.every", settings.checkpointEvery, false));
  LLMC_RETURN_IF_ERROR(
      parseInt(metadata, "checkpoint.keep", settings.checkpointKeep, false));
  LLMC_RETURN_IF_ERROR(
      parseInt(metadata, "sample.tokens", settings.sampleTokens, false));
  settings.seed = static_cast<uint64_t>(seed);
  auto text = [&](const char *key) {
    auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : it->second;
  };
  settings.dataPath = text("data.path");
  std::string dataFormat = text("data.format");
  if (dataFormat.empty() || dataFormat == "text")
    settings.dataFormat = TokenFormat::Text;
  else if (dataFormat == "tokens")
    settings.dataFormat = TokenFormat::Shard;
  else
    return invalid("the artifact's data.format is '" + dataFormat +
                   "'; expected text or tokens");
  settings.checkpointDir = text("checkpoint.dir");
  // Artifacts from before the key trained on the CPU.
  settings.devices = text("train.devices");
  if (settings.devices.empty())
    settings.devices = "cpu";
  if (settings.steps < 1 || settings.logEvery < 1 || settings.vocabSize < 1 ||
      settings.checkpointEvery < 0 || settings.checkpointKeep < 1 ||
      settings.sampleTokens < 0)
    return invalid("the artifact's training settings are out of range "
                   "(steps, log_every, vocab_size >= 1; checkpoint.every, "
                   "sample.tokens >= 0; checkpoint.keep >= 1)");
  return Status::ok();
}

void writeTrainSettings(const TrainSettings &settings,
                        std::map<std::string, std::string> &metadata) {
  metadata["train.steps"] = std::to_string(settings.steps);
  metadata["train.log_every"] = std::to_string(settings.logEvery);
  metadata["train.seed"] = std::to_string(settings.seed);
  metadata["model.vocab_size"] = std::to_string(settings.vocabSize);
  metadata["data.path"] = settings.dataPath;
  metadata["data.format"] =
      settings.dataFormat == TokenFormat::Text ? "text" : "tokens";
  metadata["checkpoint.dir"] = settings.checkpointDir;
  metadata["checkpoint.every"] = std::to_string(settings.checkpointEvery);
  metadata["checkpoint.keep"] = std::to_string(settings.checkpointKeep);
  metadata["sample.tokens"] = std::to_string(settings.sampleTokens);
  metadata["train.devices"] = settings.devices;
}

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

Status train(const Executable &exe, const TrainOptions &options,
             TrainReport &report) {
  const TrainSettings &settings = options.settings;
  StepLayout layout;
  LLMC_RETURN_IF_ERROR(layoutOf(exe, layout));

  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point from) {
    return std::chrono::duration<double>(Clock::now() - from).count();
  };
  // Where the start-up goes (issue #7 wants a cached start under 3 s).
  Clock::time_point sessionBegin = Clock::now();
  std::string device;
  LLMC_RETURN_IF_ERROR(resolveDevice(options, exe.ranks.size(), device));
  std::unique_ptr<DeviceSession> session;
  if (device == "cuda") {
    LLMC_RETURN_IF_ERROR(options.cudaSession(exe, session));
  } else {
    SessionOptions sessionOptions;
    sessionOptions.threads = options.threads;
    std::unique_ptr<Session> cpu;
    LLMC_RETURN_IF_ERROR(Session::create(exe, sessionOptions, cpu));
    session = std::move(cpu);
  }

  double sessionSeconds = since(sessionBegin);
  Clock::time_point dataBegin = Clock::now();
  TokenLoaderOptions loaderOptions;
  loaderOptions.path = settings.dataPath;
  loaderOptions.format = settings.dataFormat;
  loaderOptions.batchSize = layout.batchSize;
  loaderOptions.seqLen = layout.seqLen;
  loaderOptions.vocabSize = settings.vocabSize;
  loaderOptions.builtin = settings.dataPath.empty();
  TokenLoader loader;
  LLMC_RETURN_IF_ERROR(TokenLoader::open(loaderOptions, loader));

  double dataSeconds = since(dataBegin);
  Clock::time_point stateBegin = Clock::now();
  double drawSeconds = 0;
  int deviceDrawn = 0;
  // Where to start: a checkpoint, or the initial state.
  int64_t first = 1;
  if (!options.resume.empty()) {
    std::string path;
    LLMC_RETURN_IF_ERROR(resolveCheckpoint(options.resume, path));
    CheckpointState state;
    LLMC_RETURN_IF_ERROR(loadCheckpoint(path, *session, state));
    LLMC_RETURN_IF_ERROR(loader.setPosition(state.dataPosition));
    first = state.step + 1;
    if (options.log)
      std::fprintf(options.log, "resumed from %s (step %lld)\n", path.c_str(),
                   static_cast<long long>(state.step));
  } else {
    LLMC_RETURN_IF_ERROR(bindInitialState(exe, *session, options, drawSeconds,
                                          deviceDrawn));
  }
  if (options.log)
    std::fprintf(options.log,
                 "ready in %.2f s: %s session %.2f s, data %.2f s, %s %.2f s "
                 "(%.2f s of it drawn on the host%s)\n",
                 since(sessionBegin), device.c_str(), sessionSeconds,
                 dataSeconds,
                 options.resume.empty() ? "initial state" : "checkpoint",
                 since(stateBegin), drawSeconds,
                 deviceDrawn ? (", " + std::to_string(deviceDrawn) +
                                " tensors drawn on the device")
                                   .c_str()
                             : "");
  if (options.log) {
    std::string notes = session->backendNotes();
    if (!notes.empty())
      std::fprintf(options.log, "%s\n", notes.c_str());
  }

  std::FILE *metrics = nullptr;
  if (!options.metricsPath.empty() && options.primary) {
    metrics = std::fopen(options.metricsPath.c_str(),
                         options.resume.empty() ? "w" : "a");
    if (!metrics)
      return Status::error(StatusCode::NotFound,
                           "cannot write the metrics file '" +
                               options.metricsPath + "': " +
                               std::strerror(errno));
  }
  struct Closer {
    std::FILE *file;
    ~Closer() {
      if (file)
        std::fclose(file);
    }
  } closer{metrics};

  int64_t last = settings.steps;
  if (options.stopAfterStep > 0)
    last = std::min(last, options.stopAfterStep);
  const int64_t tokensPerStep = layout.batchSize * layout.seqLen;
  if (options.log && first <= last)
    std::fprintf(options.log,
                 "training %s: steps %lld-%lld of %lld, %lld sequences x %lld "
                 "tokens per step, data %s, on %s\n",
                 exe.source.c_str(), static_cast<long long>(first),
                 static_cast<long long>(last),
                 static_cast<long long>(settings.steps),
                 static_cast<long long>(layout.batchSize),
                 static_cast<long long>(layout.seqLen),
                 loader.data().path().c_str(), session->deviceName().c_str());

  Clock::time_point started = Clock::now();
  TokenBatch batch;
  for (int64_t step = first; step <= last; ++step) {
    Clock::time_point begin = Clock::now();
    double cpuBegin = processCpuSeconds();
    LLMC_RETURN_IF_ERROR(loader.next(batch));
    Shape shape = {layout.batchSize, layout.seqLen};
    size_t bytes = batch.tokens.size() * sizeof(int32_t);
    LLMC_RETURN_IF_ERROR(session->setArgument("tokens", DType::I32, shape,
                                              batch.tokens.data(), bytes));
    LLMC_RETURN_IF_ERROR(session->setArgument("targets", DType::I32, shape,
                                              batch.targets.data(), bytes));
    float t = static_cast<float>(step);
    LLMC_RETURN_IF_ERROR(
        session->setArgument("optimizer.step", DType::F32, {}, &t, sizeof(t)));
    if (Status status = session->run(); !status)
      return Status::error(status.code(), "step " + std::to_string(step) +
                                              ": " + status.message());
    StepMetrics m;
    m.step = step;
    HostTensor out;
    LLMC_RETURN_IF_ERROR(session->outputToHost(layout.loss, out));
    m.loss = scalarOf(out.view);
    LLMC_RETURN_IF_ERROR(session->outputToHost(layout.gradNorm, out));
    m.gradNorm = scalarOf(out.view);
    LLMC_RETURN_IF_ERROR(session->outputToHost(layout.lr, out));
    m.lr = scalarOf(out.view);
    if (layout.lossScale >= 0) {
      // With loss scaling the program itself skips a step whose gradients
      // overflowed (and lowers the scale); the loop only reports it.
      LLMC_RETURN_IF_ERROR(session->outputToHost(layout.lossScale, out));
      m.lossScale = scalarOf(out.view);
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
      LLMC_RETURN_IF_ERROR(session->setArgumentFromOutput(
          exe.arguments[argIndex].name, static_cast<size_t>(outIndex)));
    double seconds =
        std::chrono::duration<double>(Clock::now() - begin).count();
    m.msPerStep = 1e3 * seconds;
    m.cpuMsPerStep = 1e3 * (processCpuSeconds() - cpuBegin);
    m.tokensPerSecond = seconds > 0 ? tokensPerStep / seconds : 0;
    report.steps.push_back(m);

    if (metrics) {
      // JSON has no inf/NaN: a skipped fp16 step's norm is written as null.
      char norm[32] = "null";
      if (std::isfinite(m.gradNorm))
        std::snprintf(norm, sizeof(norm), "%.9g", m.gradNorm);
      std::fprintf(metrics,
                   "{\"step\": %lld, \"loss\": %.9g, \"lr\": %.9g, "
                   "\"grad_norm\": %s, \"tokens\": %lld, \"tokens_per_s\": "
                   "%.1f, \"ms_per_step\": %.3f, \"cpu_ms_per_step\": %.3f",
                   static_cast<long long>(step), m.loss, m.lr, norm,
                   static_cast<long long>(tokensPerStep), m.tokensPerSecond,
                   m.msPerStep, m.cpuMsPerStep);
      if (layout.lossScale >= 0)
        std::fprintf(metrics, ", \"loss_scale\": %.9g, \"skipped\": %s",
                     m.lossScale, m.skipped ? "true" : "false");
      std::fprintf(metrics, "}\n");
      std::fflush(metrics);
    }
    if (options.log &&
        (step == first || step == last || step % settings.logEvery == 0)) {
      double elapsed =
          std::chrono::duration<double>(Clock::now() - started).count();
      double done = static_cast<double>(step - first + 1);
      double eta = elapsed / done * static_cast<double>(last - step);
      int width = static_cast<int>(std::to_string(settings.steps).size());
      std::fprintf(options.log,
                   "step %*lld/%lld  loss %.4f  lr %.3e  grad norm %.3f  "
                   "%.0f tok/s  %.1f ms/step  [%3d%%, eta %s]",
                   width, static_cast<long long>(step),
                   static_cast<long long>(settings.steps), m.loss, m.lr,
                   m.gradNorm, m.tokensPerSecond, m.msPerStep,
                   static_cast<int>(100.0 * step / settings.steps),
                   formatDuration(eta).c_str());
      if (layout.lossScale >= 0)
        std::fprintf(options.log, "  loss scale %g%s", m.lossScale,
                     m.skipped ? " (skipped: inf/NaN gradients)" : "");
      std::fprintf(options.log, "\n");
      std::fflush(options.log);
    }

    bool due = settings.checkpointEvery > 0 &&
               step % settings.checkpointEvery == 0;
    // Also at the last step of this call: a run stopped early (--steps)
    // can be resumed from where it stopped.
    if (!settings.checkpointDir.empty() && (due || step == last) &&
        !options.primary) {
      // Another rank saves; this one takes part in its gathers, in the
      // order saveCheckpoint reads the arguments.
      for (size_t i = 0; i < exe.arguments.size(); ++i) {
        if (exe.arguments[i].role == ArgumentRole::Input)
          continue;
        HostTensor ignored;
        LLMC_RETURN_IF_ERROR(session->argumentToHost(i, ignored));
      }
    } else if (!settings.checkpointDir.empty() && (due || step == last)) {
      CheckpointState state;
      state.step = step;
      state.dataPosition = loader.position();
      state.seed = settings.seed;
      state.source = exe.source;
      CheckpointOptions checkpointOptions;
      checkpointOptions.keep = settings.checkpointKeep;
      std::string path;
      LLMC_RETURN_IF_ERROR(saveCheckpoint(settings.checkpointDir, *session,
                                          state, checkpointOptions, path));
      report.lastCheckpoint = path;
      if (options.log)
        std::fprintf(options.log, "saved checkpoint %s\n", path.c_str());
    }
  }
  if (options.log && first <= last) {
    std::string memory = session->memorySummary();
    if (!memory.empty())
      std::fprintf(options.log, "%s\n", memory.c_str());
  }
  if (settings.sampleTokens > 0)
    LLMC_RETURN_IF_ERROR(printSample(exe, *session, loader.data(), settings,
                                     options, report));
  return Status::ok();
}

} // namespace llmc::rt
