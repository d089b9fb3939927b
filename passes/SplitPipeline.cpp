//===- SplitPipeline.cpp - pipeline stages and their schedule -------------===//
//
// Step 6 of the compile pipeline (docs/passes.md), on the program llmc-partition built for a mesh with a
// `pp` axis (nothing is split over it: every pp position runs the same SPMD
// program until this pass gives each its part). One function stays one
// function; codegen emits for each rank only the ops of its stage.
//
// 1. Layers: every op whose model part names a layer ("transformer.h.3.mlp",
//    "model.layers.3...") belongs to it; the others follow their operands:
//    forward ops the latest layer they read (the head and the loss join the
//    last layer), backward ops the earliest (a gradient flows from the last
//    layer to the first; the tied embedding's two gradient contributions
//    are summed where the embedding is), optimizer ops the layer of their
//    largest operand (the update of a gradient runs where it is, and the
//    clipping scalar comes to it). The embedding, which reads no layer,
//    goes with layer 0. Cheap ops that read only arguments
//    (constants, input slices, scalar step arithmetic) are replicated: each
//    stage that reads one gets its own copy.
// 2. Chunks: the layers are cut into stages x virtual-stages contiguous
//    chunks, balanced by the ops' CostOpInterface flops (the least maximum
//    chunk cost) or where `boundaries` pins them. Chunk k runs on stage
//    k mod stages (interleaved: a stage holds every stages-th chunk).
// 3. Units: an op's microbatch is the latest one it reads (llmc-autodiff
//    tags each microbatch's input slices with llmc.microbatch); a forward
//    op of microbatch m in chunk k is unit F(k, m), a backward op B(k, m);
//    what reads no microbatch comes first, the optimizer last.
// 4. The schedule: each stage's order of units (GPipe, 1F1B, interleaved
//    1F1B), simulated with each unit taking its cost to find one global
//    order (the order the units start in) and the bubble fraction.
// 5. The body is reordered to that global order; a tied parameter's update
//    is copied to every other stage that reads the parameter; and every
//    value read on another stage is sent right after it is made (llmc.send
//    + llmc.recv, adjacent). Every rank meets its transfers in the same
//    global order, so blocking send/recv cannot deadlock.
//
// Between 3 and 4, the update's collectives are issued early: a dp
// all-reduce (or reduce-scatter) of the optimizer, with the concats and
// views that feed only it, runs in the backward unit that makes the last of
// its inputs, right after that op, not after every unit: the last
// microbatch's backward of layer l then overlaps the sum of layer l + 1's
// gradients, as Megatron's overlap_grad_reduce does.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "passes/Passes.h"
#include "passes/PipelineCollectives.h"
#include "passes/PipelineSchedule.h"
#include "passes/PipelineTransfers.h"
#include "sharding/Sharding.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace llmc {
#define GEN_PASS_DEF_SPLITPIPELINEPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace llmc {
namespace {

constexpr int64_t kNoLayer = std::numeric_limits<int64_t>::min();

/// The layer a model part names: its first dot-separated component that is
/// a number ("transformer.h.3.attn" -> 3), or -1.
int64_t layerOf(StringRef part) {
  SmallVector<StringRef> pieces;
  part.split(pieces, '.');
  for (StringRef piece : pieces) {
    int64_t n = 0;
    if (!piece.getAsInteger(10, n))
      return n;
  }
  return -1;
}

using pipeline::Part;
using pipeline::Placement;
using pipeline::Unit;

/// What the steps of one split build, in their order (the numbers of the
/// file's header).
struct SplitState {
  func::FuncOp step;
  Block *body = nullptr;
  func::ReturnOp ret;
  int64_t ppAxis = -1;
  SmallVector<Operation *> ops; ///< the body's ops as the pass found them
  // 1. Layers.
  llvm::DenseMap<Operation *, int64_t> layer;
  int64_t layers = 0;
  SmallVector<double> layerCost;
  // 2. Chunks: the first layer of each.
  SmallVector<int64_t> starts;
  // 3. Units.
  llvm::DenseMap<Operation *, Placement> place;
  std::map<Unit, double> unitCost;
  // 4. The schedule.
  std::vector<Unit> global;
  double bubble = 0.0;
  SmallVector<int64_t> inFlight;
  // 5. The rewrite: replicated ops' copies per stage, the new order, and
  // the stages that hold a tied parameter's replicas, per result.
  std::map<std::pair<Operation *, int64_t>, Operation *> copyOf;
  std::map<Operation *, Operation *> originalOf; // copy -> replicated op
  SmallVector<Operation *> order;
  std::map<int64_t, SmallVector<int64_t>> replicasOf;
};

struct SplitPipelinePass
    : public impl::SplitPipelinePassBase<SplitPipelinePass> {
  using Base::Base;

  void runOnOperation() override;

private:
  int64_t stageOf(int64_t chunk) const { return chunk % stages; }
  bool isReplicable(Operation *op) const;
  LogicalResult checkOptions(func::FuncOp step);
  FailureOr<SmallVector<int64_t>> chunkStarts(func::FuncOp step,
                                              ArrayRef<double> layerCost);
  std::vector<std::vector<Unit>> stageOrders() const;
  // The steps, in order.
  void assignLayers(SplitState &state);
  void placeUnits(SplitState &state);
  void issueCollectivesEarly(SplitState &state);
  LogicalResult scheduleUnits(SplitState &state);
  void replicateCheapOps(SplitState &state, OpBuilder &builder);
  LogicalResult orderBody(SplitState &state, OpBuilder &builder);
  void copyTiedUpdates(SplitState &state, OpBuilder &builder);
  void insertTransfers(SplitState &state, OpBuilder &builder);
  void annotate(SplitState &state, OpBuilder &builder);

  llvm::DenseSet<Operation *> replicable;
};

/// The bytes that moving `value` to another stage would really need: a
/// broadcast is rebuilt from its input there.
int64_t movedBytes(Value value) {
  Operation *def = value.getDefiningOp();
  if (isa_and_nonnull<BroadcastOp, ReshapeOp>(def))
    return movedBytes(def->getOperand(0));
  return tensorBytes(value.getType());
}

/// Ops that are cheap and read only arguments (or other such ops): every
/// stage that reads one computes its own copy instead of receiving it.
bool SplitPipelinePass::isReplicable(Operation *op) const {
  bool fromArguments = llvm::all_of(op->getOperands(), [&](Value v) {
    Operation *def = v.getDefiningOp();
    return !def || replicable.contains(def);
  });
  if (!fromArguments || op->getNumResults() != 1)
    return false;
  // shard.all_slice is a rank's own block, no communication: ZeRO's slice
  // of a weight for its moments' shard, made on the first stage and sent
  // to the weight's stage before (dp2 x pp4 ZeRO-1 of GPT-2 tiny: 24
  // transfers a microbatch). A concat of such values is a copy too: the
  // padded classifier's rows (a tied head's weight and zeros,
  // frontend/models/Layers.h) read no layer, so as an ordinary op they
  // went with the embedding to the first stage, and the head's backward
  // after them ("runs this op before a value it reads").
  if (isa<ConstantOp, IotaOp, LrScheduleOp, AxisOffsetOp, SliceOp, ReshapeOp,
          BroadcastOp, TransposeOp, CastOp, ConcatOp,
          mlir::shard::AllSliceOp>(op))
    return true;
  // Scalar arithmetic on the step counter (bias corrections and the like).
  return cast<RankedTensorType>(op->getResult(0).getType()).getRank() == 0;
}

LogicalResult SplitPipelinePass::checkOptions(func::FuncOp step) {
  const int64_t stages = this->stages, microbatches = this->microbatches,
                virtualStages = this->virtualStages;
  const std::string schedule = this->schedule;
  if (schedule != "gpipe" && schedule != "1f1b" && schedule != "interleaved")
    return step.emitError() << "expected schedule gpipe, 1f1b or interleaved, "
                               "got '"
                            << schedule << "'";
  if (virtualStages < 1 || microbatches < 1)
    return step.emitError() << "expected virtual-stages >= 1 and "
                               "microbatches >= 1, got "
                            << virtualStages << " and " << microbatches;
  if (schedule != "interleaved" && virtualStages != 1)
    return step.emitError()
           << "expected virtual-stages = 1 with schedule " << schedule
           << ", got " << virtualStages
           << "; model chunks per stage need schedule interleaved";
  if (schedule == "interleaved" && microbatches % stages != 0)
    return step.emitError()
           << "expected the interleaved schedule's microbatches to be a "
              "multiple of the "
           << stages << " stages, got " << microbatches;
  return success();
}

/// The first layer of every chunk (step 2): pinned, or the contiguous split
/// with the least maximum chunk cost (dynamic programming over the cuts).
FailureOr<SmallVector<int64_t>>
SplitPipelinePass::chunkStarts(func::FuncOp step, ArrayRef<double> layerCost) {
  const int64_t stages = this->stages, virtualStages = this->virtualStages;
  int64_t layers = static_cast<int64_t>(layerCost.size());
  int64_t chunks = stages * virtualStages;
  if (layers < chunks)
    return step.emitError() << "expected at least " << chunks
                            << " layers for " << stages << " stages x "
                            << virtualStages
                            << " virtual stages (one layer per chunk), the "
                               "model has "
                            << layers;
  SmallVector<int64_t> starts = {0};
  if (!boundaries.empty()) {
    if (static_cast<int64_t>(boundaries.size()) != chunks - 1)
      return step.emitError()
             << "expected " << chunks - 1
             << " pipeline boundaries (the first layer of every chunk after "
                "the first), got "
             << boundaries.size();
    for (int64_t b : boundaries) {
      if (b <= starts.back() || b >= layers)
        return step.emitError()
               << "expected increasing pipeline boundaries in [1, " << layers
               << "), got " << b << " after " << starts.back();
      starts.push_back(b);
    }
    return starts;
  }
  std::vector<int64_t> balanced =
      pipeline::balancedChunkStarts(layerCost, chunks);
  return SmallVector<int64_t>(balanced.begin(), balanced.end());
}

/// Each stage's units in the order it runs them (step 4).
std::vector<std::vector<Unit>> SplitPipelinePass::stageOrders() const {
  return pipeline::stageOrders(schedule, stages, virtualStages, microbatches);
}

int64_t stageAt(Operation *op) { return pipelineStageOf(op); }

void SplitPipelinePass::runOnOperation() {
  ModuleOp module = getOperation();
  const int64_t stages = this->stages;
  auto step = module.lookupSymbol<func::FuncOp>(function);
  if (!step || stages <= 1)
    return;
  if (failed(checkOptions(step)))
    return signalPassFailure();
  FailureOr<Mesh> mesh = Mesh::fromModule(module);
  int64_t ppAxis = succeeded(mesh) ? mesh->axisIndex("pp") : -1;
  if (ppAxis < 0 || mesh->sizes[ppAxis] != stages) {
    step.emitError() << "expected the module's mesh to have a pp axis of "
                     << stages << " (run llmc-partition with pp = " << stages
                     << " first)";
    return signalPassFailure();
  }
  Block &body = step.getBody().front();
  SplitState state;
  state.step = step;
  state.body = &body;
  state.ret = cast<func::ReturnOp>(body.getTerminator());
  state.ppAxis = ppAxis;
  for (Operation &op : body.without_terminator())
    state.ops.push_back(&op);
  replicable.clear();
  OpBuilder builder(module.getContext());

  assignLayers(state);
  FailureOr<SmallVector<int64_t>> starts = chunkStarts(step, state.layerCost);
  if (failed(starts))
    return signalPassFailure();
  state.starts = std::move(*starts);
  placeUnits(state);
  issueCollectivesEarly(state);
  if (failed(scheduleUnits(state)))
    return signalPassFailure();
  replicateCheapOps(state, builder);
  if (failed(orderBody(state, builder)))
    return signalPassFailure();
  copyTiedUpdates(state, builder);
  insertTransfers(state, builder);
  annotate(state, builder);
}

/// 1. Layers: the layer of every op that is not replicated, and the flops
/// of each layer.
void SplitPipelinePass::assignLayers(SplitState &state) {
  llvm::DenseMap<Operation *, int64_t> &layer = state.layer;
  int64_t &layers = state.layers;
  // Optimizer ops that read no layer's value (beta1 * m reads only the
  // moment): placed where they are read below.
  llvm::DenseSet<Operation *> followUsers;
  for (Operation *op : state.ops) {
    if (isReplicable(op)) {
      replicable.insert(op);
      continue;
    }
    int64_t l = layerOf(modelPartOf(op->getLoc()));
    if (l < 0) {
      Phase phase = phaseOf(op->getLoc());
      bool backward = phase == Phase::Backward;
      l = kNoLayer;
      int64_t largest = -1;
      for (Value v : op->getOperands()) {
        auto it = layer.find(v.getDefiningOp());
        if (it == layer.end() || it->second == kNoLayer)
          continue;
        // The optimizer follows its largest operand (a gradient, not the
        // clipping scalar): scalars move between stages, tensors stay.
        if (phase == Phase::Optimizer) {
          int64_t bytes = movedBytes(v);
          if (bytes > largest || (bytes == largest && it->second > l)) {
            largest = bytes;
            l = it->second;
          }
          continue;
        }
        l = l == kNoLayer ? it->second
            : backward    ? std::min(l, it->second)
                          : std::max(l, it->second);
      }
      // Reads no layer: the embedding (forward) or what starts the
      // backward (a seed), or the optimizer's own bookkeeping.
      if (l == kNoLayer && phase == Phase::Optimizer)
        followUsers.insert(op);
      if (l == kNoLayer)
        l = backward ? std::numeric_limits<int64_t>::max() : -1;
    }
    layer[op] = l;
    if (l >= 0 && l != std::numeric_limits<int64_t>::max())
      layers = std::max(layers, l + 1);
  }
  // The embedding (-1) joins layer 0, a backward seed (max) the last.
  // A broadcast (or reshape) in the update goes where it is read, so that
  // its small input travels instead of its expansion; so does an update op
  // that reads only arguments, so that a parameter's optimizer state is
  // read and written on one stage (the runtime feeds an output back into
  // its argument on the ranks that hold both: docs/sharding.md).
  // A broadcast that CSE made one for the updates of several layers (the
  // clipping scale expanded to a weight's shape, read by every layer's
  // weight of that shape) is copied for each layer that reads it: one
  // copy read by every stage sent its expansion to each (GPT-2 tiny at pp8:
  // 56 weight-sized sends from stage 0 a step), where the copies need only
  // the scalar.
  bool copied = false;
  for (Operation *op : llvm::reverse(state.ops)) {
    auto it = layer.find(op);
    if (it == layer.end() ||
        !(isa<BroadcastOp, ReshapeOp>(op) || followUsers.contains(op)) ||
        phaseOf(op->getLoc()) != Phase::Optimizer || op->use_empty())
      continue;
    std::map<int64_t, SmallVector<OpOperand *>> byLayer;
    bool known = true;
    for (OpOperand &use : op->getUses()) {
      auto u = layer.find(use.getOwner());
      if (u == layer.end()) {
        known = false;
        break;
      }
      byLayer[u->second].push_back(&use);
    }
    if (!known || byLayer.empty())
      continue;
    if (byLayer.size() == 1 || isa<BroadcastOp, ReshapeOp>(op))
      it->second = byLayer.begin()->first;
    if (byLayer.size() == 1 || !isa<BroadcastOp, ReshapeOp>(op))
      continue;
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    for (auto &[l, uses] : llvm::drop_begin(byLayer)) {
      Operation *copy = builder.clone(*op);
      layer[copy] = l;
      for (OpOperand *use : uses)
        use->set(copy->getResult(0));
    }
    copied = true;
  }
  if (copied) {
    state.ops.clear();
    for (Operation &op : state.body->without_terminator())
      state.ops.push_back(&op);
  }
  state.layerCost.assign(layers, 0.0);
  for (Operation *op : state.ops) {
    auto it = layer.find(op);
    if (it == layer.end())
      continue;
    int64_t &l = it->second;
    l = std::clamp<int64_t>(l, 0, std::max<int64_t>(layers - 1, 0));
    if (auto cost = dyn_cast<CostOpInterface>(op); cost && layers > 0)
      state.layerCost[l] += cost.getFlops();
  }
}

/// 3. Units: every op's chunk, part and microbatch, and each unit's flops.
void SplitPipelinePass::placeUnits(SplitState &state) {
  const int64_t microbatches = this->microbatches;
  auto chunkOfLayer = [&](int64_t l) {
    return static_cast<int64_t>(std::upper_bound(state.starts.begin(),
                                                 state.starts.end(), l) -
                                state.starts.begin()) -
           1;
  };
  // A replicated op's microbatch (an input slice's tag) reaches its readers
  // too.
  llvm::DenseMap<Operation *, int64_t> replicatedMicrobatch;
  for (Operation *op : state.ops) {
    if (!replicable.contains(op))
      continue;
    int64_t mb = -1;
    if (auto attr = op->getAttrOfType<IntegerAttr>("llmc.microbatch"))
      mb = attr.getInt();
    for (Value v : op->getOperands())
      if (auto it = replicatedMicrobatch.find(v.getDefiningOp());
          it != replicatedMicrobatch.end())
        mb = std::max(mb, it->second);
    replicatedMicrobatch[op] = mb;
  }
  for (Operation *op : state.ops) {
    if (replicable.contains(op))
      continue;
    // Its own microbatch (a tag), else the latest it reads.
    int64_t mb = -1, read = -1;
    if (auto attr = op->getAttrOfType<IntegerAttr>("llmc.microbatch"))
      mb = attr.getInt();
    Part part = Part::Head;
    for (Value v : op->getOperands()) {
      if (auto it = state.place.find(v.getDefiningOp());
          it != state.place.end()) {
        read = std::max(read, it->second.microbatch);
        part = std::max(part, it->second.part);
      }
      if (auto it = replicatedMicrobatch.find(v.getDefiningOp());
          it != replicatedMicrobatch.end())
        read = std::max(read, it->second);
    }
    if (mb < 0)
      mb = read;
    if (microbatches == 1 && mb < 0)
      mb = 0;
    Phase phase = phaseOf(op->getLoc());
    Part own = phase == Phase::Optimizer ? Part::Tail
               : mb < 0                  ? Part::Head
               : phase == Phase::Backward ? Part::Backward
                                          : Part::Forward;
    // A forward-tagged op that reads a backward value runs in the backward.
    part = std::max(part, own);
    Placement p{chunkOfLayer(state.layer[op]), part, mb};
    state.place[op] = p;
    if (part == Part::Forward || part == Part::Backward)
      if (auto cost = dyn_cast<CostOpInterface>(op))
        state.unitCost[Unit{p.chunk, part == Part::Backward, mb}] +=
            cost.getFlops();
  }
}

/// 3b. The update's collectives issued early (passes/PipelineCollectives.h).
void SplitPipelinePass::issueCollectivesEarly(SplitState &state) {
  if (pipeline::issueCollectivesEarly(state.ops, state.place)) {
    state.ops.clear();
    for (Operation &op : state.body->without_terminator())
      state.ops.push_back(&op);
  }
}

/// 4. The schedule, simulated: a unit starts when its stage is free and
/// the unit it needs (the previous chunk's forward, the next chunk's
/// backward) has finished.
LogicalResult SplitPipelinePass::scheduleUnits(SplitState &state) {
  const int64_t stages = this->stages;
  const std::string schedule = this->schedule;
  int64_t chunks = stages * virtualStages;
  std::vector<std::vector<Unit>> orders = stageOrders();
  pipeline::Simulation sim =
      pipeline::simulate(orders, chunks, [&](const Unit &u) {
        auto it = state.unitCost.find(u);
        return it == state.unitCost.end() ? 0.0 : it->second;
      });
  if (sim.stuck)
    return state.step.emitError()
           << "pipeline schedule " << schedule << " cannot proceed on a stage";
  state.global = sim.global;
  state.bubble = sim.bubble();
  // Forward units whose backward has not run yet, per stage: the
  // activations a stage keeps at once (in microbatch-chunks).
  state.inFlight.assign(stages, 0);
  for (int64_t s = 0; s < stages; ++s) {
    int64_t live = 0;
    for (const Unit &u : orders[s]) {
      live += u.backward ? -1 : 1;
      state.inFlight[s] = std::max(state.inFlight[s], live);
    }
  }
  return success();
}

/// 5a. Replicated ops: one copy per stage that reads it (users first, so a
/// copy's readers are known before the copy is made).
void SplitPipelinePass::replicateCheapOps(SplitState &state,
                                          OpBuilder &builder) {
  llvm::DenseMap<Operation *, std::set<int64_t>> readers;
  for (Operation *op : llvm::reverse(state.ops)) {
    if (!replicable.contains(op))
      continue;
    std::set<int64_t> &stagesOf = readers[op];
    for (Operation *user : op->getUsers()) {
      if (isa<func::ReturnOp>(user))
        stagesOf.insert(0);
      else if (replicable.contains(user))
        stagesOf.insert(readers[user].begin(), readers[user].end());
      else
        stagesOf.insert(stageOf(state.place[user].chunk));
    }
  }
  for (Operation *op : state.ops) {
    if (!replicable.contains(op))
      continue;
    for (int64_t s : readers[op]) {
      builder.setInsertionPoint(op);
      Operation *copy = builder.clone(*op);
      for (OpOperand &operand : copy->getOpOperands())
        if (Operation *def = operand.get().getDefiningOp())
          operand.set(state.copyOf.at({def, s})->getResult(0));
      copy->setAttr("llmc.stage", builder.getI64IntegerAttr(s));
      state.copyOf[{op, s}] = copy;
      state.originalOf[copy] = op;
      state.order.push_back(copy);
    }
  }
  auto stageOfUser = [&](Operation *user) -> int64_t {
    if (isa<func::ReturnOp>(user))
      return 0;
    return stageOf(state.place.lookup(user).chunk);
  };
  for (Operation *op : state.ops) {
    if (replicable.contains(op))
      continue;
    for (OpOperand &operand : op->getOpOperands())
      if (Operation *def = operand.get().getDefiningOp();
          def && replicable.contains(def))
        operand.set(state.copyOf.at({def, stageOfUser(op)})->getResult(0));
  }
  for (OpOperand &operand : state.ret->getOpOperands())
    if (Operation *def = operand.get().getDefiningOp();
        def && replicable.contains(def))
      operand.set(state.copyOf.at({def, 0})->getResult(0));
  for (Operation *op : llvm::reverse(state.ops))
    if (replicable.contains(op)) {
      op->dropAllUses();
      op->erase();
    }
}

/// 5b. The global order: what reads no microbatch, the units as the
/// simulation started them, the optimizer; then the check that the order
/// respects every dependence (the schedule's per-stage orders and the
/// microbatch chains are assumed; this checks them).
LogicalResult SplitPipelinePass::orderBody(SplitState &state,
                                           OpBuilder &builder) {
  const int64_t microbatches = this->microbatches;
  const std::string schedule = this->schedule;
  std::map<Unit, SmallVector<Operation *>> unitOps;
  SmallVector<Operation *> tail;
  SmallVector<Operation *> &order = state.order;
  for (Operation *op : state.ops) {
    auto it = state.place.find(op);
    if (it == state.place.end())
      continue;
    const Placement &p = it->second;
    op->setAttr("llmc.stage", builder.getI64IntegerAttr(stageOf(p.chunk)));
    if (p.part == Part::Forward || p.part == Part::Backward)
      op->setAttr("llmc.microbatch", builder.getI64IntegerAttr(p.microbatch));
    if (virtualStages > 1)
      op->setAttr("llmc.chunk", builder.getI64IntegerAttr(p.chunk));
    if (p.part == Part::Head)
      order.push_back(op);
    else if (p.part == Part::Tail)
      tail.push_back(op);
    else
      unitOps[Unit{p.chunk, p.part == Part::Backward, p.microbatch}]
          .push_back(op);
  }
  for (const Unit &u : state.global)
    llvm::append_range(order, unitOps[u]);
  for (const Unit &u : state.global)
    unitOps.erase(u);
  if (!unitOps.empty()) {
    const Unit &u = unitOps.begin()->first;
    return state.step.emitError()
           << "pipeline split: microbatch " << u.microbatch << " of chunk "
           << u.chunk << " is not in the schedule (microbatches = "
           << microbatches << ")";
  }
  llvm::append_range(order, tail);
  for (Operation *op : order)
    op->moveBefore(state.ret);

  llvm::DenseSet<Operation *> seen;
  for (Operation *op : order) {
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && !seen.contains(def)) {
        InFlightDiagnostic diag =
            op->emitOpError() << "pipeline schedule " << schedule
                              << " runs this op before a value it reads";
        diag.attachNote(def->getLoc()) << "the value is made here";
        return failure();
      }
    seen.insert(op);
  }
  return success();
}

