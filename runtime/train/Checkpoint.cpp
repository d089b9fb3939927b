//===- Checkpoint.cpp - save and restore a training run -------------------===//
#include "runtime/train/Checkpoint.h"

#include "runtime/io/File.h"
#include "runtime/io/Hash.h"
#include "runtime/io/Safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <set>
#include <sys/file.h>
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
constexpr const char *kLockFile = ".lock";
// The integrity keys, in both files' metadata (docs/training.md).
constexpr const char *kStepKey = "llmc.step";
constexpr const char *kLineageKey = "llmc.lineage";
constexpr const char *kModelHashKey = "llmc.model.xxh64";
constexpr const char *kOptimizerHashKey = "llmc.optimizer.xxh64";
constexpr const char *kFilesKey = "llmc.files"; ///< the folder's files

/// XXH64 of the tensors' bytes in name order (Hash.h): independent of the
/// header, so each file can record the other's hash as well as its own.
std::string tensorsHash(
    const std::map<std::string, SafetensorsTensor> &tensors) {
  Xxh64 hash;
  for (const auto &[name, tensor] : tensors)
    hash.update(tensor.data, tensor.bytes);
  return hash.hex();
}

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

/// The first non-finite element of a float tensor, or -1.
int64_t firstNonFinite(const SafetensorsTensor &tensor) {
  int64_t size = static_cast<int64_t>(dtypeSize(tensor.dtype));
  int64_t count = size ? static_cast<int64_t>(tensor.bytes) / size : 0;
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t *at = tensor.data + i * size;
    double value = 0;
    if (tensor.dtype == DType::F32) {
      float v;
      std::memcpy(&v, at, 4);
      value = v;
    } else if (tensor.dtype == DType::F64) {
      std::memcpy(&value, at, 8);
    } else if (tensor.dtype == DType::BF16 || tensor.dtype == DType::F16) {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      value = tensor.dtype == DType::BF16 ? bf16ToFloat(bits)
                                          : f16ToFloat(bits);
    } else {
      return -1; // integers are always finite
    }
    if (!std::isfinite(value))
      return i;
  }
  return -1;
}

/// Why the folder `path` is not a complete checkpoint of `lineage` that
/// llmc wrote (empty: it is one, rotation may delete it).
std::string notRotatable(const fs::path &path, const std::string &lineage) {
  SafetensorsFile optimizer;
  if (!mapSafetensors((path / kOptimizerFile).string(), optimizer))
    return std::string("it has no readable ") + kOptimizerFile;
  const SafetensorsMetadata &meta = optimizer.metadata();
  auto files = meta.find(kFilesKey);
  auto owner = meta.find(kLineageKey);
  if (files == meta.end() || owner == meta.end())
    return "it records no lineage (written before llmc recorded one)";
  if (owner->second != lineage)
    return "it is of another run (lineage " + owner->second + ")";
  std::set<std::string> expected, found;
  for (size_t begin = 0; begin <= files->second.size();) {
    size_t end = files->second.find(',', begin);
    if (end == std::string::npos)
      end = files->second.size();
    expected.insert(files->second.substr(begin, end - begin));
    begin = end + 1;
  }
  std::error_code error;
  for (const fs::directory_entry &entry : fs::directory_iterator(path, error))
    found.insert(entry.path().filename().string());
  for (const std::string &name : found)
    if (!expected.count(name))
      return "it holds " + name + ", which llmc did not write";
  for (const std::string &name : expected)
    if (!found.count(name))
      return "it lacks " + name;
  return "";
}

/// Rotation after the save of `step`: of this lineage's complete
/// checkpoints, those newer than `step` (the future of a run rewound by
/// resuming an older step) and those beyond the `keep` newest are deleted;
/// anything else is left, and said so.
void rotate(const std::string &directory, int64_t step,
            const std::string &lineage, const CheckpointOptions &options) {
  std::vector<int64_t> steps = listCheckpoints(directory);
  std::vector<int64_t> ours;
  for (int64_t other : steps) {
    if (other == step)
      continue;
    fs::path path = fs::path(directory) / checkpointName(other);
    std::string why = notRotatable(path, lineage);
    if (!why.empty()) {
      if (options.log && other < step)
        std::fprintf(options.log,
                     "checkpoint rotation left %s: %s; delete it yourself if "
                     "it is not needed\n",
                     path.string().c_str(), why.c_str());
      continue;
    }
    if (other > step) {
      std::error_code error;
      fs::remove_all(path, error);
      if (options.log)
        std::fprintf(options.log,
                     "removed %s: newer than step %lld, from before this run "
                     "resumed an older checkpoint\n",
                     path.string().c_str(), static_cast<long long>(step));
      continue;
    }
    ours.push_back(other);
  }
  // The one just written counts towards `keep`.
  int64_t excess = static_cast<int64_t>(ours.size()) + 1 - options.keep;
  for (int64_t i = 0; i < excess && i < static_cast<int64_t>(ours.size());
       ++i) {
    std::error_code error;
    fs::remove_all(fs::path(directory) / checkpointName(ours[i]), error);
  }
}

} // namespace

