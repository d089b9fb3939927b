//===- llmc-run.cpp - run a compiled Executable with the runtime alone ----===//
//
//   llmc-run ARTIFACT.llmcx [options]
//   llmc-run export CHECKPOINT -o OUT_DIR [--dtype f32|bf16|f16]
//                   [--shard-size 5GB] [--force]
//   llmc-run verify DIR [--threads N]
//
// `export` is `llmc export` for machines without MLIR: a checkpoint as a
// Hugging Face model folder (runtime/train/Export.h). `verify` is the second
// half of `llmc verify RUN.toml --device cuda --prepare DIR` on a GPU machine
// without the compiler: the prepared programs trained and compared
// (tools/llmc-run/Verify.h, docs/verify.md).
//
// A training artifact (`llmc compile RUN.toml -o run.llmcx`) trains, with
// the runtime's loop (runtime/train/Trainer.h), exactly as `llmc train
// RUN.toml` does in one process. Any other program (or a training step given
// --inputs) runs once: every argument is bound by name, parameters from
// --weights, data inputs from --inputs (either file may hold either), and,
// with --init-seed, parameters missing from the files from their
// initializers; each output is printed (scalars as "<name> = <value>" with 9
// significant digits, tensors as their type) and, with --save-outputs,
// written to a safetensors file. Links only the runtime: no MLIR, no LLVM
// (checked by CMake).
//
// Started by a launcher (`llmc launch -n N`, torchrun, srun: RANK,
// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT or the SLURM variables,
// docs/distributed.md), it trains only its own rank of the artifact's mesh
// on GPU LOCAL_RANK, its collectives through NCCL; only rank 0 prints step
// lines and writes files. A world of one meets itself at the rendezvous and
// trains as usual, unless --nccl forces the NCCL session. Without those
// variables nothing changes. --virtual-ranks trains every rank of the mesh
// in this one process on GPU 0 instead (runtime/cuda/session/VirtualRanks.h).
//
// Exit codes: 0 success, 1 the run failed (message printed), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "runtime/DType.h"
#include "runtime/Executable.h"
#include "runtime/Session.h"
#include "runtime/Sharding.h"
#include "runtime/dist/Rendezvous.h"
#include "runtime/train/Launched.h"
#include "runtime/io/File.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/Init.h"
#include "runtime/train/Export.h"
#include "runtime/train/StopSignal.h"
#include "runtime/train/TrainTrace.h"
#include "runtime/train/Trainer.h"
#include "runtime/train/Weights.h"
#include "tools/EnvironmentHelp.h"
#include "tools/llmc-run/Verify.h"
#ifdef LLMC_HAVE_CUDA
#include "runtime/cuda/session/CudaSession.h"
#include "runtime/cuda/session/VirtualRanks.h"
#endif

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rt = llmc::rt;

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
/// The most CPU threads --threads may ask for (llmc's limit too).
constexpr unsigned kMaxThreads = 1024;
/// The largest --steps.
constexpr uint64_t kMaxSteps = uint64_t(1) << 40;

struct Options {
  std::string model;
  std::string weights;
  std::string inputs;
  std::string saveOutputs;
  bool init = false;
  uint64_t seed = 0;
  unsigned threads = 0;
  // Training.
  std::string metrics, resume, checkpointDir, tokenizer;
  std::string trace, traceSteps; ///< --trace FILE.json, --trace-steps A:B
  std::vector<std::string> data, val; ///< --data / --val, repeatable
  std::string device; ///< empty: the artifact's train.devices
  int64_t steps = 0;
  int64_t sampleTokens = -1;
  bool nccl = false; ///< the NCCL session even for a world of one
  /// Every rank of the mesh in this process on GPU 0 (VirtualRanks.h).
  bool virtualRanks = false;
};

