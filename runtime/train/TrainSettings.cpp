//===- TrainSettings.cpp - the run's settings in the artifact's metadata ===//
#include "runtime/train/Trainer.h"

#include <cstdlib>
#include <sstream>

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

/// Metadata lists are one entry per line.
std::string joinLines(const std::vector<std::string> &items) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i)
    text += (i ? "\n" : "") + items[i];
  return text;
}
std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> items;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      items.push_back(line);
  return items;
}

} // namespace

Status readTrainSettings(const std::map<std::string, std::string> &metadata,
                         TrainSettings &settings) {
  int64_t seed = 0, shuffle = 1;
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
  LLMC_RETURN_IF_ERROR(parseInt(metadata, "data.shuffle", shuffle, false));
  LLMC_RETURN_IF_ERROR(
      parseInt(metadata, "eval.every", settings.evalEvery, false));
  LLMC_RETURN_IF_ERROR(
      parseInt(metadata, "eval.steps", settings.evalSteps, false));
  settings.seed = static_cast<uint64_t>(seed);
  settings.shuffle = shuffle != 0;
  auto text = [&](const char *key) {
    auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : it->second;
  };
  // data.train (one entry per line); artifacts before it had data.path.
  settings.trainData = splitLines(
      metadata.count("data.train") ? text("data.train") : text("data.path"));
  settings.valData = splitLines(text("data.val"));
  settings.tokenizer = text("data.tokenizer");
  std::string dataFormat = text("data.format");
  if (dataFormat.empty())
    settings.dataFormat = TokenFormat::Auto;
  else if (!parseTokenFormat(dataFormat, settings.dataFormat))
    return invalid("the artifact's data.format is '" + dataFormat +
                   "'; expected auto, tokens, u16 or text");
  // Artifacts from before data.train read text unless told "tokens".
  if (!metadata.count("data.train") && dataFormat.empty())
    settings.dataFormat = TokenFormat::Text;
  settings.checkpointDir = text("checkpoint.dir");
  // Artifacts from before the key trained on the CPU.
  settings.devices = text("train.devices");
  if (settings.devices.empty())
    settings.devices = "cpu";
  if (settings.steps < 1 || settings.logEvery < 1 || settings.vocabSize < 1 ||
      settings.checkpointEvery < 0 || settings.checkpointKeep < 1 ||
      settings.sampleTokens < 0 || settings.evalEvery < 0 ||
      settings.evalSteps < 1)
    return invalid("the artifact's training settings are out of range "
                   "(steps, log_every, vocab_size, eval.steps >= 1; "
                   "checkpoint.every, sample.tokens, eval.every >= 0; "
                   "checkpoint.keep >= 1)");
  return Status::ok();
}

void writeTrainSettings(const TrainSettings &settings,
                        std::map<std::string, std::string> &metadata) {
  metadata["train.steps"] = std::to_string(settings.steps);
  metadata["train.log_every"] = std::to_string(settings.logEvery);
  metadata["train.seed"] = std::to_string(settings.seed);
  metadata["model.vocab_size"] = std::to_string(settings.vocabSize);
  metadata["data.train"] = joinLines(settings.trainData);
  metadata["data.val"] = joinLines(settings.valData);
  metadata["data.format"] = tokenFormatName(settings.dataFormat);
  metadata["data.tokenizer"] = settings.tokenizer;
  metadata["data.shuffle"] = settings.shuffle ? "1" : "0";
  metadata["eval.every"] = std::to_string(settings.evalEvery);
  metadata["eval.steps"] = std::to_string(settings.evalSteps);
  metadata["checkpoint.dir"] = settings.checkpointDir;
  metadata["checkpoint.every"] = std::to_string(settings.checkpointEvery);
  metadata["checkpoint.keep"] = std::to_string(settings.checkpointKeep);
  metadata["sample.tokens"] = std::to_string(settings.sampleTokens);
  metadata["train.devices"] = settings.devices;
}

} // namespace llmc::rt
