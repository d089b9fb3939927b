//===- LlmcHf.cpp - Hugging Face models in the llmc CLI -------------------===//
#include "tools/LlmcHf.h"

#include "frontend/Source.h"
#include "runtime/io/File.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Export.h"
#include "runtime/train/Weights.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace llmc::driver {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitRejected = 1;
constexpr int kExitUsage = 2;

/// The tokenizer files a model folder may hold (as runtime/train/Export).
const char *const kTokenizerFiles[] = {
    "tokenizer.json",   "tokenizer_config.json", "special_tokens_map.json",
    "vocab.json",       "merges.txt",            "tokenizer.model",
    "added_tokens.json"};

bool readText(const std::string &path, std::string &text) {
  std::vector<uint8_t> bytes;
  llmc::rt::Status status = llmc::rt::readFile(path, bytes);
  if (!status) {
    llvm::errs() << "llmc: error: " << status.message() << "\n";
    return false;
  }
  text.assign(bytes.begin(), bytes.end());
  return true;
}

} // namespace

int writeHfSettings(const RunDescription &run,
                    std::map<std::string, std::string> &metadata) {
  const ModelConfig &model = run.model;
  std::string config, error;
  if (!writeHuggingFaceConfig(model, "float32", config, error)) {
    llvm::errs() << run.path << ": error: " << error << "\n";
    return kExitRejected;
  }
  metadata[llmc::rt::kHfConfigKey] = config;
  if (model.hfDirectory.empty())
    return kExitOk;
  llvm::SmallString<256> folder(model.hfDirectory);
  llvm::sys::fs::make_absolute(folder);
  metadata[llmc::rt::kHfWeightsKey] = std::string(folder.str());
  metadata[llmc::rt::kHfStrictKey] = model.strictWeights ? "true" : "false";
  if (!model.generationConfigPath.empty() &&
      !readText(model.generationConfigPath,
                metadata[llmc::rt::kHfGenerationConfigKey]))
    return kExitRejected;
  for (const char *file : kTokenizerFiles) {
    llvm::SmallString<256> path(model.hfDirectory);
    llvm::sys::path::append(path, file);
    if (llvm::sys::fs::is_regular_file(path) &&
        !readText(std::string(path.str()),
                  metadata[std::string(llmc::rt::kHfFilePrefix) + file]))
      return kExitRejected;
  }
  return kExitOk;
}

int checkTrainingRefusals(mlir::MLIRContext &context,
                          const RunDescription &run) {
  std::vector<ConfigDiagnostic> refusals = trainingRefusals(run.model);
  if (refusals.empty())
    return kExitOk;
  (void)reportConfigDiagnostics(context, refusals);
  return kExitRejected;
}

int runExport(const ExportCommand &options) {
  llmc::rt::ExportOptions exportOptions;
  exportOptions.force = options.force;
  if (!llmc::rt::parseExportDType(options.dtype, exportOptions.dtype)) {
    llvm::errs() << "llmc export: --dtype expects f32, bf16 or f16, got '"
                 << options.dtype << "'\n";
    return kExitUsage;
  }
  if (!llmc::rt::parseShardSize(options.shardSize, exportOptions.shardBytes)) {
    llvm::errs() << "llmc export: --shard-size expects a size such as 5GB, "
                    "500MB or 2GiB, got '"
                 << options.shardSize << "'\n";
    return kExitUsage;
  }
  llmc::rt::ExportReport report;
  if (llmc::rt::Status status = llmc::rt::exportHfFolder(
          options.checkpoint, options.output, exportOptions, report);
      !status) {
    llvm::errs() << "llmc export: " << status.message() << "\n";
    return kExitRejected;
  }
  llvm::outs() << "exported " << report.checkpoint << " to " << options.output
               << ": " << report.tensors << " tensors in " << report.shards
               << " file(s), " << report.bytes << " bytes of "
               << llmc::rt::dtypeName(exportOptions.dtype) << "\n";
  return kExitOk;
}

} // namespace llmc::driver
