//===- SearchTest.cpp - the mesh search's rules and its probes ------------===//
//
// The rules that prune candidates before any compile (each with the reason
// a user reads), the enumeration of meshes, and the claim the search rests
// on: a candidate evaluated on two probes with fewer layers, extrapolated
// linearly, predicts what a compile of every layer predicts.
//
//===----------------------------------------------------------------------===//
#include "planner/Candidate.h"
#include "planner/Probe.h"
#include "planner/Search.h"

#include "ir/Registration.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace llmc;
using namespace llmc::planner;

namespace {

ModelConfig gpt2(int64_t layers, int64_t heads, int64_t vocab) {
  ModelConfig m;
  m.family = ModelFamily::Gpt2;
  m.numLayers = layers;
  m.hiddenSize = 64 * heads;
  m.numHeads = heads;
  m.numKvHeads = heads;
  m.intermediateSize = 4 * m.hiddenSize;
  m.vocabSize = vocab;
  m.maxPositions = 1024;
  return m;
}

TrainConfig batch(int64_t size, int64_t seq) {
  TrainConfig t;
  t.batchSize = size;
  t.seqLen = seq;
  return t;
}

Candidate mesh(int64_t dp, int64_t tp, int64_t pp = 1, int64_t cp = 1,
               int64_t ep = 1) {
  Candidate c;
  c.dp = dp;
  c.tp = tp;
  c.pp = pp;
  c.cp = cp;
  c.ep = ep;
  return c;
}

/// The reason `c` is rejected ("" when it is not).
std::string reason(const ModelConfig &m, const TrainConfig &t,
                   const Candidate &c) {
  std::optional<Rejection> r = checkCandidate(m, t, c);
  return r ? r->reason : "";
}

TEST(SearchRules, TensorParallelSplitsHeadsKvHeadsFfnAndVocabulary) {
  ModelConfig m = gpt2(12, 12, 50304);
  TrainConfig t = batch(16, 1024);
  EXPECT_EQ(reason(m, t, mesh(1, 8)), "heads (12) not divisible by tp=8");
  EXPECT_EQ(reason(m, t, mesh(2, 4)), "");
  ModelConfig llama = m;
  llama.family = ModelFamily::Llama;
  llama.numHeads = 16;
  llama.hiddenSize = 1024;
  llama.numKvHeads = 2;
  EXPECT_EQ(reason(llama, t, mesh(1, 4)), "kv heads (2) not divisible by tp=4");
  ModelConfig odd = m;
  odd.vocabSize = 50257;
  EXPECT_EQ(reason(odd, t, mesh(1, 2)),
            "vocabulary (50257) not divisible by tp=2; pad vocab_size to 50304");
  ModelConfig ffn = m;
  ffn.intermediateSize = 3002;
  EXPECT_EQ(reason(ffn, t, mesh(1, 4)), "ffn width (3002) not divisible by tp=4");
}

TEST(SearchRules, PipelineNeedsEqualStagesAndMicrobatches) {
  ModelConfig m = gpt2(12, 12, 50304);
  TrainConfig t = batch(16, 1024);
  Candidate c = mesh(1, 1, 5);
  c.microbatches = 8;
  EXPECT_EQ(reason(m, t, c),
            "layers (12) not divisible by pp=5 (the search cuts equal stages)");
  c = mesh(2, 1, 4);
  c.microbatches = 2;
  EXPECT_EQ(reason(m, t, c), "microbatches (2) fewer than pp=4");
  c.microbatches = 4;
  EXPECT_EQ(reason(m, t, c), "");
}

TEST(SearchRules, ContextExpertAndBatch) {
  ModelConfig m = gpt2(12, 12, 50304);
  TrainConfig t = batch(16, 1000);
  EXPECT_EQ(reason(m, t, mesh(1, 1, 1, 8)),
            "sequence (1000) not divisible by 2*cp=16");
  EXPECT_EQ(reason(m, t, mesh(1, 1, 1, 4)), "");
  EXPECT_EQ(reason(m, t, mesh(1, 1, 1, 1, 2)),
            "no experts for ep=2 (a gpt2 model)");
  ModelConfig moe = m;
  moe.family = ModelFamily::Moe;
  moe.numExperts = 6;
  moe.expertsPerToken = 2;
  EXPECT_EQ(reason(moe, t, mesh(1, 1, 1, 1, 4)),
            "experts (6) not divisible by ep=4");
  Candidate c = mesh(32, 1);
  EXPECT_EQ(reason(m, t, c),
            "batch of a microbatch (16) not divisible by dp*ep=32");
  c = mesh(4, 1);
  c.microbatches = 3;
  EXPECT_EQ(reason(m, t, c), "batch (16) not divisible by microbatches=3");
  c.microbatches = 8;
  EXPECT_EQ(reason(m, t, c),
            "batch of a microbatch (2) not divisible by dp*ep=4");
}

TEST(SearchRules, ZeroNeedsDataParallelism) {
  ModelConfig m = gpt2(12, 12, 50304);
  TrainConfig t = batch(16, 1024);
  Candidate c = mesh(1, 4);
  c.zero = 1;
  EXPECT_EQ(reason(m, t, c), "zero=1 needs dp > 1 (it shards over dp)");
  c = mesh(4, 1);
  c.zero = 2;
  EXPECT_EQ(reason(m, t, c),
            "zero=2 with one microbatch is the program of zero=1");
  c.microbatches = 2;
  EXPECT_EQ(reason(m, t, c), "");
  c.zero = 3;
  c.microbatches = 1;
  EXPECT_EQ(reason(m, t, c), "");
}

TEST(SearchRules, MicrobatchFitIsAffineAndNeverShrinks) {
  // fitMicrobatches: compute(M) = compute(1) + (compute(2) - compute(1))
  // (M - 1), one stage without communication: 10 ms and 12 ms give 16 ms
  // at M = 4.
  Measure one, two;
  one.launchCost = two.launchCost = 5e-6;
  one.stages.resize(1);
  two.stages.resize(1);
  one.stages[0].compute = 10e-3;
  one.stages[0].forwardBackwardKernels = 100;
  two.stages[0].compute = 12e-3;
  Candidate c;
  c.microbatches = 4;
  EXPECT_NEAR(fitMicrobatches(one, two, c).stages[0].compute, 16e-3, 1e-12);
  // The program of two microbatches cheaper than the one of one (a
  // residual add folded in one, not in the other): a program difference,
  // so from the program of two (9 ms, 200 launches) each further
  // microbatch costs its 100 launches (0.5 ms), not -1 ms; at M = 2 the
  // program of two itself.
  two.stages[0].compute = 9e-3;
  two.stages[0].forwardBackwardKernels = 200;
  EXPECT_NEAR(fitMicrobatches(one, two, c).stages[0].compute,
              9e-3 + 2 * 100 * 5e-6, 1e-12);
  c.microbatches = 2;
  EXPECT_NEAR(fitMicrobatches(one, two, c).stages[0].compute, 9e-3, 1e-12);
}

TEST(SearchRules, EveryMeshOfTheDeviceCountOnce) {
  // Ordered factorizations of 2^3 into five factors: C(3 + 4, 4) = 35.
  std::vector<Candidate> meshes = enumerateMeshes(8);
  EXPECT_EQ(meshes.size(), 35u);
  for (size_t i = 0; i < meshes.size(); ++i) {
    EXPECT_EQ(meshes[i].devices(), 8);
    for (size_t j = 0; j < i; ++j)
      EXPECT_FALSE(meshes[i] == meshes[j]) << meshes[i].text();
  }
  // 12 = 2^2 * 3: C(2 + 4, 4) * C(1 + 4, 4) = 15 * 5.
  EXPECT_EQ(enumerateMeshes(12).size(), 75u);
}

//===----------------------------------------------------------------------===//
// Probes against a compile of every layer
//===----------------------------------------------------------------------===//

double relative(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(b), 1e-30);
}

