//===- CostModel.cpp - predicted step time of a compiled program ----------===//

#include "planner/CostModel.h"

#include "ir/BufferPlan.h"
#include "ir/Communication.h"
#include "ir/LlmcOps.h"
#include "ir/Phase.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>

using namespace mlir;

namespace llmc::planner {

double kernelSeconds(double flops, double peakFlops, double bytes,
                     const DeviceProfile &profile, double efficiency) {
  double compute = peakFlops > 0 ? flops / peakFlops : 0.0;
  double memory = bytes / profile.memoryBandwidth;
  return std::max(compute, memory) / efficiency + profile.launchCost;
}

int64_t ringSteps(llvm::StringRef kind, int64_t ranks) {
  if (ranks <= 1)
    return 0;
  if (kind == "all-reduce")
    return 2 * (ranks - 1);
  if (kind == "all-gather" || kind == "reduce-scatter" || kind == "all-to-all")
    return ranks - 1;
  if (kind == "shift" || kind == "send/recv")
    return 1;
  return 0; // a local slice
}

double collectiveSeconds(int64_t steps, double sentBytesPerRank,
                         const LinkClass &link) {
  if (steps == 0)
    return 0.0;
  return link.callLatency + static_cast<double>(steps) * link.latency +
         sentBytesPerRank / link.bandwidth;
}

const LinkClass &linkFor(const Mesh &mesh, llvm::ArrayRef<int64_t> axes,
                         const DeviceProfile &profile) {
  if (axes.empty())
    return profile.intraNode;
  int64_t outermost = *std::min_element(axes.begin(), axes.end());
  int64_t span = 1;
  for (size_t i = outermost; i < mesh.sizes.size(); ++i)
    span *= mesh.sizes[i];
  return span <= profile.devicesPerNode ? profile.intraNode
                                        : profile.interNode;
}

namespace {
// The kernel groups, in the order of the breakdown.
const char *const kGroups[] = {"matmul",      "attention",
                               "fused regions", "elementwise",
                               "reductions and norms", "data movement",
                               "optimizer"};

std::string dtypeName(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (type.isF64())
    return "f64";
  return "f32";
}

bool usesMatmulUnits(Operation *op) {
  return isa<MatmulOp, AttentionOp, AttentionGradOp>(op);
}
} // namespace

std::string kernelGroup(Operation *op);

namespace {
/// Adds `op`, run as one kernel, to its group of `kernels`.
double addKernel(Operation *op, std::map<std::string, GroupCost> &kernels,
               std::map<std::string, GroupCost> &byOp,
               const DeviceProfile &profile) {
  std::string group = kernelGroup(op);
  if (group.empty())
    return 0.0;
  auto cost = cast<CostOpInterface>(op);
  double flops = cost.getFlops();
  double bytes = static_cast<double>(cost.getBytesRead()) +
                 static_cast<double>(cost.getBytesWritten());
  double peak = usesMatmulUnits(op)
                    ? profile.matmulPeak(dtypeName(op->getOperand(0).getType()))
                    : profile.vectorFlops;
  llvm::StringRef name = op->getName().getStringRef();
  name.consume_front("llmc.");
  double seconds =
      kernelSeconds(flops, peak, bytes, profile, profile.efficiencyOf(name));
  for (GroupCost *g : {&kernels[group], &byOp[name.str()]}) {
    ++g->kernels;
    g->flops += flops;
    g->bytes += bytes;
    g->seconds += seconds;
  }
  kernels[group].group = group;
  byOp[name.str()].group = name.str();
  return seconds;
}
} // namespace

std::string kernelGroup(Operation *op) {
  if (op->hasTrait<mlir::OpTrait::IsTerminator>() ||
      isa<ReshapeOp, ConstantOp, RecvOp, SendOp>(op) ||
      op->getDialect()->getNamespace() == "shard" ||
      !isa<CostOpInterface>(op))
    return "";
  if (phaseOf(op->getLoc()) == Phase::Optimizer)
    return "optimizer";
  if (isa<MatmulOp>(op))
    return "matmul";
  if (isa<AttentionOp, AttentionGradOp>(op))
    return "attention";
  if (isa<FusedOp>(op))
    return "fused regions";
  if (isa<ReduceSumOp, ReduceMaxOp, ReduceMeanOp, SoftmaxOp, LayerNormOp,
          RmsNormOp, LayerNormGradOp, RmsNormGradOp, CrossEntropyOp,
          CrossEntropyGradOp, MoeTopKOp>(op))
    return "reductions and norms";
  if (isa<TransposeOp, SliceOp, ConcatOp, GatherOp, ScatterAddOp, EmbeddingOp,
          BroadcastOp, IotaOp, AxisOffsetOp, MoeDispatchOp, MoeCombineOp>(op))
    return "data movement";
  return "elementwise";
}

namespace {
/// The arena bytes [begin, end) of the values an op touches: its operands,
/// its results and every value inside its regions.
using Ranges = llvm::SmallVector<std::pair<uint64_t, uint64_t>, 8>;

void addRange(Value v, const BufferPlan &plan, Ranges &out) {
  auto it = plan.offsets.find(v);
  if (it == plan.offsets.end() || it->second == kNoStorage)
    return;
  int64_t bytes = isa<ShapedType>(v.getType()) ? tensorBytes(v.getType()) : 0;
  if (bytes > 0)
    out.push_back({it->second, it->second + static_cast<uint64_t>(bytes)});
}

Ranges rangesOf(Operation *op, const BufferPlan &plan) {
  Ranges out;
  for (Value v : op->getOperands())
    addRange(v, plan, out);
  op->walk([&](Operation *inner) {
    for (Value v : inner->getResults())
      addRange(v, plan, out);
  });
  return out;
}

bool overlaps(const Ranges &a, const Ranges &b) {
  for (auto [b0, e0] : a)
    for (auto [b1, e1] : b)
      if (b0 < e1 && b1 < e0)
        return true;
  return false;
}

/// A collective in flight on the communication stream.
struct InFlight {
  Operation *op;
  Ranges ranges;
  double done;
};
} // namespace

StepCost estimateStep(func::FuncOp function, const Mesh *mesh,
                      const DeviceProfile &profile, int64_t stage,
                      const BufferPlan *plan) {
  std::map<std::string, GroupCost> kernels;
  std::map<std::string, GroupCost> collectives;
  std::map<std::string, GroupCost> byOp;
  // The two streams (GPU profiles only; see CostModel.h).
  // LLMC_PLAN_OVERLAP=none: no two-stream simulation (the step without
  // overlap, as before it; to measure what it changes, docs/planning.md).
  static const bool noOverlap = [] {
    const char *v = std::getenv("LLMC_PLAN_OVERLAP");
    return v && std::string(v) == "none";
  }();
  bool simulate = profile.shared.hostCores <= 0 && mesh && !noOverlap;
  std::optional<BufferPlan> ownPlan;
  if (simulate && !plan) {
    FailureOr<BufferPlan> planned = planBuffers(function, stage);
    if (succeeded(planned)) {
      ownPlan = std::move(*planned);
      plan = &*ownPlan;
    }
  }
  double computeFree = 0, commFree = 0;
  std::vector<InFlight> inFlight;
  for (Operation &op : function.getBody().front()) {
    if (stage >= 0)
      if (auto attr = op.getAttrOfType<IntegerAttr>("llmc.stage"))
        if (attr.getInt() != stage)
          continue;
    // Communication: the partitioner's collectives and pipeline sends.
    if (mesh) {
      std::optional<CollectiveTraffic> t = collectiveTraffic(&op, *mesh);
      if (!t)
        if (auto send = dyn_cast<SendOp>(op)) {
          t = CollectiveTraffic();
          t->kind = "send/recv";
          t->axes.push_back(static_cast<int64_t>(send.getAxis()));
          t->ranks = mesh->ways(t->axes);
          t->payloadBytes = tensorBytes(send.getInput().getType());
          t->sentBytesPerRank = t->payloadBytes;
        }
      // A pipeline receive costs its ranks what the send costs the
      // sender's: both sides run the transfer (NCCL kernels on both GPUs;
      // a copy and a rendezvous of two threads on the CPU, where the
      // receiver's share was measured as large as the sender's,
      // docs/planning.md "CPU meshes").
      if (!t)
        if (auto recv = dyn_cast<RecvOp>(op)) {
          t = CollectiveTraffic();
          t->kind = "send/recv";
          t->axes.push_back(static_cast<int64_t>(recv.getAxis()));
          t->ranks = mesh->ways(t->axes);
          t->payloadBytes = tensorBytes(recv.getType());
          t->sentBytesPerRank = t->payloadBytes;
        }
      if (t) {
        CollectiveCost cost = collectiveCost(*t, *mesh, profile);
        if (cost.seconds == 0 && ringSteps(t->kind, t->ranks) == 0)
          continue;
        std::string axes = mesh->axesText(t->axes);
        GroupCost &g = collectives[axes];
        g.group = "collectives " + axes + " (" +
                  linkFor(*mesh, t->axes, profile).name + ")";
        g.communication = true;
        // A pipeline transfer pairs two ranks; a collective (and a ring
        // shift, whose repeated steps chain the whole ring) every rank of
        // its group.
        g.groupRanks = t->kind == "send/recv" ? 2 : t->ranks;
        ++g.kernels;
        g.bytes += static_cast<double>(t->sentBytesPerRank);
        g.seconds += cost.seconds;
        if (simulate) {
          // After every earlier kernel (the session's event on the compute
          // stream), when the communication stream is free.
          double start = std::max(commFree, computeFree);
          commFree = start + cost.seconds;
          if (t->kind == "send/recv") {
            // A pipeline transfer sits on the dependence between two
            // stages, which this one stage's simulation cannot see (when
            // the peer sends): it is kept on the stage's critical path, as
            // without overlap (conservative; the communication stream's
            // earlier collectives are done by then too).
            computeFree = commFree;
            inFlight.clear();
            continue;
          }
          InFlight f{&op, {}, commFree};
          if (plan)
            f.ranges = rangesOf(&op, *plan);
          inFlight.push_back(std::move(f));
        }
        continue;
      }
    }
    // A fused region is one kernel (its bytes read and written once) when
    // the backend generates one: elementwise regions of two or more ops on
    // a profile with fused_kernels (codegen/BuildExecutable.cpp marks just
    // those). Every other region (matmul epilogues, row reductions) runs
    // its ops one by one, each a kernel of its own group.
    // The elementwise runs nested in the other regions (llmc-fuse) are
    // kernels of their own the same way.
    double opSeconds = 0;
    std::function<void(Operation *)> visit = [&](Operation *op) {
      if (auto fused = dyn_cast<FusedOp>(op)) {
        Block &body = fused.getBody().front();
        bool oneKernel = profile.fusedKernels &&
                         fused.getKind() == FusionKind::elementwise &&
                         body.getOperations().size() > 2; // ops and the yield
        if (!oneKernel) {
          for (Operation &inner : body)
            visit(&inner);
          return;
        }
      }
      opSeconds += addKernel(op, kernels, byOp, profile);
    };
    visit(&op);
    if (!simulate || opSeconds == 0)
      continue;
    // The compute stream waits for the last in-flight collective whose
    // bytes this op touches (and so for every one before it: the
    // communication stream runs them in order).
    int64_t waitFor = -1;
    if (!inFlight.empty()) {
      if (plan) {
        Ranges mine = rangesOf(&op, *plan);
        for (int64_t i = static_cast<int64_t>(inFlight.size()) - 1; i >= 0;
             --i)
          if (overlaps(mine, inFlight[i].ranges)) {
            waitFor = i;
            break;
          }
      } else {
        for (int64_t i = static_cast<int64_t>(inFlight.size()) - 1;
             i >= 0 && waitFor < 0; --i)
          for (Value v : op.getOperands())
            if (v.getDefiningOp() == inFlight[i].op) {
              waitFor = i;
              break;
            }
      }
    }
    double start = computeFree;
    if (waitFor >= 0) {
      start = std::max(start, inFlight[waitFor].done);
      inFlight.erase(inFlight.begin(), inFlight.begin() + waitFor + 1);
    }
    computeFree = start + opSeconds;
    // Collectives already done by now need no more checks.
    while (!inFlight.empty() && inFlight.front().done <= computeFree)
      inFlight.erase(inFlight.begin());
  }
  StepCost step;
  for (const char *name : kGroups) {
    auto it = kernels.find(name);
    if (it == kernels.end())
      continue;
    step.compute += it->second.seconds;
    step.groups.push_back(it->second);
  }
  if (auto it = kernels.find("optimizer"); it != kernels.end())
    step.optimizer = it->second.seconds;
  for (auto &[name, g] : byOp)
    step.byOp.push_back(g);
  std::stable_sort(step.byOp.begin(), step.byOp.end(),
                   [](const GroupCost &a, const GroupCost &b) {
                     return a.seconds > b.seconds;
                   });
  for (auto &[axes, g] : collectives) {
    step.communication += g.seconds;
    step.groups.push_back(g);
  }
  if (simulate)
    step.streams = std::max(computeFree, commFree);
  return step;
}

ProgramStep programStep(double criticalPath, double totalBusy, int64_t ranks,
                        double bubble, const DeviceProfile &profile,
                        double drain) {
  ProgramStep step;
  step.criticalPath = criticalPath;
  step.sharedCores = profile.shared.seconds(totalBusy, ranks, bubble, drain);
  return step;
}

double drainShare(llvm::ArrayRef<const StepCost *> steps, int64_t ranks,
                  const DeviceProfile &profile) {
  std::map<std::string, double> seconds;
  std::map<std::string, int64_t> groupRanks;
  for (const StepCost *step : steps)
    for (const GroupCost &g : step->groups)
      if (g.communication) {
        seconds[g.group] += g.seconds;
        groupRanks[g.group] = g.groupRanks;
      }
  return profile.shared.drainShare(seconds, groupRanks, ranks);
}

} // namespace llmc::planner
