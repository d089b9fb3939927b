//===- Probe.h - evaluate a candidate on a model with fewer layers -*- C++ -*-===//
//
// Compiling a 48-layer model for every candidate of the mesh search is too
// slow, so a candidate is compiled on probes: the same run with n1 and n2
// layers (3 and 4; with a pipeline 1 and 2 layers per stage). A
// transformer's layers are identical, so everything the cost model and the
// buffer planner report per stage (kernel and collective time, bytes sent
// per axis, the arena) grows by the same amount per added layer, and the
// full model's values are the probes' extrapolated linearly
// (docs/planning.md, "The search"; SearchTest checks it against a compile
// of all the layers).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_PLANNER_PROBE_H
#define LLMC_PLANNER_PROBE_H

#include "analysis/DeviceProfile.h"
#include "planner/Candidate.h"

#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>
#include <vector>

namespace llmc::planner {

/// The compile pipeline's options for a run description as written (its
/// [parallel] mesh, [memory] remat and budget, [train] microbatches).
CompilePipelineOptions pipelineOptionsFor(const RunDescription &run);

/// `base` with the candidate's mesh, ZeRO stage, remat policy and
/// microbatches; a pipeline gets the 1F1B schedule with equal stages of
/// `layers / pp` layers each (pinned boundaries).
CompilePipelineOptions candidateOptions(CompilePipelineOptions base,
                                        const Candidate &candidate,
                                        int64_t layers);

/// What one pipeline stage (or the whole program without a pipeline) costs
/// on one of its ranks, per training step.
struct StageMeasure {
  double compute = 0;       ///< seconds of kernels
  double communication = 0; ///< seconds of collectives and sends
  /// Collective seconds and bytes sent per rank, by mesh axes ("dp",
  /// "dp,tp", "pp").
  std::map<std::string, double> commSeconds, commBytes;
  double arena = 0;         ///< bytes of the stage's buffer plan
  double activations = 0;   ///< the most bytes kept for backward at once
  double persistent = 0;    ///< weights + optimizer state + gradients
  double forwardFlops = 0, backwardFlops = 0; ///< for the bubble
  double forwardBackwardKernels = 0; ///< kernels run once per microbatch
  /// Latency (ring steps x link latency) of the collectives that run once
  /// per microbatch: those over axes other than dp (tp, cp, ep, pp).
  double microbatchLatency = 0;
  /// Seconds of communication the two-stream simulation hides behind
  /// kernels (estimateStep's noOverlap() - seconds()); 0 on the CPU.
  double hidden = 0;
  /// Seconds of the optimizer's kernels (in compute; run once per step).
  double optimizer = 0;

  double busy() const { return compute + communication - hidden; }
};

/// The evaluation of a candidate: per stage, and the step.
struct Measure {
  std::vector<StageMeasure> stages; ///< one without a pipeline
  double bubble = 0;                ///< idle share of a pipelined step
  /// A pipelined step as its schedule simulated with each stage's time
  /// (schedulePipeline); 0: busiest stage over 1 - bubble.
  double pipelineSeconds = 0;
  /// The schedule of a pipelined measure ("1f1b", "interleaved") and its
  /// virtual stages (model chunks per stage).
  std::string schedule = "1f1b";
  int64_t virtualStages = 1;
  /// What a transfer between pipeline chunks costs, for the interleaved
  /// schedule's extra ones (setChunkTransfer): the residual stream of the
  /// whole step's batch per rank (bytes; a microbatch's is 1/M of it), and
  /// the pp link's latency and bandwidth. 0: unknown (no extra transfers).
  double boundaryBytes = 0;
  double transferLatency = 0, transferBandwidth = 0;
  int64_t busiest = 0;              ///< the stage the step is bound by
  /// The program's ranks and the profile's shared host cores (0: devices
  /// do not share cores): on the CPU profile the step is also bounded by
  /// every rank's work spread over the cores (planner::programStep).
  int64_t ranks = 1;
  SharedCores shared;
  /// The profile's launch cost (the least a further microbatch costs per
  /// forward and backward launch: fitMicrobatches).
  double launchCost = 0;
  /// The ranks one collective call of each key of the stages' commSeconds
  /// synchronizes (GroupCost::groupRanks), for the shared cores' drain.
  std::map<std::string, int64_t> groupRanks;