class ProbeTest : public ::testing::Test {
protected:
  void SetUp() override {
    mlir::DialectRegistry registry;
    registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    llvm::Expected<DeviceProfile> h100 = lookupDeviceProfile("h100");
    ASSERT_TRUE(static_cast<bool>(h100)) << llvm::toString(h100.takeError());
    profile = *h100;
    // GPT-2 with 8 layers of width 128, 4 heads, 16 x 64 tokens: small
    // enough to compile whole in a test, large enough that its layers are
    // most of the step.
    run.model = gpt2(8, 2, 256);
    run.train = batch(16, 64);
    run.precision.policy = PrecisionPolicy::Bf16;
  }

  /// The prediction of `c` from a compile of all the layers.
  Measure full(const Candidate &c) {
    std::string error;
    mlir::FailureOr<Measure> m = compileAndMeasure(
        context, run, run.model.numLayers,
        candidateOptions(pipelineOptionsFor(run), c, run.model.numLayers),
        profile, error);
    EXPECT_TRUE(succeeded(m)) << error;
    return succeeded(m) ? *m : Measure();
  }

  Measure probed(const Candidate &c, bool exact = false) {
    std::string error;
    int64_t compiles = 0;
    mlir::FailureOr<Measure> m =
        evaluateCandidate(context, run, c, profile, error, &compiles, exact);
    EXPECT_TRUE(succeeded(m)) << error;
    EXPECT_EQ(compiles, 2); // two probes, not the model
    return succeeded(m) ? *m : Measure();
  }

