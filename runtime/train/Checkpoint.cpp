//===- Checkpoint.cpp - save and restore a training run -------------------===//
#include "runtime/train/Checkpoint.h"

#include "runtime/io/File.h"
#include "runtime/io/Safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <unistd.h>

namespace fs = std::filesystem;

namespace llmc::rt {

namespace {

constexpr const char *kModelFile = "model.safetensors";
constexpr const char *kOptimizerFile = "optimizer.safetensors";
constexpr const char *kLatestFile = "latest";
constexpr const char *kFormat = "llmc-checkpoint-1";

Status ioError(const std::string &message, const std::error_code &error) {
  return Status::error(StatusCode::DataLoss,
                       message + ": " + error.message());
}

/// Makes a rename inside `directory` durable.
Status syncDirectory(const std::string &directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return Status::error(StatusCode::DataLoss, "cannot open directory '" +
                                                   directory + "' to sync it: " +
                                                   std::strerror(errno));
  int rc = ::fsync(fd);
  int error = errno;
  ::close(fd);
  if (rc != 0 && error != EINVAL)
    return Status::error(StatusCode::DataLoss, "cannot sync directory '" +
                                                   directory + "': " +
                                                   std::strerror(error));
  return Status::ok();
}

/// The steps of the complete checkpoints under `directory`, ascending.
std::vector<int64_t> listCheckpoints(const std::string &directory) {
  std::vector<int64_t> steps;
  std::error_code error;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(directory, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) != 0 || !entry.is_directory())
      continue;
    char *end = nullptr;
    long long step = std::strtoll(name.c_str() + 5, &end, 10);
    if (end && *end == '\0' && step >= 0)
      steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

bool parseInteger(const std::string &text, uint64_t &value) {
  if (text.empty() || text[0] == '-')
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (errno || !end || *end)
    return false;
  value = parsed;
  return true;
}

} // namespace

Status checkpointHfFiles(const std::map<std::string, std::string> &metadata,
                         std::map<std::string, std::string> &files) {
  files.clear();
  for (const auto &[key, value] : metadata) {
    std::string name;
    if (key == kHfConfigKey)
      name = "config.json";
    else if (key == kHfGenerationConfigKey)
      name = "generation_config.json";
    else if (key.rfind(kHfFilePrefix, 0) == 0)
      name = key.substr(std::strlen(kHfFilePrefix));
    else
      continue;
    if (name.empty() || name.find('/') != std::string::npos || name == "." ||
        name == ".." || name == kModelFile || name == kOptimizerFile)
      return Status::error(StatusCode::InvalidArgument,
                           "the artifact's metadata key '" + key +
                               "' names no plain file of a checkpoint; "
                               "recompile the artifact");
    files[name] = value;
  }
  return Status::ok();
}

std::string checkpointName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%08lld",
                static_cast<long long>(step));
  return name;
}

