//===- Probe.cpp - a candidate's cost from two small compiles -------------===//
//
// 1. Options: the run description's pipeline options with the candidate's
//    mesh, ZeRO stage, remat and microbatches (pipelines: equal stages).
// 2. Probe compiles: the model with fewer layers through the whole
//    pipeline, measured as `llmc plan` measures (cost model per stage,
//    buffer plan per stage).
// 3. Extrapolation: linear in the layers, stage by stage.
// 4. Several microbatches: compiled with one, then split into the
//    candidate's (planner/Microbatches.cpp).
//
//===----------------------------------------------------------------------===//
#include "planner/Probe.h"

#include "analysis/CostModel.h"

#include "analysis/BufferPlan.h"
#include "frontend/models/Models.h"
#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "sharding/Communication.h"
#include "sharding/Sharding.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <functional>
#include <thread>

namespace llmc::planner {

CompilePipelineOptions pipelineOptionsFor(const RunDescription &run) {
  CompilePipelineOptions options;
  const TrainConfig &t = run.train;
  options.microbatches = t.microbatches;
  OptimizerSettings &o = options.optimizer;
  o.learningRate = t.learningRate;
  o.minLearningRate = t.minLearningRate;
  o.warmupSteps = t.warmupSteps;
  o.totalSteps = t.steps;
  o.schedule = t.schedule == LrSchedule::Cosine   ? "cosine"
               : t.schedule == LrSchedule::Linear ? "linear"
                                                  : "constant";
  o.weightDecay = t.weightDecay;
  o.decayAll = t.decayAll;
  o.beta1 = t.beta1;
  o.beta2 = t.beta2;
  o.epsilon = t.epsilon;
  o.gradClip = t.gradClip;
  const PrecisionConfig &p = run.precision;
  options.precision.policy = p.policy == PrecisionPolicy::Bf16   ? "bf16"
                             : p.policy == PrecisionPolicy::Fp16 ? "fp16"
                             : p.policy == PrecisionPolicy::Fp8  ? "fp8"
                                                                 : "fp32";
  options.precision.initialLossScale = p.initialLossScale;
  options.precision.lossScaleGrowthInterval = p.lossScaleGrowthInterval;
  const MemoryConfig &m = run.memory;
  options.remat = m.remat == RematPolicy::Selective ? "selective"
                  : m.remat == RematPolicy::Full    ? "full"
                  : m.remat == RematPolicy::Auto    ? "auto"
                                                    : "none";
  options.memoryBudgetBytes =
      static_cast<int64_t>(m.budgetGiB * 1024.0 * 1024.0 * 1024.0);
  const ParallelConfig &par = run.parallel;
  options.parallel.dp = par.dp;
  options.parallel.tp = par.tp;
  options.parallel.cp = par.cp;
  options.parallel.ep = par.ep;
  options.parallel.pp = par.pp;
  options.parallel.pipelineSchedule =
      par.pipelineSchedule == PipelineSchedule::GPipe ? "gpipe"
      : par.pipelineSchedule == PipelineSchedule::Interleaved
          ? "interleaved"
          : "1f1b";
  options.parallel.virtualStages = par.virtualStages;
  options.parallel.pipelineBoundaries = par.pipelineBoundaries;
  options.parallel.sp = par.sequenceParallel;
  options.parallel.zero = par.zero;
  // Buffers planned for the backend that runs the step, as the driver
  // plans them (llmc compile, llmc plan): a probe and the winner's plan
  // are one computation.
  options.fusedKernels = llvm::StringRef(par.devices).starts_with("cuda");
  return options;
}

CompilePipelineOptions candidateOptions(CompilePipelineOptions base,
                                        const Candidate &c, int64_t layers) {
  base.parallel.dp = c.dp;
  base.parallel.tp = c.tp;
  base.parallel.pp = c.pp;
  base.parallel.cp = c.cp;
  base.parallel.ep = c.ep;
  base.parallel.zero = c.zero;
  base.parallel.sp = false;
  base.parallel.pipelineSchedule = "1f1b";
  base.parallel.virtualStages = 1;
  base.parallel.pipelineBoundaries.clear();
  if (c.pp > 1)
    for (int64_t s = 1; s < c.pp; ++s)
      base.parallel.pipelineBoundaries.push_back(s * layers / c.pp);
  base.microbatches = c.microbatches;
  base.remat = rematName(c.remat);
  return base;
}

double Measure::stepSeconds() const {
  if (stages.empty())
    return 0;
  double critical = pipelineSeconds > 0
                        ? pipelineSeconds
                        : stages[busiest].busy() / std::max(1e-9, 1.0 - bubble);
  if (shared.hostCores <= 0)
    return critical;
  // As llmc plan's programStep: each stage's ranks run its ops.
  double totalBusy = 0;
  for (const StageMeasure &stage : stages)
    totalBusy += stage.busy() * static_cast<double>(ranks) /
                 static_cast<double>(stages.size());
  // The drain over every stage's collectives (each stage has as many
  // ranks).
  std::map<std::string, double> commSeconds;
  for (const StageMeasure &stage : stages)
    for (const auto &[axes, seconds] : stage.commSeconds)
      commSeconds[axes] += seconds;
  double drain = shared.drainShare(commSeconds, groupRanks, ranks);
  return std::max(critical, shared.seconds(totalBusy, ranks, bubble, drain));
}

double Measure::memoryBytes() const {
  double most = 0;
  for (const StageMeasure &s : stages)
    most = std::max(most, s.arena);
  return most;
}

namespace {
int64_t busiestOf(const std::vector<StageMeasure> &stages) {
  int64_t best = 0;
  for (int64_t s = 1; s < static_cast<int64_t>(stages.size()); ++s)
    if (stages[s].busy() > stages[best].busy())
      best = s;
  return best;
}

/// "collectives dp,tp (nvlink)" -> "dp,tp".
std::string axesOfGroup(llvm::StringRef group) {
  group.consume_front("collectives ");
  return group.split(" (").first.str();
}

/// A hash of what the buffer planner and the cost model read of the ops of
/// each pipeline stage: per op in program order its name, phase,
/// properties (of a send or receive its axis only), its
/// attributes but `llmc.stage` and `llmc.reason`, its result and operand
/// types and where each operand comes from (an earlier op of the stage, by
/// distance; an op of every stage; an argument, by its attributes but its
/// name and stage), nested ops alike; the arguments and results of the
/// stage, by type and attributes. Two stages of equal signature (a
/// pipeline's middle stages: the same layers, sends and schedule) plan and
/// cost alike (ProbeTest.StagesOfOneSignatureMeasuredOnce compares them
/// with StageReuse::None).
llvm::hash_code attributesBut(mlir::DictionaryAttr attrs,
                              llvm::ArrayRef<llvm::StringRef> skipped) {
  llvm::hash_code h = llvm::hash_value(0);
  if (!attrs)
    return h;
  for (mlir::NamedAttribute a : attrs)
    if (!llvm::is_contained(skipped, a.getName().getValue()))
      h = llvm::hash_combine(h, a.getName().getAsOpaquePointer(),
                             a.getValue().getAsOpaquePointer());
  return h;
}

llvm::hash_code opShape(mlir::Operation &op) {
  llvm::hash_code h = llvm::hash_combine(
      op.getName().getAsOpaquePointer(), static_cast<int>(phaseOf(op.getLoc())),
      attributesBut(op.getDiscardableAttrDictionary(),
                    {"llmc.stage", "llmc.reason"}));
  // Of a transfer the planner and the cost model read the axis, not the
  // stages it joins (a middle stage sends to its next one, and the
  // gradients of the norm all to the last).
  if (auto send = llvm::dyn_cast<SendOp>(op))
    h = llvm::hash_combine(h, send.getAxis());
  else if (auto recv = llvm::dyn_cast<RecvOp>(op))
    h = llvm::hash_combine(h, recv.getAxis());
  else
    h = llvm::hash_combine(h, op.hashProperties());
  for (mlir::Type t : op.getResultTypes())
    h = llvm::hash_combine(h, t.getAsOpaquePointer());
  for (mlir::Value v : op.getOperands())
    h = llvm::hash_combine(h, v.getType().getAsOpaquePointer());
  for (mlir::Region &region : op.getRegions())
    region.walk([&](mlir::Operation *inner) {
      h = llvm::hash_combine(h, opShape(*inner));
      for (mlir::Value v : inner->getOperands())
        if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v))
          h = llvm::hash_combine(h, arg.getArgNumber());
    });
  return h;
}