  /// The fit from probes of one and two microbatches (fitMicrobatches)
  /// against the compile of every layer and microbatch: the step time
  /// within 8% (affine in M: measured +1.7% for dp2 tp2 zero3 selective
  /// mb2 and +7.1% for tp2 pp2 mb4 with the CUDA runtime's counts, 0.000%
  /// and +0.26% before them), the memory within 10% (A + B / M for the bytes other than the
  /// activations is a model of the buffer plan, not the plan: measured
  /// 0.000% for mb2, -7.3% for tp2 pp2 mb4).
  void expectFitted(const Candidate &c, const Measure &whole,
                    const std::string &what) {
    Candidate one = c, two = c;
    one.microbatches = 1;
    two.microbatches = 2;
    std::string error;
    mlir::FailureOr<Measure> m1 =
        probeAndExtrapolate(context, run, one, profile, error);
    ASSERT_TRUE(succeeded(m1)) << error;
    mlir::FailureOr<Measure> m2 =
        probeAndExtrapolate(context, run, two, profile, error);
    ASSERT_TRUE(succeeded(m2)) << error;
    Measure fit = fitMicrobatches(*m1, *m2, c);
    std::printf("[ fitted   ] %s: step %.3f vs %.3f ms, memory %.0f vs %.0f "
                "bytes\n",
                what.c_str(), fit.stepSeconds() * 1e3,
                whole.stepSeconds() * 1e3, fit.memoryBytes(),
                whole.memoryBytes());
    // 8%: on GPU profiles the optimizer's and the gradient accumulation's
    // members of multi-tensor launches launch once per group, and how they
    // group depends on the program of M microbatches, not affinely on M
    // (docs/planning.md, "What the CUDA runtime runs"): tp2 pp2 mb4 went
    // from +0.26% to +7.1% with that, the derived step (below) from +11.0%
    // to -0.2%.
    EXPECT_LT(relative(fit.stepSeconds(), whole.stepSeconds()), 0.08) << what;
    // Memory within 25%: since buffers are planned for fused kernels
    // (devices = cuda: a fused region's intermediates have no storage) the
    // per-microbatch pattern is less affine; measured -20.8% for tp2 pp2
    // mb4 (-7.3% before).
    EXPECT_LT(relative(fit.memoryBytes(), whole.memoryBytes()), 0.25) << what;
  }