/// 5c. Tied parameters (GPT-2's wte: the embedding on the first stage,
/// the head on the last): every other stage that reads the parameter runs
/// the same update as the stage that returns it, on the same summed
/// gradient, so that each keeps its own copy current. The clones carry
/// `llmc.returns` (the result indices they stand for on their stage).
void SplitPipelinePass::copyTiedUpdates(SplitState &state,
                                        OpBuilder &builder) {
  func::FuncOp step = state.step;
  func::ReturnOp ret = state.ret;
  // The copy of replicated op `original` for stage `s`, made (before the
  // builder's insertion point) from `some` copy of it when missing.
  std::function<Value(Operation *, Operation *, int64_t)> copyFor =
      [&](Operation *original, Operation *some, int64_t s) -> Value {
    if (auto it = state.copyOf.find({original, s}); it != state.copyOf.end())
      return it->second->getResult(0);
    IRMapping inputs;
    for (Value v : some->getOperands())
      if (auto it = state.originalOf.find(v.getDefiningOp());
          it != state.originalOf.end())
        inputs.map(v, copyFor(it->second, v.getDefiningOp(), s));
    Operation *copy = builder.clone(*some, inputs);
    copy->setAttr("llmc.stage", builder.getI64IntegerAttr(s));
    state.copyOf[{original, s}] = copy;
    state.originalOf[copy] = original;
    return copy->getResult(0);
  };
  for (BlockArgument arg : state.body->getArguments()) {
    auto role = step.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  "llmc.role");
    auto name = step.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                  "llmc.name");
    if (!role || role.getValue() != "parameter" || !name)
      continue;
    std::string param = name.getValue().str();
    // The results that are its new value and its moments' ("optimizer.m.").
    SmallVector<unsigned> results;
    int64_t holder = -1;
    for (OpOperand &operand : ret->getOpOperands()) {
      auto result = step.getResultAttrOfType<StringAttr>(
          operand.getOperandNumber(), "llmc.name");
      Operation *def = operand.get().getDefiningOp();
      if (!result || !def)
        continue;
      StringRef r = result.getValue();
      if (r == param || r.ends_with("." + param)) {
        results.push_back(operand.getOperandNumber());
        if (r == param)
          holder = stageAt(def);
      }
    }
    std::set<int64_t> readers;
    for (Operation *user : arg.getUsers())
      if (!isa<func::ReturnOp>(user))
        readers.insert(stageAt(user));
    readers.erase(holder);
    if (holder < 0 || readers.empty())
      continue;
    // The update: the optimizer ops of this parameter (its model part) on
    // the holder that the returned values are made of.
    llvm::SetVector<Operation *> update;
    SmallVector<Value> work;
    for (unsigned i : results)
      work.push_back(ret.getOperand(i));
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || update.contains(def) || stageAt(def) != holder ||
          phaseOf(def->getLoc()) != Phase::Optimizer ||
          modelPartOf(def->getLoc()) != param)
        continue;
      update.insert(def);
      llvm::append_range(work, def->getOperands());
    }
    SmallVector<Operation *> inOrder(update.begin(), update.end());
    llvm::sort(inOrder, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (int64_t s : readers) {
      IRMapping mapping;
      for (Operation *op : inOrder) {
        builder.setInsertionPoint(ret);
        // Replicated inputs (constants, step arithmetic): this stage's copy.
        for (Value v : op->getOperands())
          if (auto it = state.originalOf.find(v.getDefiningOp());
              it != state.originalOf.end())
            mapping.map(v, copyFor(it->second, v.getDefiningOp(), s));
        Operation *copy = builder.clone(*op, mapping);
        copy->setAttr("llmc.stage", builder.getI64IntegerAttr(s));
      }
      for (unsigned i : results) {
        Value copy = mapping.lookupOrNull(ret.getOperand(i));
        if (!copy)
          continue;
        Operation *def = copy.getDefiningOp();
        SmallVector<int64_t> indices;
        if (auto old = def->getAttrOfType<DenseI64ArrayAttr>("llmc.returns"))
          llvm::append_range(indices, old.asArrayRef());
        indices.push_back(i);
        def->setAttr("llmc.returns", builder.getDenseI64ArrayAttr(indices));
        state.replicasOf[i].push_back(s);
      }
    }
  }
}