std::string newCheckpointLineage(const std::string &source, uint64_t seed) {
  Xxh64 hash;
  hash.update(source.data(), source.size());
  hash.update(&seed, sizeof(seed));
  return hash.hex();
}

CheckpointLock::~CheckpointLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the flock
}

Status CheckpointLock::acquire(const std::string &directory) {
  std::error_code error;
  fs::create_directories(directory, error);
  if (error)
    return Status::error(StatusCode::InvalidArgument,
                         "cannot create the checkpoint directory '" +
                             directory + "': " + error.message() +
                             "; choose another --checkpoint-dir");
  std::string path = (fs::path(directory) / kLockFile).string();
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::error(StatusCode::InvalidArgument,
                         "cannot write into the checkpoint directory '" +
                             directory + "' (" + path + ": " +
                             std::strerror(errno) +
                             "); choose another --checkpoint-dir");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    ssize_t n = ::pread(fd, pid, sizeof(pid) - 1, 0);
    std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' '))
      holder.pop_back();
    ::close(fd);
    return Status::error(StatusCode::Unavailable,
                         "the checkpoint directory '" + directory +
                             "' is in use by another run (pid " +
                             (holder.empty() ? "unknown" : holder) +
                             " holds " + path +
                             "); wait for it to end or choose another "
                             "--checkpoint-dir");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) !=
          static_cast<ssize_t>(pid.size())) {
    int saved = errno;
    ::close(fd);
    return Status::error(StatusCode::InvalidArgument,
                         "cannot write into the checkpoint directory '" +
                             directory + "' (" + path + ": " +
                             std::strerror(saved) +
                             "); free space or choose another "
                             "--checkpoint-dir");
  }
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = fd;
  return Status::ok();
}

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
  // Both files carry the step, the lineage and both files' hashes: a
  // resume checks each file and that they belong together.
  std::string modelHash = tensorsHash(model);
  std::string optimizerHash = tensorsHash(optimizer);
  SafetensorsMetadata modelMeta = {{"format", "pt"},
                                   {kStepKey, std::to_string(state.step)},
                                   {kLineageKey, state.lineage},
                                   {kModelHashKey, modelHash},
                                   {kOptimizerHashKey, optimizerHash}};
  SafetensorsMetadata optimizerMeta = {
      {"format", kFormat},
      {kStepKey, std::to_string(state.step)},
      {kLineageKey, state.lineage},
      {kModelHashKey, modelHash},
      {kOptimizerHashKey, optimizerHash},
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
  // The extra files, and so the folder's whole list, before the tensors:
  // rotation later deletes a folder only if it holds exactly these.
  std::map<std::string, std::string> extras;
  LLMC_RETURN_IF_ERROR(checkpointHfFiles(exe.metadata, extras));
  // The run's own files (its [data] tokenizer) win over the artifact's.
  for (const auto &[file, text] : state.files)
    extras[file] = text;
  std::string fileList = std::string(kModelFile) + "," + kOptimizerFile;
  for (const auto &[file, text] : extras)
    fileList += "," + file;
  optimizerMeta[kFilesKey] = fileList;
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

  rotate(directory, state.step, state.lineage, options);
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

namespace {

/// The recorded hashes and steps of a checkpoint's two files against their
/// tensors and each other. Checkpoints from before the hashes have none to
/// check and pass.
Status checkIntegrity(const std::string &modelPath,
                      const SafetensorsFile &model,
                      const std::string &optimizerPath,
                      const SafetensorsFile &optimizer, uint64_t step) {
  const SafetensorsMetadata &modelMeta = model.metadata();
  const SafetensorsMetadata &optimizerMeta = optimizer.metadata();
  auto modelStep = modelMeta.find(kStepKey);
  if (modelStep != modelMeta.end() &&
      modelStep->second != std::to_string(step))
    return Status::error(StatusCode::DataLoss,
                         modelPath + " is of step " + modelStep->second +
                             " and " + optimizerPath + " of step " +
                             std::to_string(step) +
                             ": the files of two checkpoints were mixed; "
                             "resume from a checkpoint folder as llmc wrote it");
  for (auto [path, file, key] :
       {std::make_tuple(&modelPath, &model, kModelHashKey),
        std::make_tuple(&optimizerPath, &optimizer, kOptimizerHashKey)}) {
    auto recorded = file->metadata().find(key);
    if (recorded == file->metadata().end())
      continue;
    std::string actual = tensorsHash(file->tensors());
    if (actual != recorded->second)
      return Status::error(StatusCode::DataLoss,
                           *path + ": the tensors hash to xxh64 " + actual +
                               ", the checkpoint recorded " +
                               recorded->second +
                               ": the file is damaged (a flipped bit, a "
                               "partial copy); resume from another "
                               "checkpoint");
  }
  // Each file also records the other's hash: a model file from another save
  // of the same step is caught too.
  for (const char *key : {kModelHashKey, kOptimizerHashKey}) {
    auto a = modelMeta.find(key), b = optimizerMeta.find(key);
    if (a != modelMeta.end() && b != optimizerMeta.end() &&
        a->second != b->second)
      return Status::error(StatusCode::DataLoss,
                           modelPath + " and " + optimizerPath +
                               " are from different saves (their " + key +
                               " differ: " + a->second + " and " + b->second +
                               "); resume from a checkpoint folder as llmc "
                               "wrote it");
  }
  return Status::ok();
}

/// A file's tensors that no argument of the program takes: a checkpoint of
/// another (larger) model, whose weights would be dropped silently.
Status checkUnused(const std::string &path, const SafetensorsFile &file,
                   const std::set<std::string> &used) {
  std::vector<std::string> unused;
  for (const auto &[name, tensor] : file.tensors())
    if (!used.count(name))
      unused.push_back(name);
  if (unused.empty())
    return Status::ok();
  std::string list;
  for (size_t i = 0; i < unused.size() && i < 5; ++i)
    list += (i ? ", " : "") + unused[i];
  if (unused.size() > 5)
    list += ", ... (" + std::to_string(unused.size() - 5) + " more)";
  return Status::error(StatusCode::InvalidArgument,
                       path + ": " + std::to_string(unused.size()) +
                           " tensor(s) the program does not use: " + list +
                           "; the checkpoint is of another model (more layers "
                           "or other sizes): resume it with the run "
                           "description it was trained with");
}

} // namespace

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
  auto lineage = meta.find(kLineageKey);
  state.lineage = lineage == meta.end() ? "" : lineage->second;
  LLMC_RETURN_IF_ERROR(
      checkIntegrity(modelPath, model, optimizerPath, optimizer, step));

  const Executable &exe = session.executable();
  // Every tensor of the model file must be a parameter; those of the
  // optimizer file must be state when the program has any (a forward
  // program, `llmc eval` and `llmc sample`, reads the parameters only).
  std::set<std::string> used;
  bool hasState = false;
  for (const ArgumentInfo &arg : exe.arguments) {
    if (arg.role != ArgumentRole::Input)
      used.insert(arg.name);
    hasState |= arg.role != ArgumentRole::Input &&
                arg.role != ArgumentRole::Parameter;
  }
  LLMC_RETURN_IF_ERROR(checkUnused(modelPath, model, used));
  if (hasState)
    LLMC_RETURN_IF_ERROR(checkUnused(optimizerPath, optimizer, used));
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
    if (int64_t at = firstNonFinite(*tensor); at >= 0)
      return Status::error(StatusCode::DataLoss,
                           filePath + ": tensor '" + arg.name +
                               "' holds a NaN or an infinity (element " +
                               std::to_string(at) +
                               "); the run diverged before this save or the "
                               "file is damaged: resume from an earlier "
                               "checkpoint");
    Status status = session.setArgument(arg.name, tensor->dtype, tensor->shape,
                                        tensor->data, tensor->bytes);
    if (!status)
      return Status::error(status.code(), filePath + ": " + status.message());
  }
  return Status::ok();
}

} // namespace llmc::rt