  mlir::MLIRContext context;
  DeviceProfile profile;
  RunDescription run;
};

/// The probes' extrapolation predicts the step time, the memory per rank
/// and the bytes each rank sends per axis of a compile of every layer
/// within `tolerance`.
void expectClose(const Measure &probe, const Measure &whole, double tolerance,
                 const std::string &what) {
  ASSERT_FALSE(whole.stages.empty()) << what;
  ASSERT_EQ(probe.stages.size(), whole.stages.size()) << what;
  EXPECT_LT(relative(probe.stepSeconds(), whole.stepSeconds()), tolerance)
      << what << ": step " << probe.stepSeconds() << " s vs "
      << whole.stepSeconds() << " s";
  EXPECT_LT(relative(probe.memoryBytes(), whole.memoryBytes()), tolerance)
      << what << ": memory " << probe.memoryBytes() << " vs "
      << whole.memoryBytes();
  // The measured differences, for docs/planning.md.
  std::printf("[ probes   ] %s: step %.3f vs %.3f ms (%.3f%%), memory %.0f vs "
              "%.0f bytes (%.3f%%)\n",
              what.c_str(), probe.stepSeconds() * 1e3,
              whole.stepSeconds() * 1e3,
              100 * relative(probe.stepSeconds(), whole.stepSeconds()),
              probe.memoryBytes(), whole.memoryBytes(),
              100 * relative(probe.memoryBytes(), whole.memoryBytes()));
  const StageMeasure &p = probe.busiestStage(), &w = whole.busiestStage();
  EXPECT_EQ(p.commBytes.size(), w.commBytes.size()) << what;
  for (const auto &[axes, bytes] : w.commBytes) {
    ASSERT_TRUE(p.commBytes.count(axes)) << what << ": axes " << axes;
    EXPECT_LT(relative(p.commBytes.at(axes), bytes), tolerance)
        << what << ": bytes over " << axes;
  }
}

// The identical layers make every quantity affine in the layer count, so
// the extrapolation is exact up to the buffer planner's placement (first
// fit may leave different holes) and float rounding: 2% bounds both.
constexpr double kTolerance = 0.02;

TEST_F(ProbeTest, OneDeviceDataTensorAndZero) {
  Candidate one = mesh(1, 1);
  expectClose(probed(one), full(one), kTolerance, "one device");
  Candidate dp = mesh(2, 1);
  dp.zero = 1;
  expectClose(probed(dp), full(dp), kTolerance, "dp2 zero1");
  Candidate tp = mesh(1, 2);
  expectClose(probed(tp), full(tp), kTolerance, "tp2");
  Candidate z3 = mesh(2, 2);
  z3.zero = 3;
  z3.remat = RematChoice::Selective;
  z3.microbatches = 2;
  expectClose(probed(z3, /*exact=*/true), full(z3), kTolerance,
              "dp2 tp2 zero3 selective mb2");
}

TEST_F(ProbeTest, PipelineStagesExtrapolatePerStage) {
  // Compiled microbatches (what the winner of a search gets): each stage
  // extrapolated on its own, the bubble simulated from the stages' flops.
  // (tp2, not dp2: llmc-split-pipeline rejects dp2 x pp2 in bf16 today,
  // "'llmc.cast' op pipeline schedule 1f1b runs this op before a value it
  // reads"; the search reports that as the candidate's compile error.)
  // 3%: the buffer placement of the pipelined stages differs between the
  // probes and the whole (measured 1.97% memory before the norms' backward
  // became llmc.layer_norm_grad, 2.56% after: 553 KB of 21.6 MB).
  Candidate pp = mesh(1, 2, 2);
  pp.microbatches = 4;
  expectClose(probed(pp, /*exact=*/true), full(pp), 0.03, "tp2 pp2 mb4");
}

