//===- llmc.cpp - the llmc command line -----------------------------------===//
//
//   llmc compile FILE   compile a model and print or dump its IR
//   llmc train FILE     train (issue #5)
//   llmc plan FILE      memory/communication/time estimates (issue #11)
//   llmc inspect FILE   describe a compiled artifact (issue #4)
//
// Exit codes: 0 success, 1 the input was rejected (diagnostics printed),
// 2 bad usage or a subcommand that does not exist yet.
//
//===----------------------------------------------------------------------===//

#include "frontend/Source.h"
#include "ir/Registration.h"
#include "passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace cl = llvm::cl;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitRejected = 1;
constexpr int kExitUsage = 2;

/// The category of every llmc option, so that --help hides libLLVM's.
cl::OptionCategory &llmcCategory() {
  static cl::OptionCategory category("llmc options");
  return category;
}

/// Options of `llmc compile`.
struct CompileCommand {
  cl::SubCommand command{
      "compile", "Compile a model and print its IR after the pipeline.\n"
                 "  Today the input is a .mlir file in the llmc dialect (see "
                 "examples/); run descriptions (.toml) arrive with issue #3."};
  cl::opt<std::string> input{cl::Positional, cl::desc("<input.mlir>"),
                             cl::Required, cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> output{"o", cl::desc("Write the final IR here "
                                            "(default: standard output)"),
                              cl::value_desc("file"), cl::init("-"),
                              cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> dumpIr{
      "dump-ir",
      cl::desc("Write DIR/00-input.mlir and DIR/NN-<pass>.mlir after every "
               "pass"),
      cl::value_desc("DIR"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> printCost{
      "print-cost",
      cl::desc("Print the flops and bytes of every op (llmc-print-cost)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> locations{
      "locations",
      cl::desc("Print each op's location (the model part it comes from)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> quiet{"quiet", cl::desc("Do not print the final IR"),
                      cl::sub(command), cl::cat(llmcCategory())};
};

/// A subcommand that a later issue implements: it parses its input so that
/// `--help` works, then says plainly that it does not exist yet.
struct PendingCommand {
  PendingCommand(const char *name, const char *description, const char *issue)
      : command(name, description), issue(issue) {}
  cl::SubCommand command;
  cl::list<std::string> inputs{cl::Positional, cl::desc("<input>..."),
                               cl::sub(command), cl::cat(llmcCategory())};
  const char *issue;

  int run() const {
    llvm::errs() << "llmc " << command.getName()
                 << ": not implemented yet (issue " << issue
                 << "). What works today: llmc compile FILE.mlir\n";
    return kExitUsage;
  }
};

int runCompile(const CompileCommand &options) {
  mlir::DialectRegistry registry;
  llmc::registerLlmcDialects(registry);
  mlir::MLIRContext context(registry);
  // The source line and caret say where; the generic op dump adds noise.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();

  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      llmc::loadSource(options.input, context, sourceMgr);
  if (!module)
    return kExitRejected;

  mlir::PassManager pm(&context);
  if (!options.dumpIr.empty()) {
    llvm::SmallString<128> inputPath(options.dumpIr.getValue());
    llvm::sys::path::append(inputPath, "00-input.mlir");
    if (mlir::failed(llmc::enableIrDumps(pm, options.dumpIr)) ||
        mlir::failed(llmc::dumpModule(*module, inputPath)))
      return kExitRejected;
  }
  llmc::CompilePipelineOptions pipelineOptions;
  pipelineOptions.printCost = options.printCost;
  llmc::buildCompilePipeline(pm, pipelineOptions);
  if (mlir::failed(pm.run(*module)))
    return kExitRejected;

  if (options.quiet)
    return kExitOk;
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out =
      mlir::openOutputFile(options.output, &error);
  if (!out) {
    llvm::errs() << "llmc compile: cannot write '" << options.output
                 << "': " << error << "\n";
    return kExitRejected;
  }
  mlir::OpPrintingFlags flags;
  // Local scope prints each location inline, next to its op, instead of as
  // an alias defined at the end of the file.
  if (options.locations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false)
        .useLocalScope();
  module->print(out->os(), flags);
  out->keep();
  return kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);

  CompileCommand compile;
  PendingCommand train(
      "train", "Train a model from a run description (not implemented yet: "
               "issue #5)",
      "#5");
  PendingCommand plan("plan",
                      "Estimate memory, communication and step time of "
                      "meshes (not implemented yet: issue #11)",
                      "#11");
  PendingCommand inspect("inspect",
                         "Describe a compiled artifact (not implemented yet: "
                         "issue #4)",
                         "#4");

  // Show only llmc's options in --help, not those libLLVM registers.
  cl::HideUnrelatedOptions(llmcCategory());
  for (cl::SubCommand *sub : {&compile.command, &train.command, &plan.command,
                              &inspect.command})
    cl::HideUnrelatedOptions(llmcCategory(), *sub);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "llmc: compile and train language models\n\n"
          "  llmc compile FILE.mlir [--dump-ir=DIR] [--print-cost]\n"
          "  llmc train | plan | inspect   (not implemented yet)\n\n"
          "  llmc SUBCOMMAND --help shows the options of one subcommand.\n",
          &llvm::errs()))
    return kExitUsage;

  if (compile.command)
    return runCompile(compile);
  for (const PendingCommand *pending : {&train, &plan, &inspect})
    if (pending->command)
      return pending->run();

  llvm::errs() << "llmc: expected a subcommand (compile, train, plan, "
                  "inspect); see llmc --help\n";
  return kExitUsage;
}
