//===- llmc.cpp - the llmc command line -----------------------------------===//
//
//   llmc compile FILE   trace a model and print its IR (before or after the
//                       pipeline), dump the IR after every pass
//   llmc inspect FILE   the model's parameters, by group and in total
//   llmc train FILE     train (issue #5)
//   llmc plan FILE      memory/communication/time estimates (issue #11)
//
// FILE is a run description (.toml), a Hugging Face config.json, or llmc IR
// (.mlir). Exit codes: 0 success, 1 the input was rejected (diagnostics
// printed), 2 bad usage or a subcommand that does not exist yet.
//
//===----------------------------------------------------------------------===//

#include "codegen/BuildExecutable.h"
#include "frontend/Parameters.h"
#include "frontend/Source.h"
#include "ir/Registration.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

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

enum class Emit { Loss, Final };

/// Options of `llmc compile`.
struct CompileCommand {
  cl::SubCommand command{
      "compile",
      "Trace a model and print its IR.\n"
      "  FILE is a run description (.toml), a Hugging Face config.json, or\n"
      "  llmc IR (.mlir)."};
  cl::opt<std::string> input{cl::Positional, cl::desc("<input.toml|.json|.mlir>"),
                             cl::Required, cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<Emit> emit{
      "emit", cl::desc("Which program to print"), cl::init(Emit::Final),
      cl::values(
          clEnumValN(Emit::Loss, "loss",
                     "the traced forward program @loss, before any pass"),
          clEnumValN(Emit::Final, "final",
                     "the program after the whole pipeline (default)")),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> output{"o",
                              cl::desc("Write the IR here (default: standard "
                                       "output); a name ending in .llmcx gets "
                                       "the compiled Executable instead"),
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
  cl::opt<bool> quiet{"quiet", cl::desc("Do not print the IR"),
                      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> batchSize{
      "batch-size",
      cl::desc("Sequences per batch (default: [train] batch_size; 8 for "
               ".json)"),
      cl::init(0), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> seqLen{
      "seq-len",
      cl::desc("Tokens per sequence (default: [train] seq_len; 64 for "
               ".json)"),
      cl::init(0), cl::sub(command), cl::cat(llmcCategory())};
};

/// Options of `llmc inspect`.
struct InspectCommand {
  cl::SubCommand command{
      "inspect", "Print a model's parameters by group and in total.\n"
                 "  FILE is a run description (.toml), a Hugging Face "
                 "config.json, or llmc IR (.mlir).\n"
                 "  A compiled Executable (.llmcx): its argument and output tables."};
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<input.toml|.json|.mlir>"),
                             cl::Required, cl::sub(command),
                             cl::cat(llmcCategory())};
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
                 << "). What works today: llmc compile FILE, llmc inspect "
                    "FILE\n";
    return kExitUsage;
  }
};

/// A context with every dialect llmc programs use, diagnostics printed with
/// the source line and a caret.
struct Session {
  Session() : context(makeRegistry()), diagnostics(sourceMgr, &context) {
    context.loadAllAvailableDialects();
    // The source line and caret say where; the generic op dump adds noise.
    context.printOpOnDiagnostic(false);
    // A diagnostic about a whole file (line 0: missing, unreadable) prints
    // as "path: error: message" rather than "path:0:0: error: message".
    wholeFileHandler = context.getDiagEngine().registerHandler(
        [](mlir::Diagnostic &diag) -> mlir::LogicalResult {
          auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(diag.getLocation());
          if (!loc || loc.getLine() != 0)
            return mlir::failure(); // not ours: the SourceMgr handler prints it
          const char *severity =
              diag.getSeverity() == mlir::DiagnosticSeverity::Error ? "error"
              : diag.getSeverity() == mlir::DiagnosticSeverity::Warning
                  ? "warning"
                  : "note";
          llvm::errs() << loc.getFilename().getValue() << ": " << severity
                       << ": " << diag.str() << "\n";
          return mlir::success();
        });
  }
  ~Session() { context.getDiagEngine().eraseHandler(wholeFileHandler); }
  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    return registry;
  }
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics;
  mlir::DiagnosticEngine::HandlerID wholeFileHandler = 0;
};

int writeModule(mlir::ModuleOp module, const CompileCommand &options) {
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
  module.print(out->os(), flags);
  out->keep();
  return kExitOk;
}

bool wantsExecutable(llvm::StringRef path) { return path.ends_with(".llmcx"); }

int writeExecutable(mlir::ModuleOp module, const CompileCommand &options) {
  llmc::CodegenOptions codegen;
  codegen.source = options.input;
  mlir::FailureOr<llmc::rt::Executable> exe =
      llmc::buildExecutable(module, codegen);
  if (mlir::failed(exe))
    return kExitRejected;
  if (llmc::rt::Status status =
          llmc::rt::writeExecutable(*exe, options.output);
      !status) {
    llvm::errs() << options.output << ": error: " << status.message() << "\n";
    return kExitRejected;
  }
  const llmc::rt::RankProgram &rank = exe->ranks.front();
  llvm::errs() << "wrote " << options.output << ": " << exe->arguments.size()
               << " arguments, " << rank.commands.size() << " commands, "
               << rank.arenaBytes << " bytes of buffers\n";
  return kExitOk;
}

int runCompile(const CompileCommand &options) {
  Session session;
  llmc::SourceOptions sourceOptions;
  sourceOptions.batchSize = options.batchSize;
  sourceOptions.seqLen = options.seqLen;
  llmc::LoadedSource loaded = llmc::loadSource(
      options.input, session.context, session.sourceMgr, sourceOptions);
  if (!loaded.module)
    return kExitRejected;
  mlir::ModuleOp module = *loaded.module;

  mlir::PassManager pm(&session.context);
  if (!options.dumpIr.empty()) {
    llvm::SmallString<128> inputPath(options.dumpIr.getValue());
    llvm::sys::path::append(inputPath, "00-input.mlir");
    if (mlir::failed(llmc::enableIrDumps(pm, options.dumpIr)) ||
        mlir::failed(llmc::dumpModule(module, inputPath)))
      return kExitRejected;
  }
  if (options.emit == Emit::Loss) {
    if (wantsExecutable(options.output)) {
      llvm::errs() << "llmc compile: --emit=loss prints IR; an executable "
                      "(-o FILE.llmcx) is compiled from the final program\n";
      return kExitUsage;
    }
    if (options.printCost) {
      mlir::PassManager costOnly(&session.context);
      costOnly.addPass(llmc::createPrintCostPass());
      if (mlir::failed(costOnly.run(module)))
        return kExitRejected;
    }
    return writeModule(module, options);
  }
  llmc::CompilePipelineOptions pipelineOptions;
  pipelineOptions.printCost = options.printCost;
  llmc::buildCompilePipeline(pm, pipelineOptions);
  if (mlir::failed(pm.run(module)))
    return kExitRejected;
  if (wantsExecutable(options.output))
    return writeExecutable(module, options);
  return writeModule(module, options);
}

/// 124439808 -> "124,439,808".
std::string withThousands(int64_t value) {
  std::string digits = std::to_string(value);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      text += ',';
    text += digits[i];
  }
  return text;
}

/// `llmc inspect model.llmcx`: the tables of a compiled Executable.
int inspectExecutable(const std::string &path) {
  llmc::rt::Executable exe;
  if (llmc::rt::Status status = llmc::rt::readExecutable(path, exe); !status) {
    llvm::errs() << path << ": error: " << status.message() << "\n";
    return kExitRejected;
  }
  llvm::raw_ostream &os = llvm::outs();
  os << "executable " << path << " (format " << exe.version << ", by "
     << exe.producer << ", from " << exe.source << ")\n";
  const llmc::rt::RankProgram &rank = exe.ranks.front();
  size_t width = std::string("output").size();
  for (const llmc::rt::ArgumentInfo &arg : exe.arguments)
    width = std::max(width, arg.name.size());
  auto row = [&](llvm::StringRef role, llvm::StringRef name, int32_t slot) {
    const llmc::rt::ValueInfo &value = rank.values[slot];
    os << "  " << llvm::left_justify(role, 9) << " "
       << llvm::left_justify(name, width) << "  "
       << llmc::rt::dtypeName(value.dtype)
       << llmc::rt::formatShape(value.shape) << "\n";
  };
  for (const llmc::rt::ArgumentInfo &arg : exe.arguments)
    row(arg.role == llmc::rt::ArgumentRole::Parameter ? "parameter" : "input",
        arg.name, arg.value);
  for (const llmc::rt::OutputInfo &out : exe.outputs)
    row("output", out.name, out.value);
  os << "  " << exe.ranks.size() << " rank(s); rank 0: " << rank.commands.size()
     << " commands, " << rank.values.size() << " values, "
     << rank.constants.size() << " constants, " << withThousands(rank.arenaBytes)
     << " bytes of buffers\n";
  return kExitOk;
}

int runInspect(const InspectCommand &options) {
  if (llvm::StringRef(options.input).ends_with(".llmcx"))
    return inspectExecutable(options.input);
  Session session;
  // The parameters depend only on the model: training settings that have
  // no effect yet are not worth a warning here.
  llmc::SourceOptions sourceOptions;
  sourceOptions.warnPending = false;
  llmc::LoadedSource loaded = llmc::loadSource(
      options.input, session.context, session.sourceMgr, sourceOptions);
  if (!loaded.module)
    return kExitRejected;
  auto function = loaded.module->lookupSymbol<mlir::func::FuncOp>("loss");
  if (!function) {
    llvm::errs() << options.input
                 << ": error: expected a function @loss to inspect\n";
    return kExitRejected;
  }
  llmc::ParameterSummary summary = llmc::summarizeParameters(function);
  llvm::raw_ostream &os = llvm::outs();
  os << "parameters of " << options.input;
  if (loaded.description)
    os << " (" << llmc::modelFamilyName(loaded.description->model.family)
       << ")";
  os << "\n";
  size_t width = std::string("total").size();
  for (const llmc::ParameterGroup &group : summary.groups)
    width = std::max(width, group.name.size());
  auto row = [&](llvm::StringRef name, llvm::StringRef tensors,
                 llvm::StringRef elements) {
    os << "  " << llvm::left_justify(name, width) << "  "
       << llvm::right_justify(tensors, 7) << "  "
       << llvm::right_justify(elements, 15) << "\n";
  };
  row("group", "tensors", "parameters");
  for (const llmc::ParameterGroup &group : summary.groups)
    row(group.name, std::to_string(group.tensors),
        withThousands(group.elements));
  row("total", std::to_string(summary.tensors),
      withThousands(summary.elements));
  return kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);

