//===- Source.h - read what the user asked llmc to compile -------*- C++ -*-===//
//
// The frontend's entry point: turns an input file into a module whose
// @loss function is the forward program. Inputs are
//   .toml  a run description (docs/run-description.md), traced by the
//          built-in model builders;
//   .json  a Hugging Face config.json (gpt2, llama, mixtral);
//   DIR/   a Hugging Face model folder (config.json and the weights);
//   .mlir  a program already written in the llmc dialect.
// Problems are reported as MLIR diagnostics at file:line:column.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_SOURCE_H
#define LLMC_FRONTEND_SOURCE_H

#include "frontend/config/RunDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace llmc {

/// What kind of input a path names: a directory is a Hugging Face model
/// folder, a file is told by its extension.
enum class SourceKind {
  Mlir,
  RunDescription,
  HuggingFaceConfig,
  HuggingFaceFolder,
  Unknown
};

SourceKind classifySource(llvm::StringRef path);

/// Batch shape for inputs that do not carry one (a Hugging Face config.json
/// has no [train] section). Zero keeps the default: 8 sequences of
/// min(64, max_positions) tokens for .json; the [train] values for .toml
/// (which override them in the returned description too). With [train]
/// microbatches M, @loss is traced for batch / M sequences.
struct SourceOptions {
  int64_t batchSize = 0;
  int64_t seqLen = 0;
  /// Warn about fields of a run description that have no effect yet.
  bool warnPending = true;
  /// Trace @loss for one microbatch (batch / [train] microbatches), as the
  /// training step stacks them; false traces the whole batch (a forward
  /// program compiled on its own).
  bool splitMicrobatches = true;
  /// Trace at most this many layers (0: all) while the description keeps
  /// the real count: `llmc inspect` counts the parameters of a deep model
  /// from two shallow traces (its layers are alike).
  int64_t maxLayers = 0;
};

/// A loaded input: the module, and the run description it came from when
/// the input was a .toml or .json file or a model folder.
struct LoadedSource {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::optional<RunDescription> description;
};

/// Loads `path` into a module with a verified @loss function. Diagnostics
/// (a missing file, a bad key, a parse or verifier error) go to the
/// context's handler; returns a null module on failure. Fields of a run
/// description that have no effect yet are reported as warnings.
/// `sourceMgr` keeps the input buffer alive for later diagnostics.
LoadedSource loadSource(llvm::StringRef path, mlir::MLIRContext &context,
                        llvm::SourceMgr &sourceMgr,
                        const SourceOptions &options = {});

/// Loads a run description given as TOML text (the built-in default run of
/// `llmc train`); `name` stands for its path in messages and relative paths
/// start from name's directory.
LoadedSource loadRunDescriptionText(llvm::StringRef text, llvm::StringRef name,
                                    mlir::MLIRContext &context,
                                    const SourceOptions &options = {});

/// Reports parser diagnostics through MLIR's diagnostic engine, at
/// FileLineColLoc locations. Returns failure if any is an error.
mlir::LogicalResult
reportConfigDiagnostics(mlir::MLIRContext &context,
                        llvm::ArrayRef<ConfigDiagnostic> diagnostics);

} // namespace llmc

#endif // LLMC_FRONTEND_SOURCE_H
