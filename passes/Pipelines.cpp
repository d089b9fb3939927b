//===- Pipelines.cpp - the default llmc compile pipeline ------------------===//
//
// The one place where passes are put in order. The steps are numbered
// below as docs/passes.md lists them; a new pass is inserted at its place
// here and in that table.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

using namespace mlir;

namespace {
/// One step of the pipeline: the pass argument `--emit` names it by, and
/// how to add it.
struct Stage {
  std::string name;
  std::function<std::unique_ptr<Pass>()> create;
};

std::vector<Stage> stages(const llmc::CompilePipelineOptions &options) {
  std::vector<Stage> list;
  // 1. Normalize the traced program: fold constants, reshapes and no-op
  //    casts, and merge duplicate values.
  list.push_back({"canonicalize", [] { return createCanonicalizerPass(); }});
  list.push_back({"cse", [] { return createCSEPass(); }});
  // 2. Mixed precision on the forward program, before autodiff, so that the
  //    backward follows the casts (docs/precision.md says why it is not
  //    after the optimizer).
  const llmc::PrecisionSettings &precision = options.precision;
  bool lossScaling = options.training && precision.policy == "fp16";
  if (precision.policy != "fp32")
    list.push_back({"llmc-assign-precision", [precision] {
                      llmc::AssignPrecisionPassOptions assign;
                      assign.policy = precision.policy;
                      return llmc::createAssignPrecisionPass(assign);
                    }});
  if (options.training) {
    // 3. The training step: gradients (with microbatch accumulation and,
    //    for fp16, the loss scale in the seed), then the AdamW update with
    //    the schedule (and the loss-scale update); then tidy what they built.
    list.push_back({"llmc-autodiff", [options, lossScaling] {
                      llmc::AutodiffPassOptions autodiff;
                      autodiff.microbatches = options.microbatches;
                      if (lossScaling)
                        autodiff.lossScale = options.precision.initialLossScale;
                      return llmc::createAutodiffPass(autodiff);
                    }});
    list.push_back({"llmc-optimizer", [options, lossScaling] {
                      const llmc::OptimizerSettings &o = options.optimizer;
                      llmc::OptimizerPassOptions adam;
                      adam.learningRate = o.learningRate;
                      adam.minLearningRate = o.minLearningRate;
                      adam.warmupSteps = o.warmupSteps;
                      adam.totalSteps = o.totalSteps;
                      adam.schedule = o.schedule;
                      adam.weightDecay = o.weightDecay;
                      adam.decayAll = o.decayAll;
                      adam.beta1 = o.beta1;
                      adam.beta2 = o.beta2;
                      adam.epsilon = o.epsilon;
                      adam.gradClip = o.gradClip;
                      adam.lossScaling = lossScaling;
                      adam.growthInterval =
                          options.precision.lossScaleGrowthInterval;
                      return llmc::createOptimizerPass(adam);
                    }});
  }
  // fp8: the linear layers' llmc.fp8_matmul become their explicit amax,
  // scaled casts and FP8 products, after autodiff built the backward's
  // (docs/precision.md, "FP8"); CSE then merges the scales and casts that
  // forward and backward share.
  if (precision.policy == "fp8")
    list.push_back({"llmc-expand-fp8-matmul",
                    [] { return llmc::createExpandFp8MatmulPass(); }});
  if (options.training || precision.policy == "fp8") {
    list.push_back({"canonicalize", [] { return createCanonicalizerPass(); }});
    list.push_back({"cse", [] { return createCSEPass(); }});
  }
  // 4. The strategy's mesh: one SPMD program per rank, with the
  //    collectives each parallelism needs (docs/sharding.md); then drop
  //    what the local program no longer reads.
  const llmc::ParallelSettings &parallel = options.parallel;
  if (options.training && parallel.dp * parallel.tp * parallel.cp * parallel.ep * parallel.pp > 1) {
    int64_t microbatches = options.microbatches;
    list.push_back({"llmc-partition", [parallel, microbatches] {
                      llmc::PartitionPassOptions partition;
                      partition.dp = parallel.dp;
                      partition.tp = parallel.tp;
                      partition.cp = parallel.cp;
                      partition.ep = parallel.ep;
                      partition.pp = parallel.pp;
                      partition.sp = parallel.sp;
                      partition.zero = parallel.zero;
                      partition.microbatches = microbatches;
                      return llmc::createPartitionPass(partition);
                    }});
    list.push_back({"canonicalize", [] { return createCanonicalizerPass(); }});
  }
  // 5. Recompute activations in backward instead of keeping them.
  if (options.training && options.remat != "none")
    list.push_back({"llmc-remat", [options] {
                      llmc::RematPassOptions remat;
                      remat.policy = options.remat;
                      remat.budgetBytes = options.memoryBudgetBytes;
                      remat.fuseAfter = options.fuse;
                      return llmc::createRematPass(remat);
                    }});
  // 6. Pipeline stages and their schedule (docs/sharding.md): after remat
  //    (which sees the whole step), before fusion (which keeps each region
  //    on one stage).
  if (options.training && parallel.pp > 1) {
    int64_t microbatches = options.microbatches;
    list.push_back({"llmc-split-pipeline", [parallel, microbatches] {
                      llmc::SplitPipelinePassOptions split;
                      split.stages = parallel.pp;
                      split.schedule = parallel.pipelineSchedule;
                      split.virtualStages = parallel.virtualStages;
                      split.microbatches = microbatches;
                      split.boundaries.assign(
                          parallel.pipelineBoundaries.begin(),
                          parallel.pipelineBoundaries.end());
                      return llmc::createSplitPipelinePass(split);
                    }});
  }
  // 7. The loss gradient reads the forward's log-sum-exp (after
  //    partitioning and remat, which see the plain ops).
  if (options.training)
    list.push_back({"llmc-share-loss-statistics",
                    [] { return llmc::createShareLossStatisticsPass(); }});
  // 8. fp8: a cast whose codes are also transposed writes both layouts in
  //    one pass (on each rank's local program, after the passes that move
  //    or copy casts); then fusion: attention reads q, k, v in place (no transposes, slices or
  //    concat around it), then the groups of ops that become one kernel
  //    (docs/fusion.md).
  if (precision.policy == "fp8")
    list.push_back({"llmc-pair-fp8-transposes",
                    [] { return llmc::createPairFp8TransposesPass(); }});
  if (options.fuse)
    list.push_back({"llmc-fold-attention-layout",
                    [] { return llmc::createFoldAttentionLayoutPass(); }});
  if (options.fuse)
    list.push_back({"llmc-fuse", [options] {
                      llmc::FusePassOptions fuse;
                      fuse.report = options.fusionReport;
                      return llmc::createFusePass(fuse);
                    }});
  // (A schedule step that orders ops for overlap would come here: not
  //  written yet, docs/passes.md.)
  // 9. The buffer plan, last: every tensor's offset in one arena (for a
  //    backend of fused kernels, no storage for elementwise regions'
  //    intermediates: docs/buffers.md).
  list.push_back({"llmc-plan-buffers", [options] {
                    llmc::PlanBuffersPassOptions plan;
                    plan.budgetBytes = options.memoryBudgetBytes;
                    plan.fusedKernels = options.fusedKernels;
                    return llmc::createPlanBuffersPass(plan);
                  }});
  return list;
}
} // namespace