std::vector<llvm::hash_code> stageSignatures(mlir::func::FuncOp function,
                                             int64_t stages) {
  std::vector<llvm::hash_code> hash(stages, llvm::hash_value(0));
  if (stages <= 1)
    return hash;
  auto stageOf = [](mlir::DictionaryAttr attrs) -> int64_t {
    auto attr = attrs ? attrs.getAs<mlir::IntegerAttr>("llmc.stage")
                      : mlir::IntegerAttr();
    return attr ? attr.getInt() : -1;
  };
  llvm::SmallVector<llvm::StringRef> names = {"llmc.name", "llmc.stage"};
  // The arguments a stage holds, by type and attributes but name and stage.
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    mlir::DictionaryAttr attrs = function.getArgAttrDict(i);
    int64_t s = stageOf(attrs);
    if (s >= 0 && s < stages)
      hash[s] = llvm::hash_combine(
          hash[s], function.getArgument(i).getType().getAsOpaquePointer(),
          attributesBut(attrs, names));
  }
  // Per op, where it sits: its stage (-1: every stage) and its index among
  // the ops of that stage (or of every stage).
  llvm::DenseMap<mlir::Operation *, std::pair<int64_t, int64_t>> where;
  std::vector<int64_t> count(stages, 0);
  int64_t common = 0;
  auto source = [&](mlir::Value v, int64_t s) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(v)) {
      mlir::DictionaryAttr attrs = function.getArgAttrDict(arg.getArgNumber());
      int64_t at = stageOf(attrs);
      return llvm::hash_combine(1, at < 0 ? -1 : at == s ? 0 : 1,
                                attributesBut(attrs, names));
    }
    auto result = llvm::cast<mlir::OpResult>(v);
    auto [ds, index] = where.lookup(result.getOwner());
    if (ds < 0)
      return llvm::hash_combine(2, index, result.getResultNumber());
    if (ds == s)
      return llvm::hash_combine(3, count[s] - index, result.getResultNumber());
    return llvm::hash_combine(4); // another stage's (only the return's)
  };
  mlir::Block &body = function.getBody().front();
  for (mlir::Operation &op : body) {
    int64_t only = stageOf(op.getDiscardableAttrDictionary());
    llvm::hash_code shape = opShape(op);
    for (int64_t s = only < 0 ? 0 : only; s < (only < 0 ? stages : only + 1);
         ++s) {
      llvm::hash_code h = shape;
      for (mlir::Value v : op.getOperands())
        if (only >= 0 || !llvm::isa<mlir::func::ReturnOp>(op) ||
            llvm::isa<mlir::BlockArgument>(v) ||
            where.lookup(v.getDefiningOp()).first == s)
          h = llvm::hash_combine(h, source(v, s));
      hash[s] = llvm::hash_combine(hash[s], h);
    }
    where[&op] = only < 0 ? std::make_pair(int64_t{-1}, common++)
                          : std::make_pair(only, count[only]++);
  }
  // The results a stage returns, by type and attributes but name and stage.
  for (unsigned i = 0; i < function.getNumResults(); ++i) {
    mlir::DictionaryAttr attrs = function.getResultAttrDict(i);
    int64_t s = stageOf(attrs);
    if (s >= 0 && s < stages)
      hash[s] = llvm::hash_combine(
          hash[s], function.getResultTypes()[i].getAsOpaquePointer(),
          attributesBut(attrs, names));
  }
  return hash;
}

