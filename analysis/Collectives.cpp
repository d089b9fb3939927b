//===- Collectives.cpp - a collective's time as NCCL runs it ---------------===//
//
// The alpha-beta cost of one collective (docs/planning.md, "The model"):
// call latency + steps x link latency + bytes sent per rank / bandwidth,
// with the algorithm NCCL would pick for an all-reduce:
//   - within a node: a ring (NCCL's tree degenerates into a chain there,
//     whose latency is linear in the ranks as the ring's);
//   - across nodes: the cheapest of
//       a flat ring on the inter-node link (2(N-1) steps, 2(N-1)/N S),
//       hierarchical: a reduce-scatter within the node (ring, L local
//         ranks, NVLink), an all-reduce of S/L between the N/L nodes (each
//         of the L GPUs of a node on its own NIC), an all-gather within the
//         node; the inter-node all-reduce is the cheaper of a ring and a
//         double binary tree (2 ceil(log2 nodes) steps, 2 S/L sent: in one
//         tree a rank sends S/2 up and S/2 to each of two children, in the
//         other S/2 up as a leaf).
// Other collectives (all-gather, reduce-scatter, all-to-all, sends) are
// rings as before: NCCL has no tree for them. A profile whose devices share
// host cores (the CPU backend: one rendezvous of threads, no NCCL) keeps
// the ring formulas it was calibrated with.
//
//===----------------------------------------------------------------------===//
#include "analysis/CostModel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace llmc::planner {

int64_t treeSteps(int64_t ranks) {
  if (ranks <= 1)
    return 0;
  int64_t depth = 0;
  while ((int64_t(1) << depth) < ranks)
    ++depth;
  return 2 * depth;
}

int64_t ranksPerNode(const Mesh &mesh, llvm::ArrayRef<int64_t> axes,
                     int64_t devicesPerNode) {
  // Ranks are row-major over the mesh axes; a node holds devicesPerNode
  // consecutive ranks. Of axis i (stride: the product of the sizes inside
  // it) a node holds devicesPerNode / stride consecutive coordinates, at
  // least one and at most its size.
  int64_t local = 1;
  int64_t n = static_cast<int64_t>(mesh.sizes.size());
  for (int64_t i = 0; i < n; ++i) {
    if (!llvm::is_contained(axes, i))
      continue;
    int64_t stride = 1;
    for (int64_t j = i + 1; j < n; ++j)
      stride *= mesh.sizes[j];
    int64_t extent = std::clamp<int64_t>(
        devicesPerNode / std::max<int64_t>(stride, 1), 1, mesh.sizes[i]);
    local *= extent;
  }
  return local;
}

CollectiveCost allReduceCost(int64_t ranks, int64_t local, double payload,
                             const DeviceProfile &profile) {
  CollectiveCost best;
  if (ranks <= 1)
    return best;
  auto ring = [&](int64_t n, double bytes, const LinkClass &link,
                  const char *name) {
    CollectiveCost c;
    c.algorithm = name;
    int64_t steps = ringSteps("all-reduce", n);
    c.latency = steps ? link.callLatency + steps * link.latency : 0.0;
    c.seconds =
        steps ? c.latency + 2.0 * (n - 1) / n * bytes / link.bandwidth : 0.0;
    return c;
  };
  bool withinNode = local >= ranks;
  // LLMC_PLAN_COLLECTIVES=ring: every all-reduce a flat ring, as before
  // the NCCL algorithms (to measure what they change, docs/planning.md).
  static const bool ringOnly = [] {
    const char *v = std::getenv("LLMC_PLAN_COLLECTIVES");
    return v && std::strcmp(v, "ring") == 0;
  }();
  const LinkClass &flatLink = withinNode ? profile.intraNode : profile.interNode;
  best = ring(ranks, payload, flatLink, "ring");
  if (withinNode || profile.shared.hostCores > 0 || ringOnly)
    return best;
  // Between nodes: the inter-node part of a hierarchical all-reduce, ring
  // or double binary tree over the nodes, on S / local bytes.
  int64_t nodes = ranks / std::max<int64_t>(local, 1);
  double share = payload / static_cast<double>(std::max<int64_t>(local, 1));
  const LinkClass &ib = profile.interNode;
  CollectiveCost inter = ring(nodes, share, ib, "ring");
  CollectiveCost tree;
  tree.latency = ib.callLatency + treeSteps(nodes) * ib.latency;
  tree.seconds = tree.latency + 2.0 * share / ib.bandwidth;
  if (nodes > 1 && tree.seconds < inter.seconds)
    inter = tree, inter.algorithm = "tree";
  CollectiveCost hier;
  hier.algorithm = inter.algorithm == std::string("tree")
                       ? (local > 1 ? "hierarchical tree" : "tree")
                       : (local > 1 ? "hierarchical ring" : "ring");
  hier.latency = inter.latency;
  hier.seconds = inter.seconds;
  if (local > 1) {
    // Reduce-scatter and all-gather within the node: L - 1 ring steps and
    // (L - 1) / L S sent each.
    const LinkClass &nv = profile.intraNode;
    double part = nv.callLatency + (local - 1) * nv.latency;
    double bytes = static_cast<double>(local - 1) / local * payload;
    hier.latency += 2 * part;
    hier.seconds += 2 * (part + bytes / nv.bandwidth);
  }
  return hier.seconds < best.seconds ? hier : best;
}

CollectiveCost collectiveCost(const CollectiveTraffic &t, const Mesh &mesh,
                              const DeviceProfile &profile) {
  CollectiveCost c;
  int64_t steps = ringSteps(t.kind, t.ranks);
  if (steps == 0)
    return c;
  const LinkClass &link = linkFor(mesh, t.axes, profile);
  if (t.kind == "all-reduce")
    return allReduceCost(
        t.ranks, ranksPerNode(mesh, t.axes, profile.devicesPerNode),
        static_cast<double>(t.payloadBytes), profile);
  c.latency = link.callLatency + static_cast<double>(steps) * link.latency;
  c.seconds = collectiveSeconds(steps, static_cast<double>(t.sentBytesPerRank),
                                link);
  return c;
}

} // namespace llmc::planner