void printUsage(FILE *out) {
  std::fprintf(
      out,
      "usage: llmc-run ARTIFACT.llmcx [options]\n"
      "       llmc-run export CHECKPOINT -o OUT_DIR [--dtype T] "
      "[--shard-size S] [--force]\n"
      "       llmc-run verify DIR [--threads N]   (DIR from `llmc verify "
      "RUN.toml\n"
      "                         --device cuda --prepare DIR`: the check run "
      "here)\n\n"
      "A training artifact (llmc compile RUN.toml -o ARTIFACT.llmcx) trains\n"
      "as `llmc train RUN.toml` does; any other program runs once.\n\n"
      "Training:\n"
      "  --weights PATH         start from these parameters (a Hugging Face\n"
      "                         folder, .safetensors file or shard index)\n"
      "  --resume DIR           continue from a checkpoint (step-N dir, or "
      "the\n"
      "                         checkpoint dir: its latest; not with "
      "--weights)\n"
      "  --metrics FILE         one JSON line per step\n"
      "  --trace FILE.json      a Chrome/Perfetto trace of some steps (every\n"
      "                         command on its thread or GPU stream, the host\n"
      "                         phases; ui.perfetto.dev opens it); also\n"
      "                         LLMC_TRACE=FILE. Multi-process: each rank\n"
      "                         writes FILE.rankN.json, rank 0 merges them\n"
      "  --trace-steps A:B      the steps traced (default: the third and\n"
      "                         fourth, after two warm-up steps; the last two\n"
      "                         of a shorter run); also LLMC_TRACE_STEPS\n"
      "  --data FILE|GLOB       train on these files instead of the "
      "artifact's\n"
      "                         (repeatable: one file or pattern each)\n"
      "  --val FILE|GLOB        validation files instead of the artifact's\n"
      "  --tokenizer FILE       the tokenizer.json of text data and the "
      "sample\n"
      "  --checkpoint-dir DIR   save checkpoints here instead (locked by "
      "the run;\n"
      "                         without --resume, one holding a run is "
      "refused)\n"
      "  --steps N              stop after step N (N >= 1)\n"
      "                         (SIGINT/SIGTERM stop after the current step,\n"
      "                         with a checkpoint; exit 130/143)\n"
      "  --sample-tokens N      tokens of the sample printed at the end\n"
      "  --device cpu|cuda|auto where to train (default: the artifact's\n"
      "                         [parallel] devices); auto: the GPU if any\n"
      "  --nccl                 train through the multi-process NCCL session\n"
      "                         even in a world of one (GPU; without a\n"
      "                         launcher: rank 0 of 1 on 127.0.0.1)\n"
      "  --virtual-ranks        run every rank of the artifact's mesh in this\n"
      "                         process on GPU 0, each with its own arena and\n"
      "                         streams, collectives as copies and reduction\n"
      "                         kernels between them (pipelines too);\n"
      "                         without it a mesh of several ranks needs one\n"
      "                         process per GPU (llmc launch) or the CPU\n"
      "Running once (any program, or a training step given --inputs):\n"
      "  --weights PATH         parameters: a Hugging Face folder, a\n"
      "                         .safetensors file or a shard index (bf16,\n"
      "                         f16, f32; Hugging Face names)\n"
      "  --inputs FILE          data inputs by name (tokens, targets)\n"
      "  --init-seed N          initialize parameters missing from the files\n"
      "  --save-outputs FILE    write every output, by name, to a "
      "safetensors file\n"
      "Both:\n"
      "  --threads N            CPU threads, 0 to 1024 (default 0: every "
      "core)\n"
      "  --version              llmc's version and commit\n");
  std::fprintf(out, "\n%s", llmc::kEnvironmentHelp);
}

bool parseUnsigned(const char *text, uint64_t &value) {
  char *end = nullptr;
  errno = 0;
  unsigned long long parsed = std::strtoull(text, &end, 10);
  if (errno || !end || *end || text[0] == '-' || text[0] == '\0')
    return false;
  value = parsed;
  return true;
}