Status saveCheckpoint(const std::string &directory,
                      const DeviceSession &session,
                      const CheckpointState &state,
                      const CheckpointOptions &options, std::string &path) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    return ioError("cannot create the checkpoint directory '" + directory + "'",
                   error);
  std::string name = checkpointName(state.step);
  std::string partial = (fs::path(directory) / ("." + name + ".partial")).string();
  path = (fs::path(directory) / name).string();
  fs::remove_all(partial, error); // what a crashed save left behind
  fs::create_directory(partial, error);
  if (error)
    return ioError("cannot create '" + partial + "'", error);

  // Host views of the bound arguments (device tensors copied first):
  // parameters to the model file, optimizer state to the optimizer file.
  const Executable &exe = session.executable();
  std::map<std::string, SafetensorsTensor> model, optimizer;
  std::vector<HostTensor> host(exe.arguments.size());
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const ArgumentInfo &arg = exe.arguments[i];
    if (arg.role == ArgumentRole::Input)
      continue;
    LLMC_RETURN_IF_ERROR(session.argumentToHost(i, host[i]));
    const TensorRef &tensor = host[i].view;
    SafetensorsTensor view{tensor.dtype, tensor.shape,
                           static_cast<const uint8_t *>(tensor.data),
                           static_cast<uint64_t>(tensor.numElements()) *
                               dtypeSize(tensor.dtype)};
    (arg.role == ArgumentRole::Parameter ? model : optimizer)[arg.name] = view;
  }
  SafetensorsMetadata modelMeta = {{"format", "pt"}};
  SafetensorsMetadata optimizerMeta = {
      {"format", kFormat},
      {"step", std::to_string(state.step)},
      // data_position: the token offset, what checkpoints before the
      // shard list recorded (and all a one-file consecutive run needs).
      {"data_position", std::to_string(state.data.offset)},
      {"data.epoch", std::to_string(state.data.epoch)},
      {"data.shard", std::to_string(state.data.shard)},
      {"data.offset", std::to_string(state.data.offset)},
      {"data.batch", std::to_string(state.data.batch)},
      {"data.seed", std::to_string(state.data.seed)},
      {"data.shards", std::to_string(state.dataShards)},
      {"data.tokens", std::to_string(state.dataTokens)},
      {"seed", std::to_string(state.seed)},
      {"source", state.source}};
  int written = 0;
  for (auto [file, tensors, meta] :
       {std::make_tuple(kModelFile, &model, &modelMeta),
        std::make_tuple(kOptimizerFile, &optimizer, &optimizerMeta)}) {
    if (options.failAfterFiles >= 0 && written >= options.failAfterFiles)
      return Status::error(StatusCode::Internal,
                           "checkpoint save stopped after " +
                               std::to_string(written) +
                               " file(s) (injected failure)");
    LLMC_RETURN_IF_ERROR(writeSafetensors(
        (fs::path(partial) / file).string(), *tensors, *meta));
    ++written;
  }
  // The model's Hugging Face files the artifact carries (config.json,
  // generation_config.json, the tokenizer's): the checkpoint is a model
  // folder that `llmc export` (and transformers, for gpt2 and llama) reads.
  std::map<std::string, std::string> extras;
  LLMC_RETURN_IF_ERROR(checkpointHfFiles(exe.metadata, extras));
  // The run's own files (its [data] tokenizer) win over the artifact's.
  for (const auto &[file, text] : state.files)
    extras[file] = text;
  for (const auto &[file, text] : extras)
    LLMC_RETURN_IF_ERROR(writeFileAtomically(
        (fs::path(partial) / file).string(), text.data(), text.size()));
  LLMC_RETURN_IF_ERROR(syncDirectory(partial));

  // Into place, then the pointer. A checkpoint of the same step (a run
  // resumed and saved again) is replaced.
  fs::remove_all(path, error);
  fs::rename(partial, path, error);
  if (error)
    return ioError("cannot rename '" + partial + "' to '" + path + "'", error);
  LLMC_RETURN_IF_ERROR(syncDirectory(directory));
  std::string latest = name + "\n";
  LLMC_RETURN_IF_ERROR(writeFileAtomically(
      (fs::path(directory) / kLatestFile).string(), latest.data(),
      latest.size()));

  // Older checkpoints beyond `keep`; never the one just written.
  std::vector<int64_t> steps = listCheckpoints(directory);
  int64_t excess = static_cast<int64_t>(steps.size()) - options.keep;
  for (int64_t i = 0; i < excess; ++i)
    if (steps[i] != state.step)
      fs::remove_all(fs::path(directory) / checkpointName(steps[i]), error);
  return Status::ok();
}

