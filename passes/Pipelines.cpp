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

using namespace mlir;

void llmc::buildCompilePipeline(OpPassManager &pm,
                                const CompilePipelineOptions &options) {
  // 1. Normalize the traced program: fold constants, reshapes and no-op
  //    casts, and merge duplicate values.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // 2. autodiff, optimizer (issue #5); 3. precision (#6); 4.-6. sharding,
  //    partition, pipeline (#8, #10); 7.-10. remat, fusion, schedule, buffers
  //    (#6): not yet written.
  if (options.printCost)
    pm.addPass(createPrintCostPass());
}

namespace {
struct PipelineCliOptions
    : public PassPipelineOptions<PipelineCliOptions> {
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