/// Returns 0 to go on, or an exit code.
int parseArguments(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "llmc-run: %s needs a value\n", flag);
        return nullptr;
      }
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      printUsage(stdout);
      return -1;
    }
    if (arg == "--version") {
      std::printf("%s\n", llmc::rt::versionLine().c_str());
      return -1;
    }
    if (arg == "--nccl") {
      options.nccl = true;
      continue;
    }
    if (arg == "--virtual-ranks") {
      options.virtualRanks = true;
      continue;
    }
    std::string *text = arg == "--weights"          ? &options.weights
                        : arg == "--inputs"         ? &options.inputs
                        : arg == "--save-outputs"   ? &options.saveOutputs
                        : arg == "--metrics"        ? &options.metrics
                        : arg == "--resume"         ? &options.resume
                        : arg == "--checkpoint-dir" ? &options.checkpointDir
                        : arg == "--tokenizer"      ? &options.tokenizer
                        : arg == "--device"         ? &options.device
                        : arg == "--trace"          ? &options.trace
                        : arg == "--trace-steps"    ? &options.traceSteps
                                                    : nullptr;
    if (arg == "--data" || arg == "--val") {
      const char *v = value(arg.c_str());
      if (!v)
        return kExitUsage;
      (arg == "--data" ? options.data : options.val).push_back(v);
    } else if (text) {
      const char *v = value(arg.c_str());
      if (!v)
        return kExitUsage;
      *text = v;
      if (arg == "--device" && *text != "cpu" && *text != "cuda" &&
          *text != "auto") {
        std::fprintf(stderr,
                     "llmc-run: --device expects cpu, cuda or auto, got "
                     "'%s'\n",
                     v);
        return kExitUsage;
      }
      rt::TraceSteps steps;
      if (arg == "--trace-steps")
        if (rt::Status status = rt::parseTraceSteps(v, arg, steps); !status) {
          std::fprintf(stderr, "llmc-run: %s\n", status.message().c_str());
          return kExitUsage;
        }
    } else if (arg == "--steps" || arg == "--sample-tokens") {
      const char *v = value(arg.c_str());
      uint64_t number;
      if (!v || !parseUnsigned(v, number)) {
        std::fprintf(stderr, "llmc-run: %s expects %s, got '%s'\n",
                     arg.c_str(),
                     arg == "--steps" ? "1 to 1099511627776 (the step to stop "
                                        "after)"
                                      : "a non-negative integer",
                     v ? v : "");
        return kExitUsage;
      }
      if (arg == "--steps" && (number < 1 || number > kMaxSteps)) {
        std::fprintf(stderr,
                     "llmc-run: --steps expects 1 to %llu (the step to stop "
                     "after), got %s\n",
                     static_cast<unsigned long long>(kMaxSteps), v);
        return kExitUsage;
      }
      (arg == "--steps" ? options.steps : options.sampleTokens) =
          static_cast<int64_t>(number);
    } else if (arg == "--init-seed" || arg == "--threads") {
      const char *v = value(arg.c_str());
      uint64_t number;
      if (!v || !parseUnsigned(v, number)) {
        std::fprintf(stderr, "llmc-run: %s expects a non-negative integer\n",
                     arg.c_str());
        return kExitUsage;
      }
      if (arg == "--threads" && number > kMaxThreads) {
        std::fprintf(stderr,
                     "llmc-run: --threads expects 0 (every core) to %u, got "
                     "%s\n",
                     kMaxThreads, v);
        return kExitUsage;
      }
      if (arg == "--threads")
        options.threads = static_cast<unsigned>(number);
      else {
        options.init = true;
        options.seed = number;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "llmc-run: unknown option '%s' (see --help)\n",
                   arg.c_str());
      return kExitUsage;
    } else if (options.model.empty()) {
      options.model = arg;
    } else {
      std::fprintf(stderr, "llmc-run: one model expected, got '%s' and '%s'\n",
                   options.model.c_str(), arg.c_str());
      return kExitUsage;
    }
  }
  if (options.model.empty()) {
    printUsage(stderr);
    return kExitUsage;
  }
  if (options.virtualRanks && (options.nccl || options.device == "cpu" ||
                               options.device == "auto")) {
    std::fprintf(stderr,
                 "llmc-run: --virtual-ranks runs every rank on one GPU in "
                 "this process; it does not go with %s\n",
                 options.nccl ? "--nccl (one rank per process)"
                              : ("--device " + options.device).c_str());
    return kExitUsage;
  }
  // No output may overwrite an input.
  for (auto [outFlag, out] :
       {std::make_pair("--save-outputs", &options.saveOutputs),
        std::make_pair("--metrics", &options.metrics),
        std::make_pair("--trace", &options.trace)})
    for (auto [inFlag, in] :
         {std::make_pair("the artifact", &options.model),
          std::make_pair("--weights", &options.weights),
          std::make_pair("--inputs", &options.inputs),
          std::make_pair("--tokenizer", &options.tokenizer)})
      if (rt::Status status = rt::checkNotAnInput(outFlag, *out, inFlag, *in);
          !status) {
        std::fprintf(stderr, "llmc-run: %s\n", status.message().c_str());
        return kExitUsage;
      }
  return 0;
}