/// The buffer plan and the cost of one stage (-1: the whole program) into
/// `m`, whose flops and latencies are already counted.
mlir::LogicalResult planAndCost(mlir::func::FuncOp function, const Mesh *mesh,
                                const DeviceProfile &profile, int64_t stage,
                                StageMeasure &m,
                                std::map<std::string, int64_t> &groupRanks) {
  mlir::FailureOr<BufferPlan> plan = planBuffers(function, stage);
  if (mlir::failed(plan))
    return mlir::failure();
  StepCost cost = estimateStep(function, mesh, profile, stage, &*plan);
  m.compute = cost.compute;
  m.communication = cost.communication;
  m.hidden = std::max(0.0, cost.noOverlap() - cost.seconds());
  m.optimizer = cost.optimizer;
  // The launches as the cost model counts them (a region the backend
  // does not run as one kernel is its ops; a GEMM with its epilogue and
  // a folded residual add launch once and not at all).
  m.forwardBackwardKernels =
      static_cast<double>(cost.forwardBackwardLaunches);
  for (const GroupCost &g : cost.groups)
    if (g.communication) {
      std::string axes = axesOfGroup(g.group);
      m.commSeconds[axes] += g.seconds;
      m.commBytes[axes] += g.bytes;
      groupRanks[axes] = g.groupRanks;
    }
  m.arena = static_cast<double>(plan->arenaBytes);
  m.activations = static_cast<double>(plan->memory.mostActivations);
  m.persistent = static_cast<double>(plan->memory.weights +
                                     plan->memory.optimizerState +
                                     plan->memory.gradients);
  return mlir::success();
}

