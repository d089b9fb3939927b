//===- Source.cpp - read what the user asked llmc to compile --------------===//
#include "frontend/Source.h"
#include "frontend/models/Models.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>

using namespace mlir;

llmc::SourceKind llmc::classifySource(llvm::StringRef path) {
  if (llvm::sys::fs::is_directory(path))
    return SourceKind::HuggingFaceFolder;
  llvm::StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".mlir")
    return SourceKind::Mlir;
  if (ext == ".toml")
    return SourceKind::RunDescription;
  if (ext == ".json")
    return SourceKind::HuggingFaceConfig;
  return SourceKind::Unknown;
}

LogicalResult
llmc::reportConfigDiagnostics(MLIRContext &context,
                              llvm::ArrayRef<ConfigDiagnostic> diagnostics) {
  bool anyError = false;
  for (const ConfigDiagnostic &diag : diagnostics) {
    Location loc = FileLineColLoc::get(&context, diag.location.file,
                                       diag.location.line,
                                       diag.location.column);
    switch (diag.severity) {
    case ConfigDiagnostic::Severity::Error:
      anyError = true;
      emitError(loc) << diag.message;
      break;
    case ConfigDiagnostic::Severity::Warning:
      emitWarning(loc) << diag.message;
      break;
    case ConfigDiagnostic::Severity::Note:
      emitRemark(loc) << diag.message;
      break;
    }
  }
  return failure(anyError);
}

namespace {

/// Fields set in the run description that do nothing yet: one warning,
/// at the first of them, listing all with their issues, so that nobody
/// believes a tp = 2 run was tensor parallel.
void warnAboutPendingFields(MLIRContext &context,
                            const llmc::RunDescription &description) {
  if (description.pending.empty())
    return;
  const llmc::PendingField &first = description.pending.front();
  Location loc = FileLineColLoc::get(&context, first.location.file,
                                     first.location.line,
                                     first.location.column);
  // Group the keys by issue, in order of first appearance.
  std::vector<std::pair<std::string, std::vector<std::string>>> byIssue;
  for (const llmc::PendingField &field : description.pending) {
    auto it = llvm::find_if(byIssue, [&](const auto &entry) {
      return entry.first == field.issue;
    });
    if (it == byIssue.end()) {
      byIssue.push_back({field.issue, {}});
      it = std::prev(byIssue.end());
    }
    it->second.push_back(field.key);
  }
  InFlightDiagnostic warning = emitWarning(loc);
  size_t count = description.pending.size();
  warning << count << (count == 1 ? " setting has" : " settings have")
          << " no effect yet: ";
  for (auto [i, entry] : llvm::enumerate(byIssue)) {
    warning << (i ? "; " : "");
    llvm::interleave(
        entry.second, [&](const std::string &key) { warning << key; },
        [&] { warning << ", "; });
    if (StringRef(entry.first).starts_with("#"))
      warning << " (issue " << entry.first << ")";
    else
      warning << " (" << entry.first << ")";
  }
}

OwningOpRef<ModuleOp> traceModel(MLIRContext &context,
                                 const llmc::ModelConfig &model,
                                 int64_t batchSize, int64_t seqLen,
                                 int64_t maxLayers) {
  if (maxLayers <= 0 || model.numLayers <= maxLayers)
    return llmc::buildLossModule(context, model, batchSize, seqLen);
  llmc::ModelConfig shallow = model;
  shallow.numLayers = maxLayers;
  return llmc::buildLossModule(context, shallow, batchSize, seqLen);
}

/// Traces a parsed run description. With microbatches M, @loss is traced
/// for one microbatch (batch / M sequences): llmc-autodiff stacks M of them.
llmc::LoadedSource fromRunDescription(llmc::ParseOutcome outcome,
                                      MLIRContext &context,
                                      const llmc::SourceOptions &options) {
  llmc::LoadedSource loaded;
  if (failed(llmc::reportConfigDiagnostics(context, outcome.diagnostics)) ||
      !outcome.ok())
    return loaded;
  llmc::RunDescription &run = *outcome.description;
  if (options.warnPending)
    warnAboutPendingFields(context, run);
  if (options.batchSize)
    run.train.batchSize = options.batchSize;
  if (options.seqLen)
    run.train.seqLen = options.seqLen;
  // The check [train] seq_len gets in Validate.cpp, for --seq-len too: past
  // max_positions GPT-2 would read position rows that do not exist.
  if (options.seqLen && run.model.family == llmc::ModelFamily::Gpt2 &&
      options.seqLen > run.model.maxPositions) {
    emitError(FileLineColLoc::get(&context, run.path, 0, 0))
        << "expected --seq-len <= max_positions " << run.model.maxPositions
        << " for gpt2, got " << options.seqLen
        << "; pass a smaller --seq-len or raise [model] max_positions (gpt2 "
           "learns one embedding per position)";
    return loaded;
  }
  int64_t micro = options.splitMicrobatches ? run.train.microbatches : 1;
  if (run.train.batchSize % micro != 0) {
    emitError(FileLineColLoc::get(&context, run.path, 0, 0))
        << "expected the batch size " << run.train.batchSize
        << " to be a multiple of microbatches " << micro
        << "; pass a --batch-size that " << micro << " divides";
    return loaded;
  }
  // The classifier's width padded for aligned GEMMs (models/Layers.h,
  // classifier), unless tensor parallelism may split the vocabulary, which
  // the padded head would have to gather first: tp > 1, or a mesh search
  // with an even vocabulary (an odd one admits no power-of-two tp, and a
  // tp must divide it).
  if (run.parallel.tp == 1 &&
      !(run.parallel.autoMesh && run.model.vocabSize % 2 == 0))
    run.model.vocabPadMultiple = llmc::kVocabPadMultiple;
  loaded.module = traceModel(context, run.model, run.train.batchSize / micro,
                             run.train.seqLen, options.maxLayers);
  if (loaded.module) {
    // Errors about the whole program (it does not fit the memory budget)
    // then name the run description.
    Location fileLoc = FileLineColLoc::get(&context, run.path, 0, 0);
    (*loaded.module)->setLoc(fileLoc);
    for (auto function : loaded.module->getOps<func::FuncOp>())
      if (isa<UnknownLoc>(function.getLoc()))
        function->setLoc(fileLoc);
  }
  loaded.description = std::move(run);
  return loaded;
}

} // namespace

