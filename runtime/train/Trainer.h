//===- Trainer.h - the training loop of the runtime -------------*- C++ -*-===//
//
// Runs a compiled training step (the @train_step that llmc-autodiff and
// llmc-optimizer build) for the run's steps: feeds batches from the token
// data, feeds every new parameter and optimizer moment back into its
// argument, prints one line per step, writes JSON-lines metrics, saves
// checkpoints, resumes from one exactly, and ends with a generated sample
// when the artifact ships a "logits" program. It drives an rt::DeviceSession:
// the CPU Session or, when the tool supplies the CUDA backend, the GPU's
// CudaSession (TrainSettings::devices). Both `llmc train` (compile and
// train in one process) and `llmc-run ARTIFACT` (runtime only) call train().
// See docs/training.md.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_TRAINER_H
#define LLMC_RUNTIME_TRAIN_TRAINER_H

#include "runtime/DeviceSession.h"
#include "runtime/Executable.h"
#include "runtime/Status.h"
#include "runtime/data/TokenShard.h"
#include "runtime/train/Metrics.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace llmc::rt {

/// The run's settings that the runtime needs, carried in the artifact's
/// metadata (keys in docs/executable.md) so that the runtime alone can train.
struct TrainSettings {
  int64_t steps = 0;
  int64_t logEvery = 1;
  uint64_t seed = 0;
  int64_t vocabSize = 0;
  /// Training data: files or globs (`[data] train`, or `path`); empty: the
  /// built-in corpus.
  std::vector<std::string> trainData;
  /// Validation data (`[data] val`); empty: no validation loss.
  std::vector<std::string> valData;
  TokenFormat dataFormat = TokenFormat::Auto;
  /// A Hugging Face tokenizer.json for text data and the sample; empty:
  /// bytes.
  std::string tokenizer;
  /// Shuffled windows (true) or llm.c's consecutive order (false).
  bool shuffle = true;
  /// The validation loss every `evalEvery` steps (0: only at the end) over
  /// `evalSteps` batches of the eval program.
  int64_t evalEvery = 0;
  int64_t evalSteps = 20;
  std::string checkpointDir; ///< empty: no checkpoints
  int64_t checkpointEvery = 0;
  int64_t checkpointKeep = 2;
  int64_t sampleTokens = 0; ///< generated at the end (needs "logits")
  /// Where to train: "cpu", "cuda" (one GPU) or "auto" (the GPU when there
  /// is one, else the CPU with a notice); [parallel] devices, key
  /// `train.devices`. Other values (cpu:N, cuda:N) mean the CPU for now.
  std::string devices = "cpu";
};

/// Reads the settings from `metadata` (as writeTrainSettings wrote them).
Status readTrainSettings(const std::map<std::string, std::string> &metadata,
                         TrainSettings &settings);
void writeTrainSettings(const TrainSettings &settings,
                        std::map<std::string, std::string> &metadata);

struct TrainOptions {
  TrainSettings settings;
  std::string weightsPath; ///< initial parameters (safetensors); else init
  std::string resume;      ///< a checkpoint, or a checkpoint directory
  std::string metricsPath; ///< JSON lines, one per step; empty: none
  unsigned threads = 0;    ///< CPU threads; 0: every core
  /// The GPU backend, filled in by a tool that links llmc_runtime_cuda
  /// (rt::cuda::createCudaDeviceSession, rt::cuda::cudaDeviceCount); null in
  /// a build without it, where "cuda" fails and "auto" means the CPU.
  DeviceSessionFactory cudaSession = nullptr;
  DeviceCountFn cudaDeviceCount = nullptr;
  std::FILE *log = stdout; ///< step lines and the sample; null: silent
  /// Whether this process writes the run's files (metrics, checkpoints).
  /// False on ranks other than 0 of a multi-process run
  /// (docs/distributed.md): they still make every call that gathers a
  /// sharded tensor, since rank 0 cannot gather alone.
  bool primary = true;
  /// Stop after this step even if the run has more (an interruption, for
  /// tests of --resume); 0: run to the end.
  int64_t stopAfterStep = 0;
  /// Batches the data loader reads ahead on its own thread (0: none).
  int prefetch = 2;
  /// --trace: a Chrome/Perfetto trace of some steps here (empty: the
  /// environment's LLMC_TRACE, else none); --trace-steps "A:B" chooses
  /// them (empty: LLMC_TRACE_STEPS, else the default of
  /// runtime/train/TrainTrace.h). docs/training.md, "Traces".
  std::string tracePath;
  std::string traceSteps;
};

struct TrainReport {
  std::vector<StepMetrics> steps; ///< the steps this call ran
  std::string lastCheckpoint;     ///< empty when none was saved
  /// SIGINT/SIGTERM stopped the run after the last step in `steps` (the
  /// status is then Cancelled); 0 otherwise.
  int stoppedBySignal = 0;
  /// The resumed checkpoint was already at the run's last step.
  bool alreadyComplete = false;
  /// Tokens the training data loader read (rows x (T + 1) per batch).
  uint64_t tokensRead = 0;
  std::vector<int32_t> sample;    ///< generated tokens, prompt excluded
  std::string sampleText;         ///< decoded (byte-level data) or ids
};

/// Resolves settings.devices to "cpu" or "cuda" with the backend `options`
/// carries: "cuda" fails (exit-worthy) without a GPU, "auto" falls back to
/// the CPU and says so on options.log (as it does, silently, for a program
/// of `ranks` > 1 in one process; several GPUs are `llmc launch`'s).
Status resolveDevice(const TrainOptions &options, size_t ranks,
                     std::string &device);

/// Checks that `executable` is a training step this loop can run and says
/// what is missing otherwise.
Status checkTrainable(const Executable &executable);

/// Trains. Errors (bad data, a non-finite loss, a failed save) stop the run
/// with a message naming the step. A stop request (StopSignal.h) ends the
/// run after the current step, with a checkpoint when checkpoints are on,
/// and returns Cancelled (report.stoppedBySignal names the signal).
Status train(const Executable &executable, const TrainOptions &options,
             TrainReport &report);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_TRAINER_H
