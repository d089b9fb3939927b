//===- LlmcPlanSearch.cpp - mesh = "auto" and llmc plan --gpus -------------===//
//
// The driver side of the mesh search (planner/Search.h, docs/planning.md
// "The search"): which devices, profile and budget; the report (the top
// five, the pruned candidates by reason with an example each, why the
// winner wins); and the run rewritten for the winner, recorded in the IR as
// the module attribute llmc.auto_mesh.
//
//===----------------------------------------------------------------------===//
#include "tools/LlmcDriver.h"

#include "planner/Search.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/JSON.h"

#include <chrono>
#include <map>

namespace llmc::driver {

namespace {
/// The device count of "cuda:8" / "cpu:4" (0 when none is given).
int64_t deviceCount(llvm::StringRef devices) {
  int64_t n = 0;
  if (!devices.contains(':') ||
      devices.split(':').second.getAsInteger(10, n))
    return 0;
  return n;
}

std::string msText(double seconds) {
  return llvm::formatv("{0:f2}", seconds * 1e3).str();
}

/// The fastest candidates that fit in --json's "ranked".
constexpr size_t kJsonRanked = 20;

/// "cpu" for a run on CPU devices, else "cuda": the kind of the pasted
/// [parallel] devices.
std::string devicesKind(const llmc::RunDescription &run) {
  return llvm::StringRef(run.parallel.devices).starts_with("cpu") ? "cpu"
                                                                   : "cuda";
}

void printReport(llvm::raw_ostream &os, const llmc::RunDescription &run,
                 const planner::SearchResult &result,
                 const planner::SearchOptions &options, int64_t nodes) {
  const planner::DeviceProfile &profile = options.profile;
  std::map<std::string, std::pair<int64_t, const planner::Pruned *>> byRule;
  int64_t dominated = 0, tooLarge = 0, bounded = 0;
  for (const planner::Pruned &p : result.pruned) {
    auto &entry = byRule[p.why.rule];
    if (entry.first++ == 0)
      entry.second = &p;
    dominated += p.why.rule == "dominated";
    tooLarge += p.why.rule == "does not fit";
    bounded += p.why.rule == "bound";
  }
  int64_t evaluated =
      static_cast<int64_t>(result.ranked.size() + result.tooLarge.size());
  os << llvm::formatv(
      "mesh search: {0} devices ({1} node(s) of {2}) on device profile '{3}', "
      "budget {4} per rank\n",
      options.devices, nodes, profile.devicesPerNode, profile.name,
      planner::gibText(options.budgetBytes));
  os << llvm::formatv(
      "  {0} candidates in {1:f2} s: {2} pruned by rules, {3} dominated, {8} "
      "bounded (their lower bound is over the 20th fastest that fits), "
      "{4} evaluated ({5} fit, {6} do not) with {7} probe compiles\n",
      result.candidates, result.seconds,
      static_cast<int64_t>(result.pruned.size()) - dominated - tooLarge -
          bounded,
      dominated, evaluated, result.ranked.size(), result.tooLarge.size(),
      result.compiles, bounded);
  os << llvm::formatv(
      "  top five (predicted step time: kernels and collectives on two "
      "streams, a pipeline as its schedule simulated; kernels and "
      "communication of the busiest stage, without overlap; MFU: {0:e2} model flops per step "
      "over the step and the devices' {1} peak; ~: microbatches derived from "
      "a probe of one, not compiled):\n",
      planner::modelFlopsPerStep(run),
      run.precision.policy == llmc::PrecisionPolicy::Bf16 ||
              run.precision.policy == llmc::PrecisionPolicy::Fp8
          ? "bf16"
      : run.precision.policy == llmc::PrecisionPolicy::Fp16 ? "f16"
                                                            : "f32");
  os << "  " << llvm::left_justify("#", 3)
     << llvm::left_justify("candidate", 34) << llvm::right_justify("step ms", 10)
     << llvm::right_justify("kernels", 10) << llvm::right_justify("comm", 9)
     << llvm::right_justify("bubble", 8) << llvm::right_justify("memory/rank", 13)
     << llvm::right_justify("MFU", 7)
     << "  communication by axis (ms, bytes sent per rank)\n";
  for (size_t i = 0; i < result.ranked.size() && i < 5; ++i) {
    const planner::Evaluated &e = result.ranked[i];
    const planner::StageMeasure &s = e.measure.busiestStage();
    std::string comm;
    for (const auto &[axes, seconds] : s.commSeconds)
      comm += llvm::formatv("{0}{1} {2} ms {3:e2} B", comm.empty() ? "" : "; ",
                            axes, msText(seconds), s.commBytes.at(axes))
                  .str();
    os << "  " << llvm::left_justify(std::to_string(i + 1), 3)
       << llvm::left_justify((e.exact ? "" : "~") + e.candidate.text(), 34)
       << llvm::right_justify(msText(e.measure.stepSeconds()), 10)
       << llvm::right_justify(msText(s.compute), 10)
       << llvm::right_justify(msText(s.communication), 9)
       << llvm::right_justify(
              llvm::formatv("{0:f1}%", e.measure.bubble * 100).str(), 8)
       << llvm::right_justify(planner::gibText(e.measure.memoryBytes()), 13)
       << llvm::right_justify(
              llvm::formatv("{0:f1}%",
                            100 * planner::modelFlopsUtilization(
                                      run, e.measure.stepSeconds(),
                                      options.devices, profile))
                  .str(),
              7)
       << "  " << (comm.empty() ? "none" : comm) << "\n";
  }
  if (result.ranked.empty())
    os << "  (none fits)\n";
  os << "  pruned candidates by reason (count, one example):\n";
  for (const auto &[rule, entry] : byRule)
    os << "    " << llvm::left_justify(rule, 20)
       << llvm::right_justify(std::to_string(entry.first), 6) << "  "
       << entry.second->candidate.text() << ": " << entry.second->why.reason
       << "\n";
  os << "  why:\n";
  for (const std::string &line :
       planner::explainWinner(result, options.budgetBytes))
    os << "    " << line << "\n";
  if (const planner::Evaluated *win = result.winner()) {
    os << "    " << planner::explainZero(result, options.budgetBytes) << "\n";
    os << "  the winner as a run description's [parallel] table (paste it "
          "over the file's):\n";
    for (const std::string &line : planner::parallelBlock(
             win->candidate, devicesKind(run), run.model.numLayers))
      os << "    " << line << "\n";
  }
}

/// One evaluated candidate as the JSON report's object.
llvm::json::Object candidateJson(const llmc::RunDescription &run,
                                 const planner::Evaluated &e,
                                 const planner::SearchOptions &options) {
  const planner::Candidate &c = e.candidate;
  const planner::StageMeasure &s = e.measure.busiestStage();
  llvm::json::Object comm;
  for (const auto &[axes, seconds] : s.commSeconds)
    comm[axes] = llvm::json::Object{{"ms", seconds * 1e3},
                                    {"bytes", s.commBytes.at(axes)}};
  return llvm::json::Object{
      {"candidate", c.text()},
      {"dp", c.dp},
      {"tp", c.tp},
      {"pp", c.pp},
      {"cp", c.cp},
      {"ep", c.ep},
      {"zero", c.zero},
      {"remat", planner::rematName(c.remat)},
      {"microbatches", c.microbatches},
      {"virtual_stages", c.virtualStages},
      {"exact", e.exact},
      {"fits", e.fits},
      {"step_ms", e.measure.stepSeconds() * 1e3},
      {"kernels_ms", s.compute * 1e3},
      {"communication_ms", s.communication * 1e3},
      {"bubble", e.measure.bubble},
      {"memory_bytes", e.measure.memoryBytes()},
      {"mfu", planner::modelFlopsUtilization(run, e.measure.stepSeconds(),
                                             options.devices, options.profile)},
      {"communication", std::move(comm)}};
}

/// The report as one JSON object (docs/planning.md lists the fields).
void printJson(llvm::raw_ostream &os, const llmc::RunDescription &run,
               const planner::SearchResult &result,
               const planner::SearchOptions &options, int64_t nodes) {
  int64_t dominated = 0, tooLarge = 0, bounded = 0;
  llvm::json::Object pruned;
  for (const planner::Pruned &p : result.pruned) {
    dominated += p.why.rule == "dominated";
    tooLarge += p.why.rule == "does not fit";
    bounded += p.why.rule == "bound";
    llvm::json::Value &entry = pruned[p.why.rule];
    if (!entry.getAsObject())
      entry = llvm::json::Object{{"count", 0},
                                 {"example", p.candidate.text()},
                                 {"reason", p.why.reason}};
    llvm::json::Object *o = entry.getAsObject();
    (*o)["count"] = *o->getInteger("count") + 1;
  }
  llvm::json::Array ranked;
  for (size_t i = 0; i < result.ranked.size() && i < kJsonRanked; ++i)
    ranked.push_back(candidateJson(run, result.ranked[i], options));
  llvm::json::Array why;
  for (const std::string &line :
       planner::explainWinner(result, options.budgetBytes))
    why.push_back(line);
  const planner::Evaluated *win = result.winner();
  std::string block;
  if (win)
    for (const std::string &line : planner::parallelBlock(
             win->candidate, devicesKind(run), run.model.numLayers))
      block += line + "\n";
  llvm::json::Object out{
      {"devices", options.devices},
      {"nodes", nodes},
      {"devices_per_node", options.profile.devicesPerNode},
      {"profile", options.profile.name},
      {"budget_bytes", options.budgetBytes},
      {"candidates", result.candidates},
      {"pruned_by_rules",
       static_cast<int64_t>(result.pruned.size()) - dominated - tooLarge -
           bounded},
      {"dominated", dominated},
      {"bounded", bounded},
      {"evaluated", static_cast<int64_t>(result.ranked.size() +
                                         result.tooLarge.size())},
      {"fit", static_cast<int64_t>(result.ranked.size())},
      {"probe_compiles", result.compiles},
      {"seconds", result.seconds},
      {"model_flops_per_step", planner::modelFlopsPerStep(run)},
      {"ranked", std::move(ranked)},
      {"pruned", std::move(pruned)},
      {"why", std::move(why)},
      {"zero", planner::explainZero(result, options.budgetBytes)},
      {"winner", win ? llvm::json::Value(candidateJson(run, *win, options))
                     : llvm::json::Value(nullptr)},
      {"parallel_toml", win ? llvm::json::Value(block)
                            : llvm::json::Value(nullptr)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
}
} // namespace

int chooseMesh(Session &session, const CompileRequest &request,
               llmc::RunDescription &run,
               mlir::OwningOpRef<mlir::ModuleOp> &module) {
  std::string where = run.path.empty() ? request.input : run.path;
  // 1. The devices, the profile and the budget.
  int64_t devices = request.searchDevices > 0 ? request.searchDevices
                                              : deviceCount(run.parallel.devices);
  if (devices <= 0) {
    llvm::errs() << where
                 << ": error: mesh = \"auto\" needs the number of devices, got "
                    "devices = \""
                 << run.parallel.devices
                 << "\"; write devices = \"cuda:N\" (or \"cpu:N\"), or pass "
                    "llmc plan --gpus N\n";
    return kExitUsage;
  }
  std::string profileName = request.deviceProfile;
  if (profileName.empty())
    profileName = request.searchDevices > 0 ||
                          llvm::StringRef(run.parallel.devices)
                              .starts_with("cuda")
                      ? "h200"
                      : "cpu";
  llvm::Expected<planner::DeviceProfile> profile =
      planner::lookupDeviceProfile(profileName);
  if (!profile) {
    llvm::errs() << "llmc: " << llvm::toString(profile.takeError()) << "\n";
    return kExitUsage;
  }
  int64_t nodes = request.searchNodes;
  if (nodes > 0) {
    if (devices % nodes != 0) {
      llvm::errs() << "llmc plan: error: expected --nodes to divide --gpus "
                   << devices << ", got " << nodes
                   << "; the nodes hold the same number of devices each\n";
      return kExitUsage;
    }
    profile->devicesPerNode = devices / nodes;
  } else {
    nodes = (devices + profile->devicesPerNode - 1) / profile->devicesPerNode;
  }
  planner::SearchOptions options;
  options.devices = devices;
  options.profile = *profile;
  double gib = 1024.0 * 1024.0 * 1024.0;
  options.budgetBytes = request.budgetGiB >= 0 ? request.budgetGiB * gib
                        : run.memory.budgetGiB > 0 ? run.memory.budgetGiB * gib
                                                   : profile->memoryBytes;
  options.progress = &llvm::errs();

  // 2. The search.
  planner::SearchResult result =
      planner::searchMeshes(session.context, run, options);
  if (request.json)
    printJson(llvm::outs(), run, result, options, nodes);
  else if (request.printSearch)
    printReport(llvm::outs(), run, result, options, nodes);
  const planner::Evaluated *win = result.winner();
  if (request.searchOnly)
    return win ? kSearchOnlyDone : kExitRejected;
  if (!win) {
    llvm::errs() << where << ": error: the mesh search found no candidate "
                 << "for " << devices << " devices that fits: ";
    for (const std::string &line :
         planner::explainWinner(result, options.budgetBytes))
      llvm::errs() << line << "; ";
    llvm::errs() << "`llmc plan " << where << " --gpus " << devices
                 << "` lists every reason\n";
    return kExitRejected;
  }
  const planner::Candidate &c = win->candidate;
  if (!request.printSearch)
    llvm::errs() << llvm::formatv(
        "llmc: mesh = \"auto\": {0} for {1} devices on '{2}' (predicted {3} "
        "ms per step, {4} per rank; {5} candidates searched in {6:f2} s; "
        "`llmc plan` shows the ranking)\n",
        c.text(), devices, profile->name, msText(win->measure.stepSeconds()),
        planner::gibText(win->measure.memoryBytes()), result.candidates,
        result.seconds);

  // 3. The run as the winner asks: the same settings the probes compiled.
  int64_t oldMicro = run.train.microbatches;
  run.parallel.dp = c.dp;
  run.parallel.tp = c.tp;
  run.parallel.pp = c.pp;
  run.parallel.cp = c.cp;
  run.parallel.ep = c.ep;
  run.parallel.zero = c.zero;
  run.parallel.sequenceParallel = false;
  // 1F1B, or interleaved 1F1B with the winner's virtual stages; equal
  // chunks of layers / (pp x v) layers.
  int64_t chunks = c.pp * c.virtualStages;
  run.parallel.pipelineSchedule = c.virtualStages > 1
                                      ? llmc::PipelineSchedule::Interleaved
                                      : llmc::PipelineSchedule::OneFOneB;
  run.parallel.virtualStages = c.virtualStages;
  run.parallel.pipelineBoundaries.clear();
  for (int64_t s = 1; s < chunks; ++s)
    run.parallel.pipelineBoundaries.push_back(s * run.model.numLayers / chunks);
  run.parallel.autoMesh = false;
  run.train.microbatches = c.microbatches;
  run.memory.remat = c.remat == planner::RematChoice::Full
                         ? llmc::RematPolicy::Full
                     : c.remat == planner::RematChoice::Selective
                         ? llmc::RematPolicy::Selective
                         : llmc::RematPolicy::None;
  if (c.microbatches != oldMicro) {
    mlir::Location fileLoc = (*module)->getLoc();
    module = llmc::buildLossModule(session.context, run.model,
                                   run.train.batchSize / c.microbatches,
                                   run.train.seqLen);
    if (!module)
      return kExitRejected;
    (*module)->setLoc(fileLoc);
    for (auto function : module->getOps<mlir::func::FuncOp>())
      if (llvm::isa<mlir::UnknownLoc>(function.getLoc()))
        function->setLoc(fileLoc);
  }
  // 4. The record in the IR (every dump after this shows it).
  mlir::Builder b(&session.context);
  llvm::SmallVector<mlir::NamedAttribute> fields = {
      b.getNamedAttr("dp", b.getI64IntegerAttr(c.dp)),
      b.getNamedAttr("tp", b.getI64IntegerAttr(c.tp)),
      b.getNamedAttr("pp", b.getI64IntegerAttr(c.pp)),
      b.getNamedAttr("cp", b.getI64IntegerAttr(c.cp)),
      b.getNamedAttr("ep", b.getI64IntegerAttr(c.ep)),
      b.getNamedAttr("zero", b.getI64IntegerAttr(c.zero)),
      b.getNamedAttr("remat", b.getStringAttr(planner::rematName(c.remat))),
      b.getNamedAttr("microbatches", b.getI64IntegerAttr(c.microbatches)),
      b.getNamedAttr("virtual_stages", b.getI64IntegerAttr(c.virtualStages)),
      b.getNamedAttr("devices", b.getI64IntegerAttr(devices)),
      b.getNamedAttr("profile", b.getStringAttr(profile->name)),
      b.getNamedAttr("predicted_step_ms",
                     b.getF64FloatAttr(win->measure.stepSeconds() * 1e3)),
      b.getNamedAttr("predicted_memory_gib",
                     b.getF64FloatAttr(win->measure.memoryBytes() /
                                       (1024.0 * 1024.0 * 1024.0))),
      b.getNamedAttr("budget_gib", b.getF64FloatAttr(
                                       options.budgetBytes /
                                       (1024.0 * 1024.0 * 1024.0))),
      b.getNamedAttr("candidates", b.getI64IntegerAttr(result.candidates)),
      b.getNamedAttr("evaluated",
                     b.getI64IntegerAttr(static_cast<int64_t>(
                         result.ranked.size() + result.tooLarge.size())))};
  (*module)->setAttr("llmc.auto_mesh", b.getDictionaryAttr(fields));
  return kExitOk;
}

namespace {

/// The candidate --probe predicts: the run's own [parallel] settings, when
/// the search evaluates such a candidate. -1 to go on, else the exit code.
int probeCandidate(const PlanCommand &options, const llmc::RunDescription &run,
                   planner::Candidate &c) {
  const llmc::ParallelConfig &p = run.parallel;
  c.dp = p.dp;
  c.tp = p.tp;
  c.pp = p.pp;
  c.cp = p.cp;
  c.ep = p.ep;
  c.zero = p.zero;
  c.microbatches = run.train.microbatches;
  c.remat = run.memory.remat == llmc::RematPolicy::Full
                ? planner::RematChoice::Full
            : run.memory.remat == llmc::RematPolicy::Selective
                ? planner::RematChoice::Selective
                : planner::RematChoice::None;
  c.virtualStages = p.virtualStages;
  if (p.sequenceParallel ||
      p.pipelineSchedule == llmc::PipelineSchedule::GPipe ||
      run.memory.remat == llmc::RematPolicy::Auto) {
    llvm::errs() << options.input
                 << ": error: --probe predicts 1F1B and interleaved 1F1B "
                    "pipelines with equal stages, no sp and remat none, "
                    "selective or full (what the search evaluates); remove "
                    "the other settings\n";
    return kExitUsage;
  }
  if (std::optional<planner::Rejection> why =
          planner::checkCandidate(run.model, run.train, c)) {
    llvm::errs() << options.input << ": error: " << c.text() << ": "
                 << why->reason << "\n";
    return kExitRejected;
  }
  return -1;
}

/// The probe's measure of `c`; with several microbatches, fitted from
/// probes of one and of two, and `otherSchedules` says what the other
/// virtual-stage counts would give.
mlir::FailureOr<planner::Measure>
measureProbe(Session &session, const llmc::RunDescription &run,
             const planner::Candidate &c,
             const planner::DeviceProfile &profile, std::string &error,
             int64_t &compiles, std::string &otherSchedules) {
  mlir::FailureOr<planner::Measure> m = mlir::failure();
  // Several microbatches: fitted from probes of one and of two.
  if (c.microbatches > 1) {
    planner::Candidate one = c, two = c;
    one.microbatches = 1;
    two.microbatches = 2;
    mlir::FailureOr<planner::Measure> m1 = planner::probeAndExtrapolate(
        session.context, run, one, profile, error, &compiles);
    mlir::FailureOr<planner::Measure> m2 = mlir::failure();
    if (succeeded(m1))
      m2 = planner::probeAndExtrapolate(session.context, run, two, profile,
                                        error, &compiles);
    if (succeeded(m2))
      m = planner::fitMicrobatches(*m1, *m2, c);
    // The same probes under every virtual-stage count the rules allow
    // (the probes are 1F1B; the schedule is applied after).
    if (succeeded(m2) && c.pp > 1)
      for (int64_t v = 1; v * c.pp <= run.model.numLayers; ++v) {
        planner::Candidate other = c;
        other.virtualStages = v;
        if (v == c.virtualStages ||
            planner::checkCandidate(run.model, run.train, other))
          continue;
        planner::Measure o = planner::fitMicrobatches(*m1, *m2, other);
        otherSchedules += llvm::formatv(
            "  with v={0} ({1}): step {2} ms, bubble {3:f1}%, MFU {4:f1}%, "
            "{5} per rank\n",
            v, v > 1 ? "interleaved" : "1f1b", msText(o.stepSeconds()),
            o.bubble * 100,
            100 * planner::modelFlopsUtilization(run, o.stepSeconds(),
                                                 c.devices(), profile),
            planner::gibText(o.memoryBytes()));
      }
  } else {
    m = planner::evaluateCandidate(session.context, run, c, profile, error,
                                   &compiles);
  }
  return m;
}

} // namespace

int runPlanProbe(const PlanCommand &options) {
  Session session;
  if (llmc::classifySource(options.input) != llmc::SourceKind::RunDescription) {
    llvm::errs() << "llmc plan: error: --probe needs a run description "
                    "(.toml), got '"
                 << options.input << "'\n";
    return kExitUsage;
  }
  llmc::ParseOutcome outcome = llmc::parseRunDescription(options.input);
  if (mlir::failed(llmc::reportConfigDiagnostics(session.context,
                                                 outcome.diagnostics)) ||
      !outcome.ok())
    return kExitRejected;
  llmc::RunDescription run = *outcome.description;
  if (options.batchSize)
    run.train.batchSize = options.batchSize;
  if (options.seqLen)
    run.train.seqLen = options.seqLen;
  planner::Candidate c;
  if (int code = probeCandidate(options, run, c); code >= 0)
    return code;
  std::string profileName = options.deviceProfile;
  if (profileName.empty())
    profileName =
        llvm::StringRef(run.parallel.devices).starts_with("cuda") ? "h200"
                                                                  : "cpu";
  llvm::Expected<planner::DeviceProfile> profile =
      planner::lookupDeviceProfile(profileName);
  if (!profile) {
    llvm::errs() << "llmc plan: " << llvm::toString(profile.takeError())
                 << "\n";
    return kExitUsage;
  }
  int64_t devices = c.devices();
  if (options.nodes > 0) {
    if (devices % options.nodes != 0) {
      llvm::errs() << "llmc plan: error: expected --nodes to divide the "
                   << devices << " ranks of the mesh, got " << options.nodes
                   << "\n";
      return kExitUsage;
    }
    profile->devicesPerNode = devices / options.nodes;
  }
  std::string error;
  int64_t compiles = 0;
  auto start = std::chrono::steady_clock::now();
  std::string otherSchedules;
  mlir::FailureOr<planner::Measure> m = measureProbe(
      session, run, c, *profile, error, compiles, otherSchedules);
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  if (failed(m)) {
    llvm::errs() << options.input << ": error: " << c.text()
                 << ": the compiler rejects it: " << error << "\n";
    return kExitRejected;
  }
  double budget = options.budgetGiB >= 0
                      ? options.budgetGiB * 1024.0 * 1024.0 * 1024.0
                      : profile->memoryBytes;
  const planner::StageMeasure &s = m->busiestStage();
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv(
      "probe prediction of {0} on {1} devices ({2} per node) of profile "
      "'{3}' ({4} probe compiles, {5:f1} s{6}):\n",
      c.text(), devices, profile->devicesPerNode, profile->name, compiles,
      seconds,
      c.microbatches > 1 ? "; microbatches fitted from probes of one and two"
                         : "");
  os << llvm::formatv(
      "  step {0} ms ({1} ms kernels + {2} ms communication of the busiest "
      "stage {3}, {7} ms of it hidden behind kernels; bubble {4:f1}%), MFU "
      "{5:f1}% ({6:e2} model flops per step)\n",
      msText(m->stepSeconds()), msText(s.compute), msText(s.communication),
      m->busiest, m->bubble * 100,
      100 * planner::modelFlopsUtilization(run, m->stepSeconds(), devices,
                                           *profile),
      planner::modelFlopsPerStep(run), msText(s.hidden));
  if (m->stages.size() > 1)
    os << llvm::formatv(
        "  pipeline: {0}{1} over {2} stages, {3} microbatches (probes "
        "compiled 1F1B{4}; the schedule simulated with each stage's time)\n",
        m->schedule,
        m->virtualStages > 1
            ? " with " + std::to_string(m->virtualStages) + " virtual stages"
            : std::string(),
        m->stages.size(), c.microbatches,
        m->virtualStages > 1 ? ", the chunks applied after" : "");
  os << otherSchedules;
  os << "  memory: " << planner::gibText(m->memoryBytes())
     << " per rank (the largest stage's arena) of "
     << planner::gibText(budget) << " ("
     << (m->memoryBytes() <= budget ? "fits" : "does not fit") << ")\n";
  for (const auto &[axes, secs] : s.commSeconds)
    os << llvm::formatv("  communication {0}: {1} ms, {2:e2} bytes sent per "
                        "rank\n",
                        axes, msText(secs), s.commBytes.at(axes));
  return kExitOk;
}

} // namespace llmc::driver
