//===- LlmcTrainPlan.cpp - llmc train and llmc plan -----------------------===//
//
// train: compile a run description (or the built-in one) and run the
// runtime's training loop in this process; plan: the memory of the compiled
// training step by kind, from the buffer plan.
//
//===----------------------------------------------------------------------===//
#include "analysis/CostModel.h"
#include "ir/Phase.h"
#include "planner/Probe.h"
#include "sharding/Communication.h"
#include "sharding/Sharding.h"
#include "tools/LlmcDriver.h"

#include "runtime/io/File.h"
#ifdef LLMC_HAVE_CUDA
#include "runtime/cuda/session/VirtualRanks.h"
#endif
#include "runtime/train/TrainTrace.h"

#include <cmath>
#include <map>

namespace llmc::driver {

namespace {
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

} // namespace

int runTrain(const TrainCommand &options) {
  Session session;
  CompileRequest request;
  request.input = options.input;
  request.builtinText = kBuiltinRun;
  request.stopAfter = "final";
  request.dumpIr = options.dumpIr;
  request.fuse = !options.noFuse;
  // --device decides where it runs, so also how its buffers are planned.
  request.devices = options.device;
  if (!options.input.empty() &&
      llmc::classifySource(options.input) == llmc::SourceKind::Mlir) {
    llvm::errs() << "llmc train: expected a run description (.toml) or a "
                    "Hugging Face config.json, got '"
                 << options.input
                 << "'; an .mlir program has no training settings\n";
    return kExitUsage;
  }
  // No output may overwrite an input (a run description, the weights).
  for (auto [outFlag, out] :
       {std::make_pair("-o", &options.output.getValue()),
        std::make_pair("--metrics", &options.metrics.getValue()),
        std::make_pair("--trace", &options.trace.getValue())})
    for (auto [inFlag, in] :
         {std::make_pair("the input", &options.input.getValue()),
          std::make_pair("--weights", &options.weights.getValue()),
          std::make_pair("--tokenizer", &options.tokenizer.getValue())})
      if (llmc::rt::Status status =
              llmc::rt::checkNotAnInput(outFlag, *out, inFlag, *in);
          !status) {
        llvm::errs() << "llmc train: " << status.message() << "\n";
        return kExitUsage;
      }
  if (llmc::rt::Status status = llmc::rt::checkNotAnInput(
          "--metrics", options.metrics, "-o", options.output);
      !status) {
    llvm::errs() << "llmc train: " << status.message() << "\n";
    return kExitUsage;
  }
  if (llmc::rt::TraceSteps steps; !options.traceSteps.empty())
    if (llmc::rt::Status status = llmc::rt::parseTraceSteps(
            options.traceSteps, "--trace-steps", steps);
        !status) {
      llvm::errs() << "llmc train: " << status.message() << "\n";
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
    train.settings.trainData.assign(options.data.begin(), options.data.end());
  if (!options.val.empty())
    train.settings.valData.assign(options.val.begin(), options.val.end());
  if (!options.tokenizer.empty())
    train.settings.tokenizer = options.tokenizer;
  if (!options.checkpointDir.empty())
    train.settings.checkpointDir = options.checkpointDir;
  train.settings.sampleTokens =
      options.sampleTokens >= 0 ? options.sampleTokens
                                : (options.input.empty() ? 300 : 0);
  train.weightsPath = options.weights;
  train.resume = options.resume;
  train.metricsPath = options.metrics;
  train.tracePath = options.trace;
  train.traceSteps = options.traceSteps;
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
  llmc::rt::MultiProcessSessionFn multiProcessSession = nullptr;
#ifdef LLMC_HAVE_CUDA
  train.cudaSession = llmc::rt::cuda::createCudaDeviceSession;
  train.cudaDeviceCount = llmc::rt::cuda::cudaDeviceCount;
  multiProcessSession = llmc::rt::cuda::createMultiProcessSession;
#endif
  if (options.virtualRanks) {
    // Asked for by name, never chosen for a missing GPU: every rank on GPU
    // 0 in this process (llmc-run --virtual-ranks does the same).
    if (options.device == "cpu" || options.device == "auto") {
      llvm::errs() << "llmc train: --virtual-ranks runs every rank on one "
                      "GPU in this process; it does not go with --device "
                   << options.device << "\n";
      return kExitUsage;
    }
#ifdef LLMC_HAVE_CUDA
    train.settings.devices = "cuda";
    train.cudaSession = llmc::rt::cuda::createVirtualRankDeviceSession;
    multiProcessSession = nullptr;
#else
    llvm::errs() << "llmc train: --virtual-ranks needs the CUDA backend, "
                    "which this build lacks (configure with the CUDA "
                    "toolkit, LLMC_CUDA=ON); train on the CPU with --device "
                    "cpu\n";
    return kExitRejected;
#endif
  }
  // Under a launcher (torchrun, srun): this process's rank only, through
  // NCCL (docs/distributed.md). `llmc launch` starts llmc-run instead, so
  // that the run is compiled once.
  // (Not with --virtual-ranks: this process runs every rank itself.)
  if (llmc::rt::Status status =
          options.virtualRanks
              ? llmc::rt::Status::ok()
              : llmc::rt::prepareLaunchedTraining(
                    exe, /*forceNccl=*/false, multiProcessSession,
                    train.cudaDeviceCount, train);
      !status) {
    llvm::errs() << "llmc train: " << status.message() << "\n";
    return kExitRejected;
  }
  llmc::rt::installStopHandlers();
  llmc::rt::TrainReport report;
  if (llmc::rt::Status status = llmc::rt::train(exe, train, report);
      !status) {
    llvm::errs() << "llmc train: " << status.message() << "\n";
    return report.stoppedBySignal
               ? llmc::rt::stopExitCode(report.stoppedBySignal)
               : kExitRejected;
  }
  return kExitOk;
}

/// 124439808 -> "118.7 MiB".

namespace {
std::string mebibytes(uint64_t bytes) {
  return llvm::formatv("{0:f1} MiB", static_cast<double>(bytes) / (1 << 20))
      .str();
}

/// "transformer.h.0.mlp (backward)": the model part and phase of `op`.
std::string partOf(mlir::Operation *op) {
  if (!op)
    return "-";
  std::string part = llmc::modelPartOf(op->getLoc());
  if (part.empty())
    part = "?";
  llmc::Phase phase = llmc::phaseOf(op->getLoc());
  if (phase != llmc::Phase::Forward)
    part += " (" + llmc::phaseName(phase).str() + ")";
  return part;
}

/// The `count` largest buffers live at the peak: where the memory is.
void printPeakBuffers(llvm::raw_ostream &os, const llmc::BufferPlan &plan,
                      size_t count) {
  os << "  the " << std::min(count, plan.peakBuffers.size()) << " largest of "
     << plan.peakBuffers.size() << " buffers live at the peak:\n";
  for (size_t i = 0; i < plan.peakBuffers.size() && i < count; ++i) {
    const llmc::PeakBuffer &b = plan.peakBuffers[i];
    std::string made =
        b.def ? b.def->getName().stripDialect().str() + " at " + partOf(b.def)
              : "an argument";
    os << "    " << llvm::right_justify(mebibytes(b.bytes), 12) << "  "
       << llvm::left_justify(b.kind, 20) << " " << made << ", steps "
       << b.first << ".." << b.last << ", last read by "
       << (b.lastUser ? b.lastUser->getName().stripDialect().str() + " at " +
                            partOf(b.lastUser)
                      : std::string("the end"))
       << "\n";
  }
}

/// The kernels per step (the table's rows, one computation) and, for a
/// mesh the search chose, the search's estimate beside this compile's.
void printCountsAndSearch(llvm::raw_ostream &os,
                          const llmc::planner::StepCost &step, bool pipelined,
                          mlir::func::FuncOp function, double predicted) {
  // The kernels of the table's rows, as the cost model counts them: a region
  // the backend runs as one kernel is one, any other region its ops.
  int64_t kernels = 0, launches = 0, regions = 0;
  for (const llmc::planner::GroupCost &g : step.groups)
    if (!g.communication) {
      kernels += g.kernels;
      launches += g.launches;
    }
  for (const llmc::planner::GroupCost &g : step.byOp)
    if (g.group == "fused")
      regions += g.kernels;
  os << llvm::formatv("    {0} kernels per step{1} (the rows' sum: {2} of "
                      "them fused regions run as one kernel each, any other "
                      "region counted op by op), {3} launches (members of a "
                      "multi-tensor launch after its first and folded adds "
                      "launch nothing)\n",
                      kernels,
                      pipelined ? " of the busiest stage" : "",
                      regions, launches);
  // The search's number for this mesh, named (it is an estimate from
  // probes of fewer layers; this plan compiles every layer).
  if (auto module = function->getParentOfType<mlir::ModuleOp>())
    if (auto chosen =
            module->getAttrOfType<mlir::DictionaryAttr>("llmc.auto_mesh"))
      if (auto ms = chosen.getAs<mlir::FloatAttr>("predicted_step_ms")) {
        double probe = ms.getValueAsDouble();
        // Rounded first, so that a difference of float rounding prints +0.0.
        double percent =
            probe > 0 ? std::round(1000 * (predicted * 1e3 - probe) / probe) / 10
                      : 0.0;
        if (percent == 0)
          percent = 0; // no -0.0
        os << llvm::formatv(
            "    the mesh search's estimate of this mesh: {0:f2} ms (from "
            "probe compiles of fewer layers, the ranking's number); this "
            "plan compiles every layer: {1:f3} ms ({2}{3:f1}%)\n",
            probe, predicted * 1e3, percent >= 0 ? "+" : "", percent);
      }
}

/// What overlaps in the two-stream simulation: of each group's
/// collectives, the time a kernel runs beside them (GroupCost::hidden).
void printOverlap(llvm::raw_ostream &os, const llmc::planner::StepCost &step) {
  if (step.streams <= 0 || step.communication <= 0)
    return;
  os << "    communication beside kernels:";
  const char *sep = " ";
  for (const llmc::planner::GroupCost &g : step.groups)
    if (g.communication) {
      llvm::StringRef axes = llvm::StringRef(g.group).drop_front(
          llvm::StringRef(g.group).starts_with("collectives ") ? 12 : 0);
      os << sep << axes.split(' ').first << " "
         << llvm::formatv("{0:f3} of {1:f3} ms", g.hidden * 1e3,
                          g.seconds * 1e3);
      sep = ", ";
    }
  os << " (the rest of it waits or is waited for)\n";
}

/// The arena against the device's memory, and the memory in use that
/// cudaMemGetInfo will report when the profile measured the runtime's own
/// (DeviceProfile::runtimeBytes).
void printMemoryInUse(llvm::raw_ostream &os, uint64_t arenaBytes,
                      const llmc::planner::DeviceProfile &profile) {
  os << llvm::formatv("    memory: arena {0} of {1:f1} GB per device "
                      "({2})\n",
                      mebibytes(arenaBytes),
                      profile.memoryBytes / 1e9,
                      static_cast<double>(arenaBytes) <= profile.memoryBytes
                          ? "fits"
                          : "does not fit");
  // What cudaMemGetInfo will say is in use: the arena and the runtime's own.
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  if (profile.runtimeBytes > 0)
    os << llvm::formatv("    memory in use: {0:f2} GiB per process (the arena "
                        "{1:f2} GiB + {2:f2} GiB for the CUDA context, "
                        "libraries and scratch, measured on the profile's "
                        "device; llmc-run prints what cudaMemGetInfo says)\n",
                        (arenaBytes + profile.runtimeBytes) / GiB,
                        arenaBytes / GiB, profile.runtimeBytes / GiB);
  else if (profile.fusedKernels) // a GPU's profile
    os << "    memory in use: not predicted (the profile has no runtime_gib: "
          "the runtime's own memory was not measured on its device)\n";
}

/// The predicted step time of `function` on `profile` and its breakdown by
/// kernel group (analysis/CostModel.h, docs/planning.md).
void printStepTime(llvm::raw_ostream &os, mlir::func::FuncOp function,
                   const llmc::Mesh *mesh,
                   const llmc::planner::DeviceProfile &profile,
                   uint64_t arenaBytes, bool isDefault, bool byOp) {
  llmc::planner::StepCost step =
      llmc::planner::estimateStep(function, mesh, profile);
  // A pipelined step: each stage's ranks run their own ops. The rows below
  // are the busiest stage's; the step is the compiled schedule simulated
  // with each stage's time (planner::simulatePipeline).
  std::string pipelineLine;
  // The whole program: every rank's busy time (each stage's ranks run its
  // ops), for a profile whose devices share cores (planner::programStep).
  int64_t ranks = mesh ? mesh->numDevices() : 1;
  double totalBusy = step.seconds() * static_cast<double>(ranks);
  double critical = step.seconds(), bubble = 0;
  // Every stage's collectives, for the share of them that drains shared
  // cores (planner::drainShare).
  std::vector<llmc::planner::StepCost> stageCosts;
  if (auto pipeline =
          function->getAttrOfType<mlir::DictionaryAttr>("llmc.pipeline")) {
    int64_t stages = pipeline.getAs<mlir::IntegerAttr>("stages").getInt();
    std::string perStage;
    int64_t busiest = 0;
    totalBusy = 0;
    for (int64_t s = 0; s < stages; ++s) {
      llmc::planner::StepCost stageCost =
          llmc::planner::estimateStep(function, mesh, profile, s);
      totalBusy += stageCost.seconds() * static_cast<double>(ranks) /
                   static_cast<double>(stages);
      stageCosts.push_back(stageCost);
      perStage += llvm::formatv("{0}{1:f3}", s ? ", " : "",
                                stageCost.seconds() * 1e3)
                      .str();
      if (s == 0 || stageCost.seconds() > step.seconds()) {
        step = std::move(stageCost);
        busiest = s;
      }
    }
    critical = step.seconds();
    auto module = function->getParentOfType<mlir::ModuleOp>();
    mlir::FailureOr<llmc::planner::Measure> measure =
        module ? llmc::planner::measureProgram(module, profile)
               : mlir::FailureOr<llmc::planner::Measure>(mlir::failure());
    if (succeeded(measure) && measure->pipelineSeconds > 0) {
      critical = measure->pipelineSeconds;
      bubble = measure->bubble;
      int64_t v = measure->virtualStages;
      pipelineLine =
          llvm::formatv(
              "    pipeline: {0}{1}, {2} microbatches; stages busy {3} ms; "
              "the schedule simulated with each stage's time: {4:f3} ms, "
              "bubble {5:f3} (the rows: stage {6})\n",
              measure->schedule,
              v > 1 ? " of " + std::to_string(v) + " virtual stages"
                    : std::string(),
              pipeline.getAs<mlir::IntegerAttr>("microbatches").getInt(),
              perStage, critical * 1e3, measure->bubble, busiest)
              .str();
    }
  }
  os << "  predicted step time on device profile '" << profile.name << "' ("
     << profile.description << (profile.description.empty() ? "" : "; ")
     << profile.origin
     << (isDefault ? "; the default for these devices, --device-profile "
                     "picks another"
                   : "")
     << "):\n";
  os << llvm::formatv("    {0:f3} ms without overlap ({1:f3} ms kernels + "
                      "{2:f3} ms communication), {3:f3} ms with the "
                      "communication fully overlapped",
                      step.noOverlap() * 1e3, step.compute * 1e3,
                      step.communication * 1e3, step.overlapped() * 1e3);
  if (step.streams > 0)
    os << llvm::formatv(", {0:f3} ms on two streams (kernels in order; "
                        "collectives on their own stream, waited for by the "
                        "first kernel touching their buffers)",
                        step.streams * 1e3);
  os << "\n";
  printOverlap(os, step);
  os << pipelineLine;
  os << "    " << llvm::left_justify("group", 32)
     << llvm::right_justify("kernels", 8) << llvm::right_justify("flops", 12)
     << llvm::right_justify("bytes", 12) << llvm::right_justify("ms", 11)
     << llvm::right_justify("share", 8) << "\n";
  for (const llmc::planner::GroupCost &g : step.groups)
    os << "    " << llvm::left_justify(g.group, 32)
       << llvm::right_justify(std::to_string(g.kernels), 8)
       << llvm::right_justify(llvm::formatv("{0:e2}", g.flops).str(), 12)
       << llvm::right_justify(llvm::formatv("{0:e2}", g.bytes).str(), 12)
       << llvm::right_justify(llvm::formatv("{0:f3}", g.seconds * 1e3).str(),
                              11)
       << llvm::right_justify(
              llvm::formatv("{0:f1}%", step.noOverlap() > 0
                                           ? 100 * g.seconds / step.noOverlap()
                                           : 0.0)
                  .str(),
              8)
       << "\n";
  if (byOp) {
    // The launches column: members of a multi-tensor launch after the
    // first and folded residual adds launch nothing (docs/planning.md).
    os << "    by op (a region run as one kernel is 'fused'; kernels, "
          "launches, flops, bytes, ms):\n";
    for (const llmc::planner::GroupCost &g : step.byOp)
      os << "    " << llvm::left_justify(g.group, 32)
         << llvm::right_justify(std::to_string(g.kernels), 8)
         << llvm::right_justify(std::to_string(g.launches), 9)
         << llvm::right_justify(llvm::formatv("{0:e2}", g.flops).str(), 12)
         << llvm::right_justify(llvm::formatv("{0:e2}", g.bytes).str(), 12)
         << llvm::right_justify(
                llvm::formatv("{0:f3}", g.seconds * 1e3).str(), 11)
         << "\n";
  }
  llvm::SmallVector<const llmc::planner::StepCost *> costs;
  for (const llmc::planner::StepCost &c : stageCosts)
    costs.push_back(&c);
  if (costs.empty())
    costs.push_back(&step);
  double drain = llmc::planner::drainShare(costs, ranks, profile);
  llmc::planner::ProgramStep whole = llmc::planner::programStep(
      critical, totalBusy, ranks, bubble, profile, drain);
  os << llvm::formatv("    predicted step: {0:f3} ms", whole.seconds() * 1e3);
  if (whole.sharedCores > 0)
    os << llvm::formatv(" (the larger of the critical path {0:f3} ms and "
                        "{1} ranks' {2:f3} ms of work on {3} shared cores, "
                        "{4:f1}% of them idle ({6:f0}% of the collective "
                        "time in groups that drain them): {5:f3} ms)",
                        whole.criticalPath * 1e3, ranks, totalBusy * 1e3,
                        std::min(ranks, profile.shared.hostCores),
                        100 * (1 - totalBusy / std::min(ranks, profile.shared.hostCores) /
                                       whole.sharedCores),
                        whole.sharedCores * 1e3, 100 * drain);
  os << "\n";
  printMemoryInUse(os, arenaBytes, profile);
  printCountsAndSearch(os, step, !stageCosts.empty(), function,
                       whole.seconds());
}

/// The buffer plan the memory rows show: the function's, or in a pipelined
/// step the stage's with the largest arena (`largestStage`; -1 otherwise).
mlir::LogicalResult largestPlan(mlir::func::FuncOp function,
                                mlir::FailureOr<llmc::BufferPlan> &plan,
                                int64_t &largestStage) {
  largestStage = -1;
  plan = llmc::planBuffers(function);
  if (mlir::failed(plan))
    return mlir::failure();
  auto pipeline = function->getAttrOfType<mlir::DictionaryAttr>("llmc.pipeline");
  if (!pipeline)
    return mlir::success();
  for (int64_t s = 0, n = pipeline.getAs<mlir::IntegerAttr>("stages").getInt();
       s < n; ++s) {
    mlir::FailureOr<llmc::BufferPlan> stagePlan = llmc::planBuffers(function, s);
    if (mlir::failed(stagePlan))
      return mlir::failure();
    if (largestStage < 0 || stagePlan->arenaBytes > plan->arenaBytes) {
      plan = std::move(stagePlan);
      largestStage = s;
    }
  }
  return mlir::success();
}

/// The memory rows of the plan (and, with --peak-buffers, the largest
/// buffers at the peak).
void printMemoryRows(llvm::raw_ostream &os, const llmc::BufferPlan &plan,
                     int64_t largestStage, int64_t peakBuffers) {
  const llmc::MemoryBreakdown &m = plan.memory;
  auto row = [&](llvm::StringRef what, uint64_t bytes) {
    os << "  " << llvm::left_justify(what, 30) << " "
       << llvm::right_justify(withThousands(static_cast<int64_t>(bytes)), 15)
       << " bytes  " << llvm::right_justify(mebibytes(bytes), 12) << "\n";
  };
  if (largestStage >= 0)
    os << "  pipeline stage " << largestStage
       << " (the largest arena of the stages):\n";
  os << "  at the peak (step " << m.peakStep << " of the program):\n";
  row("weights", m.weights);
  row("optimizer state", m.optimizerState);
  row("gradients", m.gradients);
  row("activations kept for backward", m.activations);
  row("inputs and constants", m.inputs);
  row("temporaries", m.temporaries);
  row("peak (live)", m.peakLive);
  row("arena (with alignment holes)", plan.arenaBytes);
  if (plan.unstored)
    os << "  fused kernels: " << plan.unstored
       << " values of elementwise regions have no storage ("
       << mebibytes(plan.unstoredBytes) << " if each had its own)\n";
  if (peakBuffers > 0)
    printPeakBuffers(os, plan, static_cast<size_t>(peakBuffers));
}

/// Kernels per step, what remat recomputes, in-place ops and donations.
void printKernelsAndRemat(llvm::raw_ostream &os, mlir::func::FuncOp function,
                          const llmc::BufferPlan &plan) {
  // The kernels per step are counted by the step-time table (printStepTime),
  // one computation for the count and the rows.
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
  os << "  " << plan.inPlace << " ops write over an operand in place; "
     << plan.donations.size()
     << " new parameters and moments are written into their own "
        "arguments' buffers\n";
}

/// A pipelined step: each stage's ranks run their own ops, so each stage has
/// its own buffer plan (the memory rows are the largest stage's).
mlir::LogicalResult printPipelineStages(llvm::raw_ostream &os,
                                        mlir::func::FuncOp function,
                                        mlir::DictionaryAttr pipeline) {
  int64_t stages = pipeline.getAs<mlir::IntegerAttr>("stages").getInt();
  auto inFlight = pipeline.getAs<mlir::DenseI64ArrayAttr>("in_flight");
  os << "  pipeline: " << stages << " stages, schedule "
     << pipeline.getAs<mlir::StringAttr>("schedule").getValue() << ", "
     << pipeline.getAs<mlir::IntegerAttr>("virtual_stages").getInt()
     << " model chunk(s) per stage, "
     << pipeline.getAs<mlir::IntegerAttr>("microbatches").getInt()
     << " microbatches; chunks start at layers 0";
  for (int64_t b :
       pipeline.getAs<mlir::DenseI64ArrayAttr>("boundaries").asArrayRef())
    os << ", " << b;
  os << " of " << pipeline.getAs<mlir::IntegerAttr>("layers").getInt()
     << "\n  bubble fraction "
     << llvm::formatv("{0:f3}",
                      pipeline.getAs<mlir::FloatAttr>("bubble").getValueAsDouble())
     << " (idle share of stages x step time, the schedule simulated with "
        "each unit's flops)\n";
  os << "  " << llvm::left_justify("stage", 8)
     << llvm::right_justify("in flight", 10)
     << llvm::right_justify("activations*", 16)
     << llvm::right_justify("peak (live)", 16)
     << llvm::right_justify("arena", 16) << "  bytes\n";
  for (int64_t s = 0; s < stages; ++s) {
    mlir::FailureOr<llmc::BufferPlan> stagePlan = llmc::planBuffers(function, s);
    if (mlir::failed(stagePlan))
      return mlir::failure();
    const llmc::MemoryBreakdown &sm = stagePlan->memory;
    os << "  " << llvm::left_justify(std::to_string(s), 8)
       << llvm::right_justify(std::to_string(inFlight[s]), 10)
       << llvm::right_justify(
              withThousands(static_cast<int64_t>(sm.mostActivations)), 16)
       << llvm::right_justify(withThousands(static_cast<int64_t>(sm.peakLive)),
                              16)
       << llvm::right_justify(
              withThousands(static_cast<int64_t>(stagePlan->arenaBytes)), 16)
       << "\n";
  }
  os << "  (in flight: forward units whose backward has not run, the "
        "microbatches whose activations a stage keeps at once; "
        "activations*: the most bytes of them live at once)\n";
  return mlir::success();
}

/// Communication per step and rank, by mesh axes and collective kind.
void printCommunication(llvm::raw_ostream &os, mlir::func::FuncOp function,
                        const llmc::Mesh &mesh) {
  struct Row {
    int64_t ops = 0, payload = 0, sent = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  for (mlir::Operation &op : function.getBody().front()) {
    if (auto send = llvm::dyn_cast<llmc::SendOp>(op)) {
      // Point to point: the sending ranks send the whole tensor.
      Row &r = rows[{mesh.axesText({static_cast<int64_t>(send.getAxis())}),
                     "send/recv"}];
      int64_t bytes = llmc::tensorBytes(send.getInput().getType());
      ++r.ops;
      r.payload += bytes;
      r.sent += bytes;
      continue;
    }
    std::optional<llmc::CollectiveTraffic> t = llmc::collectiveTraffic(&op, mesh);
    if (!t)
      continue;
    Row &r = rows[{mesh.axesText(t->axes), t->kind}];
    ++r.ops;
    r.payload += t->payloadBytes;
    r.sent += t->sentBytesPerRank;
  }
  os << "  communication per step and rank (ring algorithms: an all-reduce "
        "of S bytes over N ranks sends 2(N-1)/N*S, all-gather, "
        "reduce-scatter and all-to-all (N-1)/N*S, a ring shift S):\n";
  os << "  " << llvm::left_justify("axes", 8) << llvm::left_justify("kind", 16)
     << llvm::right_justify("ops", 6) << llvm::right_justify("payload bytes", 18)
     << llvm::right_justify("sent bytes", 18) << "\n";
  int64_t total = 0;
  for (const auto &[key, r] : rows) {
    os << "  " << llvm::left_justify(key.first, 8)
       << llvm::left_justify(key.second, 16)
       << llvm::right_justify(std::to_string(r.ops), 6)
       << llvm::right_justify(withThousands(r.payload), 18)
       << llvm::right_justify(withThousands(r.sent), 18) << "\n";
    total += r.sent;
  }
  os << "  " << llvm::left_justify("total", 30)
     << llvm::right_justify(withThousands(total), 36) << " bytes sent\n";
}

} // namespace

int runPlan(const PlanCommand &options) {
  if (options.json && options.probe) {
    llvm::errs() << "llmc plan: error: --json prints the mesh search; "
                    "give --gpus N (or mesh = \"auto\") instead of --probe\n";
    return kExitUsage;
  }
  if (options.probe)
    return runPlanProbe(options);
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
  request.fusedKernels = fusedKernelsOption(options.fusedKernels);
  // The mesh search (--gpus, or mesh = "auto"): its report first, then the
  // winner's plan below.
  request.searchDevices = options.gpus;
  request.searchNodes = options.nodes;
  request.deviceProfile = options.deviceProfile;
  request.printSearch = true;
  request.searchOnly = options.searchOnly || options.json;
  request.json = options.json;

  if (options.nodes > 0 && options.gpus <= 0) {
    llvm::errs() << "llmc plan: error: --nodes needs --gpus N (the devices "
                    "to search a mesh for) or --probe\n";
    return kExitUsage;
  }
  Compiled compiled;
  if (int code = compileModule(session, request, compiled))
    return code == kSearchOnlyDone ? kExitOk : code;
  if (options.json) {
    llvm::errs() << "llmc plan: error: --json prints the mesh search, and "
                 << options.input
                 << " has none; give --gpus N or [parallel] mesh = \"auto\"\n";
    return kExitUsage;
  }
  mlir::ModuleOp module = *compiled.module;
  auto function = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  if (!function)
    function = module.lookupSymbol<mlir::func::FuncOp>("loss");
  if (!function) {
    llvm::errs() << options.input << ": error: no @train_step or @loss\n";
    return kExitRejected;
  }
  mlir::FailureOr<llmc::BufferPlan> plan;
  int64_t largestStage = -1;
  if (mlir::failed(largestPlan(function, plan, largestStage)))
    return kExitRejected;
  // The device profile of the step-time prediction: --device-profile, or
  // from [parallel] devices (cuda: h200, the GPU we calibrated; else cpu).
  std::string profileName = options.deviceProfile;
  bool defaultProfile = profileName.empty();
  if (defaultProfile)
    profileName = options.gpus > 0 ||
                          (compiled.description &&
                           llvm::StringRef(compiled.description->parallel.devices)
                               .starts_with("cuda"))
                      ? "h200"
                      : "cpu";
  llvm::Expected<llmc::planner::DeviceProfile> profile =
      llmc::planner::lookupDeviceProfile(profileName);
  if (!profile) {
    llvm::errs() << "llmc plan: " << llvm::toString(profile.takeError())
                 << "\n";
    return kExitUsage;
  }
  llvm::raw_ostream &os = llvm::outs();
  os << "memory plan of @" << function.getSymName() << " (" << options.input;
  if (compiled.description)
    os << "; " << compiled.description->train.batchSize << " x "
       << compiled.description->train.seqLen << " tokens per step";
  // A partitioned step is one program per rank, the same on every rank
  // (SPMD): its buffer plan is each rank's memory.
  mlir::FailureOr<llmc::Mesh> mesh = llmc::Mesh::fromModule(module);
  bool partitioned = function->hasAttr("llmc.partitioned") && succeeded(mesh);
  if (partitioned) {
    os << "), per rank, on each of " << mesh->numDevices() << " ranks of mesh {";
    for (size_t i = 0; i < mesh->names.size(); ++i)
      os << (i ? ", " : "") << mesh->names[i] << "=" << mesh->sizes[i];
    os << "}:\n";
  } else {
    os << "), one device:\n";
  }
  printMemoryRows(os, *plan, largestStage, options.peakBuffers);
  printKernelsAndRemat(os, function, *plan);
  if (!partitioned) {
    os << "  communication: none (one device)\n";
    printStepTime(os, function, nullptr, *profile, plan->arenaBytes,
                  defaultProfile, options.byOp);
    return kExitOk;
  }
  if (auto pipeline =
          function->getAttrOfType<mlir::DictionaryAttr>("llmc.pipeline"))
    if (mlir::failed(printPipelineStages(os, function, pipeline)))
      return kExitRejected;
  printCommunication(os, function, *mesh);
  printStepTime(os, function, &*mesh, *profile, plan->arenaBytes,
                defaultProfile, options.byOp);
  return kExitOk;
}

} // namespace llmc::driver