Status resolveCheckpoint(const std::string &given, std::string &path) {
  std::error_code error;
  if (fs::exists(fs::path(given) / kOptimizerFile, error)) {
    path = given;
    return Status::ok();
  }
  fs::path latest = fs::path(given) / kLatestFile;
  if (!fs::exists(latest, error))
    return Status::error(StatusCode::NotFound,
                         "'" + given +
                             "' is neither a checkpoint (no " + kOptimizerFile +
                             ") nor a checkpoint directory (no " + kLatestFile +
                             "); give --resume the [checkpoint] dir of the "
                             "run or one of its step-NNNNNNNN directories");
  std::vector<uint8_t> bytes;
  LLMC_RETURN_IF_ERROR(readFile(latest.string(), bytes));
  std::string name(bytes.begin(), bytes.end());
  while (!name.empty() && (name.back() == '\n' || name.back() == ' '))
    name.pop_back();
  path = (fs::path(given) / name).string();
  if (!fs::exists(fs::path(path) / kOptimizerFile, error))
    return Status::error(StatusCode::DataLoss,
                         latest.string() + " names '" + name +
                             "', which is not a complete checkpoint");
  return Status::ok();
}

Status loadCheckpoint(const std::string &path, DeviceSession &session,
                      CheckpointState &state) {
  SafetensorsFile model, optimizer;
  std::string modelPath = (fs::path(path) / kModelFile).string();
  std::string optimizerPath = (fs::path(path) / kOptimizerFile).string();
  LLMC_RETURN_IF_ERROR(readSafetensors(modelPath, model));
  LLMC_RETURN_IF_ERROR(readSafetensors(optimizerPath, optimizer));
  const SafetensorsMetadata &meta = optimizer.metadata();
  auto field = [&](const char *key, uint64_t &value) -> Status {
    auto it = meta.find(key);
    if (it == meta.end() || !parseInteger(it->second, value))
      return Status::error(StatusCode::DataLoss,
                           optimizerPath + ": expected the metadata key '" +
                               key + "' with a non-negative integer; not an "
                               "llmc checkpoint?");
    return Status::ok();
  };
  auto format = meta.find("format");
  if (format == meta.end() || format->second != kFormat)
    return Status::error(StatusCode::InvalidArgument,
                         optimizerPath + ": expected format '" + kFormat +
                             "' in the metadata; not an llmc checkpoint");
  uint64_t step = 0;
  LLMC_RETURN_IF_ERROR(field("step", step));
  LLMC_RETURN_IF_ERROR(field("data_position", state.data.offset));
  LLMC_RETURN_IF_ERROR(field("seed", state.seed));
  // The shard, epoch and order of the position; older checkpoints read
  // one file in order and have data_position alone.
  if (meta.count("data.epoch")) {
    for (auto [key, value] :
         {std::make_pair("data.epoch", &state.data.epoch),
          std::make_pair("data.shard", &state.data.shard),
          std::make_pair("data.offset", &state.data.offset),
          std::make_pair("data.batch", &state.data.batch),
          std::make_pair("data.seed", &state.data.seed),
          std::make_pair("data.shards", &state.dataShards),
          std::make_pair("data.tokens", &state.dataTokens)})
      LLMC_RETURN_IF_ERROR(field(key, *value));
  }
  state.step = static_cast<int64_t>(step);
  auto source = meta.find("source");
  state.source = source == meta.end() ? "" : source->second;

  const Executable &exe = session.executable();
  for (const ArgumentInfo &arg : exe.arguments) {
    if (arg.role == ArgumentRole::Input)
      continue;
    bool isParam = arg.role == ArgumentRole::Parameter;
    const SafetensorsFile &file = isParam ? model : optimizer;
    const std::string &filePath = isParam ? modelPath : optimizerPath;
    const SafetensorsTensor *tensor = file.find(arg.name);
    if (!tensor)
      return Status::error(StatusCode::NotFound,
                           filePath + ": no tensor '" + arg.name +
                               "', which the program needs; the checkpoint "
                               "is of another model");
    Status status = session.setArgument(arg.name, tensor->dtype, tensor->shape,
                                        tensor->data, tensor->bytes);
    if (!status)
      return Status::error(status.code(), filePath + ": " + status.message());
  }
  return Status::ok();
}

} // namespace llmc::rt