int failed(const rt::Status &status) {
  std::fprintf(stderr, "llmc-run: %s\n", status.message().c_str());
  return kExitFailed;
}

void printOutput(const std::string &name, const rt::TensorRef &tensor) {
  if (tensor.numElements() == 1 && rt::isFloat(tensor.dtype)) {
    double v = 0;
    switch (tensor.dtype) {
    case rt::DType::F32:
      v = *static_cast<const float *>(tensor.data);
      break;
    case rt::DType::F64:
      v = *static_cast<const double *>(tensor.data);
      break;
    case rt::DType::BF16:
      v = rt::bf16ToFloat(*static_cast<const uint16_t *>(tensor.data));
      break;
    default:
      v = rt::f16ToFloat(*static_cast<const uint16_t *>(tensor.data));
    }
    std::printf("%s = %.9g\n", name.c_str(), v);
    return;
  }
  std::printf("%s: %s%s\n", name.c_str(), rt::dtypeName(tensor.dtype),
              rt::formatShape(tensor.shape).c_str());
}

/// The token ids of a data input against the model's vocabulary (the
/// artifact's model.vocab_size): the embedding reads a zero row for an id
/// outside it (as sharded lookups need), which would give a plausible loss
/// from wrong input. Targets are checked by cross_entropy itself.
rt::Status checkTokenIds(const rt::Executable &exe, const std::string &name,
                         const rt::SafetensorsTensor &tensor,
                         const std::string &file) {
  auto vocab = exe.metadata.find("model.vocab_size");
  if (name != "tokens" || vocab == exe.metadata.end() ||
      (tensor.dtype != rt::DType::I32 && tensor.dtype != rt::DType::I64))
    return rt::Status::ok();
  int64_t size = std::strtoll(vocab->second.c_str(), nullptr, 10);
  size_t width = rt::dtypeSize(tensor.dtype);
  for (uint64_t i = 0; i * width < tensor.bytes; ++i) {
    int64_t id = 0;
    if (tensor.dtype == rt::DType::I32) {
      int32_t v;
      std::memcpy(&v, tensor.data + i * width, 4);
      id = v;
    } else {
      std::memcpy(&id, tensor.data + i * width, 8);
    }
    if (id < 0 || id >= size)
      return rt::Status::error(
          rt::StatusCode::InvalidArgument,
          file + ": tensor 'tokens' holds the id " + std::to_string(id) +
              " at element " + std::to_string(i) +
              ", outside the model's vocabulary [0, " + std::to_string(size) +
              "); encode the inputs with the model's tokenizer");
  }
  return rt::Status::ok();
}

