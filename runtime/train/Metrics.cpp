//===- Metrics.cpp - the JSON-lines metrics file of a run -----------------===//
#include "runtime/train/Metrics.h"

#include "runtime/io/File.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace llmc::rt {

namespace {

Status writeError(const std::string &path, int error) {
  return Status::error(StatusCode::Unavailable,
                       "cannot write the metrics file '" + path +
                           "': " + std::strerror(error) +
                           "; free space or pass another --metrics path");
}

} // namespace

std::optional<int64_t> metricsLineStep(const std::string &line) {
  // The lines are this file's own: {"step": N, ...}.
  const std::string key = "\"step\":";
  size_t at = line.find(key);
  if (at == std::string::npos)
    return std::nullopt;
  const char *begin = line.c_str() + at + key.size();
  char *end = nullptr;
  long long step = std::strtoll(begin, &end, 10);
  if (end == begin)
    return std::nullopt;
  return step;
}

MetricsFile::~MetricsFile() {
  if (file_)
    std::fclose(file_);
}

Status MetricsFile::open(const std::string &path, int64_t resumedStep) {
  path_ = path;
  if (resumedStep > 0) {
    // Keep the steps the checkpoint has; drop those an interrupted run
    // wrote after it (they are run again).
    std::ifstream in(path);
    std::string kept, line;
    while (in && std::getline(in, line)) {
      std::optional<int64_t> step = metricsLineStep(line);
      if (step && *step <= resumedStep)
        kept += line + "\n";
    }
    if (in.is_open())
      LLMC_RETURN_IF_ERROR(
          writeFileAtomically(path, kept.data(), kept.size()));
  }
  file_ = std::fopen(path.c_str(), resumedStep > 0 ? "a" : "w");
  if (!file_)
    return Status::error(StatusCode::NotFound,
                         "cannot write the metrics file '" + path +
                             "': " + std::strerror(errno));
  return Status::ok();
}

Status MetricsFile::write(const StepMetrics &m) {
  if (!file_)
    return Status::ok();
  // JSON has no inf/NaN: a skipped fp16 step's norm is written as null.
  char norm[32] = "null";
  if (std::isfinite(m.gradNorm))
    std::snprintf(norm, sizeof(norm), "%.9g", m.gradNorm);
  int written = std::fprintf(
      file_,
      "{\"step\": %lld, \"loss\": %.9g, \"lr\": %.9g, \"grad_norm\": %s, "
      "\"tokens\": %lld, \"tokens_per_s\": %.1f, \"ms_per_step\": %.3f, "
      "\"cpu_ms_per_step\": %.3f",
      static_cast<long long>(m.step), m.loss, m.lr, norm,
      static_cast<long long>(m.tokens), m.tokensPerSecond, m.msPerStep,
      m.cpuMsPerStep);
  if (written >= 0)
    written = std::fprintf(file_, ", \"devices\": %lld, "
                                  "\"tokens_per_s_per_device\": %.1f",
                           static_cast<long long>(m.devices),
                           m.tokensPerSecond /
                               static_cast<double>(std::max<int64_t>(
                                   m.devices, 1)));
  if (written >= 0 && m.mfu > 0)
    written = std::fprintf(file_, ", \"mfu\": %.6f", m.mfu);
  if (written >= 0 && m.hasLossScale)
    written = std::fprintf(file_, ", \"loss_scale\": %.9g, \"skipped\": %s",
                           m.lossScale, m.skipped ? "true" : "false");
  if (written >= 0 && m.valLoss)
    written = std::fprintf(file_, ", \"val_loss\": %.9g", *m.valLoss);
  if (written >= 0)
    written = std::fprintf(file_, "}\n");
  if (written < 0 || std::fflush(file_) != 0)
    return writeError(path_, errno ? errno : EIO);
  return Status::ok();
}

Status MetricsFile::close() {
  if (!file_)
    return Status::ok();
  int result = std::fclose(file_);
  file_ = nullptr;
  if (result != 0)
    return writeError(path_, errno ? errno : EIO);
  return Status::ok();
}

} // namespace llmc::rt
