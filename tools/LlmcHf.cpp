//===- LlmcHf.cpp - Hugging Face models in the llmc CLI -------------------===//
#include "tools/LlmcHf.h"
#include "tools/LlmcDriver.h"

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

int compileLogits(const CompileCommand &options) {
  Session session;
  llmc::SourceOptions sourceOptions;
  sourceOptions.batchSize = options.batchSize;
  sourceOptions.seqLen = options.seqLen;
  sourceOptions.splitMicrobatches = false;
  llmc::LoadedSource loaded = llmc::loadSource(
      options.input, session.context, session.sourceMgr, sourceOptions);
  if (!loaded.module)
    return kExitRejected;
  if (!loaded.description) {
    llvm::errs() << options.input
                 << ": error: --logits needs a model (a run description, a "
                    "config.json or a model folder), got llmc IR\n";
    return kExitUsage;
  }
  const RunDescription &run = *loaded.description;
  mlir::OwningOpRef<mlir::ModuleOp> module = llmc::buildLogitsModule(
      session.context, run.model, run.train.batchSize, run.train.seqLen);
  if (!module)
    return kExitRejected;
  mlir::PassManager pm(&session.context);
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(*module)))
    return kExitRejected;
  if (!llvm::StringRef(options.output).ends_with(".llmcx")) {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out =
        mlir::openOutputFile(options.output, &error);
    if (!out) {
      llvm::errs() << "llmc compile: cannot write '" << options.output
                   << "': " << error << "\n";
      return kExitRejected;
    }
    module->print(out->os());
    out->keep();
    return kExitOk;
  }
  // The output's name in the artifact (and in --save-outputs files).
  if (auto function = module->lookupSymbol<mlir::func::FuncOp>("logits"))
    function.setResultAttr(0, "llmc.name",
                           mlir::StringAttr::get(&session.context, "logits"));
  llmc::CodegenOptions codegen;
  codegen.source = options.input;
  codegen.function = "logits";
  mlir::FailureOr<llmc::rt::Executable> built =
      llmc::buildExecutable(*module, codegen);
  if (mlir::failed(built))
    return kExitRejected;
  if (int code = writeHfSettings(run, built->metadata))
    return code;
  return writeArtifact(*built, options.output);
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