llmc::LoadedSource llmc::loadRunDescriptionText(llvm::StringRef text,
                                                llvm::StringRef name,
                                                MLIRContext &context,
                                                const SourceOptions &options) {
  return fromRunDescription(parseRunDescriptionText(text.str(), name.str()),
                            context, options);
}

llmc::LoadedSource llmc::loadSource(llvm::StringRef path, MLIRContext &context,
                                    llvm::SourceMgr &sourceMgr,
                                    const SourceOptions &options) {
  LoadedSource loaded;
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  switch (classifySource(path)) {
  case SourceKind::Mlir: {
    std::string error;
    std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(path, &error);
    if (!buffer) {
      emitError(fileLoc) << "cannot read the input: " << error;
      return loaded;
    }
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    // parseSourceFile verifies the module; errors carry file:line:column.
    loaded.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    return loaded;
  }
  case SourceKind::RunDescription:
    return fromRunDescription(parseRunDescription(path.str()), context,
                              options);
  case SourceKind::HuggingFaceConfig:
  case SourceKind::HuggingFaceFolder: {
    HfOutcome outcome = classifySource(path) == SourceKind::HuggingFaceFolder
                            ? parseHuggingFaceFolder(path.str())
                            : parseHuggingFaceConfig(path.str());
    if (failed(reportConfigDiagnostics(context, outcome.diagnostics)) ||
        !outcome.model)
      return loaded;
    RunDescription run;
    run.path = path.str();
    run.model = *outcome.model;
    run.model.vocabPadMultiple = kVocabPadMultiple; // one device: no tp
    run.train.batchSize = options.batchSize ? options.batchSize : 8;
    int64_t defaultSeq = run.model.maxPositions > 0
                             ? std::min<int64_t>(64, run.model.maxPositions)
                             : 64;
    run.train.seqLen = options.seqLen ? options.seqLen : defaultSeq;
    if (run.model.family == ModelFamily::Gpt2 &&
        run.train.seqLen > run.model.maxPositions) {
      emitError(fileLoc) << "expected a sequence length of at most n_positions "
                         << run.model.maxPositions << ", got "
                         << run.train.seqLen << "; pass a smaller --seq-len";
      return loaded;
    }
    loaded.module = traceModel(context, run.model, run.train.batchSize,
                               run.train.seqLen, options.maxLayers);
    loaded.description = std::move(run);
    return loaded;
  }
  case SourceKind::Unknown:
    emitError(fileLoc) << "cannot tell what '" << path
                       << "' holds from its extension; expected .toml (run "
                          "description), .json (Hugging Face config), a "
                          "Hugging Face model folder or .mlir (llmc IR)";
    return loaded;
  }
  return loaded;
}
