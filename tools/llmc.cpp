//===- llmc.cpp - the llmc command line -----------------------------------===//
//
//   llmc compile FILE   trace a model and print its IR (before or after the
//                       pipeline), dump the IR after every pass
//   llmc inspect FILE   the model's parameters, by group and in total
//   llmc train [FILE]   compile and train; with no FILE, a small model on the
//                       built-in corpus (the README's main job)
//   llmc plan FILE      memory/communication/time estimates (issue #11)
//
// FILE is a run description (.toml), a Hugging Face config.json, or llmc IR
// (.mlir). Exit codes: 0 success, 1 the input was rejected (diagnostics
// printed), 2 bad usage or a subcommand that does not exist yet.
//
//===----------------------------------------------------------------------===//

#include "codegen/BuildExecutable.h"
#include "ir/BufferPlan.h"
#include "ir/LlmcOps.h"
#include "frontend/Parameters.h"
#include "frontend/Source.h"
#include "frontend/models/Models.h"
#include "ir/Registration.h"
#include "passes/Passes.h"
#include "runtime/train/Trainer.h"
#ifdef LLMC_HAVE_CUDA
#include "runtime/cuda/CudaSession.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
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
  cl::opt<std::string> emit{
      "emit",
      cl::desc("Stop after this stage: loss (the traced forward program, "
               "before any pass), a pass of the pipeline by name (its first "
               "run: canonicalize, cse, llmc-autodiff, llmc-optimizer) or by "
               "its dump's name (05-canonicalize), or final (default)"),
      cl::value_desc("stage"), cl::init("final"), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<bool> forward{
      "forward",
      cl::desc("Compile only the forward program @loss (no autodiff, no "
               "optimizer)"),
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
  cl::opt<bool> noFuse{
      "no-fuse",
      cl::desc("Leave out llmc-fuse: every op stays its own kernel"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> fusionReport{
      "fusion-report",
      cl::desc("Print kernels before/after fusion and the device-memory "
               "bytes it removes"),
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

/// Options of `llmc train`.
struct TrainCommand {
  cl::SubCommand command{
      "train",
      "Compile a run description and train it on this machine (the CPU).\n"
      "  With no FILE: a small GPT on the built-in corpus, ending with a\n"
      "  generated sample. The loop is the runtime's: `llmc compile FILE -o\n"
      "  run.llmcx` and `llmc-run run.llmcx` train the same way."};
  cl::opt<std::string> input{cl::Positional, cl::desc("[<run.toml|config.json>]"),
                             cl::init(""), cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<std::string> metrics{"metrics",
                               cl::desc("Write one JSON line per step here"),
                               cl::value_desc("file"), cl::sub(command),
                               cl::cat(llmcCategory())};
  cl::opt<std::string> resume{
      "resume",
      cl::desc("Continue from a checkpoint (a step-N directory, or the "
               "[checkpoint] dir: its latest)"),
      cl::value_desc("dir"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> weights{
      "weights", cl::desc("Start from these parameters (safetensors, Hugging "
                          "Face names) instead of the initializers"),
      cl::value_desc("file"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> data{"data",
                            cl::desc("Train on this file instead of [data] "
                                     "path (format from [data] format)"),
                            cl::value_desc("file"), cl::sub(command),
                            cl::cat(llmcCategory())};
  cl::opt<std::string> checkpointDir{
      "checkpoint-dir", cl::desc("Save checkpoints here instead of "
                                 "[checkpoint] dir"),
      cl::value_desc("dir"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> steps{"steps",
                         cl::desc("Stop after this step (the schedule still "
                                  "spans [train] steps)"),
                         cl::init(0), cl::sub(command),
                         cl::cat(llmcCategory())};
  cl::opt<int64_t> sampleTokens{
      "sample-tokens",
      cl::desc("Tokens of the sample printed at the end (default: 300 for "
               "the built-in run, else 0)"),
      cl::init(-1), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<unsigned> threads{"threads",
                            cl::desc("CPU threads (default: every core)"),
                            cl::init(0), cl::sub(command),
                            cl::cat(llmcCategory())};
  cl::opt<std::string> device{
      "device",
      cl::desc("Where to train: cpu, cuda or auto (default: [parallel] "
               "devices)"),
      cl::value_desc("cpu|cuda|auto"), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<std::string> output{
      "o", cl::desc("Also write the compiled training artifact here"),
      cl::value_desc("file.llmcx"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> dumpIr{
      "dump-ir",
      cl::desc("Write DIR/00-input.mlir and DIR/NN-<pass>.mlir after every "
               "pass"),
      cl::value_desc("DIR"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> noFuse{
      "no-fuse",
      cl::desc("Leave out llmc-fuse (the losses are bitwise the same)"),
      cl::sub(command), cl::cat(llmcCategory())};
};

/// Options of `llmc plan`.
struct PlanCommand {
  cl::SubCommand command{
      "plan",
      "Compile a model and print the memory of its training step by kind\n"
      "  (the buffer plan: weights, optimizer state, gradients, activations\n"
      "  kept for backward, temporaries, the peak and the arena).\n"
      "  Communication and step time per mesh arrive with issues #8 and #11."};
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<input.toml|.json|.mlir>"),
                             cl::Required, cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<int64_t> batchSize{"batch-size",
                             cl::desc("Sequences per batch (default: [train] "
                                      "batch_size; 8 for .json)"),
                             cl::init(0), cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<int64_t> seqLen{"seq-len",
                          cl::desc("Tokens per sequence (default: [train] "
                                   "seq_len; 64 for .json)"),
                          cl::init(0), cl::sub(command),
                          cl::cat(llmcCategory())};
  cl::opt<bool> forward{"forward",
                        cl::desc("Plan the forward program @loss only"),
                        cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> remat{
      "remat",
      cl::desc("Rematerialization instead of [memory] remat: none, "
               "selective, full or auto"),
      cl::value_desc("policy"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<double> budgetGiB{
      "memory-budget-gib",
      cl::desc("Memory budget for --remat=auto instead of [memory] "
               "budget_gib"),
      cl::init(-1.0), cl::sub(command), cl::cat(llmcCategory())};
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

/// Whether @loss has parameters to train.
bool hasParameters(mlir::ModuleOp module) {
  auto loss = module.lookupSymbol<mlir::func::FuncOp>("loss");
  if (!loss)
    return false;
  for (unsigned i = 0; i < loss.getNumArguments(); ++i)
    if (auto role = loss.getArgAttrOfType<mlir::StringAttr>(i, "llmc.role"))
      if (role.getValue() == "parameter")
        return true;
  return false;
}

/// The pipeline options a run description asks for.
llmc::CompilePipelineOptions
pipelineOptionsFor(const std::optional<llmc::RunDescription> &description) {
  llmc::CompilePipelineOptions options;
  if (!description)
    return options;
  const llmc::TrainConfig &t = description->train;
  options.microbatches = t.microbatches;
  llmc::OptimizerSettings &o = options.optimizer;
  o.learningRate = t.learningRate;
  o.minLearningRate = t.minLearningRate;
  o.warmupSteps = t.warmupSteps;
  o.totalSteps = t.steps;
  o.schedule = t.schedule == llmc::LrSchedule::Cosine   ? "cosine"
               : t.schedule == llmc::LrSchedule::Linear ? "linear"
                                                        : "constant";
  o.weightDecay = t.weightDecay;
  o.decayAll = t.decayAll;
  o.beta1 = t.beta1;
  o.beta2 = t.beta2;
  o.epsilon = t.epsilon;
  o.gradClip = t.gradClip;
  const llmc::PrecisionConfig &p = description->precision;
  options.precision.policy = p.policy == llmc::PrecisionPolicy::Bf16   ? "bf16"
                             : p.policy == llmc::PrecisionPolicy::Fp16 ? "fp16"
                                                                       : "fp32";
  options.precision.initialLossScale = p.initialLossScale;
  options.precision.lossScaleGrowthInterval = p.lossScaleGrowthInterval;
  const llmc::MemoryConfig &m = description->memory;
  options.remat = m.remat == llmc::RematPolicy::Selective ? "selective"
                  : m.remat == llmc::RematPolicy::Full    ? "full"
                  : m.remat == llmc::RematPolicy::Auto    ? "auto"
                                                          : "none";
  options.memoryBudgetBytes =
      static_cast<int64_t>(m.budgetGiB * 1024.0 * 1024.0 * 1024.0);
  return options;
}

/// What the runtime's training loop needs from a run description.
llmc::rt::TrainSettings trainSettingsFor(const llmc::RunDescription &run) {
  llmc::rt::TrainSettings settings;
  settings.steps = run.train.steps;
  settings.logEvery = run.train.logEvery;
  settings.seed = run.train.seed;
  settings.vocabSize = run.model.vocabSize;
  settings.dataPath = run.data.path;
  settings.dataFormat = run.data.format == llmc::DataFormat::Tokens
                            ? llmc::rt::TokenFormat::Shard
                            : llmc::rt::TokenFormat::Text;
  settings.checkpointDir = run.checkpoint.directory;
  settings.checkpointEvery = run.checkpoint.every;
  settings.checkpointKeep = run.checkpoint.keep;
  settings.sampleTokens = 0;
  settings.devices = run.parallel.devices;
  return settings;
}

/// Loads, runs the pipeline (up to `stopAfter`), and returns the module;
/// null after a reported error.
struct CompileRequest {
  std::string input;        ///< a path; empty: `builtinText`
  std::string builtinText;  ///< a run description's TOML
  llmc::SourceOptions sourceOptions;
  std::string stopAfter;    ///< "loss", a stage, or "final"
  bool forward = false;
  bool printCost = false;
  bool fuse = true;
  bool fusionReport = false;
  std::string dumpIr;
  /// Overrides of [memory] remat and budget_gib (llmc plan --remat).
  std::string remat;
  double budgetGiB = -1;
};

struct Compiled {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::optional<llmc::RunDescription> description;
};

int compileModule(Session &session, const CompileRequest &request,
                  Compiled &compiled) {
  llmc::LoadedSource loaded =
      request.input.empty()
          ? llmc::loadRunDescriptionText(request.builtinText,
                                         "<built-in run>", session.context,
                                         request.sourceOptions)
          : llmc::loadSource(request.input, session.context,
                             session.sourceMgr, request.sourceOptions);
  if (!loaded.module)
    return kExitRejected;
  mlir::ModuleOp module = *loaded.module;
  bool training = !request.forward && hasParameters(module);

  // --emit: "loss", "final", a pass (its first run) or a dump's name
  // ("05-canonicalize": the fifth pass).
  llmc::CompilePipelineOptions stageOptions =
      pipelineOptionsFor(loaded.description);
  stageOptions.training = training;
  if (!request.remat.empty())
    stageOptions.remat = request.remat;
  if (request.budgetGiB >= 0)
    stageOptions.memoryBudgetBytes =
        static_cast<int64_t>(request.budgetGiB * 1024.0 * 1024.0 * 1024.0);
  stageOptions.fuse = request.fuse;
  std::vector<std::string> stages = llmc::compilePipelineStages(stageOptions);
  int stopAfter = -1;
  llvm::StringRef emit = request.stopAfter;
  for (size_t i = 0; i < stages.size() && stopAfter < 0; ++i)
    if (emit == stages[i] ||
        emit == llvm::formatv("{0:02}-{1}", i + 1, stages[i]).str())
      stopAfter = static_cast<int>(i) + 1;
  if (stopAfter < 0 && emit != "loss" && emit != "final") {
    llvm::errs() << "llmc: unknown --emit stage '" << emit
                 << "'; expected loss, final, or a pass of the pipeline: ";
    for (size_t i = 0; i < stages.size(); ++i)
      llvm::errs() << (i ? ", " : "")
                   << llvm::formatv("{0:02}-{1}", i + 1, stages[i]);
    llvm::errs() << "\n";
    return kExitUsage;
  }

  mlir::PassManager pm(&session.context);
  if (!request.dumpIr.empty()) {
    llvm::SmallString<128> inputPath(request.dumpIr);
    llvm::sys::path::append(inputPath, "00-input.mlir");
    if (mlir::failed(llmc::enableIrDumps(pm, request.dumpIr)) ||
        mlir::failed(llmc::dumpModule(module, inputPath)))
      return kExitRejected;
  }
  if (request.stopAfter == "loss") {
    if (request.printCost)
      pm.addPass(llmc::createPrintCostPass());
  } else {
    llmc::CompilePipelineOptions pipelineOptions = stageOptions;
    pipelineOptions.printCost = request.printCost;
    pipelineOptions.fuse = request.fuse;
    pipelineOptions.fusionReport = request.fusionReport;
    pipelineOptions.stopAfter = stopAfter;
    llmc::buildCompilePipeline(pm, pipelineOptions);
  }
  if (mlir::failed(pm.run(module)))
    return kExitRejected;
  compiled.module = std::move(loaded.module);
  compiled.description = std::move(loaded.description);
  return kExitOk;
}

/// Compiles the program the pipeline ended with (@train_step when there is
/// one, else @loss) into an Executable; a training step built from a run
/// description also carries its training settings.
int buildArtifact(const Compiled &compiled, const std::string &source,
                  llmc::rt::Executable &exe) {
  mlir::ModuleOp module = *compiled.module;
  llmc::CodegenOptions codegen;
  codegen.source = source;
  codegen.function =
      module.lookupSymbol<mlir::func::FuncOp>("train_step") ? "train_step"
                                                            : "loss";
  mlir::FailureOr<llmc::rt::Executable> built =
      llmc::buildExecutable(module, codegen);
  if (mlir::failed(built))
    return kExitRejected;
  exe = std::move(*built);
  if (!compiled.description || exe.findArgument("optimizer.step") < 0)
    return kExitOk;
  const llmc::RunDescription &run = *compiled.description;
  llmc::rt::writeTrainSettings(trainSettingsFor(run), exe.metadata);

  // The companion "logits" program (batch 1, the run's sequence length)
  // with which the runtime prints a sample of the trained model.
  mlir::OwningOpRef<mlir::ModuleOp> logits = llmc::buildLogitsModule(
      *module.getContext(), run.model, 1, run.train.seqLen);
  if (!logits)
    return kExitRejected;
  mlir::PassManager pm(module.getContext());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(*logits)))
    return kExitRejected;
  llmc::CodegenOptions logitsCodegen;
  logitsCodegen.source = source;
  logitsCodegen.function = "logits";
  mlir::FailureOr<llmc::rt::Executable> sample =
      llmc::buildExecutable(*logits, logitsCodegen);
  if (mlir::failed(sample))
    return kExitRejected;
  exe.companions.push_back(std::move(*sample));
  return kExitOk;
}

int writeArtifact(const llmc::rt::Executable &exe, const std::string &path) {
  if (llmc::rt::Status status = llmc::rt::writeExecutable(exe, path);
      !status) {
    llvm::errs() << path << ": error: " << status.message() << "\n";
    return kExitRejected;
  }
  const llmc::rt::RankProgram &rank = exe.ranks.front();
  llvm::errs() << "wrote " << path << ": @" << exe.name << ", "
               << exe.arguments.size() << " arguments, " << exe.outputs.size()
               << " outputs, " << rank.commands.size() << " commands, "
               << rank.arenaBytes << " bytes of buffers\n";
  return kExitOk;
}

int runCompile(const CompileCommand &options) {
  Session session;
  CompileRequest request;
  request.input = options.input;
  request.sourceOptions.batchSize = options.batchSize;
  request.sourceOptions.seqLen = options.seqLen;
  request.stopAfter = options.emit;
  request.forward = options.forward;
  request.sourceOptions.splitMicrobatches = !options.forward;
  request.printCost = options.printCost;
  request.fuse = !options.noFuse;
  request.fusionReport = options.fusionReport;
  request.dumpIr = options.dumpIr;
  Compiled compiled;
  if (int code = compileModule(session, request, compiled))
    return code;
  if (!wantsExecutable(options.output))
    return writeModule(*compiled.module, options);
  llmc::rt::Executable exe;
  if (int code = buildArtifact(compiled, options.input, exe))
    return code;
  return writeArtifact(exe, options.output);
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
     << exe.producer << ", from " << exe.source << "): @" << exe.name
     << "\n";
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
    row(arg.role == llmc::rt::ArgumentRole::Parameter        ? "parameter"
        : arg.role == llmc::rt::ArgumentRole::OptimizerState ? "state"
                                                             : "input",
        arg.name, arg.value);
  for (const llmc::rt::OutputInfo &out : exe.outputs)
    row("output", out.name, out.value);
  os << "  " << exe.ranks.size() << " rank(s); rank 0: " << rank.commands.size()
     << " commands, " << rank.values.size() << " values, "
     << rank.constants.size() << " constants, " << withThousands(rank.arenaBytes)
     << " bytes of buffers\n";
  for (const auto &[key, value] : exe.metadata)
    os << "  setting " << key << " = " << value << "\n";
  for (const llmc::rt::Executable &companion : exe.companions)
    os << "  companion @" << companion.name << ": "
       << companion.arguments.size() << " arguments, "
       << companion.outputs.size() << " outputs, "
       << companion.ranks.front().commands.size() << " commands\n";
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

/// The run of `llmc train` with no arguments: a 2-layer GPT over bytes of
/// the built-in corpus (runtime/data/BuiltinCorpus.h), sized so that two
/// cores show the loss falling well within two minutes.
constexpr const char *kBuiltinRun = R"toml(
[model]
family = "gpt2"
vocab_size = 128
layers = 2
width = 96
heads = 4
max_positions = 64

[train]
batch_size = 16
seq_len = 64
steps = 500
learning_rate = 3e-3
min_learning_rate = 3e-4
warmup_steps = 20
schedule = "cosine"
weight_decay = 0.0
log_every = 10
)toml";

int runTrain(const TrainCommand &options) {
  Session session;
  CompileRequest request;
  request.input = options.input;
  request.builtinText = kBuiltinRun;
  request.stopAfter = "final";
  request.dumpIr = options.dumpIr;
  request.fuse = !options.noFuse;
  if (!options.input.empty() &&
      llmc::classifySource(options.input) == llmc::SourceKind::Mlir) {
    llvm::errs() << "llmc train: expected a run description (.toml) or a "
                    "Hugging Face config.json, got '"
                 << options.input
                 << "'; an .mlir program has no training settings\n";
    return kExitUsage;
  }
  Compiled compiled;
  if (int code = compileModule(session, request, compiled))
    return code;
  llmc::rt::Executable exe;
  std::string source = options.input.empty() ? "<built-in run>"
                                             : options.input.getValue();
  if (int code = buildArtifact(compiled, source, exe))
    return code;
  if (!options.output.empty())
    if (int code = writeArtifact(exe, options.output))
      return code;

  llmc::rt::TrainOptions train;
  if (llmc::rt::Status status =
          llmc::rt::readTrainSettings(exe.metadata, train.settings);
      !status) {
    llvm::errs() << "llmc train: " << status.message() << "\n";
    return kExitRejected;
  }
  if (!options.data.empty())
    train.settings.dataPath = options.data;
  if (!options.checkpointDir.empty())
    train.settings.checkpointDir = options.checkpointDir;
  train.settings.sampleTokens =
      options.sampleTokens >= 0 ? options.sampleTokens
                                : (options.input.empty() ? 300 : 0);
  train.weightsPath = options.weights;
  train.resume = options.resume;
  train.metricsPath = options.metrics;
  train.threads = options.threads;
  train.stopAfterStep = options.steps;
  if (!options.device.empty()) {
    if (options.device != "cpu" && options.device != "cuda" &&
        options.device != "auto") {
      llvm::errs() << "llmc train: --device expects cpu, cuda or auto, got '"
                   << options.device << "'\n";
      return kExitUsage;
    }
    train.settings.devices = options.device;
  }
#ifdef LLMC_HAVE_CUDA
  train.cudaSession = llmc::rt::cuda::createCudaDeviceSession;
  train.cudaDeviceCount = llmc::rt::cuda::cudaDeviceCount;
#endif
  llmc::rt::TrainReport report;
  if (llmc::rt::Status status = llmc::rt::train(exe, train, report);
      !status) {
    llvm::errs() << "llmc train: " << status.message() << "\n";
    return kExitRejected;
  }
  return kExitOk;
}

/// 124439808 -> "118.7 MiB".
std::string mebibytes(uint64_t bytes) {
  return llvm::formatv("{0:f1} MiB", static_cast<double>(bytes) / (1 << 20))
      .str();
}

int runPlan(const PlanCommand &options) {
  Session session;
  CompileRequest request;
  request.input = options.input;
  request.sourceOptions.batchSize = options.batchSize;
  request.sourceOptions.seqLen = options.seqLen;
  request.sourceOptions.splitMicrobatches = !options.forward;
  request.stopAfter = "final";
  request.forward = options.forward;
  request.remat = options.remat;
  request.budgetGiB = options.budgetGiB;
  Compiled compiled;
  if (int code = compileModule(session, request, compiled))
    return code;
  mlir::ModuleOp module = *compiled.module;
  auto function = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  if (!function)
    function = module.lookupSymbol<mlir::func::FuncOp>("loss");
  if (!function) {
    llvm::errs() << options.input << ": error: no @train_step or @loss\n";
    return kExitRejected;
  }
  mlir::FailureOr<llmc::BufferPlan> plan = llmc::planBuffers(function);
  if (mlir::failed(plan))
    return kExitRejected;
  const llmc::MemoryBreakdown &m = plan->memory;
  llvm::raw_ostream &os = llvm::outs();
  os << "memory plan of @" << function.getSymName() << " (" << options.input;
  if (compiled.description)
    os << "; " << compiled.description->train.batchSize << " x "
       << compiled.description->train.seqLen << " tokens per step";
  os << "), one device:\n";
  auto row = [&](llvm::StringRef what, uint64_t bytes) {
    os << "  " << llvm::left_justify(what, 30) << " "
       << llvm::right_justify(withThousands(static_cast<int64_t>(bytes)), 15)
       << " bytes  " << llvm::right_justify(mebibytes(bytes), 12) << "\n";
  };
  os << "  at the peak (step " << m.peakStep << " of the program):\n";
  row("weights", m.weights);
  row("optimizer state", m.optimizerState);
  row("gradients", m.gradients);
  row("activations kept for backward", m.activations);
  row("inputs and constants", m.inputs);
  row("temporaries", m.temporaries);
  row("peak (live)", m.peakLive);
  row("arena (with alignment holes)", plan->arenaBytes);
  // Kernels: every top-level op but views and constants; a fused region is
  // one (one kernel on the GPU; the CPU backend runs its body op by op).
  int64_t kernels = 0, regions = 0;
  for (mlir::Operation &op : function.getBody().front()) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>() ||
        llvm::isa<llmc::ReshapeOp, llmc::ConstantOp>(op))
      continue;
    ++kernels;
    regions += llvm::isa<llmc::FusedOp>(op);
  }
  os << "  " << kernels << " kernels per step (" << regions
     << " of them fused regions)\n";
  if (auto remat = function->getAttrOfType<mlir::DictionaryAttr>("llmc.remat"))
    os << "  remat " << remat.getAs<mlir::StringAttr>("policy").getValue()
       << ": " << remat.getAs<mlir::IntegerAttr>("recomputed_ops").getInt()
       << " ops recomputed in backward, "
       << llvm::formatv("{0:e3}",
                        remat.getAs<mlir::FloatAttr>("recomputed_flops")
                            .getValueAsDouble())
       << " flops (full recomputation of "
       << remat.getAs<mlir::IntegerAttr>("full_layers").getInt()
       << " layers)\n";
  else
    os << "  remat none: nothing recomputed\n";
  os << "  " << plan->inPlace << " ops write over an operand in place; "
     << plan->donations.size()
     << " new parameters and moments are written into their own "
        "arguments' buffers\n";
  os << "  communication and step time: not yet (sharding #8, planner "
        "#11)\n";
  return kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);

  CompileCommand compile;
  InspectCommand inspect;
  TrainCommand train;
  PlanCommand plan;

  // Show only llmc's options in --help, not those libLLVM registers.
  cl::HideUnrelatedOptions(llmcCategory());
  for (cl::SubCommand *sub :
       {&compile.command, &inspect.command, &train.command, &plan.command})
    cl::HideUnrelatedOptions(llmcCategory(), *sub);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "llmc: compile and train language models\n\n"
          "  llmc compile FILE [--emit=STAGE] [--dump-ir=DIR] [--print-cost] "
          "[-o FILE.llmcx]\n"
          "  llmc inspect FILE\n"
          "  llmc train [FILE]   (no FILE: the built-in demo run)\n"
          "  llmc plan FILE      the memory of the training step, by kind\n\n"
          "  FILE: a run description (.toml), a Hugging Face config.json, or\n"
          "  llmc IR (.mlir). llmc SUBCOMMAND --help shows the options of one "
          "subcommand.\n",
          &llvm::errs()))
    return kExitUsage;

  if (compile.command)
    return runCompile(compile);
  if (inspect.command)
    return runInspect(inspect);
  if (train.command)
    return runTrain(train);
  if (plan.command)
    return runPlan(plan);

  llvm::errs() << "llmc: expected a subcommand (compile, inspect, train, "
                  "plan); see llmc --help\n";
  return kExitUsage;
}
