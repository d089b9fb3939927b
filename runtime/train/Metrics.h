//===- Metrics.h - the JSON-lines metrics file of a run ---------*- C++ -*-===//
//
// One JSON object per step (docs/training.md): loss, rate, norm, speed,
// and "val_loss" on the steps the validation set was evaluated. A resumed
// run rewrites the file first, keeping only the lines of the steps up to
// the checkpoint's, so that every step appears once however often the run
// was stopped and resumed. Every write is checked: a full disk stops the
// run with the file named instead of losing lines silently.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_METRICS_H
#define LLMC_RUNTIME_TRAIN_METRICS_H

#include "runtime/Status.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace llmc::rt {

struct StepMetrics {
  int64_t step = 0;
  double loss = 0, lr = 0, gradNorm = 0;
  double tokensPerSecond = 0, msPerStep = 0;
  /// CPU time of the whole process during the step (every thread: the CPU
  /// ranks' work; on a host shared with other jobs it varies far less than
  /// msPerStep, docs/planning.md "CPU meshes").
  double cpuMsPerStep = 0;
  /// fp16 dynamic loss scaling: the scale after the step, and whether the
  /// program skipped the step (inf/NaN gradients). 0/false without it.
  double lossScale = 0;
  bool skipped = false;
  bool hasLossScale = false;
  int64_t tokens = 0; ///< tokens of the step (the global batch)
  /// The ranks the step ran on (tokens/s per device = tokensPerSecond /
  /// devices), and its model flops utilization (Utilization.h; 0 when the
  /// device has no profile).
  int64_t devices = 1;
  double mfu = 0;
  /// The validation loss measured after this step, when it was.
  std::optional<double> valLoss;
};

class MetricsFile {
public:
  MetricsFile() = default;
  MetricsFile(const MetricsFile &) = delete;
  MetricsFile &operator=(const MetricsFile &) = delete;
  ~MetricsFile();

  /// Opens `path` for a run that starts after step `resumedStep` (0: a
  /// fresh run, which truncates the file). A resumed run keeps the lines
  /// whose "step" is at most `resumedStep` (rewritten atomically) and
  /// appends after them.
  Status open(const std::string &path, int64_t resumedStep);
  bool isOpen() const { return file_ != nullptr; }
  /// Writes and flushes one line; fails naming the file when the system
  /// cannot (a full disk).
  Status write(const StepMetrics &metrics);
  Status close();

private:
  std::string path_;
  std::FILE *file_ = nullptr;
};

/// The "step" of a metrics line, or nullopt when it has none.
std::optional<int64_t> metricsLineStep(const std::string &line);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_METRICS_H