  double stepSeconds() const;
  double memoryBytes() const;       ///< the largest stage's arena
  const StageMeasure &busiestStage() const { return stages[busiest]; }
};

/// Measures a compiled program (after llmc-plan-buffers) the way `llmc plan`
/// does: per stage the cost model's busy time and the buffer plan's arena;
/// the step is the busiest stage's time over 1 - bubble (the bubble of the
/// llmc.pipeline attribute). Fails when there is no @train_step.
/// With StageReuse::SameSignature, stages whose ops, arguments and
/// results have the same signature (Probe.cpp, stageSignatures: the middle
/// stages of a probe of equal stages) are planned and costed once.
enum class StageReuse { SameSignature, None };
mlir::FailureOr<Measure>
measureProgram(mlir::ModuleOp module, const DeviceProfile &profile,
               StageReuse reuse = StageReuse::SameSignature);

/// a + (b - a) * (x - xa) / (xb - xa), field by field, stage by stage
/// (the bubble is left to the caller).
Measure extrapolate(const Measure &a, double xa, const Measure &b, double xb,
                    double x);

/// The bubble of a 1F1B schedule of `microbatches` over the stages, each
/// unit taking its stage's forward or backward flops / microbatches: the
/// simulation llmc-split-pipeline runs (passes/PipelineSchedule.h).
double simulateBubble(const std::vector<StageMeasure> &stages,
                      int64_t microbatches);

/// The pipelined step of `busy` seconds per stage (its optimizer's
/// `optimizer` seconds included; they run once, after the stage's last
/// backward), the forward share of each stage's flops `forwardShare`, as
/// the schedule `schedule` with `virtualStages` chunks per stage runs
/// `microbatches`: pipeline::stageOrders and pipeline::simulate with each
/// unit taking its stage's (busy - optimizer) x share / (virtual stages x
/// microbatches). Returns the step (the last stage to finish, its
/// optimizer included) and sets `bubble` to the schedule's idle share.
double simulatePipeline(llvm::ArrayRef<double> busy,
                        llvm::ArrayRef<double> optimizer,
                        llvm::ArrayRef<double> forwardShare,
                        llvm::StringRef schedule, int64_t virtualStages,
                        int64_t microbatches, double *bubble = nullptr);

/// A measure of a 1F1B program (probes are compiled 1F1B) run with the
/// candidate's schedule: with v = candidate.virtualStages > 1 the
/// interleaved schedule of v chunks of layers/(pp v) layers per stage (not
/// compiled: each stage's time and flops are split into v equal chunks),
/// 4 (v - 1) more chunk transfers per microbatch and stage
/// (setChunkTransfer) and its activations those of the units a stage holds at once (the
/// stage order's most forwards not yet run backward, 1/v of a
/// microbatch's each, instead of 1F1B's min(pp - s, M)); then the step
/// simulated (simulatePipeline).
void schedulePipeline(Measure &measure, const Candidate &candidate);

/// Records on `measure` what one transfer between pipeline chunks of
/// `candidate` costs: the residual stream of batch / (dp ep) sequences of
/// seq / cp tokens of the model's width, in the activations' precision (2
/// bytes for bf16 and fp16, 4 for fp32), over the pp axis's link (within
/// a node when every rank is). With v chunks per stage the interleaved
/// schedule makes 4 (v - 1) more of them per microbatch on every stage
/// (a forward receive and send and a backward receive and send per extra
/// chunk): counted in the llmc-split-pipeline programs of a small GPT-2,
/// 101 -> 133 transfers for 2 stages, 4 microbatches, v = 3.
void setChunkTransfer(Measure &measure, const RunDescription &run,
                      const Candidate &candidate, const DeviceProfile &profile);

/// A probe compile: `run` with `layers` layers under `options` (its
/// batch split into options.microbatches), through the whole pipeline.
/// Returns the failure's first error message in `error` on failure.
mlir::FailureOr<Measure> compileAndMeasure(mlir::MLIRContext &context,
                                           const RunDescription &run,
                                           int64_t layers,
                                           const CompilePipelineOptions &options,
                                           const DeviceProfile &profile,
                                           std::string &error,
                                           StageReuse reuse =
                                               StageReuse::SameSignature);

/// Evaluates `candidate` on two probes and extrapolates to the run's
/// layers. A candidate of several microbatches is compiled with one and
/// its microbatches applied afterwards (the same work in smaller pieces: the
/// per-microbatch kernels' launch costs are added, the activations kept
/// are those of the microbatches a 1F1B stage holds at once, and the
/// bubble is simulated) unless `exact`, which compiles the microbatches
/// too (slower: the probes hold every microbatch's program). `compiles`
/// counts the probe compiles.
mlir::FailureOr<Measure> evaluateCandidate(mlir::MLIRContext &context,
                                           const RunDescription &run,
                                           const Candidate &candidate,
                                           const DeviceProfile &profile,
                                           std::string &error,
                                           int64_t *compiles = nullptr,
                                           bool exact = false);

/// What one more layer adds to a probe without a pipeline: the seconds of
/// the forward and backward kernels of one rank (the optimizer's left
/// out) and of its collectives. The mesh search bounds a candidate by it before its probes
/// (Search.cpp, "lower bound"). Unknown when the model was compiled whole.
struct LayerSlope {
  double kernels = 0;
  /// The seconds of the collectives, by mesh axes (Measure's keys).
  std::map<std::string, double> commSeconds;
  bool known = false;
};

/// The probes of `probe` (its microbatches compiled as they are) and the
/// extrapolation to the run's layers; a model no larger than the second
/// probe is compiled whole. `slope`, when given and `probe` has no
/// pipeline, gets what a layer adds between the two probes. `second`, a
/// context with the same dialects, when given: the second probe compiles
/// in it on a thread of its own, beside the first (the same result).
mlir::FailureOr<Measure> probeAndExtrapolate(mlir::MLIRContext &context,
                                             const RunDescription &run,
                                             const Candidate &probe,
                                             const DeviceProfile &profile,
                                             std::string &error,
                                             int64_t *compiles = nullptr,
                                             LayerSlope *slope = nullptr,
                                             mlir::MLIRContext *second = nullptr);

/// A measure of one microbatch split into the candidate's microbatches
/// (see evaluateCandidate; without a pipeline a stage holds one).
Measure withMicrobatches(Measure measure, const Candidate &candidate,
                         const DeviceProfile &profile);

/// A measure of `candidate`'s microbatches from the probes of one (`one`)
/// and of two (`two`) microbatches: per stage the time is affine in the
/// microbatch count (the same work, plus launches and collectives per
/// microbatch), the bytes other than the activations kept are A + B / M
/// (weight-sized and accumulated ones in A, batch-sized ones in B, fitted
/// from the two), and a 1F1B stage s keeps min(pp - s, M) microbatches of
/// activations of 1/M of the batch (scaled from the two-microbatch probe). Costs a second probe pair; the search
/// uses it when the conservative estimate does not fit.
Measure fitMicrobatches(const Measure &one, const Measure &two,
                        const Candidate &candidate);

/// The pipeline stages the probes of `probe` compile, for a model of
/// `layers` layers: a 1F1B stage's program depends on its layers, its
/// microbatches M and how many forwards it runs before its first backward
/// (min(pp - s - 1, M) for stage s), not on pp itself; so the first
/// stage, the last and one middle stage per warm-up count (M of them),
/// M + 2 stages in all, are every distinct stage, and probeAndExtrapolate
/// compiles those and repeats the middle ones (GPT-3's pp32 probes of 32
/// and 64 layers become 3 and 6). `probe.pp` when that is not fewer, when
/// `layers` is not a multiple of pp, or when the pp link would change
/// class (pp is the outermost axis: a send over pp spans pp times the
/// inner axes' ranks, within a node or not).
int64_t probeStages(const Candidate &probe, int64_t layers,
                    const DeviceProfile &profile);

/// The two probe layer counts of a candidate (3 and 4; with pp stages, pp
/// and 2 pp).
std::pair<int64_t, int64_t> probeLayers(const Candidate &candidate);

} // namespace llmc::planner

#endif // LLMC_PLANNER_PROBE_H
