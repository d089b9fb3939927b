//===- CostModel.cpp - predicted step time of a compiled program ----------===//

#include "analysis/CostModel.h"

#include "analysis/BufferPlan.h"
#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "sharding/Communication.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <tuple>
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

// Ring attention's blocks (AttentionBlockOp) run llmc's scalar flash
// kernels, f32 arithmetic without tensor cores: not the matmul units.
bool usesMatmulUnits(Operation *op) {
  return isa<MatmulOp, AttentionOp, AttentionGradOp>(op);
}
} // namespace

std::string kernelGroup(Operation *op);

namespace {
/// How a kernel's work is launched: by a launch of its own (or as the
/// first member of a multi-tensor launch), as a later member of a
/// multi-tensor launch (a kernel, no launch cost), or folded into the
/// previous kernel (no kernel of its own: a residual add stored by the
/// norm gradient before it).
enum class Launch { Own, Member, Folded };

/// Adds one kernel of `flops` and `bytes` to the group of `groupOp` and to
/// the by-op row `name`: its roofline (the matmul units' peak when
/// `matmulUnits`) over the efficiency of `name`, plus the launch cost for
/// Launch::Own.
double addCost(Operation *groupOp, llvm::StringRef name, double flops,
               double bytes, bool matmulUnits, Launch launch,
               std::map<std::string, GroupCost> &kernels,
               std::map<std::string, GroupCost> &byOp,
               const DeviceProfile &profile) {
  std::string group = kernelGroup(groupOp);
  if (group.empty())
    return 0.0;
  double peak =
      matmulUnits
          ? profile.matmulPeak(dtypeName(groupOp->getOperand(0).getType()))
          : profile.vectorFlops;
  double seconds =
      kernelSeconds(flops, peak, bytes, profile, profile.efficiencyOf(name));
  if (launch != Launch::Own)
    seconds -= profile.launchCost;
  for (GroupCost *g : {&kernels[group], &byOp[name.str()]}) {
    g->kernels += launch != Launch::Folded ? 1 : 0;
    g->launches += launch == Launch::Own ? 1 : 0;
    g->flops += flops;
    g->bytes += bytes;
    g->seconds += seconds;
  }
  kernels[group].group = group;
  byOp[name.str()].group = name.str();
  return seconds;
}

/// Adds `op`, run as one kernel, to its group of `kernels`.
double addKernel(Operation *op, std::map<std::string, GroupCost> &kernels,
                 std::map<std::string, GroupCost> &byOp,
                 const DeviceProfile &profile, Launch launch = Launch::Own,
                 llvm::StringRef prefix = "") {
  if (kernelGroup(op).empty())
    return 0.0;
  auto cost = cast<CostOpInterface>(op);
  llvm::StringRef name = op->getName().getStringRef();
  name.consume_front("llmc.");
  return addCost(op, (prefix + name).str(), cost.getFlops(),
                 static_cast<double>(cost.getBytesRead()) +
                     static_cast<double>(cost.getBytesWritten()),
                 usesMatmulUnits(op), launch, kernels, byOp, profile);
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
  if (isa<AttentionOp, AttentionGradOp, AttentionBlockOp,
          AttentionBlockGradOp>(op))
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

// What the CUDA runtime runs (profiles with fused_kernels; the CPU
// backend's profile was fitted op by op and keeps that view). The runtime
// transforms the commands after the IR the planner sees; these recognize
// the same forms in the IR (docs/planning.md, "What the CUDA runtime
// runs"), measured against LLMC_PROFILE=1 on the H200.
namespace {
/// The matmul of a matmul_epilogue region that codegen lowers to one
/// cuBLASLt GEMM with an epilogue (codegen/LowerMatmulEpilogue.cpp: the
/// product, then an elementwise region of a bias vector broadcast over the
/// last dimension, an add, and at most one more op, a tanh gelu or a
/// residual add); null for any other region.
MatmulOp epilogueGemm(FusedOp fused) {
  if (fused.getKind() != FusionKind::matmul_epilogue)
    return {};
  Block &body = fused.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  if (ops.size() != 2)
    return {};
  auto matmul = dyn_cast<MatmulOp>(ops[0]);
  auto nested = dyn_cast<FusedOp>(ops[1]);
  if (!matmul || !nested || nested.getKind() != FusionKind::elementwise ||
      !matmul->hasOneUse() || *matmul->getUsers().begin() != nested)
    return {};
  auto lhsType = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(matmul.getRhs().getType());
  auto type = cast<RankedTensorType>(matmul.getType());
  if (rhsType.getRank() != 2 ||
      (matmul.getTransposeA() && lhsType.getRank() != 2) ||
      !isa<FloatType>(type.getElementType()) || type.getNumElements() == 0)
    return {};
  // 16-bit operands need every leading dimension a multiple of 8 elements
  // (checkMatmulProblem); other shapes lower op by op.
  int64_t k = matmul.getTransposeA() ? lhsType.getShape()[0]
                                     : lhsType.getShape().back();
  int64_t m = matmul.getTransposeA()
                  ? lhsType.getShape()[1]
                  : lhsType.getShape()[lhsType.getRank() - 2];
  int64_t n = type.getShape().back();
  int64_t lhsLeading = matmul.getTransposeA() ? m : k;
  int64_t rhsLeading = matmul.getTransposeB() ? k : n;
  if (k == 0 || (type.getElementTypeBitWidth() == 16 &&
                 (lhsLeading % 8 != 0 || rhsLeading % 8 != 0 || n % 8 != 0)))
    return {};
  int64_t broadcasts = 0, adds = 0, gelus = 0;
  for (Operation &op : nested.getBody().front().without_terminator()) {
    if (auto b = dyn_cast<BroadcastOp>(op)) {
      auto bias = cast<RankedTensorType>(b.getInput().getType());
      if (bias.getRank() != 1 || b.getDims().size() != 1 ||
          b.getDims()[0] != type.getRank() - 1)
        return {};
      ++broadcasts;
    } else if (isa<AddOp>(op)) {
      ++adds;
    } else if (auto g = dyn_cast<GeluOp>(op);
               g && g.getApproximation() == GeluApproximation::tanh) {
      ++gelus;
    } else {
      return {};
    }
  }
  if (broadcasts != 1 || adds < 1 || adds + gelus > 2)
    return {};
  return matmul;
}

/// Whether `fused` is a gradient norm's term that codegen lowers to one
/// SumSquares command (Lowering::lowerSumOfSquares: mul(x, x) then a
/// reduce_sum of every dimension, x f32): one kernel reading x once.
bool isSumOfSquares(FusedOp fused) {
  Block &body = fused.getBody().front();
  if (fused.getKind() != FusionKind::row_reduction ||
      body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<MulOp>(&body.front());
  auto reduce =
      dyn_cast_or_null<ReduceSumOp>(mul ? mul->getNextNode() : nullptr);
  if (!mul || !reduce || mul.getLhs() != mul.getRhs() ||
      reduce.getInput() != mul.getResult())
    return false;
  auto in = cast<RankedTensorType>(mul.getLhs().getType());
  auto out = cast<RankedTensorType>(reduce.getType());
  return in.getElementType().isF32() && out.getElementType().isF32() &&
         out.getRank() == 0 && in.getRank() > 0;
}

/// Whether an elementwise region runs as one generated kernel.
bool runsAsOneKernel(FusedOp fused, const DeviceProfile &profile) {
  return profile.fusedKernels && fused.getKind() == FusionKind::elementwise &&
         fused.getBody().front().getOperations().size() > 2; // ops and yield
}

/// The key under which `op` (top level) joins a multi-tensor launch
/// (codegen/cuda/optimizer/MultiTensor.h), "" when it cannot: a lone cast (by its
/// element types), an elementwise region run as one kernel whose body does
/// not depend on the element's index (no iota, only broadcasts of one
/// element; by its body's ops, types, attributes and wiring: the generated
/// text), a sum of squares. The runtime also checks that moving a member
/// up changes no byte another command reads or writes; this does not.
std::string multiTensorKey(Operation *op, const DeviceProfile &profile) {
  std::string key;
  llvm::raw_string_ostream os(key);
  auto elementType = [&](Type t) {
    if (auto shaped = dyn_cast<ShapedType>(t))
      t = shaped.getElementType();
    t.print(os);
  };
  if (auto c = dyn_cast<CastOp>(op)) {
    os << "cast ";
    elementType(c.getInput().getType());
    os << " -> ";
    elementType(c.getType());
    return key;
  }
  auto fused = dyn_cast<FusedOp>(op);
  if (!fused)
    return "";
  if (isSumOfSquares(fused))
    return "sum_squares";
  if (!runsAsOneKernel(fused, profile))
    return "";
  llvm::DenseMap<Value, int64_t> ids;
  Block &body = fused.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    ids[arg] = ids.size();
    os << "arg ";
    elementType(arg.getType());
    os << ";";
  }
  for (Operation &inner : body) {
    if (isa<IotaOp>(inner))
      return "";
    if (auto b = dyn_cast<BroadcastOp>(inner))
      if (cast<ShapedType>(b.getInput().getType()).getNumElements() != 1)
        return "";
    os << inner.getName().getStringRef() << "(";
    for (Value v : inner.getOperands())
      os << (ids.count(v) ? ids[v] : -1) << ",";
    os << ")";
    // A constant's value is not in the text (the kernel reads it from the
    // constant's buffer), so it does not split a group.
    for (NamedAttribute attr : inner.getAttrs())
      if (!attr.getName().getValue().starts_with("llmc.") &&
          !isa<ConstantOp>(inner)) {
        os << attr.getName().getValue() << "=";
        attr.getValue().print(os);
      }
    for (Value r : inner.getResults()) {
      ids[r] = ids.size();
      elementType(r.getType());
    }
    os << ";";
  }
  return key;
}

/// Where each top-level op that joins a multi-tensor launch stands: its
/// group, whether it launches it (the first member), and whether the group
/// has two or more members (a group of one is a kernel of its own). A run
/// of groups ends at any other op that runs a kernel or a collective, as
/// planMultiTensorGroups ends it at any other command.
struct MultiTensorMember {
  int64_t group = -1;
  bool first = false;
  bool multi = false;
};

llvm::DenseMap<Operation *, MultiTensorMember>
planMultiTensorMembers(func::FuncOp function, const Mesh *mesh,
                       const DeviceProfile &profile, int64_t stage) {
  llvm::DenseMap<Operation *, MultiTensorMember> members;
  if (!profile.fusedKernels)
    return members;
  std::map<std::string, int64_t> open;
  std::vector<int64_t> sizes;
  for (Operation &op : function.getBody().front()) {
    if (stage >= 0)
      if (auto attr = op.getAttrOfType<IntegerAttr>("llmc.stage"))
        if (attr.getInt() != stage)
          continue;
    std::string key = multiTensorKey(&op, profile);
    if (key.empty()) {
      bool collective = isa<SendOp, RecvOp>(op) ||
                        (mesh && collectiveTraffic(&op, *mesh).has_value());
      if (collective || !kernelGroup(&op).empty())
        open.clear();
      continue;
    }
    auto [it, added] = open.try_emplace(key, sizes.size());
    if (added)
      sizes.push_back(0);
    MultiTensorMember m;
    m.group = it->second;
    m.first = sizes[m.group]++ == 0;
    members[&op] = m;
  }
  for (auto &[op, m] : members)
    m.multi = sizes[m.group] >= 2;
  return members;
}

/// The residual add that the CUDA runtime folds into the norm gradient
/// `prev` (findFoldedAdds in runtime/cuda/session/CudaSessionCreate.cpp): an add
/// of that gradient's dx, its only use, and another tensor r of its type,
/// f32 or bf16. Returns r, or null. (The runtime also requires the buffer
/// plan's in-place add; dx having no other reader is what allows it.)
Value foldedAddend(Operation *op, Operation *prev) {
  auto add = dyn_cast<AddOp>(op);
  if (!add || !prev || !isa<LayerNormGradOp, RmsNormGradOp>(prev))
    return {};
  Value dx = prev->getResult(0);
  if (!dx.hasOneUse() || dx.getType() != add.getType())
    return {};
  Value r = add.getLhs() == dx ? add.getRhs()
            : add.getRhs() == dx ? add.getLhs()
                                 : Value();
  if (!r || r.getType() != dx.getType() || r.getDefiningOp() == prev)
    return {};
  Type element = cast<ShapedType>(dx.getType()).getElementType();
  return element.isF32() || element.isBF16() ? r : Value();
}
} // namespace

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
/// The traffic of a collective or of a pipeline send or receive, if `op`
/// is one. A pipeline receive costs its ranks what the send costs the
/// sender's: both sides run the transfer (NCCL kernels on both GPUs; a
/// copy and a rendezvous of two threads on the CPU, where the receiver's
/// share was measured as large as the sender's, docs/planning.md "CPU
/// meshes").
std::optional<CollectiveTraffic> trafficOf(Operation &op, const Mesh &mesh) {
  std::optional<CollectiveTraffic> t = collectiveTraffic(&op, mesh);
  if (t)
    return t;
  auto transfer = [&](int64_t axis, Type type) {
    CollectiveTraffic out;
    out.kind = "send/recv";
    out.axes.push_back(axis);
    out.ranks = mesh.ways(out.axes);
    out.payloadBytes = tensorBytes(type);
    out.sentBytesPerRank = out.payloadBytes;
    return out;
  };
  if (auto send = dyn_cast<SendOp>(op))
    return transfer(static_cast<int64_t>(send.getAxis()),
                    send.getInput().getType());
  if (auto recv = dyn_cast<RecvOp>(op))
    return transfer(static_cast<int64_t>(recv.getAxis()), recv.getType());
  return std::nullopt;
}

/// One estimate: the ops' costs by group, and (GPU profiles with a mesh)
/// the two streams simulated op by op.
class StepEstimator {
public:
  StepEstimator(func::FuncOp function, const Mesh *mesh,
                const DeviceProfile &profile, int64_t stage,
                const BufferPlan *plan);
  /// Adds `op` (of the estimated stage).
  void add(Operation &op);
  StepCost finish();

private:
  bool addCommunication(Operation &op);
  double addCompute(Operation &op);
  void advanceCompute(Operation &op, double opSeconds);
  int64_t launchCount() const {
    int64_t n = 0;
    for (auto &entry : kernels)
      n += entry.second.launches;
    return n;
  }

  const Mesh *mesh;
  const DeviceProfile &profile;
  std::map<std::string, GroupCost> kernels, collectives, byOp;
  bool simulate;
  std::optional<BufferPlan> ownPlan;
  const BufferPlan *plan;
  double computeFree = 0, commFree = 0;
  std::vector<InFlight> inFlight;
  /// The simulation's intervals, each stream's in time order: the
  /// kernels' and the collectives' (with their group), for GroupCost::hidden.
  std::vector<std::pair<double, double>> kernelTimes;
  std::vector<std::tuple<std::string, double, double>> collectiveTimes;
  llvm::DenseMap<Operation *, MultiTensorMember> multiTensor;
  Operation *lastKernel = nullptr; // for the folded residual adds
  int64_t forwardBackwardLaunches = 0;
};

StepEstimator::StepEstimator(func::FuncOp function, const Mesh *mesh,
                             const DeviceProfile &profile, int64_t stage,
                             const BufferPlan *plan)
    : mesh(mesh), profile(profile), plan(plan) {
  // The two streams (GPU profiles only; see CostModel.h).
  // LLMC_PLAN_OVERLAP=none: no two-stream simulation (the step without
  // overlap, as before it; to measure what it changes, docs/planning.md).
  static const bool noOverlap = [] {
    const char *v = std::getenv("LLMC_PLAN_OVERLAP");
    return v && std::string(v) == "none";
  }();
  simulate = profile.shared.hostCores <= 0 && mesh && !noOverlap;
  if (simulate && !plan) {
    FailureOr<BufferPlan> planned = planBuffers(function, stage);
    if (succeeded(planned)) {
      ownPlan = std::move(*planned);
      this->plan = &*ownPlan;
    }
  }
  multiTensor = planMultiTensorMembers(function, mesh, profile, stage);
}

void StepEstimator::add(Operation &op) {
  if (addCommunication(op))
    return;
  double opSeconds = addCompute(op);
  if (simulate && opSeconds != 0)
    advanceCompute(op, opSeconds);
}

/// Communication: the partitioner's collectives and pipeline sends; false
/// when `op` is none.
bool StepEstimator::addCommunication(Operation &op) {
  if (!mesh)
    return false;
  std::optional<CollectiveTraffic> t = trafficOf(op, *mesh);
  if (!t)
    return false;
  lastKernel = nullptr;
  CollectiveCost cost = collectiveCost(*t, *mesh, profile);
  if (cost.seconds == 0 && ringSteps(t->kind, t->ranks) == 0)
    return true;
  std::string axes = mesh->axesText(t->axes);
  GroupCost &g = collectives[axes];
  g.group = "collectives " + axes + " (" +
            linkFor(*mesh, t->axes, profile).name + ")";
  g.communication = true;
  // A pipeline transfer pairs two ranks; a collective (and a ring shift,
  // whose repeated steps chain the whole ring) every rank of its group.
  g.groupRanks = t->kind == "send/recv" ? 2 : t->ranks;
  ++g.kernels;
  g.bytes += static_cast<double>(t->sentBytesPerRank);
  g.seconds += cost.seconds;
  if (!simulate)
    return true;
  // After every earlier kernel (the session's event on the compute
  // stream), when the communication stream is free.
  double start = std::max(commFree, computeFree);
  commFree = start + cost.seconds;
  if (t->kind == "send/recv") {
    // A pipeline transfer sits on the dependence between two stages, which
    // this one stage's simulation cannot see (when the peer sends): it is
    // kept on the stage's critical path, as without overlap (conservative;
    // the communication stream's earlier collectives are done by then too).
    computeFree = commFree;
    inFlight.clear();
    return true;
  }
  collectiveTimes.emplace_back(axes, start, commFree);
  InFlight f{&op, {}, commFree};
  if (plan)
    f.ranges = rangesOf(&op, *plan);
  inFlight.push_back(std::move(f));
  return true;
}

/// The kernels of `op`, and their seconds. A fused region is one kernel
/// (its bytes read and written once) when the backend generates one:
/// elementwise regions of two or more ops on a profile with fused_kernels
/// (codegen/BuildExecutable.cpp marks just those). Every other region (row
/// reductions, matmul epilogues that are not one GEMM) runs its ops one by
/// one, each a kernel of its own group. The elementwise runs nested in the
/// other regions (llmc-fuse) are kernels of their own the same way. On a
/// profile with fused_kernels the runtime's own forms count as it runs them
/// (above): a GEMM with its epilogue, a sum of squares, members of a
/// multi-tensor launch, a residual add folded into the norm gradient
/// before it.
double StepEstimator::addCompute(Operation &op) {
  double opSeconds = 0;
  Launch launch = Launch::Own;
  std::string prefix;
  if (auto it = multiTensor.find(&op); it != multiTensor.end()) {
    launch = it->second.first ? Launch::Own : Launch::Member;
    prefix = it->second.multi ? "multi_tensor_" : "";
  }
  std::function<void(Operation *, bool)> visit = [&](Operation *op,
                                                     bool top) {
    Launch own = top ? launch : Launch::Own;
    llvm::StringRef pre = top ? llvm::StringRef(prefix) : "";
    if (auto fused = dyn_cast<FusedOp>(op)) {
      auto cost = cast<CostOpInterface>(op);
      double bytes = static_cast<double>(cost.getBytesRead()) +
                     static_cast<double>(cost.getBytesWritten());
      if (profile.fusedKernels) {
        // One GEMM: the product's flops on the matmul units, the region's
        // operands (lhs, rhs, bias, residual) read and results written.
        if (MatmulOp matmul = epilogueGemm(fused)) {
          opSeconds += addCost(matmul, "matmul", cost.getFlops(), bytes, true,
                               own, kernels, byOp, profile);
          return;
        }
        // One SumSquares kernel: x read once, no stored squares.
        if (isSumOfSquares(fused)) {
          double n = static_cast<double>(
              cast<ShapedType>(fused.getInputs()[0].getType())
                  .getNumElements());
          opSeconds += addCost(fused, (pre + "sum_squares").str(), 2 * n,
                               4 * n + 4, false, own, kernels, byOp, profile);
          return;
        }
      }
      if (!runsAsOneKernel(fused, profile)) {
        for (Operation &inner : fused.getBody().front())
          visit(&inner, false);
        return;
      }
    }
    opSeconds += addKernel(op, kernels, byOp, profile, own, pre);
  };
  int64_t launchesBefore = launchCount();
  if (Value r =
          profile.fusedKernels ? foldedAddend(&op, lastKernel) : Value()) {
    // The norm's kernel reads r and stores dx + r over dx: r's bytes and
    // the add's flops, in the norm's row, no kernel of its own.
    llvm::StringRef name = lastKernel->getName().getStringRef();
    name.consume_front("llmc.");
    opSeconds += addCost(lastKernel, name,
                         cast<CostOpInterface>(&op).getFlops(),
                         static_cast<double>(tensorBytes(r.getType())), false,
                         Launch::Folded, kernels, byOp, profile);
  } else {
    visit(&op, true);
  }
  if (!kernelGroup(&op).empty())
    lastKernel = &op;
  if (phaseOf(op.getLoc()) != Phase::Optimizer)
    forwardBackwardLaunches += launchCount() - launchesBefore;
  return opSeconds;
}

/// The compute stream waits for the last in-flight collective whose bytes
/// `op` touches (and so for every one before it: the communication stream
/// runs them in order), then runs `op`.
void StepEstimator::advanceCompute(Operation &op, double opSeconds) {
  int64_t waitFor = -1;
  if (!inFlight.empty()) {
    if (plan) {
      Ranges mine = rangesOf(&op, *plan);
      for (int64_t i = static_cast<int64_t>(inFlight.size()) - 1; i >= 0; --i)
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
  kernelTimes.emplace_back(start, computeFree);
  // Collectives already done by now need no more checks.
  while (!inFlight.empty() && inFlight.front().done <= computeFree)
    inFlight.erase(inFlight.begin());
}

StepCost StepEstimator::finish() {
  StepCost step;
  for (const char *name : kGroups) {
    auto it = kernels.find(name);
    if (it == kernels.end())
      continue;
    step.compute += it->second.seconds;
    step.groups.push_back(it->second);
  }
  step.forwardBackwardLaunches = forwardBackwardLaunches;
  if (auto it = kernels.find("optimizer"); it != kernels.end())
    step.optimizer = it->second.seconds;
  for (auto &[name, g] : byOp)
    step.byOp.push_back(g);
  std::stable_sort(step.byOp.begin(), step.byOp.end(),
                   [](const GroupCost &a, const GroupCost &b) {
                     return a.seconds > b.seconds;
                   });
  // What of each collective runs beside a kernel: both lists are in time
  // order and each stream's intervals are disjoint, so one sweep.
  size_t k = 0;
  for (const auto &[axes, from, to] : collectiveTimes) {
    while (k < kernelTimes.size() && kernelTimes[k].second <= from)
      ++k;
    for (size_t j = k; j < kernelTimes.size() && kernelTimes[j].first < to;
         ++j)
      collectives[axes].hidden +=
          std::min(to, kernelTimes[j].second) -
          std::max(from, kernelTimes[j].first);
  }
  for (auto &[axes, g] : collectives) {
    step.communication += g.seconds;
    step.groups.push_back(g);
  }
  if (simulate)
    step.streams = std::max(computeFree, commFree);
  return step;
}
} // namespace

StepCost estimateStep(func::FuncOp function, const Mesh *mesh,
                      const DeviceProfile &profile, int64_t stage,
                      const BufferPlan *plan) {
  StepEstimator estimator(function, mesh, profile, stage, plan);
  for (Operation &op : function.getBody().front()) {
    if (stage >= 0)
      if (auto attr = op.getAttrOfType<IntegerAttr>("llmc.stage"))
        if (attr.getInt() != stage)
          continue;
    estimator.add(op);
  }
  return estimator.finish();
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
