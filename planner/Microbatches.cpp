//===- Microbatches.cpp - a probe of one microbatch split into M ----------===//
//
// The microbatch side of the probes (planner/Probe.h): the 1F1B bubble
// simulated from each stage's flops, the derivation of M microbatches from
// a probe of one, and the fit from probes of one and two.
//
//===----------------------------------------------------------------------===//
#include "planner/Probe.h"

#include "passes/PipelineSchedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>
#include <optional>

namespace llmc::planner {

namespace {
int64_t busiestStage(const std::vector<StageMeasure> &stages) {
  int64_t best = 0;
  for (int64_t s = 1; s < static_cast<int64_t>(stages.size()); ++s)
    if (stages[s].busy() > stages[best].busy())
      best = s;
  return best;
}
} // namespace

double simulateBubble(const std::vector<StageMeasure> &stages,
                      int64_t microbatches) {
  int64_t n = static_cast<int64_t>(stages.size());
  if (n <= 1)
    return 0.0;
  std::vector<std::vector<pipeline::Unit>> orders =
      pipeline::stageOrders("1f1b", n, 1, microbatches);
  // The same simulation as llmc-split-pipeline, with each unit's flops.
  return pipeline::simulate(orders, n, [&](const pipeline::Unit &u) {
           const StageMeasure &s = stages[u.chunk];
           return (u.backward ? s.backwardFlops : s.forwardFlops) /
                  static_cast<double>(microbatches);
         })
      .bubble();
}

double simulatePipeline(llvm::ArrayRef<double> busy,
                        llvm::ArrayRef<double> optimizer,
                        llvm::ArrayRef<double> forwardShare,
                        llvm::StringRef schedule, int64_t virtualStages,
                        int64_t microbatches, double *bubble) {
  int64_t p = static_cast<int64_t>(busy.size());
  int64_t v = std::max<int64_t>(1, virtualStages);
  int64_t m = std::max<int64_t>(1, microbatches);
  std::vector<std::vector<pipeline::Unit>> orders =
      pipeline::stageOrders(schedule, p, v, m);
  double pieces = static_cast<double>(v * m);
  pipeline::Simulation sim =
      pipeline::simulate(orders, p * v, [&](const pipeline::Unit &u) {
        int64_t s = u.chunk % p;
        double share = u.backward ? 1.0 - forwardShare[s] : forwardShare[s];
        return std::max(0.0, busy[s] - optimizer[s]) * share / pieces;
      });
  if (bubble)
    *bubble = sim.bubble();
  double step = 0;
  for (int64_t s = 0; s < p; ++s)
    step = std::max(step, sim.freeAt[s] + optimizer[s]);
  return step;
}

void schedulePipeline(Measure &measure, const Candidate &candidate) {
  int64_t p = static_cast<int64_t>(measure.stages.size());
  if (p <= 1)
    return;
  int64_t v = std::max<int64_t>(1, candidate.virtualStages);
  int64_t m = std::max<int64_t>(1, candidate.microbatches);
  llvm::StringRef schedule = v > 1 ? "interleaved" : "1f1b";
  if (measure.virtualStages == 1 && v > 1) {
    // The most units (chunk-microbatches) each stage holds at once, as
    // llmc-split-pipeline counts them (forwards not yet run backward).
    std::vector<std::vector<pipeline::Unit>> orders =
        pipeline::stageOrders(schedule, p, v, m);
    for (int64_t s = 0; s < p; ++s) {
      StageMeasure &st = measure.stages[s];
      int64_t live = 0, most = 0;
      for (const pipeline::Unit &u : orders[s]) {
        live += u.backward ? -1 : 1;
        most = std::max(most, live);
      }
      double perMicro =
          st.activations / static_cast<double>(std::min(p - s, m));
      double held = perMicro * static_cast<double>(most) / static_cast<double>(v);
      st.arena += held - st.activations;
      st.activations = held;
      // Each extra chunk receives and sends the residual stream forward and
      // its gradient backward: 4 (v - 1) transfers of a microbatch's
      // boundary more per microbatch (setChunkTransfer).
      if (measure.boundaryBytes > 0 && measure.transferBandwidth > 0) {
        double transfers = 4.0 * static_cast<double>((v - 1) * m);
        double bytes = measure.boundaryBytes / static_cast<double>(m);
        double seconds =
            transfers * (measure.transferLatency +
                         bytes / measure.transferBandwidth);
        st.communication += seconds;
        st.commSeconds["pp"] += seconds;
        st.commBytes["pp"] += transfers * bytes;
      }
    }
    measure.virtualStages = v;
  }
  measure.schedule = schedule.str();
  std::vector<double> busy, optimizer, share;
  for (const StageMeasure &st : measure.stages) {
    busy.push_back(st.busy());
    optimizer.push_back(st.optimizer);
    double flops = st.forwardFlops + st.backwardFlops;
    share.push_back(flops > 0 ? st.forwardFlops / flops : 1.0 / 3.0);
  }
  measure.busiest = busiestStage(measure.stages);
  measure.pipelineSeconds = simulatePipeline(busy, optimizer, share, schedule,
                                             measure.virtualStages, m,
                                             &measure.bubble);
}

void setChunkTransfer(Measure &measure, const RunDescription &run,
                      const Candidate &c, const DeviceProfile &profile) {
  double element = run.precision.policy == PrecisionPolicy::Fp32 ? 4.0 : 2.0;
  measure.boundaryBytes =
      static_cast<double>(run.train.batchSize) /
      static_cast<double>(c.dp * c.ep) * static_cast<double>(run.train.seqLen) /
      static_cast<double>(c.cp) * static_cast<double>(run.model.hiddenSize) *
      element;
  // pp is the outermost mesh axis: its groups span every rank.
  const LinkClass &link = c.devices() <= profile.devicesPerNode
                              ? profile.intraNode
                              : profile.interNode;
  measure.transferLatency = link.latency;
  measure.transferBandwidth = link.bandwidth;
}

Measure withMicrobatches(Measure measure, const Candidate &candidate,
                         const DeviceProfile &profile) {
  int64_t micro = candidate.microbatches;
  int64_t stages = static_cast<int64_t>(measure.stages.size());
  for (int64_t s = 0; s < stages; ++s) {
    StageMeasure &m = measure.stages[s];
    // The same work in `micro` pieces: every forward and backward kernel
    // is launched `micro` times, and so is every collective of the tp, cp,
    // ep and pp axes (their bytes are split, their latency is not).
    double extra = static_cast<double>(micro - 1);
    m.compute += extra * m.forwardBackwardKernels * profile.launchCost;
    m.communication += extra * m.microbatchLatency;
    // ZeRO-2 reduce-scatters and ZeRO-3 also gathers the weights for every
    // microbatch: their dp collectives run `micro` times, whole.
    if (candidate.zero >= 2)
      for (auto &[axes, seconds] : m.commSeconds)
        if (llvm::is_contained(
                llvm::SmallVector<llvm::StringRef>(llvm::split(axes, ',')),
                "dp")) {
          m.communication += extra * seconds;
          seconds *= static_cast<double>(micro);
          m.commBytes[axes] *= static_cast<double>(micro);
        }
    // 1F1B: stage s holds the activations of min(stages - s, micro)
    // microbatches of 1/micro of the batch at once. The other bytes are
    // kept as they are (conservative: the temporaries shrink too, but a
    // gradient accumulated over microbatches is whole).
    double held = m.activations *
                  static_cast<double>(std::min(stages - s, micro)) /
                  static_cast<double>(micro);
    m.arena += held - m.activations;
    m.activations = held;
  }
  measure.busiest = busiestStage(measure.stages);
  schedulePipeline(measure, candidate);
  return measure;
}

Measure fitMicrobatches(const Measure &one, const Measure &two,
                        const Candidate &candidate) {
  double micro = static_cast<double>(candidate.microbatches);
  int64_t stages = static_cast<int64_t>(one.stages.size());
  Measure out = one;
  for (int64_t s = 0; s < stages && s < static_cast<int64_t>(two.stages.size());
       ++s) {
    const StageMeasure &a = one.stages[s], &b = two.stages[s];
    StageMeasure &m = out.stages[s];
    auto affine = [&](double v1, double v2) { return v1 + (v2 - v1) * (micro - 1); };
    // A further microbatch costs no less than nothing: where the program
    // of two microbatches costs less than the program of one (on GPU
    // profiles a residual add that the runtime folds into the norm
    // gradient in one program and not in the other, multi-tensor groups
    // that differ), that is a difference of the two programs, not a cost
    // per microbatch: from the program of two, each further microbatch
    // costs its launches (half of the two's, as withMicrobatches derives).
    if (b.compute >= a.compute || micro < 2)
      m.compute = affine(a.compute, b.compute);
    else
      m.compute = b.compute + b.forwardBackwardKernels / 2 *
                                  two.launchCost * (micro - 2);
    // Collectives over dp run once per step unless ZeRO-2/3 makes them run
    // per microbatch: those keep the two-microbatch probe's value (a
    // difference between one and two microbatches there is the program of
    // one, not a per-microbatch cost); the others are affine in M.
    m.communication = 0;
    for (auto &[axes, seconds] : m.commSeconds) {
      bool onceOverDp =
          candidate.zero < 2 &&
          llvm::is_contained(
              llvm::SmallVector<llvm::StringRef>(llvm::split(axes, ',')),
              "dp");
      double s2 = b.commSeconds.count(axes) ? b.commSeconds.at(axes) : seconds;
      double b2 = b.commBytes.count(axes) ? b.commBytes.at(axes)
                                          : m.commBytes[axes];
      seconds = onceOverDp ? s2 : affine(seconds, s2);
      m.commBytes[axes] = onceOverDp ? b2 : affine(m.commBytes[axes], b2);
      m.communication += seconds;
    }
    // Bytes other than the activations: X(M) = A + B / M through M = 1, 2.
    double x1 = a.arena - a.activations, x2 = b.arena - b.activations;
    // When the second microbatch adds more than it saves (an accumulated
    // gradient appears), keep the two-microbatch bytes (conservative).
    double batchSized = std::max(0.0, 2 * (x1 - x2));
    double fixed = x2 - batchSized / 2;
    // The activations of the two-microbatch probe, per microbatch held.
    double left = static_cast<double>(stages - s);
    double held = b.activations * (2.0 / micro) * std::min(left, micro) /
                  std::min(left, 2.0);
    m.arena = std::max(a.persistent, fixed + batchSized / micro) + held;
    m.activations = held;
  }
  out.busiest = busiestStage(out.stages);
  schedulePipeline(out, candidate);
  return out;
}

} // namespace llmc::planner