TEST_F(ProbeTest, MicrobatchesDerivedFromOne) {
  // Without a pipeline, ZeRO-3: an estimate. The step time within 25%:
  // every dp collective of ZeRO-2/3 is counted once per microbatch, which
  // overestimates (measured +21.6%: some of them run once per step); the
  // memory within 10% (the activations of one microbatch of 1/M of the
  // batch; measured -6.5%). The winner of a search is compiled with its
  // microbatches, so these estimates only rank the others.
  Candidate z3 = mesh(2, 2);
  z3.zero = 3;
  z3.remat = RematChoice::Selective;
  z3.microbatches = 2;
  Measure derived = probed(z3);
  Measure whole = full(z3);
  std::printf("[ derived  ] dp2 tp2 zero3 selective mb2: step %.3f vs %.3f "
              "ms, memory %.0f vs %.0f bytes\n",
              derived.stepSeconds() * 1e3, whole.stepSeconds() * 1e3,
              derived.memoryBytes(), whole.memoryBytes());
  // Within 40%: measured +35.6% since ZeRO-3's gathers are prefetched a
  // layer ahead (the compile hides more of them behind kernels, while the
  // derivation adds every extra microbatch's whole); +30.2% since the
  // two-stream simulation, +26.8% before it, +21.6% before the fused-kernel
  // buffer plan and the nested regions. The fit from two microbatches (below)
  // is the estimate the search relies on for such candidates: +4.0%.
  EXPECT_LT(relative(derived.stepSeconds(), whole.stepSeconds()), 0.40);
  EXPECT_LT(relative(derived.memoryBytes(), whole.memoryBytes()), 0.10);
  expectFitted(z3, whole, "dp2 tp2 zero3 selective mb2");
}

TEST_F(ProbeTest, PipelineMicrobatchesDerivedFromOne) {
  // Derived microbatches (how the search ranks pipelines before compiling
  // the winner exactly): the same work in smaller pieces. The step time
  // within 12% (below): the model adds the launches and the non-dp collectives'
  // latency per microbatch, not the roofline's change for smaller kernels;
  // the memory is kept conservative (never below the compile, at most 50%
  // over: the transient bytes are not shrunk).
  Candidate pp = mesh(1, 2, 2);
  pp.microbatches = 4;
  Measure derived = probed(pp);
  Measure whole = full(pp);
  std::printf("[ derived  ] tp2 pp2 mb4: step %.3f vs %.3f ms, memory %.0f vs "
              "%.0f bytes\n",
              derived.stepSeconds() * 1e3, whole.stepSeconds() * 1e3,
              derived.memoryBytes(), whole.memoryBytes());
  // 12%: the derived step is over by the same 0.95 ms before and after
  // the norms' backward became llmc.layer_norm_grad, but the step is
  // shorter (11.07 -> 8.65 ms): +8.6% -> +11.0%; -0.2% since the derived
  // launches are the cost model's (a GEMM with its epilogue is one, a
  // folded residual add none).
  EXPECT_LT(relative(derived.stepSeconds(), whole.stepSeconds()), 0.12)
      << derived.stepSeconds() << " s vs " << whole.stepSeconds() << " s";
  EXPECT_GE(derived.memoryBytes(), whole.memoryBytes() * 0.98);
  EXPECT_LT(derived.memoryBytes(), whole.memoryBytes() * 1.5);
  expectFitted(pp, whole, "tp2 pp2 mb4");
}