/// What planAndCost sets, from a stage of the same signature.
void copyCosts(const StageMeasure &from, StageMeasure &to) {
  to.compute = from.compute;
  to.communication = from.communication;
  to.hidden = from.hidden;
  to.optimizer = from.optimizer;
  to.forwardBackwardKernels = from.forwardBackwardKernels;
  to.commSeconds = from.commSeconds;
  to.commBytes = from.commBytes;
  to.arena = from.arena;
  to.activations = from.activations;
  to.persistent = from.persistent;
}

} // namespace

mlir::FailureOr<Measure> measureProgram(mlir::ModuleOp module,
                                        const DeviceProfile &profile,
                                        StageReuse reuse) {
  auto function = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  if (!function)
    return mlir::failure();
  mlir::FailureOr<Mesh> mesh = Mesh::fromModule(module);
  bool partitioned = function->hasAttr("llmc.partitioned") && succeeded(mesh);
  const Mesh *meshPtr = partitioned ? &*mesh : nullptr;
  Measure measure;
  measure.ranks = partitioned ? mesh->numDevices() : 1;
  measure.shared = profile.shared;
  measure.launchCost = profile.launchCost;
  int64_t stages = 1, pipelineMicrobatches = 1;
  if (auto pipeline =
          function->getAttrOfType<mlir::DictionaryAttr>("llmc.pipeline")) {
    stages = pipeline.getAs<mlir::IntegerAttr>("stages").getInt();
    measure.bubble =
        pipeline.getAs<mlir::FloatAttr>("bubble").getValueAsDouble();
    measure.schedule =
        pipeline.getAs<mlir::StringAttr>("schedule").getValue().str();
    measure.virtualStages =
        pipeline.getAs<mlir::IntegerAttr>("virtual_stages").getInt();
    pipelineMicrobatches =
        pipeline.getAs<mlir::IntegerAttr>("microbatches").getInt();
  }
  // The forward and backward flops of each stage (the pipeline
  // simulation's unit costs) and the latency of its collectives that run
  // once per microbatch, in one walk (an op without `llmc.stage` counts in
  // every stage): a walk per stage made a probe of p stages cost p walks.
  std::vector<StageMeasure> perStage(stages);
  for (mlir::Operation &op : function.getBody().front()) {
    int64_t only = -1; // every stage
    if (stages > 1)
      if (auto attr = op.getAttrOfType<mlir::IntegerAttr>("llmc.stage")) {
        only = attr.getInt();
        if (only < 0 || only >= stages)
          continue;
      }
    Phase phase = phaseOf(op.getLoc());
    if (phase == Phase::Optimizer)
      continue;
    std::optional<double> flops;
    if (auto cost = llvm::dyn_cast<CostOpInterface>(op))
      flops = cost.getFlops();
    double latency = 0;
    if (meshPtr) {
      std::optional<CollectiveTraffic> t = collectiveTraffic(&op, *meshPtr);
      if (t)
        latency = collectiveCost(*t, *meshPtr, profile).latency -
                  linkFor(*meshPtr, t->axes, profile).callLatency;
      else if (auto send = llvm::dyn_cast<SendOp>(op)) {
        t = CollectiveTraffic();
        t->axes.push_back(static_cast<int64_t>(send.getAxis()));
        latency = linkFor(*meshPtr, t->axes, profile).latency;
      }
      if (!t || latency <= 0 ||
          llvm::is_contained(t->axes, meshPtr->axisIndex("dp")))
        latency = 0;
    }
    for (int64_t s = only < 0 ? 0 : only; s < (only < 0 ? stages : only + 1);
         ++s) {
      StageMeasure &m = perStage[s];
      if (flops)
        (phase == Phase::Forward ? m.forwardFlops : m.backwardFlops) +=
            *flops;
      if (latency > 0)
        m.microbatchLatency += latency;
    }
  }
  // Stages of the same signature (the middle stages of a probe of equal
  // stages) are planned and costed once: the planner and the cost model
  // walk the whole function for each stage, so a probe of p stages cost
  // p walks of p stages' ops (most of a pp32 probe's measure).
  std::vector<llvm::hash_code> signature =
      stageSignatures(function, stages);
  std::map<llvm::hash_code, int64_t> measured; // signature -> stage
  for (int64_t s = 0; s < stages; ++s) {
    int64_t stage = stages > 1 ? s : -1;
    auto same = measured.find(signature[s]);
    bool reused = reuse == StageReuse::SameSignature && same != measured.end();
    if (reused) {
      copyCosts(measure.stages[same->second], perStage[s]);
      measure.stages.push_back(std::move(perStage[s]));
      continue;
    }
    measured.emplace(signature[s], s);
    if (mlir::failed(planAndCost(function, meshPtr, profile, stage,
                                 perStage[s], measure.groupRanks)))
      return mlir::failure();
    measure.stages.push_back(std::move(perStage[s]));
  }
  measure.busiest = busiestOf(measure.stages);
  if (stages > 1) {
    // The compiled schedule, simulated with the stages' times.
    std::vector<double> busy, optimizer, share;
    for (const StageMeasure &st : measure.stages) {
      busy.push_back(st.busy());
      optimizer.push_back(st.optimizer);
      double flops = st.forwardFlops + st.backwardFlops;
      share.push_back(flops > 0 ? st.forwardFlops / flops : 1.0 / 3.0);
    }
    measure.pipelineSeconds = simulatePipeline(
        busy, optimizer, share, measure.schedule, measure.virtualStages,
        pipelineMicrobatches, &measure.bubble);
  }
  return measure;
}

