//===- Remat.cpp - recompute activations in the backward program ----------===//
//
// Step 5 of the compile pipeline (docs/passes.md). A forward value that the backward program reads is kept
// from its forward op until that read: these "activations kept for
// backward" are most of a training step's memory. This pass trades some of
// them for recomputation: it copies a group of forward ops to just before
// the first backward op that reads one of their results, and points every
// backward read at the copies. The original values then die at their last
// forward read. Recomputing with the same kernels gives the same bits, so
// the losses do not change. Policies:
//
//   none       nothing changes;
//   selective  the cheap ops — elementwise ops and norms — whose inputs the
//              backward program keeps anyway (GELU's output from its input,
//              a norm's output from its input);
//   full       every op of each transformer layer ("…h.N", "…layers.N"):
//              only the layers' inputs are kept, one layer is recomputed at
//              a time;
//   auto       the fewest recomputed flops that fit the memory budget:
//              none, then selective, then full on the first k layers with
//              selective on the rest, for k = 1, 2, …; the buffer planner
//              measures each candidate.
//
// The function records what was done in `llmc.remat`. See docs/remat.md.
//
//===----------------------------------------------------------------------===//

#include "analysis/BufferPlan.h"
#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

namespace llmc {
#define GEN_PASS_DEF_REMATPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace {

bool isForward(Operation *op) {
  return llmc::phaseOf(op->getLoc()) == llmc::Phase::Forward;
}

/// The transformer layer a model part belongs to: the prefix up to the
/// first all-digit component ("transformer.h.3.attn" -> "transformer.h.3");
/// empty outside the layers (embeddings, final norm, head, loss).
std::string layerOf(Operation *op) {
  std::string part = llmc::modelPartOf(op->getLoc());
  size_t start = 0;
  while (start < part.size()) {
    size_t end = part.find('.', start);
    if (end == std::string::npos)
      end = part.size();
    bool digits = end > start;
    for (size_t i = start; i < end; ++i)
      digits = digits && std::isdigit(static_cast<unsigned char>(part[i]));
    if (digits)
      return part.substr(0, end);
    start = end + 1;
  }
  return "";
}

/// Cheap to recompute: one pass over its data (elementwise ops, norms).
bool isCheap(Operation *op) {
  return op->hasTrait<llmc::OpTrait::Elementwise>() ||
         isa<llmc::LayerNormOp, llmc::RmsNormOp, llmc::BroadcastOp,
             llmc::ReshapeOp>(op);
}

bool readByBackward(Value value) {
  return llvm::any_of(value.getUsers(),
                      [](Operation *user) { return !isForward(user); });
}

double flopsOf(Operation *op) {
  if (auto cost = dyn_cast<llmc::CostOpInterface>(op))
    return cost.getFlops();
  return 0;
}

struct Outcome {
  double recomputedFlops = 0;
  int64_t recomputedOps = 0;
  int64_t groups = 0;
};

/// Copies each group (forward ops, in program order) before the first
/// non-forward op that reads one of its results, and redirects those reads
/// to the copies, except reads of `keep` (values kept anyway, such as a
/// layer's output, which the next layer's recomputation reads). Copies
/// nothing reads are erased.
Outcome recompute(func::FuncOp function,
                  const std::vector<std::vector<Operation *>> &groups,
                  const llvm::DenseSet<Value> &keep = {}) {
  Outcome outcome;
  Block &body = function.getBody().front();
  DenseMap<Operation *, int64_t> position;
  int64_t index = 0;
  for (Operation &op : body)
    position[&op] = index++;
  for (const std::vector<Operation *> &group : groups) {
    llvm::SmallPtrSet<Operation *, 16> members(group.begin(), group.end());
    Operation *insertBefore = nullptr;
    for (Operation *op : group)
      for (Value result : op->getResults()) {
        if (keep.contains(result))
          continue;
        for (Operation *user : result.getUsers())
          if (!isForward(user) &&
              (!insertBefore || position[user] < position[insertBefore]))
            insertBefore = user;
      }
    if (!insertBefore)
      continue;
    OpBuilder b(insertBefore);
    IRMapping mapping;
    SmallVector<Operation *> copies;
    for (Operation *op : group) {
      Operation *copy = b.clone(*op, mapping);
      copy->setLoc(llmc::withPhase(op->getLoc(), llmc::Phase::Backward));
      copies.push_back(copy);
    }
    // Backward reads of the originals now read the copies.
    for (auto [op, copy] : llvm::zip(group, copies))
      for (auto [original, recomputed] :
           llvm::zip(op->getResults(), copy->getResults()))
        if (!keep.contains(original))
          original.replaceUsesWithIf(recomputed, [&](OpOperand &use) {
            Operation *user = use.getOwner();
            return !isForward(user) && !members.contains(user) &&
                   !llvm::is_contained(copies, user);
          });
    bool used = false;
    for (Operation *copy : llvm::reverse(copies)) {
      if (copy->use_empty() && isPure(copy)) {
        copy->erase();
        continue;
      }
      used = true;
      ++outcome.recomputedOps;
      outcome.recomputedFlops += flopsOf(copy);
    }
    outcome.groups += used;
  }
  // Forward ops whose only readers were backward ops are dead now.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (!op.hasTrait<OpTrait::IsTerminator>() && op.use_empty() && isPure(&op))
      op.erase();
  return outcome;
}

/// Forward ops in segments: a segment is a run of forward ops between
/// backward ones (one per microbatch).
std::vector<std::vector<Operation *>> forwardSegments(func::FuncOp function) {
  std::vector<std::vector<Operation *>> segments(1);
  bool inForward = true;
  for (Operation &op : function.getBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (isForward(&op)) {
      if (!inForward)
        segments.emplace_back();
      inForward = true;
      segments.back().push_back(&op);
    } else {
      inForward = false;
    }
  }
  return segments;
}

/// Selective: cheap forward ops read by backward whose inputs backward keeps
/// anyway (arguments, constants, values backward reads), or that are
/// themselves recomputed; connected ones form one group. `skipLayers` are
/// left to full recomputation.
std::vector<std::vector<Operation *>>
selectiveGroups(func::FuncOp function,
                const llvm::StringSet<> &skipLayers = {}) {
  std::vector<std::vector<Operation *>> groups;
  for (const std::vector<Operation *> &segment : forwardSegments(function)) {
    DenseMap<Operation *, int> groupOf;
    for (Operation *op : segment) {
      if (!isCheap(op) || skipLayers.contains(layerOf(op)) ||
          isa<llmc::ConstantOp>(op))
        continue;
      bool wanted = llvm::any_of(op->getResults(), readByBackward);
      int joined = -1;
      bool ok = true;
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || isa<llmc::ConstantOp>(def) || readByBackward(operand))
          continue;
        auto it = groupOf.find(def);
        if (it == groupOf.end()) {
          ok = false;
          break;
        }
        joined = joined < 0 ? it->second : joined;
        if (joined != it->second) {
          // Merge the two groups (both are recomputed together).
          for (Operation *moved : groups[it->second])
            groupOf[moved] = joined;
          llvm::append_range(groups[joined], groups[it->second]);
          groups[it->second].clear();
        }
      }
      // A cheap op nothing backward reads is worth recomputing only as a
      // link of a chain that reaches one that is read.
      if (!ok || (!wanted && joined < 0 &&
                  !llvm::any_of(op->getUsers(), [](Operation *user) {
                    return isCheap(user) && isForward(user);
                  })))
        continue;
      if (joined < 0) {
        joined = static_cast<int>(groups.size());
        groups.emplace_back();
      }
      groups[joined].push_back(op);
      groupOf[op] = joined;
    }
  }
  // Program order inside each group (merges may have interleaved them).
  for (std::vector<Operation *> &group : groups)
    llvm::sort(group, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
  llvm::erase_if(groups, [](const std::vector<Operation *> &group) {
    return group.empty();
  });
  return groups;
}

