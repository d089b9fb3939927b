//===- Passes.h - declarations and registration of llmc passes ---*- C++ -*-===//
#ifndef LLMC_PASSES_PASSES_H
#define LLMC_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>
#include <vector>

namespace llmc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The optimizer of a training run (the run description's [train]).
struct OptimizerSettings {
  double learningRate = 3e-4;
  double minLearningRate = 0.0;
  int64_t warmupSteps = 0;
  int64_t totalSteps = 100;
  std::string schedule = "cosine"; ///< cosine, linear, constant
  double weightDecay = 0.1;
  bool decayAll = false;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double epsilon = 1e-8;
  double gradClip = 1.0;
};

/// Mixed precision (the run description's [precision], docs/precision.md).
struct PrecisionSettings {
  std::string policy = "fp32"; ///< fp32, bf16, fp16
  /// fp16 only: dynamic loss scaling, starting at this scale.
  double initialLossScale = 65536.0;
  int64_t lossScaleGrowthInterval = 2000;
};

/// Options of the default compile pipeline. Later stages (precision,
/// sharding, ...) add their fields here.
/// The mesh of `[parallel]` that llmc-partition applies (dp x cp x tp; sequence
/// parallelism over tp; ZeRO stage).
struct ParallelSettings {
  int64_t dp = 1;
  int64_t tp = 1;
  int64_t cp = 1;
  int64_t ep = 1; ///< expert parallelism (moe models)
  /// Pipeline stages (llmc-split-pipeline), its schedule ("gpipe", "1f1b",
  /// "interleaved"), model chunks per stage and pinned chunk boundaries
  /// (first layer of each chunk after the first; empty: balanced by cost).
  int64_t pp = 1;
  std::string pipelineSchedule = "1f1b";
  int64_t virtualStages = 1;
  std::vector<int64_t> pipelineBoundaries;
  bool sp = false;
  int64_t zero = 0;
};

struct CompilePipelineOptions {
  /// Build the training step (autodiff, optimizer); false compiles only the
  /// forward program @loss (e.g. a .mlir file without parameters).
  bool training = true;
  /// Gradient accumulation: microbatches per step (llmc-autodiff).
  int64_t microbatches = 1;
  OptimizerSettings optimizer;
  /// Rematerialization ([memory] remat, budget_gib): none, selective, full,
  /// auto; the budget in bytes (0: none).
  std::string remat = "none";
  int64_t memoryBudgetBytes = 0;
  PrecisionSettings precision;
  ParallelSettings parallel;
  /// Run only the first this many passes of compilePipelineStages(); -1
  /// runs the whole pipeline (`llmc compile --emit`).
  int stopAfter = -1;
  /// Print the cost report of every function after the last step.
  bool printCost = false;
  /// Group ops into llmc.fused regions (llmc-fuse, the last step).
  bool fuse = true;
  /// Print llmc-fuse's kernels before/after and bytes removed.
  bool fusionReport = false;
  /// Plan buffers for a backend that runs each elementwise fused region as
  /// one kernel (llmc-plan-buffers fused-kernels=true; the driver sets it
  /// for `[parallel] devices = "cuda"`): those regions' intermediates get
  /// no storage, and the CPU cannot run the program (docs/buffers.md).
  bool fusedKernels = false;
};

/// The pass arguments of the pipeline, in order: the names of the IR dumps
/// (`NN-<name>.mlir`, NN = index + 1) and of `--emit`. A pass may appear
/// twice (canonicalize, cse).
std::vector<std::string> compilePipelineStages(bool training);
/// The same for `options` (the precision policy adds a pass, fusion can be
/// left out).
std::vector<std::string>
compilePipelineStages(const CompilePipelineOptions &options);

/// Builds the default compile pipeline in order (Pipelines.cpp; its steps
/// are listed in docs/passes.md).
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