// The stages of the same signature (the middle stages of equal stages,
// planner/Probe.cpp) are planned and costed once: every stage's measure is
// the one of planning and costing each stage, field for field and exactly,
// with one microbatch and two (the search's probes), with four and eight
// (the warm-up differs by stage: no two stages alike), with ZeRO and with
// remat. A signature that missed a difference (the op order of a stage's
// schedule, an argument's sharding) would show here as a different stage.
/// Every field of a stage's measure equal, the arena and the activations
/// kept within `bytesTolerance` relative (0: equal).
void expectSameStage(const StageMeasure &a, const StageMeasure &b,
                     double bytesTolerance = 0) {
  EXPECT_EQ(a.compute, b.compute);
  EXPECT_EQ(a.communication, b.communication);
  EXPECT_EQ(a.hidden, b.hidden);
  EXPECT_EQ(a.optimizer, b.optimizer);
  EXPECT_EQ(a.forwardBackwardKernels, b.forwardBackwardKernels);
  EXPECT_EQ(a.commSeconds, b.commSeconds);
  EXPECT_EQ(a.commBytes, b.commBytes);
  EXPECT_LE(relative(a.arena, b.arena), bytesTolerance)
      << a.arena << " vs " << b.arena;
  EXPECT_LE(relative(a.activations, b.activations), bytesTolerance)
      << a.activations << " vs " << b.activations;
  EXPECT_EQ(a.persistent, b.persistent);
  EXPECT_EQ(a.forwardFlops, b.forwardFlops);
  EXPECT_EQ(a.backwardFlops, b.backwardFlops);
  EXPECT_EQ(a.microbatchLatency, b.microbatchLatency);
}

TEST_F(ProbeTest, StagesOfOneSignatureMeasuredOnce) {
  Candidate pp4 = mesh(1, 1, 4);
  Candidate zero = mesh(2, 1, 4);
  zero.zero = 3;
  Candidate remat = mesh(1, 2, 4);
  remat.remat = RematChoice::Full;
  for (Candidate c : {pp4, zero, remat})
    for (int64_t micro : {1, 2, 4, 8}) {
      c.microbatches = micro;
      CompilePipelineOptions options =
          candidateOptions(pipelineOptionsFor(run), c, run.model.numLayers);
      std::string error;
      mlir::FailureOr<Measure> once = compileAndMeasure(
          context, run, run.model.numLayers, options, profile, error);
      mlir::FailureOr<Measure> each =
          compileAndMeasure(context, run, run.model.numLayers, options,
                            profile, error, StageReuse::None);
      ASSERT_TRUE(succeeded(once) && succeeded(each)) << error;
      ASSERT_EQ(once->stages.size(), 4u);
      ASSERT_EQ(each->stages.size(), 4u);
      for (size_t s = 0; s < 4; ++s) {
        const StageMeasure &a = once->stages[s], &b = each->stages[s];
        SCOPED_TRACE(c.text() + " stage " + std::to_string(s));
        expectSameStage(a, b);
      }
      EXPECT_EQ(once->stepSeconds(), each->stepSeconds());
      EXPECT_EQ(once->memoryBytes(), each->memoryBytes());
    }
}