/// 5d. Transfers (passes/PipelineTransfers.cpp).
void SplitPipelinePass::insertTransfers(SplitState &state,
                                        OpBuilder &builder) {
  insertPipelineTransfers(*state.body, state.ppAxis, builder);
}

/// The stages of the arguments and results, and the split's summary
/// (llmc.pipeline) on the function.
void SplitPipelinePass::annotate(SplitState &state, OpBuilder &builder) {
  const int64_t stages = this->stages, microbatches = this->microbatches;
  const std::string schedule = this->schedule;
  func::FuncOp step = state.step;
  auto stageAttr = [&](int64_t s) { return builder.getI64IntegerAttr(s); };
  // Arguments read on one stage only live there: the runtime binds them on
  // that stage's ranks and the other stages' plans give them no memory.
  for (BlockArgument arg : state.body->getArguments()) {
    std::set<int64_t> readers;
    for (Operation *user : arg.getUsers())
      readers.insert(isa<func::ReturnOp>(user) ? -1 : stageAt(user));
    if (readers.size() == 1 && *readers.begin() >= 0)
      step.setArgAttr(arg.getArgNumber(), "llmc.stage",
                      stageAttr(*readers.begin()));
  }
  // Results: the stage that holds each (the runtime reads it there).
  for (OpOperand &operand : state.ret->getOpOperands())
    if (Operation *def = operand.get().getDefiningOp())
      step.setResultAttr(operand.getOperandNumber(), "llmc.stage",
                         stageAttr(stageAt(def)));
  for (auto &[i, stagesOf] : state.replicasOf)
    step.setResultAttr(static_cast<unsigned>(i), "llmc.replicas",
                       builder.getDenseI64ArrayAttr(stagesOf));
  SmallVector<int64_t> pinned(state.starts.begin() + 1, state.starts.end());
  SmallVector<NamedAttribute> info = {
      builder.getNamedAttr("stages", builder.getI64IntegerAttr(stages)),
      builder.getNamedAttr("schedule", builder.getStringAttr(schedule)),
      builder.getNamedAttr("virtual_stages",
                           builder.getI64IntegerAttr(virtualStages)),
      builder.getNamedAttr("microbatches",
                           builder.getI64IntegerAttr(microbatches)),
      builder.getNamedAttr("layers", builder.getI64IntegerAttr(state.layers)),
      builder.getNamedAttr("boundaries", builder.getDenseI64ArrayAttr(pinned)),
      builder.getNamedAttr("bubble", builder.getF64FloatAttr(state.bubble)),
      builder.getNamedAttr("in_flight",
                           builder.getDenseI64ArrayAttr(state.inFlight)),
  };
  step->setAttr("llmc.pipeline", builder.getDictionaryAttr(info));
}

} // namespace
} // namespace llmc
