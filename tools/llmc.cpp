//===- llmc.cpp - the llmc command line -----------------------------------===//
//
//   llmc compile FILE   trace a model and print its IR (before or after the
//                       pipeline), dump the IR after every pass
//   llmc inspect FILE   the model's parameters, by group and in total
//   llmc train [FILE]   compile and train; with no FILE, a small model on the
//                       built-in corpus (the README's main job)
//   llmc plan FILE      the memory of the training step by kind, remat,
//                       kernel counts, communication and the predicted step
//                       time on a device profile (docs/planning.md)
//   llmc verify FILE    a few steps of the run's mesh against one device
//   llmc launch -n N FILE
//                       compile once, train with N llmc-run processes
//                       (one per GPU, NCCL; tools/LlmcLaunch.cpp)
//   llmc export CHECKPOINT -o DIR
//                       a checkpoint as a Hugging Face model folder
//                       (tools/LlmcHf.cpp)
//   llmc tokenize --tokenizer T.json FILE... -o DIR
//                       text files to llm.c token shards
//                       (tools/LlmcTokenize.cpp)
//   llmc trace merge OUT.json IN.json...
//                       traces (--trace) merged into one
//                       (tools/LlmcTrace.cpp)
//
// FILE is a run description (.toml), a Hugging Face config.json or model
// folder, or llmc IR (.mlir). Exit codes: 0 success, 1 the input was rejected (diagnostics
// printed), 2 bad usage. This file holds main, compile and inspect; the
// shared compile path is LlmcDriver.{h,cpp}, train and plan LlmcTrainPlan.cpp,
// verify LlmcVerify.cpp.
//
//===----------------------------------------------------------------------===//

#include "tools/EnvironmentHelp.h"
#include "tools/LlmcDriver.h"
#include "tools/LlmcEvalSample.h"
#include "tools/LlmcHf.h"
#include "tools/LlmcReport.h"
#include "tools/LlmcTokenize.h"
#include "tools/LlmcTrace.h"

#include "runtime/Sharding.h"
#include "runtime/Status.h"
#include "runtime/io/File.h"
#ifdef LLMC_HAVE_CUDA
#include "codegen/cuda/PlanKernels.h"
#endif