// A pipeline's probes compile M + 2 stages and repeat the middle ones
// (probeStages): every time they give is the one of the compile of all pp
// stages, to the last bit, and the memory within 0.05% (a receive's place
// in a stage's order follows the global order the schedule simulates,
// which depends on the neighbours' timing: in the compile of pp8 mb4
// itself, stages 1 and 2 run the same units and their arenas differ by
// 2,304 bytes of 19.4 MB, 0.012%). GPT-2 of 16 layers (2 a stage at pp8),
// so that both are whole compiles (no extrapolation in between); one, two
// and four microbatches; with tp2 the 16 ranks of pp8 span two nodes of 8
// and the 5 x 2 of the reduced compile would not, so it is not reduced,
// nor pp4 of 2 microbatches (4 stages are M + 2).
TEST_F(ProbeTest, PipelineOfFewerStagesMeasuresTheSame) {
  run.model = gpt2(16, 2, 256);
  struct Case {
    Candidate c;
    int64_t stages; // what probeStages must give
  };
  std::vector<Case> cases;
  for (int64_t micro : {1, 2, 4}) {
    Candidate c = mesh(1, 1, 8);
    c.microbatches = micro;
    cases.push_back({c, micro + 2});
  }
  Candidate full = mesh(1, 1, 8);
  full.remat = RematChoice::Full;
  cases.push_back({full, 3});
  Candidate tp = mesh(1, 2, 8);
  cases.push_back({tp, 8});
  Candidate pp4 = mesh(1, 1, 4);
  pp4.microbatches = 2;
  EXPECT_EQ(probeStages(pp4, run.model.numLayers, profile), 4);
  for (const Case &k : cases) {
    SCOPED_TRACE(k.c.text());
    EXPECT_EQ(probeStages(k.c, run.model.numLayers, profile), k.stages);
    std::string error;
    int64_t compiles = 0;
    mlir::FailureOr<Measure> probe =
        probeAndExtrapolate(context, run, k.c, profile, error, &compiles);
    ASSERT_TRUE(succeeded(probe)) << error;
    EXPECT_EQ(compiles, 1);
    mlir::FailureOr<Measure> whole = compileAndMeasure(
        context, run, run.model.numLayers,
        candidateOptions(pipelineOptionsFor(run), k.c, run.model.numLayers),
        profile, error);
    ASSERT_TRUE(succeeded(whole)) << error;
    setChunkTransfer(*whole, run, k.c, profile);
    schedulePipeline(*whole, k.c);
    ASSERT_EQ(probe->stages.size(), whole->stages.size());
    for (size_t s = 0; s < whole->stages.size(); ++s) {
      const StageMeasure &a = probe->stages[s], &b = whole->stages[s];
      SCOPED_TRACE("stage " + std::to_string(s));
      expectSameStage(a, b, 5e-4);
    }
    EXPECT_EQ(probe->ranks, whole->ranks);
    EXPECT_EQ(probe->busiest, whole->busiest);
    EXPECT_EQ(probe->bubble, whole->bubble);
    EXPECT_EQ(probe->stepSeconds(), whole->stepSeconds());
    EXPECT_LE(relative(probe->memoryBytes(), whole->memoryBytes()), 5e-4);
  }
}

//===----------------------------------------------------------------------===//
// The bound before probing
//===----------------------------------------------------------------------===//

// The search with the bound (SearchOptions::boundPruning) returns the winner
// and the first kBoundRows rows of the ranking of the search without it, at
// the same steps (its probe compiles are
// printed, not asserted: a candidate the bound skips dominates nothing, so
// a heavier one may be evaluated instead):
// GPT-2 tiny (2 layers of width 64, 8 x 16 tokens) on 4 devices of h100,
// with the profile's memory and with 2 MiB per rank (where dp4 does not
// fit and remat and ZeRO variants are evaluated).
TEST(SearchBound, SameWinnerAsTheFullSearch) {
  mlir::DialectRegistry registry;
  registerLlmcDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::Expected<DeviceProfile> h100 = lookupDeviceProfile("h100");
  ASSERT_TRUE(static_cast<bool>(h100)) << llvm::toString(h100.takeError());
  RunDescription run;
  run.model = gpt2(2, 4, 128);
  run.model.hiddenSize = 64;
  run.model.intermediateSize = 256;
  run.model.maxPositions = 32;
  run.train = batch(8, 16);
  for (double budget : {h100->memoryBytes, 2.0 * 1024 * 1024}) {
    SearchOptions options;
    options.devices = 4;
    options.profile = *h100;
    options.budgetBytes = budget;
    SearchResult bounded = searchMeshes(context, run, options);
    options.boundPruning = false;
    SearchResult full = searchMeshes(context, run, options);
    ASSERT_TRUE(full.winner() && bounded.winner()) << budget;
    EXPECT_EQ(bounded.winner()->candidate.text(),
              full.winner()->candidate.text())
        << budget;
    EXPECT_DOUBLE_EQ(bounded.winner()->measure.stepSeconds(),
                     full.winner()->measure.stepSeconds());
    // And the ranking's first kBoundRows rows (what --json prints).
    ASSERT_EQ(std::min(bounded.ranked.size(), kBoundRows),
              std::min(full.ranked.size(), kBoundRows));
    for (size_t i = 0; i < std::min(full.ranked.size(), kBoundRows); ++i) {
      EXPECT_EQ(bounded.ranked[i].candidate.text(),
                full.ranked[i].candidate.text())
          << i;
      EXPECT_DOUBLE_EQ(bounded.ranked[i].measure.stepSeconds(),
                       full.ranked[i].measure.stepSeconds())
          << i;
    }
    int64_t byBound = 0;
    for (const Pruned &p : bounded.pruned)
      byBound += p.why.rule == "bound";
    std::printf("[ bound    ] budget %.0f bytes: winner %s, %lld pruned by "
                "the bound, %lld against %lld probe compiles\n",
                budget, full.winner()->candidate.text().c_str(),
                static_cast<long long>(byBound),
                static_cast<long long>(bounded.compiles),
                static_cast<long long>(full.compiles));
  }
}