Measure extrapolate(const Measure &a, double xa, const Measure &b, double xb,
                    double x) {
  double t = (x - xa) / (xb - xa);
  auto line = [&](double va, double vb) { return va + (vb - va) * t; };
  auto lineMap = [&](const std::map<std::string, double> &ma,
                     const std::map<std::string, double> &mb) {
    std::map<std::string, double> out;
    for (const auto &[k, v] : ma)
      out[k] = line(v, mb.count(k) ? mb.at(k) : 0.0);
    for (const auto &[k, v] : mb)
      if (!ma.count(k))
        out[k] = line(0.0, v);
    return out;
  };
  Measure out;
  out.ranks = a.ranks;
  out.shared = a.shared;
  out.launchCost = a.launchCost;
  out.groupRanks = b.groupRanks;
  out.groupRanks.insert(a.groupRanks.begin(), a.groupRanks.end());
  out.schedule = a.schedule;
  out.virtualStages = a.virtualStages;
  for (size_t s = 0; s < a.stages.size() && s < b.stages.size(); ++s) {
    const StageMeasure &sa = a.stages[s], &sb = b.stages[s];
    StageMeasure m;
    m.compute = line(sa.compute, sb.compute);
    m.communication = line(sa.communication, sb.communication);
    m.commSeconds = lineMap(sa.commSeconds, sb.commSeconds);
    m.commBytes = lineMap(sa.commBytes, sb.commBytes);
    m.arena = line(sa.arena, sb.arena);
    m.activations = line(sa.activations, sb.activations);
    m.persistent = line(sa.persistent, sb.persistent);
    m.forwardFlops = line(sa.forwardFlops, sb.forwardFlops);
    m.backwardFlops = line(sa.backwardFlops, sb.backwardFlops);
    m.forwardBackwardKernels =
        line(sa.forwardBackwardKernels, sb.forwardBackwardKernels);
    m.microbatchLatency = line(sa.microbatchLatency, sb.microbatchLatency);
    m.hidden = line(sa.hidden, sb.hidden);
    m.optimizer = line(sa.optimizer, sb.optimizer);
    out.stages.push_back(std::move(m));
  }
  out.busiest = busiestOf(out.stages);
  return out;
}