namespace llmc::driver {

namespace {

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

} // namespace

namespace {

/// --cuda-arch: the cubins of every CUDA unit the artifact carries.
int compileCudaCubins(llmc::rt::Executable &exe, const std::string &arch) {
#ifdef LLMC_HAVE_CUDA
  if (llmc::rt::Status status = llmc::rt::cuda::compileCudaKernels(exe, arch);
      !status) {
    llvm::errs() << "llmc compile: error: " << status.message() << "\n";
    return kExitRejected;
  }
  return kExitOk;
#else
  llvm::errs() << "llmc compile: error: --cuda-arch=" << arch
               << ": this llmc was built without the CUDA backend "
                  "(LLMC_CUDA=OFF)\n";
  return kExitRejected;
#endif
}

} // namespace

int runCompile(const CompileCommand &options) {
  if (llmc::rt::Status status = llmc::rt::checkNotAnInput(
          "-o", options.output, "the input", options.input);
      !status) {
    llvm::errs() << "llmc compile: " << status.message() << "\n";
    return kExitUsage;
  }
  if (options.logits)
    return compileLogits(options);
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
  request.fusedKernels = fusedKernelsOption(options.fusedKernels);
  request.dumpIr = options.dumpIr;
  request.deviceProfile = options.deviceProfile;
  Compiled compiled;
  if (int code = compileModule(session, request, compiled))
    return code;
  if (!wantsExecutable(options.output))
    return writeModule(*compiled.module, options);
  llmc::rt::Executable exe;
  if (int code = buildArtifact(compiled, options.input, exe))
    return code;
  if (!options.cudaArch.empty())
    if (int code = compileCudaCubins(exe, options.cudaArch))
      return code;
  return writeArtifact(exe, options.output);
}

/// 124439808 -> "124,439,808".

namespace {

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
  // Global shapes (what callers bind and read), then how sharded ones
  // are split over the mesh.
  auto row = [&](llvm::StringRef role, llvm::StringRef name, int32_t slot,
                 const llmc::rt::TensorSharding &sharding) {
    const llmc::rt::ValueInfo &value = rank.values[slot];
    llmc::rt::Shape global;
    if (!llmc::rt::globalShape(value.shape, sharding, exe.mesh, global))
      global = value.shape; // validated on load: cannot happen
    os << "  " << llvm::left_justify(role, 9) << " "
       << llvm::left_justify(name, width) << "  "
       << llmc::rt::dtypeName(value.dtype) << llmc::rt::formatShape(global);
    if (!sharding.replicated())
      os << "  sharded " << llmc::rt::formatSharding(sharding, exe.mesh);
    os << "\n";
  };
  if (!exe.mesh.empty())
    os << "  mesh " << llmc::rt::formatMesh(exe.mesh) << "\n";
  for (const llmc::rt::ArgumentInfo &arg : exe.arguments)
    row(arg.role == llmc::rt::ArgumentRole::Parameter        ? "parameter"
        : arg.role == llmc::rt::ArgumentRole::OptimizerState ? "state"
                                                             : "input",
        arg.name, arg.value, arg.sharding);
  for (const llmc::rt::OutputInfo &out : exe.outputs)
    row("output", out.name, out.value, out.sharding);
  os << "  " << exe.ranks.size() << " rank(s); rank 0: " << rank.commands.size()
     << " commands, " << rank.values.size() << " values, "
     << rank.constants.size() << " constants, " << withThousands(rank.arenaBytes)
     << " bytes of buffers\n";
  // GEMMs, and those codegen gave a cuBLASLt epilogue (MatmulEpilogue,
  // docs/fusion.md "GEMM epilogues"), by epilogue.
  size_t gemms = 0;
  size_t epilogues[llmc::rt::kNumMatmulEpilogueKinds] = {};
  for (const llmc::rt::Command &command : rank.commands) {
    if (command.kind != llmc::rt::CommandKind::Gemm)
      continue;
    ++gemms;
    if (command.kernel == llmc::rt::KernelKind::MatmulEpilogue &&
        command.attrs.ints.size() == 3 && command.attrs.ints[2] >= 0 &&
        command.attrs.ints[2] < llmc::rt::kNumMatmulEpilogueKinds)
      ++epilogues[command.attrs.ints[2]];
  }
  if (gemms)
    os << "  " << gemms << " GEMMs; with an epilogue: bias " << epilogues[0]
       << ", bias+gelu " << epilogues[1] << ", bias+gelu+pre-activation "
       << epilogues[2] << ", bias+residual " << epilogues[3]
       << ", bias gradient " << epilogues[4] << "\n";
  if (exe.fusedKernels) {
    size_t unstored = 0;
    for (const llmc::rt::ValueInfo &value : rank.values)
      unstored += !value.stored();
    os << "  compiled for fused kernels: " << unstored
       << " values of elementwise regions have no storage (runs on the GPU "
          "only)\n";
  }
  // The CUDA kernels codegen planned (runtime/CudaPlan.h), with the cubins
  // of --cuda-arch.
  if (rank.cuda.present) {
    size_t generated = 0, refused = 0, cubins = 0;
    std::string arch;
    for (const llmc::rt::CudaUnit &unit : rank.cuda.units) {
      generated += (unit.flags & llmc::rt::CudaUnit::kGenerated) != 0;
      if (!unit.cubin.empty()) {
        ++cubins;
        arch = unit.arch;
      }
    }
    for (const llmc::rt::CudaCommandPlan &choice : rank.cuda.commands)
      refused += choice.code != llmc::rt::StatusCode::Ok;
    os << "  CUDA kernels: " << rank.cuda.units.size() << " units ("
       << generated << " generated), " << rank.cuda.fused.size()
       << " fused regions, " << refused << " commands without a CUDA kernel";
    if (cubins)
      os << ", " << cubins << " cubins for " << arch;
    os << "\n";
  }
  // Files the artifact carries (hf.config, a tokenizer) by their size.
  for (const auto &[key, value] : exe.metadata)
    if (value.size() > 120 || value.find('\n') != std::string::npos)
      os << "  setting " << key << " = <" << value.size() << " bytes>\n";
    else
      os << "  setting " << key << " = " << value << "\n";
  for (const llmc::rt::Executable &companion : exe.companions)
    os << "  companion @" << companion.name << ": "
       << companion.arguments.size() << " arguments, "
       << companion.outputs.size() << " outputs, "
       << companion.ranks.front().commands.size() << " commands\n";
  return kExitOk;
}

} // namespace