std::vector<std::string> llmc::compilePipelineStages(bool training) {
  CompilePipelineOptions options;
  options.training = training;
  return compilePipelineStages(options);
}

std::vector<std::string>
llmc::compilePipelineStages(const CompilePipelineOptions &options) {
  std::vector<std::string> names;
  for (const Stage &stage : stages(options))
    names.push_back(stage.name);
  return names;
}

void llmc::buildCompilePipeline(OpPassManager &pm,
                                const CompilePipelineOptions &options) {
  int index = 0;
  for (const Stage &stage : stages(options)) {
    if (options.stopAfter >= 0 && index++ >= options.stopAfter)
      break;
    pm.addPass(stage.create());
  }
  if (options.printCost)
    pm.addPass(createPrintCostPass());
}

namespace {
struct PipelineCliOptions
    : public PassPipelineOptions<PipelineCliOptions> {
  Option<bool> training{*this, "training",
                        llvm::cl::desc("Build the training step (autodiff, "
                                       "optimizer)"),
                        llvm::cl::init(false)};
  Option<int64_t> microbatches{*this, "microbatches",
                               llvm::cl::desc("Gradient accumulation steps"),
                               llvm::cl::init(1)};
  Option<std::string> precision{*this, "precision",
                                llvm::cl::desc("fp32, bf16, fp16 or fp8"),
                                llvm::cl::init("fp32")};
  Option<bool> printCost{*this, "print-cost",
                         llvm::cl::desc("Print the cost report at the end"),
                         llvm::cl::init(false)};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Group ops into llmc.fused regions "
                                   "(llmc-fuse)"),
                    llvm::cl::init(true)};
  Option<bool> fusionReport{*this, "fusion-report",
                            llvm::cl::desc("Print kernels before/after "
                                           "fusion and the bytes removed"),
                            llvm::cl::init(false)};
  Option<bool> fusedKernels{*this, "fused-kernels",
                            llvm::cl::desc("Plan buffers for a backend that "
                                           "runs each elementwise region as "
                                           "one kernel (CUDA)"),
                            llvm::cl::init(false)};
};
} // namespace