// The bound of step 3b (Search.cpp, lowerBound) is under the step of every
// candidate the full search evaluates (LLMC_SEARCH_BOUND=check: each bound
// computed, none deferred): GPT-2 with 8 layers of width 128 (more than the
// 4 of the second probe, so the layer slope is known), 16 x 64 tokens, on 4
// devices of h100, with the profile's memory and with 80% of the winner's,
// where remat and ZeRO variants are evaluated too, and with 80% of that
// winner's and one device a node (every collective on the inter-node link:
// ZeRO-3's gathers weigh, and its bound is theirs). In each, at least one bound (of a ZeRO-3
// candidate in the last) is over half its step, so a bound twice too large
// fails the first check.
TEST(SearchBound, LowerBoundUnderEveryStep) {
  mlir::DialectRegistry registry;
  registerLlmcDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::Expected<DeviceProfile> h100 = lookupDeviceProfile("h100");
  ASSERT_TRUE(static_cast<bool>(h100)) << llvm::toString(h100.takeError());
  RunDescription run;
  run.model = gpt2(8, 2, 256);
  run.train = batch(16, 64);
  run.precision.policy = PrecisionPolicy::Bf16;
  SearchOptions options;
  options.devices = 4;
  options.profile = *h100;
  options.budgetBytes = h100->memoryBytes;
  options.checkBound = true;
  for (int round = 0; round < 3; ++round) {
    if (round == 2)
      options.profile.devicesPerNode = 1;
    SearchResult full = searchMeshes(context, run, options);
    ASSERT_TRUE(full.winner()) << options.budgetBytes;
    int64_t bounded = 0;
    double tightest = 0;
    std::vector<Evaluated> evaluated = full.ranked;
    evaluated.insert(evaluated.end(), full.tooLarge.begin(),
                     full.tooLarge.end());
    for (const Evaluated &e : evaluated) {
      if (e.bound <= 0)
        continue;
      ++bounded;
      double step = e.measure.stepSeconds();
      EXPECT_LE(e.bound, step) << e.candidate.text() << ": bound "
                               << e.bound * 1e3 << " ms, step " << step * 1e3
                               << " ms";
      if (round < 2 || e.candidate.zero == 3)
        tightest = std::max(tightest, e.bound / step);
    }
    std::printf("[ bound    ] budget %.0f bytes: %zu evaluated, %lld with a "
                "bound, the tightest %.3f of its step, %lld probe compiles\n",
                options.budgetBytes, evaluated.size(),
                static_cast<long long>(bounded), tightest,
                static_cast<long long>(full.compiles));
    EXPECT_GE(bounded, 20);
    EXPECT_GT(2 * tightest, 1.0);
    options.budgetBytes = 0.8 * full.winner()->measure.memoryBytes();
  }
}

} // namespace
