//===- LlmcDriver.cpp - the compile path the llmc subcommands share -------===//
#include "tools/LlmcDriver.h"
#include "analysis/DeviceProfile.h"
#include "planner/Probe.h"
#include "planner/Search.h"
#include "runtime/train/Utilization.h"
#include "tools/LlmcHf.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace llmc::driver {

cl::OptionCategory &llmcCategory() {
  static cl::OptionCategory category("llmc options");
  return category;
}

namespace {
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
  if (!description)
    return llmc::CompilePipelineOptions();
  return llmc::planner::pipelineOptionsFor(*description);
}

/// What the runtime needs for the MFU of its step line
/// (runtime/train/Utilization.h): the model flops of one step and the
/// dense matmul peak of every built-in device profile at the run's
/// precision.
void writePerfSettings(const llmc::RunDescription &run,
                       std::map<std::string, std::string> &metadata) {
  const char *dtype = run.precision.policy == llmc::PrecisionPolicy::Bf16 ||
                              run.precision.policy == llmc::PrecisionPolicy::Fp8
                          ? "bf16"
                      : run.precision.policy == llmc::PrecisionPolicy::Fp16
                          ? "f16"
                          : "f32";
  metadata[llmc::rt::kModelFlopsKey] =
      llvm::formatv("{0:e9}", llmc::planner::modelFlopsPerStep(run)).str();
  llvm::Expected<std::vector<llmc::planner::DeviceProfile>> profiles =
      llmc::planner::parseDeviceProfiles(llmc::planner::builtinDeviceProfiles(),
                                         "data/devices.toml");
  if (!profiles) { // built in and tested: cannot fail but for a bad build
    llvm::consumeError(profiles.takeError());
    return;
  }
  std::string lines;
  for (const llmc::planner::DeviceProfile &profile : *profiles)
    lines += llvm::formatv("{0} {1:e6} dense {2}\n", profile.name,
                           profile.matmulPeak(dtype), dtype)
                 .str();
  metadata[llmc::rt::kDevicePeaksKey] = lines;
}

} // namespace

namespace {

/// `path` made absolute against this process's directory. The frontend
/// resolves a run description's paths relative to the description's own
/// folder, which for a relative description is relative to the directory
/// `llmc compile` ran in; the artifact stores them absolute so that
/// `llmc-run` finds them from any directory (docs/executable.md).
std::string absolutePath(const std::string &path) {
  if (path.empty())
    return path;
  llvm::SmallString<256> absolute(path);
  if (llvm::sys::fs::make_absolute(absolute))
    return path;
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return std::string(absolute.str());
}

std::vector<std::string> absolutePaths(const std::vector<std::string> &paths) {
  std::vector<std::string> result;
  for (const std::string &path : paths)
    result.push_back(absolutePath(path));
  return result;
}

} // namespace

/// What the runtime's training loop needs from a run description.
llmc::rt::TrainSettings trainSettingsFor(const llmc::RunDescription &run) {
  llmc::rt::TrainSettings settings;
  settings.steps = run.train.steps;
  settings.logEvery = run.train.logEvery;
  settings.seed = run.train.seed;
  settings.vocabSize = run.model.vocabSize;
  settings.trainData = absolutePaths(run.data.train);
  settings.valData = absolutePaths(run.data.val);
  switch (run.data.format) {
  case llmc::DataFormat::Auto:
    settings.dataFormat = llmc::rt::TokenFormat::Auto;
    break;
  case llmc::DataFormat::Tokens:
    settings.dataFormat = llmc::rt::TokenFormat::Shard;
    break;
  case llmc::DataFormat::U16:
    settings.dataFormat = llmc::rt::TokenFormat::U16;
    break;
  case llmc::DataFormat::Text:
    settings.dataFormat = llmc::rt::TokenFormat::Text;
    break;
  }
  // [data] tokenizer, else the tokenizer.json of the model's HF folder.
  settings.tokenizer = absolutePath(run.data.tokenizer.empty()
                                        ? run.model.tokenizerPath
                                        : run.data.tokenizer);
  settings.shuffle = run.data.shuffle;
  settings.evalEvery = run.eval.every;
  settings.evalSteps = run.eval.steps;
  settings.checkpointDir = absolutePath(run.checkpoint.directory);
  settings.checkpointEvery = run.checkpoint.every;
  settings.checkpointKeep = run.checkpoint.keep;
  settings.sampleTokens = 0;
  settings.devices = run.parallel.devices;
  return settings;
}



bool fusedKernelsFor(llvm::StringRef devices) {
  return devices.starts_with("cuda");
}

