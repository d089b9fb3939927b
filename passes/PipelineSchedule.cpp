//===- PipelineSchedule.cpp - pipeline chunk balance and stage orders -----===//
//
// The two schedule computations of llmc-split-pipeline (SplitPipeline.cpp),
// apart from the IR: the balanced cut of the layers into chunks and each
// stage's order of forward and backward units.
//
//===----------------------------------------------------------------------===//

#include "passes/PipelineSchedule.h"

#include <algorithm>
#include <limits>

namespace llmc::pipeline {

std::vector<int64_t> balancedChunkStarts(llvm::ArrayRef<double> layerCost,
                                         int64_t chunks) {
  int64_t layers = static_cast<int64_t>(layerCost.size());
  std::vector<int64_t> starts = {0};
  // best[c][l]: the least maximum cost of the first l layers in c chunks.
  std::vector<double> prefix(layers + 1, 0.0);
  for (int64_t l = 0; l < layers; ++l)
    prefix[l + 1] = prefix[l] + layerCost[l];
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(
      chunks + 1, std::vector<double>(layers + 1, inf));
  std::vector<std::vector<int64_t>> cut(chunks + 1,
                                        std::vector<int64_t>(layers + 1, 0));
  best[0][0] = 0.0;
  for (int64_t c = 1; c <= chunks; ++c)
    for (int64_t l = c; l <= layers; ++l)
      for (int64_t k = c - 1; k < l; ++k) {
        double cost = std::max(best[c - 1][k], prefix[l] - prefix[k]);
        if (cost < best[c][l]) {
          best[c][l] = cost;
          cut[c][l] = k;
        }
      }
  std::vector<int64_t> reversed;
  for (int64_t c = chunks, l = layers; c > 1; --c) {
    l = cut[c][l];
    reversed.push_back(l);
  }
  starts.insert(starts.end(), reversed.rbegin(), reversed.rend());
  return starts;
}

std::vector<std::vector<Unit>> stageOrders(llvm::StringRef schedule,
                                            int64_t stages,
                                            int64_t virtualStages,
                                            int64_t microbatches) {
  std::vector<std::vector<Unit>> orders(stages);
  int64_t m = microbatches, p = stages, v = virtualStages;
  for (int64_t s = 0; s < p; ++s) {
    std::vector<Unit> &order = orders[s];
    if (schedule == "gpipe") {
      // Every forward, then every backward (in microbatch order, the order
      // gradient accumulation adds them in).
      for (int64_t i = 0; i < m; ++i)
        order.push_back({s, false, i});
      for (int64_t i = 0; i < m; ++i)
        order.push_back({s, true, i});
      continue;
    }
    // 1F1B and its interleaved form (Megatron-LM): warm-up forwards, then
    // one forward and one backward in turn, then the remaining backwards.
    // The n-th forward (backward) unit of a stage: microbatches in groups of
    // p, each group through every chunk (backward: the chunks reversed).
    int64_t units = m * v;
    auto nth = [&](int64_t n, bool backward) {
      int64_t group = n / (p * v), within = n % (p * v);
      int64_t local = within / p;
      if (backward)
        local = v - 1 - local;
      return Unit{local * p + s, backward, group * p + within % p};
    };
    int64_t warmup = v == 1 ? std::min(p - s - 1, m)
                            : std::min((p - s - 1) * 2 + (v - 1) * p, units);
    for (int64_t n = 0; n < warmup; ++n)
      order.push_back(nth(n, false));
    for (int64_t n = 0; n < units; ++n) {
      if (warmup + n < units)
        order.push_back(nth(warmup + n, false));
      order.push_back(nth(n, true));
    }
  }
  return orders;
}

} // namespace llmc::pipeline