  CompileCommand compile;
  InspectCommand inspect;
  PendingCommand train(
      "train", "Train a model from a run description (not implemented yet: "
               "issue #5)",
      "#5");
  PendingCommand plan("plan",
                      "Estimate memory, communication and step time of "
                      "meshes (not implemented yet: issue #11)",
                      "#11");

  // Show only llmc's options in --help, not those libLLVM registers.
  cl::HideUnrelatedOptions(llmcCategory());
  for (cl::SubCommand *sub :
       {&compile.command, &inspect.command, &train.command, &plan.command})
    cl::HideUnrelatedOptions(llmcCategory(), *sub);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "llmc: compile and train language models\n\n"
          "  llmc compile FILE [--emit=loss|final] [--dump-ir=DIR] "
          "[--print-cost]\n"
          "  llmc inspect FILE\n"
          "  llmc train | plan   (not implemented yet)\n\n"
          "  FILE: a run description (.toml), a Hugging Face config.json, or\n"
          "  llmc IR (.mlir). llmc SUBCOMMAND --help shows the options of one "
          "subcommand.\n",
          &llvm::errs()))
    return kExitUsage;

  if (compile.command)
    return runCompile(compile);
  if (inspect.command)
    return runInspect(inspect);
  for (const PendingCommand *pending : {&train, &plan})
    if (pending->command)
      return pending->run();

  llvm::errs() << "llmc: expected a subcommand (compile, inspect, train, "
                  "plan); see llmc --help\n";
  return kExitUsage;
}
