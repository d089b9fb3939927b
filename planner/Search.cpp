//===- Search.cpp - enumerate, prune, evaluate, rank -----------------------===//
//
// 1. Candidates: every mesh of the device count x ZeRO 0-3 x remat none,
//    selective, full x microbatches 1, 2, 4, ... (up to the batch).
// 2. Cheap rules (Candidate.cpp): pruned before any compile.
// 3. Dominance, per mesh, in the order of the loops (lighter settings
//    first): more recomputation or (without a pipeline) more microbatches
//    only add time, and ZeRO-3 (or ZeRO-2) only adds communication to
//    ZeRO-1, so a candidate is skipped when a lighter one of the same mesh
//    fits; when a candidate's weights, gradients and optimizer state
//    alone do not fit, no remat or microbatch count of that mesh and stage
//    will; and when its bytes other than the activations kept for backward
//    do not fit, no remat policy will.
// 3b. The bound: a lower bound of a candidate's step before its probes
//    (its layers' kernels over the bubble; for ZeRO-2/3 its layers' dp
//    collectives too); a candidate whose bound exceeds the kBoundRows-th
//    fastest that fits so far is deferred, and evaluated at the end when
//    under the final ranking's row kBoundRows. With it, the meshes are
//    taken in the order of their lowest bound.
// 4. Evaluation on probes (Probe.cpp) of one microbatch, shared by the
//    microbatch counts (derived from it).
// 5. Rank what fits by predicted step time; a winner with derived
//    microbatches is compiled with them (while its probes stay small) and
//    ranked again.
//
//===----------------------------------------------------------------------===//
#include "planner/Search.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <thread>

