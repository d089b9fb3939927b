//===- Pipelines.cpp - the default llmc compile pipeline ------------------===//
//
// The one place where passes are put in order. DESIGN.md lists the full
// pipeline; the steps that exist today are numbered below, and each later
// issue inserts its pass at its place.
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
  if (options.training) {
    // 2. The training step: gradients (with microbatch accumulation), then
    //    the AdamW update with the schedule; then tidy what they built.
    list.push_back({"llmc-autodiff", [options] {
                      llmc::AutodiffPassOptions autodiff;
                      autodiff.microbatches = options.microbatches;
                      return llmc::createAutodiffPass(autodiff);
                    }});
    list.push_back({"llmc-optimizer", [options] {
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
                      return llmc::createOptimizerPass(adam);
                    }});
    list.push_back({"canonicalize", [] { return createCanonicalizerPass(); }});
    list.push_back({"cse", [] { return createCSEPass(); }});
  }
  // 3. precision (#6); 4.-6. sharding, partition, pipeline (#8, #10);
  //    7.-9. remat, fusion, schedule (#6): not yet written.
  // 10. The buffer plan, last: every tensor's offset in one arena.
  list.push_back({"llmc-plan-buffers", [] { return llmc::createPlanBuffersPass(); }});
  return list;
}
} // namespace

std::vector<std::string> llmc::compilePipelineStages(bool training) {
  CompilePipelineOptions options;
  options.training = training;
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
  Option<bool> printCost{*this, "print-cost",
                         llvm::cl::desc("Print the cost report at the end"),
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