/// Full: every forward op of each of `layers` (all layers when empty), one
/// group per layer and segment.
std::vector<std::vector<Operation *>>
fullGroups(func::FuncOp function, const llvm::StringSet<> *layers) {
  std::vector<std::vector<Operation *>> groups;
  for (const std::vector<Operation *> &segment : forwardSegments(function)) {
    // Layers in order of first appearance.
    llvm::StringMap<size_t> index;
    std::vector<std::vector<Operation *>> byLayer;
    for (Operation *op : segment) {
      std::string layer = layerOf(op);
      if (layer.empty() || isa<llmc::ConstantOp>(op) ||
          (layers && !layers->contains(layer)))
        continue;
      auto [it, added] = index.try_emplace(layer, byLayer.size());
      if (added)
        byLayer.emplace_back();
      byLayer[it->second].push_back(op);
    }
    for (std::vector<Operation *> &group : byLayer)
      groups.push_back(std::move(group));
  }
  return groups;
}

/// The transformer layers of `function`, in the order they first appear.
std::vector<std::string> layersOf(func::FuncOp function) {
  std::vector<std::string> layers;
  llvm::StringSet<> seen;
  for (Operation &op : function.getBody().front())
    if (isForward(&op)) {
      std::string layer = layerOf(&op);
      if (!layer.empty() && seen.insert(layer).second)
        layers.push_back(layer);
    }
  return layers;
}