namespace llmc::planner {

std::string gibText(double bytes) {
  double gib = 1024.0 * 1024.0 * 1024.0;
  if (std::abs(bytes) >= 0.1 * gib)
    return llvm::formatv("{0:f2} GiB", bytes / gib).str();
  if (std::abs(bytes) >= 1024.0 * 1024.0)
    return llvm::formatv("{0:f2} MiB", bytes / (1024.0 * 1024.0)).str();
  return llvm::formatv("{0:f1} KiB", bytes / 1024.0).str();
}

double modelFlopsPerStep(const RunDescription &run) {
  const ModelConfig &m = run.model;
  double d = static_cast<double>(m.hiddenSize);
  double kv = static_cast<double>(m.numKvHeads * m.headDim());
  double ffn = static_cast<double>(m.intermediateSize);
  double layer = 0, vocab = static_cast<double>(m.vocabSize) * d;
  if (m.family == ModelFamily::Gpt2) {
    // qkv, proj, the MLP's two matrices, their biases, two norms.
    layer = 4 * d * d + 2 * d * ffn + 3 * d + d + ffn + d + 4 * d;
  } else {
    double experts = m.family == ModelFamily::Moe
                         ? static_cast<double>(m.expertsPerToken)
                         : 1.0;
    // q, k, v, o, the gated MLP (per routed expert), two norms.
    layer = 2 * d * d + 2 * d * kv + experts * 3 * d * ffn + 2 * d;
    if (!m.tieEmbeddings)
      vocab *= 2;
  }
  double n = static_cast<double>(m.numLayers) * layer + vocab;
  double tokens = static_cast<double>(run.train.batchSize * run.train.seqLen);
  return tokens * (6 * n + 12 * static_cast<double>(m.numLayers) * d *
                               static_cast<double>(run.train.seqLen));
}

double modelFlopsUtilization(const RunDescription &run, double seconds,
                             int64_t devices, const DeviceProfile &profile) {
  // fp8 against the dense bf16 peak, as MFU is defined (docs/precision.md).
  const char *dtype = run.precision.policy == PrecisionPolicy::Bf16 ||
                              run.precision.policy == PrecisionPolicy::Fp8
                          ? "bf16"
                      : run.precision.policy == PrecisionPolicy::Fp16 ? "f16"
                                                                      : "f32";
  double peak = profile.matmulPeak(dtype) * static_cast<double>(devices);
  return seconds > 0 && peak > 0 ? modelFlopsPerStep(run) / (seconds * peak)
                                 : 0.0;
}

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double largestPersistent(const Measure &m) {
  double most = 0;
  for (const StageMeasure &s : m.stages)
    most = std::max(most, s.persistent);
  return most;
}

/// Whether ZeRO stage `d` is at least as fast as stage `c` with everything
/// else equal: the same stage, or stage 1 (2) against 2 or 3 (3), which
/// only add collectives (per microbatch, or the weights' all-gathers).
bool lighterZero(int64_t d, int64_t c) {
  return d == c || (c >= 2 && d >= 1 && d < c);
}

/// The evaluated candidate that makes `c` pointless, if any (step 3): one
/// of the same mesh that fits and is lighter in every setting (ZeRO stage,
/// remat, and without a pipeline the microbatches; with one, more
/// microbatches shrink the bubble, so only the same count dominates).
const Evaluated *dominator(const std::vector<Evaluated> &done,
                           const Candidate &c, std::string &why) {
  for (const Evaluated &e : done) {
    const Candidate &d = e.candidate;
    if (!e.fits || !c.sameMesh(d) || d == c)
      continue;
    bool micro = c.pp > 1 ? d.microbatches == c.microbatches &&
                                d.virtualStages == c.virtualStages
                          : d.microbatches <= c.microbatches;
    if (!lighterZero(d.zero, c.zero) || d.remat > c.remat || !micro)
      continue;
    why = d.text() + " fits, and " + c.text() + " only adds " +
          (d.remat < c.remat ? "recomputation" : "") +
          (d.remat < c.remat && (d.zero != c.zero ||
                                 d.microbatches != c.microbatches)
               ? " and "
               : "") +
          (d.zero != c.zero ? "collectives" : "") +
          (d.zero != c.zero && d.microbatches != c.microbatches ? " and "
                                                                 : "") +
          (d.microbatches != c.microbatches ? "kernel launches" : "");
    return &e;
  }
  return nullptr;
}
/// A candidate set aside by the bound before its probes (step 3b), with
/// what it was compared with: evaluated after all when the final winner
/// is slower than its bound.
struct Deferred {
  Candidate candidate;
  int64_t order = 0;
  double bound = 0;
  Rejection why;
};

/// One search (the file's steps), its state shared by the steps.
class Searcher {
public:
  Searcher(mlir::MLIRContext &context, const RunDescription &run,
           const SearchOptions &options)
      : context(context), run(run), options(options), start(Clock::now()),
        lastProgress(start) {
    // A second context for the second probe of each pair (Probe.h),
    // where there is a second core.
    if (std::thread::hardware_concurrency() > 1) {
      second = std::make_unique<mlir::MLIRContext>(context.getDialectRegistry());
      second->loadAllAvailableDialects();
    }
  }

  SearchResult search();

private:
  std::vector<int64_t> virtualOptions(const Candidate &mesh) const;
  void progress(bool force);
  void consider(const Candidate &c, int64_t order);
  std::optional<Rejection> pruneWithoutCompile(const Candidate &c);
  std::optional<Rejection> pruneByEarlierResults(const Candidate &c,
                                                 const Candidate &key,
                                                 const Candidate &rematKey);
  std::optional<Deferred> deferByBound(const Candidate &c, int64_t order,
                                       double &bound);
  std::optional<double> lowerBound(const Candidate &c, std::string &how);
  std::optional<double> gatherBound(const Candidate &c, std::string &how);
  mlir::FailureOr<Measure> probe(const Candidate &probe);
  mlir::FailureOr<Measure> evaluate(const Candidate &c, std::string &error);
  void record(const Candidate &c, int64_t order, double bound,
              const Measure &measure, const Candidate &key,
              const Candidate &rematKey);
  void rankOnExactProbes();
  bool evaluateDeferred();