/// Trains from a training artifact with the runtime's loop.
int train(const rt::Executable &exe, const Options &options) {
  rt::TrainOptions train;
  if (rt::Status status = rt::readTrainSettings(exe.metadata, train.settings);
      !status)
    return failed(status);
  if (!options.data.empty())
    train.settings.trainData = options.data;
  if (!options.val.empty())
    train.settings.valData = options.val;
  if (!options.tokenizer.empty())
    train.settings.tokenizer = options.tokenizer;
  if (!options.checkpointDir.empty())
    train.settings.checkpointDir = options.checkpointDir;
  if (options.sampleTokens >= 0)
    train.settings.sampleTokens = options.sampleTokens;
  if (options.init)
    train.settings.seed = options.seed;
  if (!options.device.empty())
    train.settings.devices = options.device;
#ifdef LLMC_HAVE_CUDA
  train.cudaSession = rt::cuda::createCudaDeviceSession;
  train.cudaDeviceCount = rt::cuda::cudaDeviceCount;
#endif
  train.weightsPath = options.weights;
  train.resume = options.resume;
  train.metricsPath = options.metrics;
  train.tracePath = options.trace;
  train.traceSteps = options.traceSteps;
  train.threads = options.threads;
  train.stopAfterStep = options.steps;

  if (options.virtualRanks) {
    // Asked for by name, never chosen for a missing GPU: every rank on GPU
    // 0 (resolveDevice still refuses a machine without one).
    rt::LaunchEnv env;
    bool launched = false;
    if (rt::Status status = rt::readLaunchEnv(rt::processEnv(), env, launched);
        !status)
      return failed(status);
    if (launched && env.worldSize > 1) {
      std::fprintf(stderr,
                   "llmc-run: rank %d: --virtual-ranks runs every rank in "
                   "one process; under a launcher (WORLD_SIZE=%d) each "
                   "process runs its own rank through NCCL: drop one or the "
                   "other\n",
                   env.rank, env.worldSize);
      return kExitUsage;
    }
#ifdef LLMC_HAVE_CUDA
    train.settings.devices = "cuda";
    train.cudaSession = rt::cuda::createVirtualRankDeviceSession;
#else
    return failed(rt::Status::error(
        rt::StatusCode::Unimplemented,
        "--virtual-ranks needs the CUDA backend, which this build lacks "
        "(configure with the CUDA toolkit, LLMC_CUDA=ON); train on the CPU "
        "with --device cpu"));
#endif
  }
  rt::MultiProcessSessionFn multiProcessSession = nullptr;
#ifdef LLMC_HAVE_CUDA
  multiProcessSession = rt::cuda::createMultiProcessSession;
#endif
  if (rt::Status status = rt::prepareLaunchedTraining(
          exe, options.nccl, multiProcessSession, train.cudaDeviceCount,
          train);
      !status)
    return failed(status);
  rt::installStopHandlers();
  rt::TrainReport report;
  if (rt::Status status = rt::train(exe, train, report); !status) {
    failed(status);
    return report.stoppedBySignal ? rt::stopExitCode(report.stoppedBySignal)
                                  : kExitFailed;
  }
  return 0;
}

/// `llmc-run verify DIR [--threads N]`.
int verifyCommand(int argc, char **argv) {
  std::string dir;
  uint64_t threads = 0;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--threads") {
      if (i + 1 >= argc || !parseUnsigned(argv[++i], threads) ||
          threads > 1024) {
        std::fprintf(stderr, "llmc-run verify: --threads expects 0 to 1024\n");
        return kExitUsage;
      }
    } else if (dir.empty() && !arg.empty() && arg[0] != '-') {
      dir = arg;
    } else {
      std::fprintf(stderr, "llmc-run verify: unexpected '%s'; usage: "
                           "llmc-run verify DIR [--threads N]\n",
                   arg.c_str());
      return kExitUsage;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "llmc-run verify: expected the DIR of `llmc verify "
                         "RUN.toml --device cuda --prepare DIR`\n");
    return kExitUsage;
  }
  return llmc::verify::runPreparedVerify(dir, static_cast<unsigned>(threads),
                                         std::cout);
}

