//===- Export.cpp - a checkpoint as a Hugging Face model folder -----------===//
//
// 1. Resolve the checkpoint, read the config.json it carries.
// 2. List the output tensors (Mixtral's stacked experts split per expert)
//    in natural name order, and cut them into shards of at most
//    shardBytes (a new shard when the next tensor would not fit, as
//    transformers' split_torch_state_dict_into_shards does).
// 3. Write everything into OUT.partial-PID: shards streamed tensor by
//    tensor (converted on the fly), the index, config.json,
//    generation_config.json, the tokenizer's files.
// 4. Rename it to OUT (an existing OUT, with force, is moved aside first
//    and removed after).
//
//===----------------------------------------------------------------------===//
#include "runtime/train/Export.h"

#include "runtime/cpu/ThreadPool.h"
#include "runtime/io/File.h"
#include "runtime/io/HfWeights.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/Checkpoint.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace llmc::rt {

namespace {

using Json = nlohmann::json;

/// The tokenizer files transformers and tokenizers read beside a model.
const char *const kTokenizerFiles[] = {
    "tokenizer.json",   "tokenizer_config.json", "special_tokens_map.json",
    "vocab.json",       "merges.txt",            "tokenizer.model",
    "added_tokens.json"};

Status ioError(const std::string &message, const std::error_code &error) {
  return Status::error(StatusCode::DataLoss, message + ": " + error.message());
}

/// "h.2" before "h.10": digit runs compare as numbers.
bool naturalLess(const std::string &a, const std::string &b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie])))
        ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je])))
        ++je;
      std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      if (x.size() != y.size())
        return x.size() < y.size();
      if (x != y)
        return x < y;
      i = ie, j = je;
      continue;
    }
    if (a[i] != b[j])
      return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

/// One tensor of the folder: `count` elements of checkpoint tensor
/// `source` from `offset`, shaped `shape`.
struct OutTensor {
  std::string name;
  const SafetensorsTensor *source = nullptr;
  int64_t offset = 0;
  int64_t count = 0;
  Shape shape;
};

std::vector<OutTensor> listTensors(const SafetensorsFile &model) {
  std::vector<OutTensor> out;
  const std::string marker = "block_sparse_moe.experts.w";
  for (const auto &[name, tensor] : model.tensors()) {
    size_t at = name.find(marker);
    bool stacked = at != std::string::npos && tensor.shape.size() == 3 &&
                   name.size() == at + marker.size() + 8 &&
                   name.compare(at + marker.size() + 1, 7, ".weight") == 0;
    if (!stacked) {
      out.push_back({name, &tensor, 0, numElements(tensor.shape),
                     tensor.shape});
      continue;
    }
    // Mixtral: experts.wN.weight [E, a, b] -> experts.{j}.wN.weight [a, b].
    std::string prefix = name.substr(0, at) + "block_sparse_moe.experts.";
    std::string w = name.substr(at + marker.size() - 1, 2);
    int64_t per = tensor.shape[1] * tensor.shape[2];
    for (int64_t j = 0; j < tensor.shape[0]; ++j)
      out.push_back({prefix + std::to_string(j) + "." + w + ".weight",
                     &tensor, j * per, per,
                     {tensor.shape[1], tensor.shape[2]}});
  }
  std::sort(out.begin(), out.end(), [](const OutTensor &a, const OutTensor &b) {
    return naturalLess(a.name, b.name);
  });
  return out;
}

const char *torchDType(DType dtype) {
  switch (dtype) {
  case DType::BF16:
    return "bfloat16";
  case DType::F16:
    return "float16";
  default:
    return "float32";
  }
}

Status syncDirectory(const std::string &directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return Status::error(StatusCode::DataLoss,
                         "cannot open '" + directory + "' to sync it: " +
                             std::strerror(errno));
  int rc = ::fsync(fd);
  int error = errno;
  ::close(fd);
  if (rc != 0 && error != EINVAL)
    return Status::error(StatusCode::DataLoss,
                         "cannot sync '" + directory +
                             "': " + std::strerror(error));
  return Status::ok();
}

Status writeText(const fs::path &path, const std::string &text) {
  return writeFileAtomically(path.string(), text.data(), text.size());
}