std::optional<bool> fusedKernelsOption(cl::boolOrDefault option) {
  if (option == cl::BOU_UNSET)
    return std::nullopt;
  return option == cl::BOU_TRUE;
}

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
  // The mesh search: [parallel] mesh = "auto", or llmc plan --gpus N.
  if (!request.singleDevice && !request.forward &&
      (request.searchDevices > 0 ||
       (loaded.description && loaded.description->parallel.autoMesh))) {
    if (!loaded.description) {
      llvm::errs() << request.input
                   << ": error: the mesh search needs a run description "
                      "(.toml) or a Hugging Face config.json, got llmc IR\n";
      return kExitUsage;
    }
    if (int code = chooseMesh(session, request, *loaded.description,
                              loaded.module))
      return code;
  }
  mlir::ModuleOp module = *loaded.module;
  bool training = !request.forward && hasParameters(module);
  // A config's dropout (llmc has none) refuses a training step only.
  if (training && loaded.description)
    if (int code = checkTrainingRefusals(session.context, *loaded.description))
      return code;

  // --emit: "loss", "final", a pass (its first run) or a dump's name
  // ("05-canonicalize": the fifth pass).
  llmc::CompilePipelineOptions stageOptions =
      pipelineOptionsFor(loaded.description);
  stageOptions.training = training;
  if (request.singleDevice)
    stageOptions.parallel = llmc::ParallelSettings();
  if (!request.remat.empty())
    stageOptions.remat = request.remat;
  if (request.budgetGiB >= 0)
    stageOptions.memoryBudgetBytes =
        static_cast<int64_t>(request.budgetGiB * 1024.0 * 1024.0 * 1024.0);
  stageOptions.fuse = request.fuse;
  std::string devices = request.devices;
  if (devices.empty() && loaded.description)
    devices = loaded.description->parallel.devices;
  stageOptions.fusedKernels =
      request.fusedKernels.value_or(fusedKernelsFor(devices));
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
  compiled.pipeline = stageOptions;
  compiled.module = std::move(loaded.module);
  compiled.description = std::move(loaded.description);
  return kExitOk;
}

mlir::FailureOr<llmc::rt::Executable>
buildLogitsExecutable(mlir::MLIRContext &context, const llmc::ModelConfig &model,
                      int64_t batch, int64_t seqLen, const std::string &source) {
  mlir::OwningOpRef<mlir::ModuleOp> logits =
      llmc::buildLogitsModule(context, model, batch, seqLen);
  if (!logits)
    return mlir::failure();
  mlir::PassManager pm(&context);
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (mlir::failed(pm.run(*logits)))
    return mlir::failure();
  llmc::CodegenOptions codegen;
  codegen.source = source;
  codegen.function = "logits";
  return llmc::buildExecutable(*logits, codegen);
}

/// The companion "eval": @loss for one microbatch's rows, compiled with the
/// step's pipeline options but no autodiff or optimizer, on the step's mesh
/// without its pipeline axis (a forward-only program is not split into
/// stages; the eval program runs in a session of its own).
int buildEvalCompanion(const Compiled &compiled, const std::string &source,
                       llmc::rt::Executable &exe) {
  const llmc::RunDescription &run = *compiled.description;
  mlir::ModuleOp trained = compiled.module.get();
  mlir::MLIRContext &context = *trained.getContext();
  int64_t rows = run.train.batchSize / run.train.microbatches;
  mlir::OwningOpRef<mlir::ModuleOp> eval =
      llmc::buildLossModule(context, run.model, rows, run.train.seqLen);
  if (!eval)
    return kExitRejected;
  llmc::CompilePipelineOptions options = compiled.pipeline;
  options.training = false;
  options.microbatches = 1;
  options.parallel.pp = 1;
  options.parallel.virtualStages = 1;
  options.parallel.pipelineBoundaries.clear();
  options.stopAfter = -1;
  options.printCost = false;
  options.fusionReport = false;
  mlir::PassManager pm(&context);
  llmc::buildCompilePipeline(pm, options);
  if (mlir::failed(pm.run(*eval)))
    return kExitRejected;
  llmc::CodegenOptions codegen;
  codegen.source = source;
  codegen.function = "loss";
  mlir::FailureOr<llmc::rt::Executable> built =
      llmc::buildExecutable(*eval, codegen);
  if (mlir::failed(built))
    return kExitRejected;
  built->name = "eval";
  exe.companions.push_back(std::move(*built));
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
  if (compiled.description)
    if (int code = writeHfSettings(*compiled.description, exe.metadata))
      return code;
  if (!compiled.description || exe.findArgument("optimizer.step") < 0)
    return kExitOk;
  const llmc::RunDescription &run = *compiled.description;
  llmc::rt::writeTrainSettings(trainSettingsFor(run), exe.metadata);
  writePerfSettings(run, exe.metadata);

  // The companion "logits" program (batch 1, the run's sequence length)
  // with which the runtime prints a sample of the trained model.
  mlir::FailureOr<llmc::rt::Executable> sample = buildLogitsExecutable(
      *module.getContext(), run.model, 1, run.train.seqLen, source);
  if (mlir::failed(sample))
    return kExitRejected;
  exe.companions.push_back(std::move(*sample));
  if (!run.data.val.empty())
    return buildEvalCompanion(compiled, source, exe);
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

} // namespace llmc::driver