/// `llmc-run export CHECKPOINT -o OUT [--dtype T] [--shard-size S]
/// [--force]`.
int exportCommand(int argc, char **argv) {
  std::string checkpoint, out;
  rt::ExportOptions options;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    if (arg == "-o" || arg == "--dtype" || arg == "--shard-size") {
      const char *v = value();
      if (!v) {
        std::fprintf(stderr, "llmc-run export: %s needs a value\n",
                     arg.c_str());
        return kExitUsage;
      }
      std::string text = v;
      if (arg == "-o") {
        out = text;
      } else if (arg == "--dtype") {
        if (!rt::parseExportDType(text, options.dtype)) {
          std::fprintf(stderr,
                       "llmc-run export: --dtype expects f32, bf16 or f16, "
                       "got '%s'\n",
                       v);
          return kExitUsage;
        }
      } else if (!rt::parseShardSize(text, options.shardBytes)) {
        std::fprintf(stderr,
                     "llmc-run export: --shard-size expects a size such as "
                     "5GB, 500MB or 2GiB, got '%s'\n",
                     v);
        return kExitUsage;
      }
    } else if (arg == "--force") {
      options.force = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "llmc-run export: unknown option '%s'\n",
                   arg.c_str());
      return kExitUsage;
    } else if (checkpoint.empty()) {
      checkpoint = arg;
    } else {
      std::fprintf(stderr, "llmc-run export: one checkpoint expected, got "
                           "'%s' and '%s'\n",
                   checkpoint.c_str(), arg.c_str());
      return kExitUsage;
    }
  }
  if (checkpoint.empty() || out.empty()) {
    std::fprintf(stderr, "usage: llmc-run export CHECKPOINT -o OUT_DIR "
                         "[--dtype f32|bf16|f16] [--shard-size 5GB] "
                         "[--force]\n");
    return kExitUsage;
  }
  rt::ExportReport report;
  if (rt::Status status = rt::exportHfFolder(checkpoint, out, options, report);
      !status)
    return failed(status);
  std::printf("exported %s to %s: %zu tensors in %zu file(s), %llu bytes "
              "of %s\n",
              report.checkpoint.c_str(), out.c_str(), report.tensors,
              report.shards, static_cast<unsigned long long>(report.bytes),
              rt::dtypeName(options.dtype));
  return 0;
}