/// Step 3: the folder's files into `dir`.
Status writeFolder(const std::string &step, const SafetensorsFile &model,
                   Json config, const std::string &dir,
                   const ExportOptions &options, ExportReport &report) {
  // The shards.
  std::vector<OutTensor> tensors = listTensors(model);
  size_t width = dtypeSize(options.dtype);
  std::vector<std::vector<size_t>> shards;
  uint64_t shardBytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    uint64_t bytes = static_cast<uint64_t>(tensors[i].count) * width;
    if (shards.empty() ||
        (shardBytes > 0 && shardBytes + bytes > options.shardBytes)) {
      shards.emplace_back();
      shardBytes = 0;
    }
    shards.back().push_back(i);
    shardBytes += bytes;
    report.bytes += bytes;
  }
  if (shards.empty())
    shards.emplace_back();
  ThreadPool pool(std::min(std::max(1u, std::thread::hardware_concurrency()),
                           16u));
  std::vector<uint8_t> scratch;
  Json weightMap = Json::object();
  for (size_t s = 0; s < shards.size(); ++s) {
    char name[64];
    if (shards.size() == 1)
      std::snprintf(name, sizeof(name), "model.safetensors");
    else
      std::snprintf(name, sizeof(name), "model-%05zu-of-%05zu.safetensors",
                    s + 1, shards.size());
    std::map<std::string, SafetensorsTensor> header;
    std::map<std::string, const OutTensor *> byName;
    for (size_t i : shards[s]) {
      const OutTensor &t = tensors[i];
      header[t.name] = {options.dtype, t.shape, nullptr,
                        static_cast<uint64_t>(t.count) * width};
      byName[t.name] = &t;
      weightMap[t.name] = name;
    }
    LLMC_RETURN_IF_ERROR(writeSafetensorsStreamed(
        (fs::path(dir) / name).string(), header, {{"format", "pt"}},
        [&](const std::string &tensor, const uint8_t *&data) -> Status {
          const OutTensor &t = *byName.at(tensor);
          const SafetensorsTensor &source = *t.source;
          scratch.resize(static_cast<size_t>(t.count) * width);
          LLMC_RETURN_IF_ERROR(convertElements(
              source.dtype, source.data + t.offset * dtypeSize(source.dtype),
              options.dtype, scratch.data(), t.count, &pool));
          data = scratch.data();
          return Status::ok();
        }));
  }
  report.tensors = tensors.size();
  report.shards = shards.size();
  if (shards.size() > 1) {
    Json index = {{"metadata", {{"total_size", report.bytes}}},
                  {"weight_map", weightMap}};
    LLMC_RETURN_IF_ERROR(writeText(fs::path(dir) / "model.safetensors.index.json",
                                   index.dump(2) + "\n"));
  }

  // The config, with the folder's dtype.
  config["torch_dtype"] = torchDType(options.dtype);
  if (config.contains("dtype"))
    config["dtype"] = torchDType(options.dtype);
  LLMC_RETURN_IF_ERROR(
      writeText(fs::path(dir) / "config.json", config.dump(2) + "\n"));

  // The generation config (the model's own, or the token ids transformers
  // takes from the config) and the tokenizer.
  std::error_code error;
  fs::path generation = fs::path(step) / "generation_config.json";
  std::string generationText;
  if (fs::exists(generation, error)) {
    std::vector<uint8_t> bytes;
    LLMC_RETURN_IF_ERROR(readFile(generation.string(), bytes));
    generationText.assign(bytes.begin(), bytes.end());
  } else {
    Json made = {{"_from_model_config", true}};
    for (const char *key : {"bos_token_id", "eos_token_id", "pad_token_id"})
      if (config.contains(key) && !config[key].is_null())
        made[key] = config[key];
    generationText = made.dump(2) + "\n";
  }
  LLMC_RETURN_IF_ERROR(
      writeText(fs::path(dir) / "generation_config.json", generationText));
  for (const char *file : kTokenizerFiles) {
    fs::path from = fs::path(step) / file;
    if (!fs::exists(from, error))
      continue;
    std::vector<uint8_t> bytes;
    LLMC_RETURN_IF_ERROR(readFile(from.string(), bytes));
    LLMC_RETURN_IF_ERROR(writeFileAtomically((fs::path(dir) / file).string(),
                                             bytes.data(), bytes.size()));
  }
  return syncDirectory(dir);
}

} // namespace