/// The parameters of an L-layer model from its 1- and 2-layer summaries
/// (same groups, in the same order: the 2-layer one has every group).
static llmc::ParameterSummary
extrapolateLayers(const llmc::ParameterSummary &one,
                                         const llmc::ParameterSummary &two,
                                         int64_t layers) {
  llmc::ParameterSummary result;
  for (const llmc::ParameterGroup &group : two.groups) {
    llmc::ParameterGroup single{group.name, 0, 0};
    for (const llmc::ParameterGroup &g : one.groups)
      if (g.name == group.name)
        single = g;
    llmc::ParameterGroup scaled = group;
    scaled.tensors = single.tensors + (group.tensors - single.tensors) *
                                          (layers - 1);
    scaled.elements = single.elements + (group.elements - single.elements) *
                                            (layers - 1);
    result.groups.push_back(scaled);
    result.tensors += scaled.tensors;
    result.elements += scaled.elements;
  }
  return result;
}

int runInspect(const InspectCommand &options) {
  if (llvm::StringRef(options.input).ends_with(".llmcx"))
    return inspectExecutable(options.input);
  Session session;
  // The parameters depend only on the model: training settings that have
  // no effect yet are not worth a warning here.
  llmc::SourceOptions sourceOptions;
  sourceOptions.warnPending = false;
  // Layers are alike: a deep model is counted from traces of one and two
  // layers, each group as c1 + (c2 - c1) * (L - 1), exactly, instead of
  // tracing every layer (layers = 3000 took 49 s and 10 GB).
  sourceOptions.maxLayers = 2;
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
  int64_t layers =
      loaded.description ? loaded.description->model.numLayers : 0;
  if (layers > 2) {
    sourceOptions.maxLayers = 1;
    llmc::LoadedSource one = llmc::loadSource(
        options.input, session.context, session.sourceMgr, sourceOptions);
    auto oneLoss =
        one.module ? one.module->lookupSymbol<mlir::func::FuncOp>("loss")
                   : mlir::func::FuncOp();
    if (!oneLoss)
      return kExitRejected;
    summary = extrapolateLayers(llmc::summarizeParameters(oneLoss), summary,
                                layers);
  }
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

/// The CPU threads a --threads may ask for: more is a typo (and beyond
/// what a process may start: std::thread throws).
constexpr int64_t kMaxThreads = 1024;
/// The largest step count, batch or length a number option takes.
constexpr int64_t kMaxCount = int64_t(1) << 40;

/// Every number option of the command that ran against its range: false
/// (after the message, "llmc SUB: --flag expects LO to HI, got V") on the
/// first outside it. An option left at its default is not checked.
template <typename T>
bool inRange(const char *command, const cl::opt<T> &option, int64_t low,
             int64_t high, const char *meaning = "") {
  if (option.getNumOccurrences() == 0)
    return true;
  int64_t value = static_cast<int64_t>(option.getValue());
  if (value >= low && value <= high)
    return true;
  llvm::errs() << "llmc " << command << ": --" << option.ArgStr
               << " expects " << low << " to " << high << meaning << ", got "
               << value << "\n";
  return false;
}

bool numbersInRange(const CompileCommand &compile, const TrainCommand &train,
                    const PlanCommand &plan, const VerifyCommand &verify,
                    const LaunchCommand &launch, const EvalCommand &eval,
                    const SampleCommand &sample) {
  const char *threads = " (0: every core)";
  if (compile.command)
    return inRange("compile", compile.batchSize, 1, kMaxCount) &&
           inRange("compile", compile.seqLen, 1, kMaxCount);
  if (train.command)
    return inRange("train", train.threads, 0, kMaxThreads, threads) &&
           inRange("train", train.steps, 1, kMaxCount) &&
           inRange("train", train.sampleTokens, 0, kMaxCount);
  if (plan.command)
    return inRange("plan", plan.batchSize, 1, kMaxCount) &&
           inRange("plan", plan.seqLen, 1, kMaxCount) &&
           inRange("plan", plan.gpus, 1, 1 << 20) &&
           inRange("plan", plan.nodes, 1, 1 << 20) &&
           inRange("plan", plan.peakBuffers, 0, kMaxCount);
  if (verify.command)
    return inRange("verify", verify.threads, 0, kMaxThreads, threads) &&
           inRange("verify", verify.steps, 1, kMaxCount);
  if (launch.command)
    return inRange("launch", launch.threads, 0, kMaxThreads, threads) &&
           inRange("launch", launch.steps, 1, kMaxCount) &&
           inRange("launch", launch.processes, 1, 1 << 16) &&
           inRange("launch", launch.port, 0, 65535) &&
           inRange("launch", launch.sampleTokens, 0, kMaxCount);
  if (eval.command)
    return inRange("eval", eval.threads, 0, kMaxThreads, threads) &&
           inRange("eval", eval.steps, 1, kMaxCount);
  if (sample.command)
    return inRange("sample", sample.threads, 0, kMaxThreads, threads) &&
           inRange("sample", sample.tokens, 0, kMaxCount) &&
           inRange("sample", sample.topK, 0, kMaxCount) &&
           inRange("sample", sample.seqLen, 1, kMaxCount);
  return true;
}

} // namespace llmc::driver