/// Running a program once is for one process on the CPU: 0 to go on, else
/// the exit code of an option that says otherwise.
int checkRunOnce(const Options &options) {
  {
    rt::LaunchEnv env;
    bool launched = false;
    if (rt::Status status = rt::readLaunchEnv(rt::processEnv(), env, launched);
        !status)
      return failed(status);
    if (options.nccl || (launched && env.worldSize > 1)) {
      std::fprintf(stderr,
                   "llmc-run: rank %d: a multi-process run (or --nccl) "
                   "trains a training artifact; running a program once is "
                   "for one process\n",
                   env.rank);
      return kExitUsage;
    }
    if (options.virtualRanks) {
      std::fprintf(stderr,
                   "llmc-run: --virtual-ranks trains a training artifact on "
                   "the GPU; running a program once is CPU-only (its ranks "
                   "run as CPU virtual devices)\n");
      return kExitUsage;
    }
  }
  if (!options.metrics.empty() || !options.resume.empty() ||
      !options.data.empty() || !options.val.empty() ||
      !options.tokenizer.empty() || !options.checkpointDir.empty() ||
      !options.device.empty() || options.steps || options.sampleTokens >= 0 ||
      !options.trace.empty() || !options.traceSteps.empty()) {
    std::fprintf(stderr,
                 "llmc-run: --metrics, --resume, --data, --val, --tokenizer, "
                 "--checkpoint-dir, --device, --steps, --sample-tokens, "
                 "--trace and --trace-steps are for training "
                 "(running once is CPU-only); %s\n",
                 options.inputs.empty() ? "this artifact is not a training step"
                                        : "drop --inputs to train");
    return kExitUsage;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc >= 2 && std::string(argv[1]) == "export")
    return exportCommand(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "verify")
    return verifyCommand(argc, argv);
  Options options;
  if (int code = parseArguments(argc, argv, options))
    return code < 0 ? 0 : code;

  rt::Executable exe;
  if (rt::Status status = rt::readExecutable(options.model, exe); !status)
    return failed(status);
  bool training = rt::checkTrainable(exe).isOk() && options.inputs.empty();
  if (training)
    return train(exe, options);
  if (int code = checkRunOnce(options))
    return code;
  // Parameters from --weights (or the folder the artifact names) through
  // the Hugging Face loader: any of its forms, dtypes converted. A weights
  // file may also hold data inputs, bound by name below.
  bool strict = true;
  std::string weights = rt::initialWeights(exe, options.weights, strict);
  std::vector<rt::SafetensorsFile> files(2);
  std::vector<std::string> paths = {options.inputs, ""};
  if (!weights.empty() && weights.size() > 12 &&
      weights.compare(weights.size() - 12, 12, ".safetensors") == 0)
    paths[1] = weights;
  for (size_t i = 0; i < paths.size(); ++i)
    if (!paths[i].empty())
      if (rt::Status status = rt::mapSafetensors(paths[i], files[i]); !status)
        return failed(status);

  rt::SessionOptions sessionOptions;
  sessionOptions.threads = options.threads;
  std::unique_ptr<rt::Session> session;
  if (rt::Status status = rt::Session::create(exe, sessionOptions, session);
      !status)
    return failed(status);
  if (!weights.empty()) {
    rt::WeightsReport report;
    if (rt::Status status = rt::bindWeights(*session, weights, strict, stderr,
                                            options.threads, report);
        !status)
      return failed(status);
  }

  std::vector<std::string> missing;
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const rt::ArgumentInfo &arg = exe.arguments[i];
    const rt::ValueInfo &value = exe.ranks.front().values[arg.value];
    rt::Shape shape; // global: the session splits sharded arguments
    if (rt::Status status = rt::argumentGlobalShape(exe, i, shape); !status)
      return failed(status);
    if (!weights.empty() && arg.role == rt::ArgumentRole::Parameter)
      continue; // bound above
    const rt::SafetensorsTensor *tensor = nullptr;
    std::string from;
    for (size_t f = 0; f < files.size() && !tensor; ++f)
      if ((tensor = files[f].find(arg.name)))
        from = paths[f];
    rt::Status status = rt::Status::ok();
    if (tensor && arg.role == rt::ArgumentRole::Input)
      status = checkTokenIds(exe, arg.name, *tensor, from);
    if (!status)
      return failed(status);
    if (tensor) {
      status = session->setArgument(arg.name, tensor->dtype, tensor->shape,
                                    tensor->data, tensor->bytes);
      if (!status)
        status = rt::Status::error(status.code(),
                                   from + ": " + status.message());
    } else if (options.init && arg.role != rt::ArgumentRole::Input) {
      std::vector<uint8_t> bytes;
      status = rt::initialArgumentBytes(exe, i, options.seed, bytes);
      if (status)
        status = session->setArgument(arg.name, value.dtype, shape,
                                      bytes.data(), bytes.size());
    } else {
      missing.push_back(arg.name);
      continue;
    }
    if (!status)
      return failed(status);
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 5; ++i)
      list += (i ? ", " : "") + missing[i];
    if (missing.size() > 5)
      list += ", ...";
    return failed(rt::Status::error(
        rt::StatusCode::InvalidArgument,
        std::to_string(missing.size()) +
            " argument(s) are in neither --weights nor --inputs: " + list +
            (options.init ? "" : " (--init-seed N initializes parameters)")));
  }

  if (rt::Status status = session->run(); !status)
    return failed(status);
  std::map<std::string, rt::SafetensorsTensor> saved;
  // Global tensors, assembled from the ranks when sharded; each stays
  // valid until the session runs again.
  std::vector<rt::HostTensor> host(exe.outputs.size());
  for (size_t i = 0; i < exe.outputs.size(); ++i) {
    if (rt::Status status = session->outputToHost(i, host[i]); !status)
      return failed(status);
    const rt::TensorRef &tensor = host[i].view;
    printOutput(exe.outputs[i].name, tensor);
    saved[exe.outputs[i].name] = rt::SafetensorsTensor{
        tensor.dtype, tensor.shape, static_cast<const uint8_t *>(tensor.data),
        static_cast<uint64_t>(tensor.numElements()) *
            rt::dtypeSize(tensor.dtype)};
  }
  if (!options.saveOutputs.empty())
    if (rt::Status status = rt::writeSafetensors(options.saveOutputs, saved);
        !status)
      return failed(status);
  return 0;
}