bool parseExportDType(const std::string &text, DType &dtype) {
  if (text == "f32" || text == "float32")
    dtype = DType::F32;
  else if (text == "bf16" || text == "bfloat16")
    dtype = DType::BF16;
  else if (text == "f16" || text == "float16")
    dtype = DType::F16;
  else
    return false;
  return true;
}

bool parseShardSize(const std::string &text, uint64_t &bytes) {
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) ||
          text[end] == '.'))
    ++end;
  if (end == 0)
    return false;
  double number = std::strtod(text.substr(0, end).c_str(), nullptr);
  std::string unit = text.substr(end);
  for (char &c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = unit.empty() || unit == "B" ? 1
                 : unit == "KB"              ? 1e3
                 : unit == "MB"              ? 1e6
                 : unit == "GB"              ? 1e9
                 : unit == "KIB"             ? 1024.0
                 : unit == "MIB"             ? 1024.0 * 1024
                 : unit == "GIB"             ? 1024.0 * 1024 * 1024
                                             : -1;
  if (scale < 0 || !(number * scale >= 1))
    return false;
  bytes = static_cast<uint64_t>(number * scale);
  return true;
}

Status exportHfFolder(const std::string &checkpoint, const std::string &out,
                      const ExportOptions &options, ExportReport &report) {
  report = ExportReport();
  if (options.dtype != DType::F32 && options.dtype != DType::BF16 &&
      options.dtype != DType::F16)
    return Status::error(StatusCode::InvalidArgument,
                         std::string("cannot export as ") +
                             dtypeName(options.dtype) +
                             "; choose f32, bf16 or f16");
  // 1. The checkpoint and its config.
  std::string step;
  LLMC_RETURN_IF_ERROR(resolveCheckpoint(checkpoint, step));
  report.checkpoint = step;
  fs::path configPath = fs::path(step) / "config.json";
  std::error_code error;
  if (!fs::exists(configPath, error))
    return Status::error(
        StatusCode::NotFound,
        step + ": no config.json, so nothing says which Hugging Face model "
               "these tensors are (its artifact was compiled from llmc IR, or "
               "by an llmc that did not record the model); compile the run "
               "again with this llmc and resume it from this checkpoint for "
               "a step, then export that checkpoint");
  std::vector<uint8_t> bytes;
  LLMC_RETURN_IF_ERROR(readFile(configPath.string(), bytes));
  Json config = Json::parse(bytes.begin(), bytes.end(), nullptr,
                            /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object())
    return Status::error(StatusCode::DataLoss,
                         configPath.string() +
                             ": not a JSON object; the checkpoint is damaged");
  if (fs::exists(out, error) && !options.force)
    return Status::error(StatusCode::InvalidArgument,
                         "'" + out + "' exists; choose another -o, or pass "
                                     "--force to replace it");
  SafetensorsFile model;
  LLMC_RETURN_IF_ERROR(
      mapSafetensors((fs::path(step) / "model.safetensors").string(), model));

  // 2-3. Everything into a partial folder beside OUT.
  fs::path target = fs::absolute(fs::path(out), error);
  fs::create_directories(target.parent_path(), error);
  if (error)
    return ioError("cannot create '" + target.parent_path().string() + "'",
                   error);
  std::string partial =
      target.string() + ".partial-" + std::to_string(::getpid());
  fs::remove_all(partial, error);
  fs::create_directory(partial, error);
  if (error)
    return ioError("cannot create '" + partial + "'", error);
  Status written =
      writeFolder(step, model, std::move(config), partial, options, report);
  if (!written) {
    fs::remove_all(partial, error);
    return written;
  }

  // 4. Into place.
  std::string aside;
  if (fs::exists(target, error)) {
    aside = target.string() + ".old-" + std::to_string(::getpid());
    fs::rename(target, aside, error);
    if (error) {
      fs::remove_all(partial, error);
      return ioError("cannot move '" + target.string() + "' aside", error);
    }
  }
  fs::rename(partial, target, error);
  if (error) {
    std::error_code ignored;
    if (!aside.empty())
      fs::rename(aside, target, ignored);
    fs::remove_all(partial, ignored);
    return ioError("cannot rename '" + partial + "' to '" + target.string() +
                       "'",
                   error);
  }
  LLMC_RETURN_IF_ERROR(syncDirectory(target.parent_path().string()));
  if (!aside.empty())
    fs::remove_all(aside, error);
  return Status::ok();
}

} // namespace llmc::rt