mlir::FailureOr<Measure>
compileAndMeasure(mlir::MLIRContext &context, const RunDescription &run,
                  int64_t layers, const CompilePipelineOptions &options,
                  const DeviceProfile &profile, std::string &error,
                  StageReuse reuse) {
  RunDescription probe = run;
  probe.model.numLayers = layers;
  int64_t micro = std::max<int64_t>(1, options.microbatches);
  // Diagnostics of a probe are the search's to report (as a rejection),
  // not the user's.
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error && error.empty())
      error = d.str();
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = buildLossModule(
      context, probe.model, probe.train.batchSize / micro, probe.train.seqLen);
  if (!module) {
    if (error.empty())
      error = "the model builder failed";
    return mlir::failure();
  }
  mlir::PassManager pm(&context);
  CompilePipelineOptions probeOptions = options;
  probeOptions.memoryBudgetBytes = 0; // the fit is judged on the full model
  probeOptions.printCost = false;
  probeOptions.fusionReport = false;
  probeOptions.training = true;
  // Up to the buffer plan, not through it: measureProgram plans every
  // stage itself, and the pass would plan the whole function and every
  // stage once more (a third of a search's time, measured: docs/log/
  // planning-2026-12-03.md). What measureProgram reads of the pass's
  // output is the mode it plans in, set here as the pass sets it.
  std::vector<std::string> stages = compilePipelineStages(probeOptions);
  probeOptions.stopAfter = static_cast<int>(
      llvm::find(stages, "llmc-plan-buffers") - stages.begin());
  buildCompilePipeline(pm, probeOptions);
  // The module is verified once, after the last pass, not after each
  // (about a quarter of a probe's pass time, measured on GPT-3's pp32
  // probes: docs/log/planning-2026-12-03.md).
  pm.enableVerifier(false);
  if (mlir::failed(pm.run(*module)) || mlir::failed(mlir::verify(*module))) {
    if (error.empty())
      error = "the compile failed";
    return mlir::failure();
  }
  if (probeOptions.fusedKernels)
    for (auto function : module->getOps<mlir::func::FuncOp>())
      function->setAttr(kFusedKernelsAttrName,
                        mlir::UnitAttr::get(&context));
  mlir::FailureOr<Measure> measure = measureProgram(*module, profile, reuse);
  if (mlir::failed(measure) && error.empty())
    error = "no @train_step to measure";
  return measure;
}

std::pair<int64_t, int64_t> probeLayers(const Candidate &c) {
  // Three layers at least without a pipeline: the smallest programs are
  // not yet the per-layer pattern. llmc-optimizer adds 86 kernels from one
  // to two layers of GPT-2, then 36 per layer; and with two layers the
  // peak of the buffer plan can sit elsewhere (for GPT-2 of width 128,
  // 16 x 64 tokens: the activations kept grow by 1.7 MiB from two to three
  // layers, then by 4.6 MiB per layer, measured).
  if (c.pp <= 1)
    return {3, 4};
  return {c.pp, 2 * c.pp};
}

mlir::FailureOr<Measure> evaluateCandidate(mlir::MLIRContext &context,
                                           const RunDescription &run,
                                           const Candidate &candidate,
                                           const DeviceProfile &profile,
                                           std::string &error,
                                           int64_t *compiles, bool exact) {
  // Probed with one microbatch (its microbatches applied below) unless
  // `exact`.
  bool derive = candidate.microbatches > 1 && !exact;
  Candidate probe = candidate;
  probe.virtualStages = 1; // probes are 1F1B; the chunks are applied after
  if (derive)
    probe.microbatches = 1;
  mlir::FailureOr<Measure> measure =
      probeAndExtrapolate(context, run, probe, profile, error, compiles);
  if (mlir::failed(measure))
    return mlir::failure();
  if (derive)
    return withMicrobatches(*measure, candidate, profile);
  schedulePipeline(*measure, candidate);
  return measure;
}

int64_t probeStages(const Candidate &probe, int64_t layers,
                    const DeviceProfile &profile) {
  int64_t m = std::max<int64_t>(1, probe.microbatches);
  int64_t reduced = m + 2;
  if (probe.pp <= reduced || probe.virtualStages > 1 || layers % probe.pp)
    return probe.pp;
  int64_t inner = probe.devices() / probe.pp;
  bool withinNode = probe.pp * inner <= profile.devicesPerNode;
  bool reducedWithinNode = reduced * inner <= profile.devicesPerNode;
  return withinNode == reducedWithinNode ? reduced : probe.pp;
}