/// Applies full recomputation to the first `fullLayers` layers and
/// selective to the rest (fullLayers < 0: selective only).
Outcome apply(func::FuncOp function, int64_t fullLayers) {
  llvm::StringSet<> full;
  std::vector<std::string> layers = layersOf(function);
  for (int64_t i = 0; i < fullLayers && i < (int64_t)layers.size(); ++i)
    full.insert(layers[i]);
  Outcome outcome;
  if (!full.empty()) {
    // A layer's outputs feed the next layer (forward) and so stay alive for
    // its recomputation: their backward reads keep the originals.
    std::vector<std::vector<Operation *>> groups = fullGroups(function, &full);
    llvm::DenseSet<Value> boundary;
    for (const std::vector<Operation *> &group : groups) {
      llvm::SmallPtrSet<Operation *, 16> members(group.begin(), group.end());
      for (Operation *op : group)
        for (Value result : op->getResults())
          if (llvm::any_of(result.getUsers(), [&](Operation *user) {
                return isForward(user) && !members.contains(user);
              }))
            boundary.insert(result);
    }
    Outcome f = recompute(function, groups, boundary);
    outcome.recomputedFlops += f.recomputedFlops;
    outcome.recomputedOps += f.recomputedOps;
    outcome.groups += f.groups;
  }
  Outcome s = recompute(function, selectiveGroups(function, full));
  outcome.recomputedFlops += s.recomputedFlops;
  outcome.recomputedOps += s.recomputedOps;
  outcome.groups += s.groups;
  return outcome;
}

struct RematPass : public llmc::impl::RematPassBase<RematPass> {
  using Base::Base;

  void runOnOperation() override {
    if (policy != "none" && policy != "selective" && policy != "full" &&
        policy != "auto") {
      getOperation().emitError()
          << "unknown remat policy '" << policy
          << "'; expected none, selective, full or auto";
      return signalPassFailure();
    }
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal() || !function.getBody().hasOneBlock())
        continue;
      // Only a training step has a backward program to recompute into.
      bool hasBackward = false;
      function.walk([&](Operation *op) {
        hasBackward |= llmc::phaseOf(op->getLoc()) == llmc::Phase::Backward;
      });
      if (!hasBackward || policy == "none")
        continue;
      if (failed(run(function)))
        return signalPassFailure();
    }
  }

  LogicalResult run(func::FuncOp function) {
    std::string chosen = policy;
    int64_t fullLayers = -1;
    if (policy == "full") {
      fullLayers = static_cast<int64_t>(layersOf(function).size());
    } else if (policy == "auto") {
      FailureOr<int64_t> k = chooseAuto(function, chosen);
      if (failed(k))
        return failure();
      fullLayers = *k;
    }
    Outcome outcome;
    if (chosen != "none")
      outcome = apply(function, fullLayers);
    Builder b(function.getContext());
    function->setAttr(
        "llmc.remat",
        b.getDictionaryAttr(
            {b.getNamedAttr("policy", b.getStringAttr(chosen)),
             b.getNamedAttr("full_layers",
                            b.getI64IntegerAttr(std::max<int64_t>(
                                fullLayers, 0))),
             b.getNamedAttr("recomputed_ops",
                            b.getI64IntegerAttr(outcome.recomputedOps)),
             b.getNamedAttr("recomputed_flops",
                            b.getF64FloatAttr(outcome.recomputedFlops))}));
    return success();
  }

  /// The arena of `function` after applying (fullLayers) and, when fusion
  /// follows in the pipeline, after fusing (a fused region moves ops, which
  /// moves the peak): measured by the buffer planner on a copy in a module
  /// of its own.
  FailureOr<uint64_t> peakWith(func::FuncOp function, int64_t fullLayers,
                               bool none) {
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(function.getLoc());
    func::FuncOp copy = function.clone();
    scratch->getBody()->push_back(copy);
    if (!none)
      apply(copy, fullLayers);
    if (fuseAfter) {
      PassManager pm(function.getContext());
      pm.addPass(llmc::createFusePass());
      if (failed(pm.run(*scratch)))
        return failure();
    }
    FailureOr<llmc::BufferPlan> plan = llmc::planBuffers(copy);
    if (failed(plan))
      return failure();
    return plan->arenaBytes;
  }

  /// none, selective, then full on the first k layers: the first that fits.
  FailureOr<int64_t> chooseAuto(func::FuncOp function, std::string &chosen) {
    uint64_t budget = static_cast<uint64_t>(budgetBytes);
    if (budget == 0) {
      chosen = "none"; // no budget: nothing to trade memory for
      return int64_t(-1);
    }
    FailureOr<uint64_t> peak = peakWith(function, -1, /*none=*/true);
    if (failed(peak))
      return failure();
    if (*peak <= budget) {
      chosen = "none";
      return int64_t(-1);
    }
    int64_t layers = static_cast<int64_t>(layersOf(function).size());
    uint64_t best = *peak;
    for (int64_t k = -1; k <= layers; ++k) {
      peak = peakWith(function, k, /*none=*/false);
      if (failed(peak))
        return failure();
      best = std::min(best, *peak);
      if (*peak <= budget) {
        chosen = k < 0 ? "selective" : k == layers ? "full" : "auto";
        return k;
      }
    }
    auto gib = [](uint64_t bytes) {
      return llvm::formatv("{0:f2} GiB", static_cast<double>(bytes) /
                                             (1024.0 * 1024.0 * 1024.0))
          .str();
    };
    return function.emitError()
           << "the training step does not fit the memory budget of " << budget
           << " bytes (" << gib(budget)
           << ") even with every layer recomputed: it needs " << best
           << " bytes (" << gib(best)
           << "); raise [memory] budget_gib, lower the batch size or use "
              "microbatches";
  }
};

} // namespace
