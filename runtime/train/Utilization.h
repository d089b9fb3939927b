//===- Utilization.h - MFU of a training step --------------------*- C++ -*-===//
//
// Model flops utilization on the step line, in the metrics and in the
// run's summary (docs/training.md, "Speed on the step line"). The compiler
// records in the Executable's metadata what the runtime cannot compute
// without MLIR: the model flops of one step (tokens x (6N + 12 L d T), N
// the parameters without the position embeddings: the count llm.c,
// Megatron and the benchmarks in bench/ use) and the dense matmul peak of
// every built-in device profile at the run's precision
// (data/devices.toml). The runtime picks the profile whose name appears in
// the device's product name ("h200" in "NVIDIA H200"), or "cpu" on the
// CPU; with none, there is no MFU and the run's header says why.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_UTILIZATION_H
#define LLMC_RUNTIME_TRAIN_UTILIZATION_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace llmc::rt {

struct StepMetrics;
struct TrainReport;

/// The metadata keys codegen writes (tools/LlmcDriver.cpp).
inline constexpr const char *kModelFlopsKey = "perf.model_flops_per_step";
/// Lines "name flops description" (the peak per device, flop/s, at the
/// run's precision; the description names the type: "dense bf16").
inline constexpr const char *kDevicePeaksKey = "perf.device_peaks";

struct Utilization {
  double modelFlopsPerStep = 0; ///< 0: the artifact does not say
  std::string profile;          ///< "h200"; empty: no MFU
  std::string peakKind;         ///< "dense bf16"
  double peakPerDevice = 0;     ///< flop/s
  int64_t devices = 1;          ///< the ranks of the program
  /// The devices whose peak the MFU divides by: the ranks on GPUs, 1 on
  /// the CPU backend (its ranks are threads sharing the host's cores,
  /// whose peak the cpu profile gives).
  int64_t peakDevices = 1;
  /// Why there is no MFU, when there is none.
  std::string missing;

  bool known() const { return modelFlopsPerStep > 0 && peakPerDevice > 0; }
  /// The fraction of the peak a step of `seconds` reached (0 unknown).
  double mfu(double seconds) const;
  /// "MFU: 6N + 12 L d T = 0.75 GFLOP a token, over h200's dense bf16
  /// peak (989 TFLOP/s) x 1 device", or why there is none.
  std::string describe(int64_t tokensPerStep) const;
};

/// The utilization of `metadata`'s artifact on `hardware`
/// (DeviceSession::hardwareName) with `devices` ranks.
Utilization utilizationFor(const std::map<std::string, std::string> &metadata,
                           const std::string &hardware, int64_t devices);

/// The line of one step: loss, lr, gradient norm, tok/s, ms/step, the
/// progress with `eta` seconds to go, MFU and the loss scale when known.
void printStepLine(std::FILE *log, const StepMetrics &m, int64_t steps,
                   double eta);

/// The line at the end of a run: the steps, the time, the tokens, the mean
/// tokens/s (the step times only), the mean MFU and the best val loss.
void printRunSummary(std::FILE *log, const TrainReport &report,
                     double seconds, const Utilization &utilization);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_UTILIZATION_H