namespace {

/// The measure of `probe`'s `pp` stages from that of its `compiled`
/// stages (probeStages): stage s of pp is the compiled stage of the same
/// warm-up count (the first, the last, or middle stage M + 1 - w for w =
/// min(pp - s - 1, M)).
Measure expandStages(const Measure &compiled, const Candidate &probe) {
  int64_t p = probe.pp;
  int64_t c = static_cast<int64_t>(compiled.stages.size());
  int64_t m = c - 2;
  Measure out = compiled;
  out.stages.clear();
  for (int64_t s = 0; s < p; ++s) {
    int64_t from = s == 0 ? 0 : s == p - 1 ? c - 1
                                           : m + 1 - std::min(p - s - 1, m);
    out.stages.push_back(compiled.stages[from]);
  }
  out.ranks = probe.devices();
  out.busiest = busiestOf(out.stages);
  return out;
}
} // namespace

mlir::FailureOr<Measure> probeAndExtrapolate(mlir::MLIRContext &context,
                                             const RunDescription &run,
                                             const Candidate &probe,
                                             const DeviceProfile &profile,
                                             std::string &error,
                                             int64_t *compiles,
                                             LayerSlope *slope,
                                             mlir::MLIRContext *second) {
  if (int64_t stages = probeStages(probe, run.model.numLayers, profile);
      stages < probe.pp) {
    // The same layers per stage on fewer stages, expanded to pp.
    RunDescription fewer = run;
    fewer.model.numLayers = run.model.numLayers / probe.pp * stages;
    Candidate reduced = probe;
    reduced.pp = stages;
    mlir::FailureOr<Measure> compiled = probeAndExtrapolate(
        context, fewer, reduced, profile, error, compiles, slope, second);
    if (mlir::failed(compiled))
      return mlir::failure();
    Measure out = expandStages(*compiled, probe);
    setChunkTransfer(out, run, probe, profile);
    Candidate oneChunk = probe;
    oneChunk.virtualStages = 1;
    schedulePipeline(out, oneChunk);
    return out;
  }
  CompilePipelineOptions base = pipelineOptionsFor(run);
  int64_t layers = run.model.numLayers;
  auto [n1, n2] = probeLayers(probe);
  if (layers <= n2) {
    // Small enough to compile as it is.
    if (compiles)
      ++*compiles;
    mlir::FailureOr<Measure> whole = compileAndMeasure(
        context, run, layers, candidateOptions(base, probe, layers), profile,
        error);
    if (succeeded(whole))
      setChunkTransfer(*whole, run, probe, profile);
    return whole;
  }
  // The two probes are independent compiles: given a second context, the
  // larger one runs on a thread of its own in it (its own diagnostics, so
  // each keeps its first error), and the pair takes about as long as its
  // larger probe on two cores. What is counted and reported is as without.
  std::string secondError;
  mlir::FailureOr<Measure> b = mlir::failure();
  auto compileSecond = [&](mlir::MLIRContext &in) {
    b = compileAndMeasure(in, run, n2, candidateOptions(base, probe, n2),
                          profile, secondError);
  };
  std::thread worker;
  if (second)
    worker = std::thread(compileSecond, std::ref(*second));
  mlir::FailureOr<Measure> a = compileAndMeasure(
      context, run, n1, candidateOptions(base, probe, n1), profile, error);
  if (worker.joinable())
    worker.join();
  if (compiles)
    ++*compiles;
  if (mlir::failed(a))
    return mlir::failure();
  if (!second)
    compileSecond(context);
  if (compiles)
    ++*compiles;
  if (mlir::failed(b)) {
    error = secondError;
    return mlir::failure();
  }
  if (slope && probe.pp <= 1 && !a->stages.empty() && !b->stages.empty()) {
    const StageMeasure &sa = a->stages.front(), &sb = b->stages.front();
    slope->kernels = std::max(0.0, ((sb.compute - sb.optimizer) -
                                    (sa.compute - sa.optimizer)) /
                                       static_cast<double>(n2 - n1));
    for (const auto &[axes, seconds] : sb.commSeconds)
      slope->commSeconds[axes] =
          (seconds - (sa.commSeconds.count(axes) ? sa.commSeconds.at(axes)
                                                 : 0.0)) /
          static_cast<double>(n2 - n1);
    slope->known = true;
  }
  Measure out = extrapolate(*a, static_cast<double>(n1), *b,
                            static_cast<double>(n2),
                            static_cast<double>(layers));
  setChunkTransfer(out, run, probe, profile);
  Candidate oneChunk = probe;
  oneChunk.virtualStages = 1; // compiled 1F1B (candidateOptions)
  schedulePipeline(out, oneChunk);
  return out;
}

} // namespace llmc::planner