void llmc::registerLlmcPassesAndPipelines() {
  registerLlmcPasses();
  PassPipelineRegistration<PipelineCliOptions>(
      "llmc-compile", "The default llmc compile pipeline (see Pipelines.cpp)",
      [](OpPassManager &pm, const PipelineCliOptions &cli) {
        CompilePipelineOptions options;
        options.training = cli.training;
        options.microbatches = cli.microbatches;
        options.printCost = cli.printCost;
        options.precision.policy = cli.precision;
        options.fuse = cli.fuse;
        options.fusionReport = cli.fusionReport;
        options.fusedKernels = cli.fusedKernels;
        buildCompilePipeline(pm, options);
      });
}

//===----------------------------------------------------------------------===//
// IR dumps after every pass (llmc compile --dump-ir=DIR)
//===----------------------------------------------------------------------===//

LogicalResult llmc::dumpModule(Operation *module, llvm::StringRef path) {
  std::error_code error;
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return module->emitError() << "cannot write the IR dump '" << path
                               << "': " << error.message();
  module->print(os, OpPrintingFlags().enableDebugInfo(/*enable=*/true,
                                                      /*prettyForm=*/false));
  return success();
}

namespace {
/// Writes the module after every top-level pass. Passes nested under a
/// function are reported by their adaptor, so each file is a whole module.
class DumpIrInstrumentation : public PassInstrumentation {
public:
  explicit DumpIrInstrumentation(std::string directory)
      : directory(std::move(directory)) {}

  void runAfterPass(Pass *pass, Operation *op) override {
    if (!isa<ModuleOp>(op))
      return;
    std::string name = pass->getArgument().str();
    if (name.empty())
      name = pass->getName().str();
    llvm::SmallString<128> path(directory);
    llvm::sys::path::append(path,
                            llvm::formatv("{0:02}-{1}.mlir", ++count, name)
                                .str());
    // A failed write is reported as an error diagnostic on the module; the
    // tool turns it into a non-zero exit.
    (void)llmc::dumpModule(op, path);
  }

private:
  std::string directory;
  unsigned count = 0;
};
} // namespace

LogicalResult llmc::enableIrDumps(PassManager &pm, llvm::StringRef directory) {
  if (std::error_code error = llvm::sys::fs::create_directories(directory))
    return emitError(UnknownLoc::get(pm.getContext()))
           << "cannot create the IR dump directory '" << directory
           << "': " << error.message();
  pm.addInstrumentation(
      std::make_unique<DumpIrInstrumentation>(directory.str()));
  return success();
}
