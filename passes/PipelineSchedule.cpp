//===- PipelineSchedule.cpp - pipeline chunk balance and stage orders -----===//
//
// The two schedule computations of llmc-split-pipeline (SplitPipeline.cpp),
// apart from the IR: the balanced cut of the layers into chunks and each
// stage's order of forward and backward units.
//
//===----------------------------------------------------------------------===//

#include "passes/PipelineSchedule.h"

#include <optional>
#include <map>
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

double Simulation::makespan() const {
  double most = 0.0;
  for (double t : freeAt)
    most = std::max(most, t);
  return most;
}

double Simulation::bubble() const {
  double span = makespan();
  return span > 0 ? 1.0 - busy / (static_cast<double>(freeAt.size()) * span)
                  : 0.0;
}

Simulation simulate(const std::vector<std::vector<Unit>> &orders,
                    int64_t chunks,
                    llvm::function_ref<double(const Unit &)> cost) {
  int64_t stages = static_cast<int64_t>(orders.size());
  Simulation sim;
  sim.freeAt.assign(stages, 0.0);
  std::map<Unit, double> finish;
  std::vector<size_t> next(stages, 0);
  for (;;) {
    int64_t chosen = -1;
    double chosenStart = 0.0;
    for (int64_t s = 0; s < stages; ++s) {
      if (next[s] == orders[s].size())
        continue;
      const Unit &u = orders[s][next[s]];
      std::optional<Unit> need;
      if (!u.backward && u.chunk > 0)
        need = Unit{u.chunk - 1, false, u.microbatch};
      else if (u.backward)
        need = u.chunk == chunks - 1 ? Unit{u.chunk, false, u.microbatch}
                                     : Unit{u.chunk + 1, true, u.microbatch};
      double start = sim.freeAt[s];
      if (need) {
        auto it = finish.find(*need);
        if (it == finish.end())
          continue;
        start = std::max(start, it->second);
      }
      if (chosen < 0 || start < chosenStart) {
        chosen = s;
        chosenStart = start;
      }
    }
    if (chosen < 0)
      break;
    const Unit u = orders[chosen][next[chosen]++];
    double c = cost(u);
    sim.busy += c;
    sim.freeAt[chosen] = chosenStart + c;
    finish[u] = sim.freeAt[chosen];
    sim.global.push_back(u);
  }
  for (int64_t s = 0; s < stages; ++s)
    sim.stuck = sim.stuck || next[s] != orders[s].size();
  return sim;
}

} // namespace llmc::pipeline