  mlir::MLIRContext &context;
  std::unique_ptr<mlir::MLIRContext> second;
  const RunDescription &run;
  const SearchOptions &options;
  Clock::time_point start, lastProgress;
  SearchResult result;
  std::vector<Evaluated> done;
  // Probes by the probed candidate's text (one microbatch, or two for the
  // fit; one chunk), shared by its microbatch counts and virtual stages
  // and, without a pipeline, by the lower bound of every pipeline of the
  // same dp, tp, cp and ep (its layer slope).
  std::map<std::string, mlir::FailureOr<Measure>> pipelineProbes;
  std::map<std::string, std::string> pipelineErrors;
  std::map<std::string, LayerSlope> slopes;
  // (mesh, zero) whose weights, gradients and optimizer state alone do not
  // fit, with the bytes they need.
  std::map<std::string, double> hopeless;
  // (mesh, zero, microbatches) whose bytes other than the activations kept
  // for backward do not fit: no remat policy helps.
  std::map<std::string, double> rematHopeless;
  int64_t total = 0, seen = 0;
  /// Set once `result.ranked` is final: the progress line names its front.
  bool rankedDone = false;
  /// The steps of the candidates that fit so far: the bound's threshold is
  /// the kBoundRows-th fastest (threshold()).
  std::multimap<double, std::string> fitting;
  double threshold(std::string &text) const;
  std::vector<Deferred> deferred;
};

bool faster(const Evaluated &a, const Evaluated &b) {
  double sa = a.measure.stepSeconds(), sb = b.measure.stepSeconds();
  return sa < sb || (sa == sb && a.order < b.order);
}

/// Virtual stages (the interleaved schedule) for a pipeline: every divisor
/// v of the layers of a stage (equal chunks of at least one whole layer);
/// the microbatch rule of the interleaved order prunes the rest with its
/// reason (checkCandidate).
std::vector<int64_t> Searcher::virtualOptions(const Candidate &mesh) const {
  std::vector<int64_t> out = {1};
  if (mesh.pp > 1 && run.model.numLayers % mesh.pp == 0)
    for (int64_t v = 2; v <= run.model.numLayers / mesh.pp; ++v)
      if ((run.model.numLayers / mesh.pp) % v == 0)
        out.push_back(v);
  return out;
}

void Searcher::progress(bool force) {
  if (!options.progress || (!force && secondsSince(lastProgress) < 1.0))
    return;
  lastProgress = Clock::now();
  // The ranking's own front once it is ranked (the winner, after the
  // derived microbatches were compiled); before, the fastest that fits,
  // `~` marking derived microbatches as the report does.
  const Evaluated *best = rankedDone ? result.winner() : nullptr;
  if (!rankedDone)
    for (const Evaluated &e : done)
      if (e.fits &&
          (!best || e.measure.stepSeconds() < best->measure.stepSeconds()))
        best = &e;
  *options.progress << llvm::formatv(
      "llmc plan: search {0:f1} s: {1} of {2} candidates, {3} pruned, {4} "
      "evaluated ({5} probe compiles), best so far {6}\n",
      secondsSince(start), seen, total,
      result.pruned.size() + deferred.size(), done.size(),
      result.compiles,
      best ? llvm::formatv("{0}{1} at {2:f2} ms", best->exact ? "" : "~",
                           best->candidate.text(),
                           best->measure.stepSeconds() * 1e3)
                 .str()
           : std::string("none"));
  options.progress->flush();
}

/// 2. The rules that need no compile, and one restriction of the search:
/// tensor parallelism stays within a node (its per-layer collectives on
/// the inter-node link).
std::optional<Rejection> Searcher::pruneWithoutCompile(const Candidate &c) {
  if (std::optional<Rejection> why = checkCandidate(run.model, run.train, c))
    return why;
  if (c.cp > options.profile.devicesPerNode)
    // Ring attention unrolls cp steps per layer: a probe of cp=256 takes
    // tens of seconds to compile (GPT-3 175B, measured).
    return Rejection{"cp: spans nodes",
                     "cp=" + std::to_string(c.cp) + " spans nodes of " +
                         std::to_string(options.profile.devicesPerNode) +
                         " devices (not searched: ring attention's per-layer "
                         "shifts would cross the inter-node link)"};
  if (c.tp > options.profile.devicesPerNode)
    return Rejection{"tp: spans nodes",
                     "tp=" + std::to_string(c.tp) + " spans nodes of " +
                         std::to_string(options.profile.devicesPerNode) +
                         " devices (not searched: its per-layer collectives "
                         "would cross the inter-node link)"};
  return std::nullopt;
}

/// 3. Dominated, or hopeless.
std::optional<Rejection>
Searcher::pruneByEarlierResults(const Candidate &c, const Candidate &key,
                                const Candidate &rematKey) {
  std::string why;
  if (dominator(done, c, why))
    return Rejection{"dominated", why};
  if (auto r = rematHopeless.find(rematKey.text()); r != rematHopeless.end())
    return Rejection{"does not fit",
                     "does not fit with any remat: without the activations "
                     "kept for backward (all remat can save) " +
                         rematKey.text() + " still needs " +
                         gibText(r->second) + " per rank, has " +
                         gibText(options.budgetBytes)};
  if (auto h = hopeless.find(key.text()); h != hopeless.end())
    return Rejection{"does not fit",
                     "does not fit with any remat or microbatches: the "
                     "weights, gradients and optimizer state alone need " +
                         gibText(h->second) + " per rank, has " +
                         gibText(options.budgetBytes)};
  return std::nullopt;
}

/// 3b. The bound (SearchOptions::boundPruning): a lower bound of the
/// candidate's step before its probes (lowerBound: the kernels of its
/// layers and its pipeline transfers, over the bubble; gatherBound, for
/// ZeRO-2/3: the dp collectives of its layers), the larger of the two,
/// against a threshold. (The time of a lighter candidate of
/// the same mesh and microbatches, the dominance rule's assumption, is not
/// used: under LLMC_SEARCH_BOUND=check it was over the step of 32 of 181
/// candidates of the 7B search, remat=selective against a no-remat
/// candidate whose microbatches were fitted, zero3 against zero1.)
/// The threshold is the kBoundRows-th fastest that fits so far, so that
/// the first kBoundRows rows of the ranking are the full search's; it may
/// be a candidate of derived microbatches, whose time can change when the
/// winner is compiled with them: a deferred candidate is evaluated at the
/// end if the final row kBoundRows is slower than its bound
/// (evaluateDeferred), so the bound never changes those rows.
std::optional<Deferred> Searcher::deferByBound(const Candidate &c,
                                               int64_t order, double &bound) {
  std::string thresholdText;
  double limit = threshold(thresholdText);
  if (!options.checkBound && (!options.boundPruning || limit <= 0))
    return std::nullopt;
  std::string how;
  std::optional<double> least = lowerBound(c, how);
  if (!least)
    return std::nullopt;
  bound = *least;
  // The gathers of ZeRO-2/3 cost probes of their own: only when the layer
  // bound does not defer the candidate already.
  std::string gathersHow;
  if (options.checkBound || bound <= limit)
    if (std::optional<double> gathers = gatherBound(c, gathersHow);
        gathers && *gathers > bound) {
      bound = *gathers;
      how = gathersHow;
    }
  if (options.checkBound || bound <= limit)
    return std::nullopt;
  return Deferred{
      c, order, bound,
      Rejection{"bound",
                llvm::formatv("cannot rank: at least {0:f2} ms ({1}), more "
                              "than {2} at {3:f2} ms, the {4}th fastest that "
                              "fits so far",
                              bound * 1e3, how, thresholdText,
                              limit * 1e3, kBoundRows)
                    .str()}};
}

/// The step of the kBoundRows-th fastest candidate that fits so far (0:
/// fewer fit), and its text.
double Searcher::threshold(std::string &text) const {
  if (fitting.size() < kBoundRows)
    return 0;
  auto it = std::next(fitting.begin(), kBoundRows - 1);
  text = it->second;
  return it->first;
}

/// The lower bound of step 3b from the candidate's mesh alone: every stage
/// runs the forward and backward kernels of layers / pp layers (at least
/// the layer slope of the program without a pipeline of the same dp, tp,
/// cp and ep, zero 0 and no remat: the same local shapes, and less remat
/// and a lighter ZeRO stage only add kernels) and, with a pipeline, at
/// least two transfers of the residual stream per microbatch (a first or
/// last stage receives or sends once each way; a middle one twice) and
/// 4 (v - 1) more with v chunks (setChunkTransfer); the pipelined step is
/// then at least a stage's time T times 1 + (p - 1) / (v M): the last
/// stage cannot start before the first chunk of microbatch 0 went through
/// the p - 1 stages before it, nor the step end before the backward of its
/// last unit went back through them, each of those units T / (v M) at
/// least (pipeline::simulate's dependences). The embedding, the head and
/// the optimizer only add to it. LLMC_SEARCH_BOUND=check computes it beside
/// every step: under the step for all 1,647 candidates of the 7B search
/// (docs/log/planning-2026-12-03.md); SearchBound.LowerBoundUnderEveryStep
/// checks it on every candidate of a small search.
std::optional<double> Searcher::lowerBound(const Candidate &c,
                                           std::string &how) {
  if (run.model.numLayers % c.pp != 0)
    return std::nullopt;
  Candidate stage;
  stage.dp = c.dp;
  stage.tp = c.tp;
  stage.cp = c.cp;
  stage.ep = c.ep;
  if (failed(probe(stage)))
    return std::nullopt;
  const LayerSlope &slope = slopes[stage.text()];
  if (!slope.known)
    return std::nullopt;
  double layers = static_cast<double>(run.model.numLayers / c.pp);
  double perStage = layers * slope.kernels;
  how = llvm::formatv("{0} layers of {1:f2} ms of kernels", layers,
                      slope.kernels * 1e3)
            .str();
  if (c.pp <= 1)
    return perStage;
  double v = static_cast<double>(c.virtualStages);
  double micro = static_cast<double>(c.microbatches);
  Measure link;
  setChunkTransfer(link, run, c, options.profile);
  if (link.transferBandwidth > 0) {
    double transfers = 2 + 4 * (v - 1);
    double seconds =
        transfers * (micro * link.transferLatency +
                     link.boundaryBytes / link.transferBandwidth);
    perStage += seconds;
    how += llvm::formatv(" + {0:f2} ms of transfers", seconds * 1e3).str();
  }
  double stretch = 1 + static_cast<double>(c.pp - 1) / (v * micro);
  how += llvm::formatv(" a stage, x {0:f3} for the bubble", stretch).str();
  return perStage * stretch;
}

/// The second lower bound of step 3b, for ZeRO-2/3: a stage's ranks are
/// busy at least as long as its collectives take (the two streams hide
/// communication behind kernels, never the reverse), and the dp
/// collectives of its layers / pp layers are at least those of the program
/// without a pipeline of the same dp, tp, cp, ep, ZeRO stage and remat (pp
/// is the outermost mesh axis: a stage's dp groups are that program's, on
/// the same links), layer for layer, as the candidate's microbatches
/// derive them (withMicrobatches: M times one microbatch's) or fit them
/// (fitMicrobatches: affine through one and two microbatches), the
/// smaller of the two. Its probes (3 and 4 layers, one and two
/// microbatches) are compiled only for a candidate the layer bound keeps.
std::optional<double> Searcher::gatherBound(const Candidate &c,
                                            std::string &how) {
  if (c.zero < 2 || run.model.numLayers % c.pp != 0)
    return std::nullopt;
  Candidate one;
  one.dp = c.dp;
  one.tp = c.tp;
  one.cp = c.cp;
  one.ep = c.ep;
  one.zero = c.zero;
  one.remat = c.remat;
  auto overDp = [&](const Candidate &probed)
      -> std::optional<std::map<std::string, double>> {
    if (checkCandidate(run.model, run.train, probed) || failed(probe(probed)))
      return std::nullopt;
    const LayerSlope &slope = slopes[probed.text()];
    if (!slope.known)
      return std::nullopt;
    std::map<std::string, double> out;
    for (const auto &[axes, seconds] : slope.commSeconds)
      if (llvm::is_contained(
              llvm::SmallVector<llvm::StringRef>(llvm::split(axes, ',')),
              "dp"))
        out[axes] = seconds;
    return out;
  };
  std::optional<std::map<std::string, double>> first = overDp(one);
  if (!first)
    return std::nullopt;
  double micro = static_cast<double>(c.microbatches);
  std::optional<std::map<std::string, double>> ofTwo;
  // The search fits only where the batch splits in two over dp x ep.
  if (c.microbatches > 1 && run.train.batchSize % 2 == 0 &&
      (run.train.batchSize / 2) % (c.dp * c.ep) == 0) {
    Candidate two = one;
    two.microbatches = 2;
    ofTwo = overDp(two);
    if (!ofTwo)
      return std::nullopt;
  }
  double perLayer = 0;
  for (const auto &[axes, s1] : *first) {
    double least = micro * s1;
    if (ofTwo) {
      double s2 = ofTwo->count(axes) ? ofTwo->at(axes) : s1;
      least = std::min(least, s1 + (s2 - s1) * (micro - 1));
    }
    perLayer += std::max(0.0, least);
  }
  double layers = static_cast<double>(run.model.numLayers / c.pp);
  how = llvm::formatv("{0} layers of {1:f2} ms of ZeRO-{2} dp collectives",
                      layers, perLayer * 1e3, c.zero)
            .str();
  return layers * perLayer;
}

/// The probe pair of `probe` (one candidate of few microbatches, one
/// chunk), compiled once and shared; without a pipeline its layer slope is
/// kept for the lower bound.
mlir::FailureOr<Measure> Searcher::probe(const Candidate &probe) {
  std::string probeKey = probe.text();
  auto it = pipelineProbes.find(probeKey);
  if (it == pipelineProbes.end()) {
    std::string probeError;
    LayerSlope slope;
    it = pipelineProbes
             .emplace(probeKey,
                      probeAndExtrapolate(context, run, probe, options.profile,
                                          probeError, &result.compiles,
                                          &slope, second.get()))
             .first;
    pipelineErrors[probeKey] = probeError;
    slopes[probeKey] = slope;
  }
  return it->second;
}

/// 4. Evaluate: a candidate on its probes (shared), several microbatches
/// on the probes of one (its microbatches derived).
mlir::FailureOr<Measure> Searcher::evaluate(const Candidate &c,
                                            std::string &error) {
  Candidate one = c;
  one.microbatches = 1;
  one.virtualStages = 1; // shared by every v (planner/Probe.h)
  mlir::FailureOr<Measure> ofOne = probe(one);
  if (failed(ofOne)) {
    error = pipelineErrors[one.text()];
    return mlir::failure();
  }
  if (c.microbatches <= 1) {
    Measure measure = *ofOne;
    schedulePipeline(measure, c);
    return measure;
  }
  mlir::FailureOr<Measure> measure =
      withMicrobatches(*ofOne, c, options.profile);
  // Conservatively too large: fit the bytes with a second probe pair of
  // two microbatches (shared too), when the batch splits in two over
  // dp x ep.
  if (succeeded(measure) && measure->memoryBytes() > options.budgetBytes &&
      (run.train.batchSize / 2) % (c.dp * c.ep) == 0 &&
      run.train.batchSize % 2 == 0) {
    Candidate two = one;
    two.microbatches = 2;
    mlir::FailureOr<Measure> ofTwo = probe(two);
    if (succeeded(ofTwo))
      measure = fitMicrobatches(*ofOne, *ofTwo, c);
  }
  return measure;
}

/// Ranks an evaluated candidate, or records why it does not fit and what
/// that rules out (hopeless and rematHopeless).
void Searcher::record(const Candidate &c, int64_t order, double bound,
                      const Measure &measure, const Candidate &key,
                      const Candidate &rematKey) {
  Evaluated e{c, measure, false, c.microbatches == 1, order, bound};
  if (std::getenv("LLMC_SEARCH_TRACE"))
    llvm::errs() << llvm::formatv(
        "search trace {0:f2} s: {1}: {2:f2} ms, {3}{4}\n", secondsSince(start),
        c.text(), e.measure.stepSeconds() * 1e3,
        gibText(e.measure.memoryBytes()),
        bound > 0 ? llvm::formatv(" (bound {0:f2} ms)", bound * 1e3).str()
                  : std::string());
  e.fits = e.measure.memoryBytes() <= options.budgetBytes;
  done.push_back(e);
  if (e.fits) {
    fitting.emplace(e.measure.stepSeconds(), c.text());
    result.ranked.push_back(e);
    return;
  }
  result.tooLarge.push_back(e);
  double need = e.measure.memoryBytes();
  result.pruned.push_back(
      {c,
       {"does not fit",
        "does not fit: needs " + gibText(need) + " per rank, has " +
            gibText(options.budgetBytes) + " (over by " +
            gibText(need - options.budgetBytes) + ")"}});
  double persistent = largestPersistent(e.measure);
  if (persistent > options.budgetBytes)
    hopeless[key.text()] = persistent;
  // Remat only removes activations kept for backward.
  double floor = 0;
  for (const StageMeasure &stage : e.measure.stages)
    floor = std::max(floor, stage.arena - stage.activations);
  if (floor > options.budgetBytes)
    rematHopeless[rematKey.text()] = floor;
}

/// 5. The winner from exact probes: a pipeline ranked on derived
/// microbatches is compiled with them before it may win (a few rounds at
/// most: each is two probe compiles of every microbatch).
void Searcher::rankOnExactProbes() {
  for (int round = 0; round < 6 && !result.ranked.empty() &&
                      !result.ranked.front().exact;
       ++round) {
    Evaluated top = result.ranked.front();
    if (probeLayers(top.candidate).second * top.candidate.microbatches >
        kMaxExactLayers)
      break; // too large to compile: it wins on derived microbatches
    progress(true);
    result.ranked.erase(result.ranked.begin());
    std::string error;
    mlir::FailureOr<Measure> exact =
        evaluateCandidate(context, run, top.candidate, options.profile, error,
                          &result.compiles, /*exact=*/true);
    if (failed(exact)) {
      result.pruned.push_back(
          {top.candidate,
           {"compile error", "the compiler rejects it: " + error}});
      continue;
    }
    top.measure = *exact;
    top.exact = true;
    top.fits = top.measure.memoryBytes() <= options.budgetBytes;
    if (top.fits) {
      result.ranked.insert(std::upper_bound(result.ranked.begin(),
                                            result.ranked.end(), top, faster),
                           top);
      continue;
    }
    result.tooLarge.push_back(top);
    result.pruned.push_back(
        {top.candidate,
         {"does not fit",
          "does not fit: needs " + gibText(top.measure.memoryBytes()) +
              " per rank, has " + gibText(options.budgetBytes)}});
  }
}

/// 5b. The deferred candidates (step 3b) whose bound is under the step of
/// the ranking's kBoundRows-th row (all of them while fewer fit),
/// evaluated in their enumeration order; false when there are none. Their
/// threshold may have been a candidate whose time grew when its
/// microbatches were compiled, or that no longer fits.
bool Searcher::evaluateDeferred() {
  double last = result.ranked.size() >= kBoundRows
                    ? result.ranked[kBoundRows - 1].measure.stepSeconds()
                    : std::numeric_limits<double>::infinity();
  std::vector<Deferred> now, later;
  for (Deferred &d : deferred)
    (d.bound <= last ? now : later).push_back(std::move(d));
  deferred = std::move(later);
  if (now.empty())
    return false;
  fitting.clear();
  for (const Evaluated &e : result.ranked)
    fitting.emplace(e.measure.stepSeconds(), e.candidate.text());
  std::sort(now.begin(), now.end(), [](const Deferred &a, const Deferred &b) {
    return a.order < b.order;
  });
  for (const Deferred &d : now)
    consider(d.candidate, d.order);
  std::stable_sort(result.ranked.begin(), result.ranked.end(), faster);
  return true;
}

/// Steps 2 to 4 for one candidate.
void Searcher::consider(const Candidate &c, int64_t order) {
  Candidate key = c; // the mesh and ZeRO stage
  key.remat = RematChoice::None;
  key.microbatches = 1;
  key.virtualStages = 1;
  Candidate rematKey = key;
  rematKey.microbatches = c.microbatches;
  std::optional<Rejection> why = pruneWithoutCompile(c);
  if (!why)
    why = pruneByEarlierResults(c, key, rematKey);
  if (why) {
    result.pruned.push_back({c, *why});
    return;
  }
  double bound = 0;
  if (std::optional<Deferred> d = deferByBound(c, order, bound)) {
    deferred.push_back(std::move(*d));
    return;
  }
  std::string error;
  mlir::FailureOr<Measure> measure = evaluate(c, error);
  if (failed(measure)) {
    result.pruned.push_back(
        {c, {"compile error", "the compiler rejects it: " + error}});
    return;
  }
  record(c, order, bound, *measure, key, rematKey);
}

SearchResult Searcher::search() {
  // 1. Candidates.
  std::vector<int64_t> microOptions;
  for (int64_t m = 1; m <= run.train.batchSize; m *= 2)
    microOptions.push_back(m);
  std::vector<Candidate> meshes = enumerateMeshes(options.devices);
  for (const Candidate &mesh : meshes)
    total += 4 * 3 * static_cast<int64_t>(microOptions.size()) *
             static_cast<int64_t>(virtualOptions(mesh).size());
  // With the bound, the meshes are considered in the order of their
  // candidates' lowest layer bound (ties in the order of the loops), the
  // candidates of a mesh in the order of the loops: the fastest meshes
  // come early and the bound defers more. The order cannot pick the winner
  // (the deferred are evaluated at the end when it is slower than their
  // bound, and ties are broken by the loops' order), and what one
  // candidate rules out for another (dominance, hopeless: the same mesh)
  // is as in the loops. Without the bound (or checking it), the loops'
  // order.
  bool bestFirst = options.boundPruning && !options.checkBound;
  struct Pending {
    double bound;
    int64_t order;
    Candidate candidate;
  };
  std::vector<Pending> pending;
  for (const Candidate &mesh : meshes)
    for (int64_t zero = 0; zero <= 3; ++zero)
      for (RematChoice remat :
           {RematChoice::None, RematChoice::Selective, RematChoice::Full})
        for (int64_t micro : microOptions)
          for (int64_t virtualStages : virtualOptions(mesh)) {
            progress(false);
            Candidate c = mesh;
            c.zero = zero;
            c.remat = remat;
            c.microbatches = micro;
            c.virtualStages = virtualStages;
            if (!bestFirst) {
              consider(c, seen++);
              continue;
            }
            int64_t order = seen++;
            if (std::optional<Rejection> why = pruneWithoutCompile(c)) {
              result.pruned.push_back({c, *why});
              continue;
            }
            std::string how;
            pending.push_back({lowerBound(c, how).value_or(0.0), order, c});
          }
  struct MeshRange {
    double bound;
    size_t begin, end;
  };
  std::vector<MeshRange> byMesh;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (byMesh.empty() ||
        !pending[i].candidate.sameMesh(pending[byMesh.back().begin].candidate))
      byMesh.push_back({pending[i].bound, i, i});
    MeshRange &range = byMesh.back();
    range.bound = std::min(range.bound, pending[i].bound);
    range.end = i + 1;
  }
  std::stable_sort(byMesh.begin(), byMesh.end(),
                   [](const MeshRange &a, const MeshRange &b) {
                     return a.bound < b.bound;
                   });
  for (const MeshRange &range : byMesh)
    for (size_t i = range.begin; i < range.end; ++i) {
      progress(false);
      consider(pending[i].candidate, pending[i].order);
    }
  std::stable_sort(result.ranked.begin(), result.ranked.end(), faster);
  rankedDone = true;
  rankOnExactProbes();
  // A bound over the final winner's step proves nothing: evaluate those
  // candidates, rank again (a few rounds: each round's winner is no slower
  // than a bound it was compared with).
  for (int round = 0; round < 8 && evaluateDeferred(); ++round)
    rankOnExactProbes();
  for (Deferred &d : deferred)
    result.pruned.push_back({d.candidate, d.why});
  std::stable_sort(result.tooLarge.begin(), result.tooLarge.end(), faster);
  result.candidates = seen;
  result.seconds = secondsSince(start);
  progress(true);
  return std::move(result);
}
} // namespace

SearchResult searchMeshes(mlir::MLIRContext &context,
                          const RunDescription &run,
                          const SearchOptions &options) {
  // LLMC_SEARCH_BOUND (docs/environment.md): "off" searches without the
  // bound, "check" computes it for every candidate and defers none.
  SearchOptions chosen = options;
  if (const char *bound = std::getenv("LLMC_SEARCH_BOUND")) {
    llvm::StringRef mode(bound);
    chosen.boundPruning &= mode != "off";
    chosen.checkBound |= mode == "check";
  }
  return Searcher(context, run, chosen).search();
}

} // namespace llmc::planner
