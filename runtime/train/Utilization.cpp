//===- Utilization.cpp - MFU of a training step ----------------------------===//
#include "runtime/train/Utilization.h"

#include "runtime/Status.h"
#include "runtime/train/Metrics.h"
#include "runtime/train/Trainer.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

namespace llmc::rt {

namespace {

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

std::string lower(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// "989 TFLOP/s", "1.2 TFLOP/s", "850 GFLOP/s".
std::string rateText(double flops) {
  char text[48];
  if (flops >= 1e12)
    std::snprintf(text, sizeof(text), "%.4g TFLOP/s", flops / 1e12);
  else
    std::snprintf(text, sizeof(text), "%.4g GFLOP/s", flops / 1e9);
  return text;
}

} // namespace

double Utilization::mfu(double seconds) const {
  if (!known() || seconds <= 0)
    return 0;
  return modelFlopsPerStep /
         (seconds * peakPerDevice * static_cast<double>(peakDevices));
}

std::string Utilization::describe(int64_t tokensPerStep) const {
  if (!known())
    return "MFU: none (" + missing + ")";
  char perToken[48];
  std::snprintf(perToken, sizeof(perToken), "%.4g",
                modelFlopsPerStep / static_cast<double>(tokensPerStep) / 1e9);
  return std::string("MFU: 6N + 12 L d T = ") + perToken +
         " GFLOP a token, over " + profile + "'s " + peakKind + " peak (" +
         rateText(peakPerDevice) + ") x " + std::to_string(peakDevices) +
         (peakDevices == 1 ? " device" : " devices");
}

Utilization utilizationFor(const std::map<std::string, std::string> &metadata,
                           const std::string &hardware, int64_t devices) {
  Utilization u;
  u.devices = devices;
  u.peakDevices = hardware == "cpu" ? 1 : devices;
  auto flops = metadata.find(kModelFlopsKey);
  auto peaks = metadata.find(kDevicePeaksKey);
  if (flops == metadata.end() || peaks == metadata.end()) {
    u.missing = "the artifact has no model flops; compile it again";
    return u;
  }
  u.modelFlopsPerStep = std::strtod(flops->second.c_str(), nullptr);
  std::string device = lower(hardware);
  std::istringstream lines(peaks->second);
  std::string line;
  // The longest profile name the product name contains ("h100" before a
  // hypothetical "h1"); the CPU only by its own name.
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name, kind;
    double peak = 0;
    if (!(fields >> name >> peak))
      continue;
    std::getline(fields >> std::ws, kind);
    bool matches = device == "cpu" ? name == "cpu"
                                   : name != "cpu" &&
                                         device.find(lower(name)) !=
                                             std::string::npos;
    if (matches && name.size() > u.profile.size()) {
      u.profile = name;
      u.peakPerDevice = peak;
      u.peakKind = kind;
    }
  }
  if (u.profile.empty())
    u.missing = "no device profile in data/devices.toml matches '" +
                hardware + "'";
  return u;
}

void printRunSummary(std::FILE *log, const TrainReport &report,
                     double seconds, const Utilization &utilization) {
  if (!log || report.steps.empty())
    return;
  int64_t tokens = 0;
  double stepSeconds = 0;
  const StepMetrics *best = nullptr;
  for (const StepMetrics &m : report.steps) {
    tokens += m.tokens;
    stepSeconds += m.msPerStep / 1e3;
    if (m.valLoss && (!best || *m.valLoss < *best->valLoss))
      best = &m;
  }
  double perSecond = stepSeconds > 0 ? static_cast<double>(tokens) / stepSeconds
                                     : 0;
  std::fprintf(log,
               "done: steps %lld-%lld in %.1f s, %s tokens, %.0f tok/s mean",
               static_cast<long long>(report.steps.front().step),
               static_cast<long long>(report.steps.back().step), seconds,
               formatCount(static_cast<uint64_t>(tokens)).c_str(), perSecond);
  if (utilization.known()) {
    double mean = utilization.mfu(stepSeconds /
                                  static_cast<double>(report.steps.size()));
    std::fprintf(log, ", MFU %.1f%%", 100.0 * mean);
  }
  if (best)
    std::fprintf(log, ", best val loss %.4f (step %lld)", *best->valLoss,
                 static_cast<long long>(best->step));
  std::fprintf(log, "\n");
}

void printStepLine(std::FILE *log, const StepMetrics &m, int64_t steps,
                   double eta) {
  int width = static_cast<int>(std::to_string(steps).size());
  std::fprintf(log,
               "step %*lld/%lld  loss %.4f  lr %.3e  grad norm %.3f  %.0f "
               "tok/s  %.1f ms/step  [%3d%%, eta %s]",
               width, static_cast<long long>(m.step),
               static_cast<long long>(steps), m.loss, m.lr, m.gradNorm,
               m.tokensPerSecond, m.msPerStep,
               static_cast<int>(100.0 * m.step / steps),
               formatDuration(eta).c_str());
  if (m.devices > 1)
    std::fprintf(log, "  %.0f tok/s per device",
                 m.tokensPerSecond / static_cast<double>(m.devices));
  if (m.mfu > 0)
    std::fprintf(log, "  MFU %.1f%%", 100.0 * m.mfu);
  if (m.hasLossScale)
    std::fprintf(log, "  loss scale %g%s", m.lossScale,
                 m.skipped ? " (skipped: inf/NaN gradients)" : "");
  std::fprintf(log, "\n");
  std::fflush(log);
}

} // namespace llmc::rt
