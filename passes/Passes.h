//===- Passes.h - declarations and registration of llmc passes ---*- C++ -*-===//
#ifndef LLMC_PASSES_PASSES_H
#define LLMC_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

namespace llmc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Options of the default compile pipeline. Later stages (autodiff,
/// precision, sharding, ...) add their fields here.
struct CompilePipelineOptions {
  /// Print the cost report of every function after the last step.
  bool printCost = false;
};

/// Builds the default pipeline of DESIGN.md in order (see Pipelines.cpp for
/// which steps exist today).
void buildCompilePipeline(mlir::OpPassManager &pm,
                          const CompilePipelineOptions &options);

/// Makes `pm` write the module to `directory/NN-<pass>.mlir` after every
/// top-level pass (NN counts from 01; write the input as 00-input.mlir with
/// dumpModule first). The directory is created if missing. Returns failure,
/// with a diagnostic on `context`, if it cannot be created.
mlir::LogicalResult enableIrDumps(mlir::PassManager &pm,
                                  llvm::StringRef directory);

/// Writes `module` to `path`, reporting failures as diagnostics.
mlir::LogicalResult dumpModule(mlir::Operation *module, llvm::StringRef path);

/// Registers every llmc pass and the `llmc-compile` pipeline with the
/// global registry, for llmc-opt.
void registerLlmcPassesAndPipelines();

} // namespace llmc

#endif // LLMC_PASSES_PASSES_H
