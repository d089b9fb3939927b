//===- Moe.cpp - Mixtral-style MoE: top-k routed SwiGLU experts -----------===//
//
// LLaMA's trunk with every MLP replaced by a sparse mixture of experts, with
// Hugging Face's MixtralForCausalLM names (block_sparse_moe.gate) except that
// the experts' weights are stacked: block_sparse_moe.experts.w1.weight is
// [E, ffn, C] where Mixtral has experts.{j}.w1.weight [ffn, C] (same for w3;
// w2 is [E, C, ffn]), so that expert parallelism splits one dimension of
// one tensor (docs/sharding.md). Each token goes to its top-k
// experts (softmax, top-k, renormalized weights); each expert holds at most
// `capacity` tokens, later tokens are dropped (docs/ir.md, moe_dispatch).
//
// The loss adds aux_loss_weight times the load-balancing loss of Mixtral:
// E * sum_e f_e * P_e, where f_e is the number of (token, choice) pairs
// routed to expert e divided by the number of tokens, and P_e the mean
// router probability of e, both over all tokens of all layers.
//
//===----------------------------------------------------------------------===//

#include "frontend/models/Layers.h"
#include "frontend/models/Models.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace llmc {

namespace {

/// Sums over layers of the routing statistics the balancing loss needs.
struct RoutingStats {
  Tensor expertCounts; ///< [E] f32: (token, choice) pairs per expert
  Tensor routerProbs;  ///< [E] f32: router probabilities summed over tokens
};

/// `stats` is null in the logits program, which has no balancing loss (the
/// statistics would be dead code there).
Tensor sparseMoe(Tracer &t, Tensor h, const ModelConfig &m,
                 RoutingStats *stats) {
  auto s = t.scope("block_sparse_moe");
  int64_t batch = h.dim(0), seq = h.dim(1), width = m.hiddenSize;
  int64_t tokens = batch * seq, experts = m.numExperts,
          k = m.expertsPerToken;
  // Clamped in double before the cast: a capacity_factor of 1e300 made the
  // cast undefined (it came out as a dynamic dimension).
  int64_t capacity = static_cast<int64_t>(
      std::min(static_cast<double>(tokens),
               std::ceil(m.capacityFactor * static_cast<double>(tokens * k) /
                         static_cast<double>(experts))));
  Tensor flat = reshape(h, {tokens, width});
  Tensor logits;
  {
    auto g = t.scope("gate");
    logits = linear(t, flat, width, experts, WeightLayout::OutIn, false,
                    Init::normal(0.02));
  }
  auto [weights, choices] = moeTopK(logits, k, /*normalize=*/true);

  // Statistics for the balancing loss.
  if (stats) {
    auto a = t.scope("router_stats");
    Tensor probs = sum(softmax(logits, -1), {0});
    Tensor chosen = broadcastInDims(choices, {tokens, k, experts}, {0, 1});
    Tensor expertIds = t.iota({tokens, k, experts}, 2);
    Tensor counts = sum(cast(compare(Compare::Eq, chosen, expertIds),
                             DType::F32),
                        {0, 1});
    stats->expertCounts =
        stats->expertCounts ? stats->expertCounts + counts : counts;
    stats->routerProbs =
        stats->routerProbs ? stats->routerProbs + probs : probs;
  }

  // The experts as one batched SwiGLU MLP over [E, capacity, C]: stacked
  // weights [E, ...] (expert parallelism splits their first dimension over
  // the ep ranks, llmc.ep_split; tensor parallelism each expert's MLP width,
  // gate and up column-parallel and down row-parallel).
  Tensor dispatched = moeDispatch(flat, choices, experts, capacity);
  Tensor expertOut;
  {
    auto x = t.scope("experts");
    int64_t ffn = m.intermediateSize;
    auto project = [&](llvm::StringRef name, Tensor input,
                       llvm::ArrayRef<int64_t> shape, int64_t tpDim) {
      auto p = t.scope(name);
      Tensor weight = t.parameter(
          "weight", shape, DType::F32, Init::normal(0.02),
          TensorParallelSplit::along(tpDim).withExperts(0));
      return matmul(input, weight, Transpose::B);
    };
    Tensor gate = project("w1", dispatched, {experts, ffn, width}, 1);
    Tensor up = project("w3", dispatched, {experts, ffn, width}, 1);
    expertOut = project("w2", swiglu(gate, up), {experts, width, ffn}, 2);
  }
  Tensor combined = moeCombine(expertOut, weights, choices);
  return reshape(combined, {batch, seq, width});
}

} // namespace

Tensor traceMoe(Tracer &t, const ModelConfig &m, int64_t batchSize,
                int64_t seqLen, ModelOutput output) {
  RoutingStats stats;
  bool loss = output == ModelOutput::Loss;
  auto moe = [&](Tracer &tr, Tensor h, int64_t) {
    return sparseMoe(tr, h, m, loss ? &stats : nullptr);
  };
  Tensor result = traceLlamaTrunk(t, m, batchSize, seqLen, output, moe);
  if (!loss || m.numLayers == 0 || m.auxLossWeight == 0.0)
    return result;
  auto s = t.scope("aux_loss");
  double routed = static_cast<double>(m.numLayers * batchSize * seqLen);
  Tensor fraction = stats.expertCounts / routed;
  Tensor probability = stats.routerProbs / routed;
  Tensor balance = sum(fraction * probability, {0}) *
                   static_cast<double>(m.numExperts);
  return result + balance * m.auxLossWeight;
}

} // namespace llmc