using namespace llmc::driver;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);

  CompileCommand compile;
  InspectCommand inspect;
  TrainCommand train;
  PlanCommand plan;
  VerifyCommand verify;
  LaunchCommand launch;
  ExportCommand exportCommand;
  EvalCommand eval;
  SampleCommand sample;
  TokenizeCommand tokenize;
  ReportCommand report;
  TraceCommand trace;

  // Show only llmc's options in --help, not those libLLVM registers.
  cl::HideUnrelatedOptions(llmcCategory());
  for (cl::SubCommand *sub :
       {&compile.command, &inspect.command, &train.command, &plan.command,
        &verify.command, &launch.command, &exportCommand.command,
        &eval.command, &sample.command, &tokenize.command, &report.command,
        &trace.command})
    cl::HideUnrelatedOptions(llmcCategory(), *sub);
  // llmc's version and commit, not the LLVM it links.
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << llmc::rt::versionLine() << "\n";
  });
  // The overview and the environment belong to `llmc --help` alone: a
  // subcommand's help starts with its own description (#28).
  bool topLevel = argc < 2 || argv[1][0] == '-';
  static const std::string environmentText =
      std::string("\n") + llmc::kEnvironmentHelp;
  std::optional<cl::extrahelp> environment;
  if (topLevel)
    environment.emplace(environmentText);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          !topLevel ? "" :
          "llmc: compile and train language models\n\n"
          "  llmc compile FILE [--emit=STAGE] [--dump-ir=DIR] [--print-cost] "
          "[-o FILE.llmcx]\n"
          "  llmc inspect FILE\n"
          "  llmc train [FILE]   (no FILE: the built-in demo run)\n"
          "  llmc plan FILE      the memory and predicted time of the training step\n"
          "  llmc verify FILE    the run's mesh against one device, a few "
          "steps\n"
          "  llmc launch -n N FILE  train with N processes (GPUs, NCCL)\n"
          "  llmc export CHECKPOINT -o DIR  a Hugging Face model folder\n"
          "  llmc eval FILE --resume CHECKPOINT  the validation loss\n"
          "  llmc sample CHECKPOINT --prompt TEXT  generate text\n"
          "  llmc tokenize --tokenizer T.json FILE... -o DIR  text to token "
          "shards\n"
          "  llmc report METRICS.jsonl... -o report.html  plot runs' "
          "curves\n"
          "  llmc trace merge OUT.json IN.json...  merge traces (--trace)\n\n"
          "  FILE: a run description (.toml), a Hugging Face config.json or\n"
          "  model folder, or llmc IR (.mlir). llmc SUBCOMMAND --help shows "
          "the options of one subcommand.\n",
          &llvm::errs()))
    return kExitUsage;
  if (!numbersInRange(compile, train, plan, verify, launch, eval, sample))
    return kExitUsage;

  if (compile.command)
    return runCompile(compile);
  if (inspect.command)
    return runInspect(inspect);
  if (train.command)
    return runTrain(train);
  if (plan.command)
    return runPlan(plan);
  if (verify.command)
    return runVerify(verify);
  if (launch.command)
    return runLaunch(launch);
  if (exportCommand.command)
    return runExport(exportCommand);
  if (eval.command)
    return runEval(eval);
  if (sample.command)
    return runSample(sample);
  if (tokenize.command)
    return runTokenize(tokenize);
  if (report.command)
    return runReport(report);
  if (trace.command)
    return runTrace(trace);

  llvm::errs() << "llmc: expected a subcommand (compile, inspect, train, "
                  "plan, verify, launch, export, eval, sample, tokenize, report, "
                  "trace); see "
                  "llmc --help\n";
  return kExitUsage;
}
