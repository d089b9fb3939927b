//===- Fuse.cpp - group ops that become one kernel into llmc.fused --------===//
//
// The fusion step of the pipeline (docs/fusion.md): after the training step
// is complete, chains of elementwise ops, row reductions with the pointwise
// ops around them, matmuls with their epilogues and the classifier with its
// loss become `llmc.fused` regions. Ops are classified by traits (the
// Elementwise marker) and by the structures the design names (matmul,
// attention, the norms, softmax, reductions, cross_entropy).
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

namespace llmc {
#define GEN_PASS_DEF_FUSEPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;
using namespace llmc;

namespace {

/// What an op may be inside a group.
enum class Role {
  None,         ///< stays alone (attention, gather, scatter, ...)
  Pointwise,    ///< Elementwise trait
  RowReduction, ///< layer_norm, rms_norm, softmax, trailing reduce_*
  Loss,         ///< cross_entropy, cross_entropy_grad
  Matmul,
};

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// A reduce over the trailing dims reads whole rows: one block per row.
bool reducesTrailingDims(Operation *op, ArrayRef<int64_t> dims) {
  int64_t rank = static_cast<int64_t>(shapeOf(op->getOperand(0)).size());
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != rank - static_cast<int64_t>(dims.size()) + static_cast<int64_t>(i))
      return false;
  return true;
}

Role roleOf(Operation *op) {
  if (isa<MatmulOp>(op))
    return Role::Matmul;
  if (isa<CrossEntropyOp, CrossEntropyGradOp>(op))
    return Role::Loss;
  if (isa<LayerNormOp, RmsNormOp, SoftmaxOp>(op))
    return Role::RowReduction;
  if (auto r = dyn_cast<ReduceSumOp>(op))
    return reducesTrailingDims(op, r.getDims()) ? Role::RowReduction : Role::None;
  if (auto r = dyn_cast<ReduceMaxOp>(op))
    return reducesTrailingDims(op, r.getDims()) ? Role::RowReduction : Role::None;
  if (auto r = dyn_cast<ReduceMeanOp>(op))
    return reducesTrailingDims(op, r.getDims()) ? Role::RowReduction : Role::None;
  if (op->hasTrait<llmc::OpTrait::Elementwise>())
    return Role::Pointwise;
  return Role::None;
}

/// The iteration space of an op as a kernel: what it reads row by row.
ArrayRef<int64_t> domainOf(Operation *op, Role role) {
  if (role == Role::Pointwise || role == Role::Matmul)
    return shapeOf(op->getResult(0));
  return shapeOf(op->getOperand(0)); // the rows a reduction or loss reads
}

/// Ops cheap enough to recompute inside a kernel from small or no inputs:
/// broadcasts, the reshapes that feed them, iota, and splat constants (an
/// immediate in a kernel, but a full tensor in memory: the classifier's
/// gradient reads two of [B, T, V] otherwise).
bool isPullable(Operation *op) {
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    return dense && dense.isSplat();
  }
  return isa<BroadcastOp, IotaOp>(op);
}

/// mul(x, x) read only by a reduce_sum of every dimension (the optimizer's
/// sum of squares of a gradient) starts a group of its own, which the
/// reduce_sum joins: codegen lowers that pair to one SumSquares kernel that
/// reads x (the squares are never stored, and consecutive ones run as one
/// multi-tensor launch, docs/cuda.md). Joined to x's producer instead (a
/// weight gradient's matmul epilogue), the squares would be stored by the
/// epilogue and read back by a reduction per parameter.
bool isSumOfSquares(Operation *op) {
  auto mul = dyn_cast<MulOp>(op);
  if (!mul || mul.getLhs() != mul.getRhs() || !mul->hasOneUse())
    return false;
  auto reduce = dyn_cast<ReduceSumOp>(*mul->getUsers().begin());
  return reduce && shapeOf(reduce->getResult(0)).empty() &&
         !shapeOf(mul.getResult()).empty();
}

void expandSplatUses(ConstantOp constant,
                     llvm::function_ref<bool(Operation *)> take);

struct Group {
  SmallVector<Operation *> ops;
  SmallVector<int64_t> domain;
  Operation *anchor = nullptr;   ///< names the region (its location)
  MatmulOp matmul;               ///< the group's matmul, if any
  bool classifier = false;       ///< the matmul feeds a cross_entropy
  bool hasReduction = false;
  bool hasLoss = false;
  /// The members that may still have a reader outside the group: the
  /// only ones canAppend must look at. A member leaves it once every reader
  /// is in the group, so a chain checks O(1) members per op instead of all
  /// of them (which made --llmc-fuse quadratic in a chain's length: 200k
  /// ops took over two minutes).
  mutable SmallVector<Operation *> frontier;
};

class Fuser {
public:
  explicit Fuser(func::FuncOp func) : func(func) {}

  /// Forms the groups and rewrites each group of 2+ ops into llmc.fused.
  void run();

  struct Stats {
    int64_t kernelsBefore = 0, kernelsAfter = 0, bytesRemoved = 0;
    int64_t regions[4] = {0, 0, 0, 0};
    int64_t bytesByKind[4] = {0, 0, 0, 0};
    int64_t nestedRuns = 0; ///< elementwise regions inside the others
    mutable int64_t memberChecks = 0; ///< members canAppend visited
  } stats;

private:
  bool accepts(const Group &g, Operation *op, Role role) const;
  bool canAppend(int index, Operation *op) const;
  void add(int index, Operation *op);
  void pullProducers(int index, Operation *op);
  void mergeOperandGroups(int index, Operation *op);
  void materialize(Group &g);

  func::FuncOp func;
  std::vector<Group> groups;
  llvm::DenseMap<Operation *, int> groupOf;
};

bool Fuser::accepts(const Group &g, Operation *op, Role role) const {
  if (role == Role::None || role == Role::Matmul)
    return false;
  // A pipelined program (llmc-split-pipeline): a region runs on one stage.
  if (g.anchor->getAttr("llmc.stage") != op->getAttr("llmc.stage"))
    return false;
  if (domainOf(op, role) != ArrayRef<int64_t>(g.domain))
    return false;
  if (g.matmul) {
    // A classifier takes its loss and the pointwise ops and softmax of the
    // loss gradient; an epilogue only pointwise ops, and only when nothing
    // else reads the product (or it would be stored anyway).
    if (g.classifier)
      return role != Role::RowReduction || isa<SoftmaxOp>(op);
    return role == Role::Pointwise && g.matmul->hasOneUse();
  }
  return true;
}

/// Appending `op` moves the group's region to `op`'s position: every value
/// of the group read outside it must be read after `op`.
bool Fuser::canAppend(int index, Operation *op) const {
  // Only the frontier can read the group from outside; members whose
  // readers have all joined are dropped from it on the way (they stay
  // inside: groups only ever merge whole).
  SmallVector<Operation *> &frontier = groups[index].frontier;
  bool ok = true;
  size_t kept = 0;
  for (size_t i = 0; i < frontier.size(); ++i) {
    Operation *member = frontier[i];
    ++stats.memberChecks;
    bool outside = false;
    for (Operation *user : member->getUsers()) {
      auto it = groupOf.find(user);
      if (it != groupOf.end() && it->second == index)
        continue;
      outside = true;
      if (user != op && !op->isBeforeInBlock(user))
        ok = false;
    }
    if (outside)
      frontier[kept++] = member;
  }
  frontier.resize(kept);
  return ok;
}

void Fuser::add(int index, Operation *op) {
  groups[index].ops.push_back(op);
  groups[index].frontier.push_back(op);
  groupOf[op] = index;
}

/// Pulls broadcasts and iotas (and the reshapes feeding a broadcast) that
/// only this group reads into it, so that the expanded value is never
/// stored.
void Fuser::pullProducers(int index, Operation *op) {
  for (Value operand : op->getOperands()) {
    Operation *producer = operand.getDefiningOp();
    if (!producer || groupOf.count(producer) || !isPullable(producer))
      continue;
    bool onlyHere = llvm::all_of(producer->getUsers(), [&](Operation *user) {
      auto it = groupOf.find(user);
      return it != groupOf.end() && it->second == index;
    });
    if (!onlyHere)
      continue;
    add(index, producer);
    if (Operation *inner = producer->getNumOperands()
                               ? producer->getOperand(0).getDefiningOp()
                               : nullptr)
      if (isa<ReshapeOp>(inner) && inner->hasOneUse() && !groupOf.count(inner))
        add(index, inner);
  }
}

/// `op` joins two chains (a binary op reading two groups): the other
/// operands' groups move into `index` when it accepts every op of theirs
/// and everything they give outside is read after `op`.
void Fuser::mergeOperandGroups(int index, Operation *op) {
  for (Value operand : op->getOperands()) {
    Operation *producer = operand.getDefiningOp();
    auto it = producer ? groupOf.find(producer) : groupOf.end();
    if (it == groupOf.end() || it->second == index)
      continue;
    int other = it->second;
    Group &g = groups[other];
    if (g.matmul)
      continue;
    bool acceptable = llvm::all_of(g.ops, [&](Operation *member) {
      Role role = roleOf(member);
      return role == Role::None || accepts(groups[index], member, role);
    });
    if (!acceptable || !canAppend(other, op))
      continue;
    groups[index].hasReduction |= g.hasReduction;
    groups[index].hasLoss |= g.hasLoss;
    SmallVector<Operation *> moved = std::move(g.ops);
    g.ops.clear();
    g.frontier.clear();
    for (Operation *member : moved)
      add(index, member);
  }
}

void Fuser::run() {
  Block &block = func.getBody().front();
  auto launches = [](Operation &op) {
    return isa<LlmcDialect>(op.getDialect()) && !isa<ReshapeOp, YieldOp>(op) &&
           !op.hasTrait<mlir::OpTrait::ConstantLike>();
  };
  for (Operation &op : block)
    stats.kernelsBefore += launches(op);
  // Elementwise readers of big splat constants read broadcasts of one
  // element instead (expandSplatUses), and a broadcast several ops read
  // (CSE merges the GELU backward's scalar broadcasts of all twelve
  // layers of GPT-2) is copied for each elementwise reader: a broadcast
  // joins a group only when that group is its only reader, and each
  // reader's kernel then expands it itself instead of reading a stored
  // tensor (five f32 [16, 1024, 3072] ones, 1 GB, read in every layer).
  // A softmax of a widening cast reads the narrow values itself
  // (SoftmaxOp's bf16 -> f32 form): the loss gradient's softmax of the bf16
  // logits no longer stores an f32 copy of them ([B, T, V], 3.3 GB for
  // GPT-2 124M at B=16). Exact: the widening is, and softmax computes in
  // double.
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto softmax = dyn_cast<SoftmaxOp>(&op);
    auto cast = softmax ? softmax.getInput().getDefiningOp<CastOp>()
                        : CastOp();
    if (!cast)
      continue;
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    if (!softmax.getType().getElementType().isF32() ||
        !(from.isBF16() || from.isF16()))
      continue;
    softmax->setOperand(0, cast.getInput());
    if (cast->use_empty())
      cast->erase();
  }
  auto elementwiseReader = [](Operation *user) {
    return user->hasTrait<llmc::OpTrait::Elementwise>();
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto constant = dyn_cast<ConstantOp>(&op)) {
      expandSplatUses(constant, elementwiseReader);
      continue;
    }
    auto broadcast = dyn_cast<BroadcastOp>(&op);
    if (!broadcast || broadcast->hasOneUse())
      continue;
    for (OpOperand &use :
         llvm::make_early_inc_range(broadcast.getResult().getUses())) {
      if (!elementwiseReader(use.getOwner()))
        continue;
      OpBuilder b(use.getOwner());
      use.set(b.clone(*broadcast)->getResult(0));
    }
    if (broadcast->use_empty())
      broadcast->erase();
  }

  // 1. Form groups in program order: an op joins the group of the first
  //    operand producer that accepts it, or starts its own.
  for (Operation &opRef : block) {
    Operation *op = &opRef;
    Role role = roleOf(op);
    if (role == Role::None)
      continue;
    int joined = -1;
    bool startsOwn = role == Role::Matmul || isSumOfSquares(op);
    if (!startsOwn)
      for (Value operand : op->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        auto it = producer ? groupOf.find(producer) : groupOf.end();
        if (it == groupOf.end())
          continue;
        if (accepts(groups[it->second], op, role) &&
            canAppend(it->second, op)) {
          joined = it->second;
          break;
        }
      }
    if (joined < 0) {
      joined = static_cast<int>(groups.size());
      Group g;
      g.anchor = op;
      g.domain.assign(domainOf(op, role).begin(), domainOf(op, role).end());
      if (auto m = dyn_cast<MatmulOp>(op)) {
        g.matmul = m;
        g.classifier = llvm::any_of(op->getUsers(), [](Operation *user) {
          return isa<CrossEntropyOp>(user);
        });
      }
      groups.push_back(std::move(g));
    }
    Group &g = groups[joined];
    if (role == Role::Loss)
      g.hasLoss = true;
    if (role == Role::RowReduction) {
      g.hasReduction = true;
      if (!isa<SoftmaxOp, LayerNormOp, RmsNormOp>(g.anchor) &&
          !g.matmul && isa<SoftmaxOp, LayerNormOp, RmsNormOp>(op))
        g.anchor = op;
    }
    add(joined, op);
    // A matmul's operands are its prologue, not its epilogue: groups that
    // produce them stay apart.
    if (!startsOwn)
      mergeOperandGroups(joined, op);
    pullProducers(joined, op);
  }

  // 2. Rewrite every group of two or more ops.
  for (Group &g : groups)
    if (g.ops.size() >= 2)
      materialize(g);

  // 3. A weight gradient's GEMM (a matmul_epilogue region that only the
  //    optimizer reads: the gradient norm's square and AdamW) moves down to
  //    just before the optimizer's first op after it, in order with the
  //    others. This is where it ran while the norm's square was in its
  //    epilogue; measured on the H200 (bench/RESULTS.md), with the GEMMs
  //    between the backward's ops instead, the 25 layer-norm gradients took
  //    3.18 ms instead of 2.51 (their inputs no longer in L2) and the GEMMs
  //    saved only 0.12 ms. Not before each one's own reader: the GEMMs
  //    would then split the run of sums of squares that the GPU launches
  //    as one.
  //    The regions are found first and moved after, in program order, so
  //    that each is visited once.
  SmallVector<FusedOp> gradientGemms;
  for (Operation &op : block) {
    auto fused = dyn_cast<FusedOp>(&op);
    if (!fused || fused.getKind() != FusionKind::matmul_epilogue ||
        fused->use_empty() || phaseOf(fused->getLoc()) == Phase::Optimizer)
      continue;
    if (llvm::all_of(fused->getUsers(), [&](Operation *user) {
          Operation *top = block.findAncestorOpInBlock(*user);
          return top && phaseOf(top->getLoc()) == Phase::Optimizer;
        }))
      gradientGemms.push_back(fused);
  }
  for (FusedOp fused : gradientGemms) {
    // Every reader is an optimizer op after the region, so the first
    // optimizer op after it comes no later than they do.
    Operation *target = fused->getNextNode();
    while (target && (phaseOf(target->getLoc()) != Phase::Optimizer ||
                      llvm::is_contained(gradientGemms, target)))
      target = target->getNextNode();
    if (target && target != fused->getNextNode())
      fused->moveBefore(target);
  }

  for (Operation &op : block)
    stats.kernelsAfter += launches(op);
}

/// Wraps `ops` (in program order, of one block) into one `llmc.fused`
/// region of `kind` placed where the last of them was: values read from
/// outside become its operands, values read outside its results. The
/// caller has checked that every outside reader comes after the last op.
/// `unfusedBytes` gets the bytes the ops would move one by one.
FusedOp wrapOps(ArrayRef<Operation *> ops, FusionKind kind, Operation *anchor,
                int64_t &unfusedBytes) {
  llvm::SmallPtrSet<Operation *, 16> members(ops.begin(), ops.end());
  // 1. Inputs: values read from outside; outputs: values read outside.
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  unfusedBytes = 0;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || !members.count(producer))
        inputs.insert(operand);
    }
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.count(user);
          }))
        outputs.push_back(result);
    if (auto cost = dyn_cast<CostOpInterface>(op))
      unfusedBytes += cost.getBytesRead() + cost.getBytesWritten();
  }

  // 2. The region op sits where the last member was, so every input
  //    dominates it and every outside reader comes after it.
  OpBuilder builder(ops.back()->getContext());
  builder.setInsertionPointAfter(ops.back());
  SmallVector<Type> resultTypes;
  for (Value v : outputs)
    resultTypes.push_back(v.getType());
  auto fused = FusedOp::create(builder, anchor->getLoc(), resultTypes,
                               inputs.getArrayRef(), kind);
  copyPipelinePlacement(anchor, fused);
  Block *body = builder.createBlock(&fused.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  builder.setInsertionPointToEnd(body);
  for (Operation *op : ops)
    builder.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(mapping.lookup(v));
  YieldOp::create(builder, anchor->getLoc(), yielded);

  // 3. Outside readers read the results; the originals go.
  for (auto [output, result] : llvm::zip(outputs, fused.getResults()))
    output.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !members.count(use.getOwner());
    });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return fused;
}

/// A splat constant of more than one element is a whole tensor in memory
/// (GPT-2 124M's GELU backward read five f32 [16, 1024, 3072] splats, 200 MB
/// each, and its loss gradient two of [16, 1024, V]). Each use `take`
/// accepts reads instead a broadcast, placed just before the reader, of a
/// one-element constant: a fused kernel expands it from 4 bytes, and the
/// fusion pulls a broadcast with one reader into that reader's group. The
/// constant goes when nothing reads it any more.
void expandSplatUses(ConstantOp constant,
                     llvm::function_ref<bool(Operation *)> take) {
  auto type = dyn_cast<RankedTensorType>(constant.getResult().getType());
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!type || !dense || !dense.isSplat() || type.getNumElements() <= 1)
    return;
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  Value scalar;
  for (OpOperand &use :
       llvm::make_early_inc_range(constant.getResult().getUses())) {
    Operation *user = use.getOwner();
    if (!take(user))
      continue;
    if (!scalar) {
      OpBuilder b(constant);
      b.setInsertionPointAfter(constant);
      scalar = ConstantOp::create(
          b, constant.getLoc(), scalarType,
          cast<ElementsAttr>(dense.resizeSplat(scalarType)));
    }
    OpBuilder b(user);
    use.set(BroadcastOp::create(b, constant.getLoc(), type, scalar,
                                ArrayRef<int64_t>{}));
  }
  if (constant.use_empty())
    constant.erase();
}

/// Inside a row-reduction, epilogue or classifier region, each run of two
/// or more elementwise ops, broadcasts and iotas of one shape becomes a
/// nested `elementwise` region: one generated kernel on the GPU instead of
/// a launch per op and a stored tensor per intermediate (GPT-2's GELU
/// backward, the loss gradient over [B, T, V], the norm backward around
/// its reductions). The kernel generator (runtime/cuda/kernels/elementwise/FusedKernels.cpp)
/// expands a broadcast only from a value computed outside the kernel, so a
/// broadcast of a run's own value starts a new run. An op between members
/// that reads nothing of the run stays before the nested region (pure ops:
/// only the order changes); one that reads the run ends it. Returns the
/// number of nested regions.
int64_t nestElementwiseRuns(FusedOp region) {
  Block &body = region.getBody().front();
  // A splat constant of many elements read by the region is a whole tensor
  // in memory: each reader gets a broadcast of a one-element constant,
  // which the run's kernel expands from 4 bytes.
  for (Operation &opRef : llvm::make_early_inc_range(body))
    if (auto constant = dyn_cast<ConstantOp>(&opRef))
      expandSplatUses(constant, [](Operation *) { return true; });
  // Ops computed from the region's inputs and constants alone (the
  // one-hot of the loss gradient: iota, broadcast targets, compare,
  // select) move down to just before their first reader, so that they join
  // the run that reads them instead of a run of their own that stores the
  // whole tensor (GPT-2: a [B, T, V] f32 one-hot written and read back).
  llvm::SmallPtrSet<Operation *, 16> fromInputs;
  for (Operation &opRef : body.without_terminator()) {
    Operation *op = &opRef;
    bool candidate = isa<ConstantOp>(op) ||
                     (op->getNumResults() == 1 &&
                      (op->hasTrait<llmc::OpTrait::Elementwise>() ||
                       isa<BroadcastOp, IotaOp>(op)));
    if (candidate && llvm::all_of(op->getOperands(), [&](Value v) {
          Operation *producer = v.getDefiningOp();
          return !producer || fromInputs.count(producer);
        }))
      fromInputs.insert(op);
  }
  SmallVector<Operation *> sinkable;
  for (Operation &opRef : body.without_terminator())
    if (fromInputs.count(&opRef) && !isa<ConstantOp>(&opRef))
      sinkable.push_back(&opRef);
  for (Operation *op : llvm::reverse(sinkable)) {
    Operation *first = nullptr;
    for (Operation *user : op->getUsers())
      if (!first || user->isBeforeInBlock(first))
        first = user;
    if (first && first->getBlock() == &body && op->isBeforeInBlock(first))
      op->moveBefore(first);
  }

  SmallVector<SmallVector<Operation *>> runs;
  SmallVector<Operation *> run;
  llvm::SmallPtrSet<Operation *, 16> inRun;
  ArrayRef<int64_t> runShape;
  auto close = [&]() {
    // Broadcasts and iotas alone would only be stored as before.
    bool computes = llvm::any_of(run, [](Operation *op) {
      return op->hasTrait<llmc::OpTrait::Elementwise>();
    });
    if (run.size() >= 2 && computes)
      runs.push_back(run);
    run.clear();
    inRun.clear();
  };
  auto readsRun = [&](Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value v) {
      Operation *producer = v.getDefiningOp();
      return producer && inRun.count(producer);
    });
  };
  for (Operation &opRef : body.without_terminator()) {
    Operation *op = &opRef;
    bool member = op->getNumResults() == 1 &&
                  (op->hasTrait<llmc::OpTrait::Elementwise>() ||
                   isa<BroadcastOp, IotaOp>(op));
    if (!member) {
      if (readsRun(op))
        close();
      continue;
    }
    ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
    if (!run.empty() &&
        (shape != runShape || (isa<BroadcastOp>(op) && readsRun(op))))
      close();
    if (run.empty())
      runShape = shape;
    run.push_back(op);
    inRun.insert(op);
  }
  close();
  for (ArrayRef<Operation *> ops : runs) {
    int64_t unfused = 0;
    wrapOps(ops, FusionKind::elementwise, ops.front(), unfused);
  }
  return static_cast<int64_t>(runs.size());
}

void Fuser::materialize(Group &g) {
  llvm::sort(g.ops, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  FusionKind kind = g.matmul && g.hasLoss ? FusionKind::classifier_loss
                    : g.matmul            ? FusionKind::matmul_epilogue
                    : g.hasReduction || g.hasLoss ? FusionKind::row_reduction
                                                  : FusionKind::elementwise;
  int64_t unfusedBytes = 0;
  FusedOp fused = wrapOps(g.ops, kind, g.anchor, unfusedBytes);
  auto cost = cast<CostOpInterface>(fused.getOperation());
  int64_t removed = unfusedBytes - cost.getBytesRead() - cost.getBytesWritten();
  stats.bytesRemoved += removed;
  stats.bytesByKind[static_cast<int>(kind)] += removed;
  ++stats.regions[static_cast<int>(kind)];
  if (kind != FusionKind::elementwise)
    stats.nestedRuns += nestElementwiseRuns(fused);
}

class FusePass : public llmc::impl::FusePassBase<FusePass> {
public:
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (!func.getBody().hasOneBlock())
        return;
      Fuser fuser(func);
      fuser.run();
      // Counted in builds with LLVM statistics; the report prints it always.
      memberChecks += fuser.stats.memberChecks;
      if (!report)
        return;
      const Fuser::Stats &s = fuser.stats;
      llvm::outs() << "fusion of @" << func.getSymName() << ": kernels "
                   << s.kernelsBefore << " -> " << s.kernelsAfter
                   << ", regions " << s.regions[0] << " elementwise, "
                   << s.regions[1] << " row_reduction, " << s.regions[2]
                   << " matmul_epilogue, " << s.regions[3]
                   << " classifier_loss (with " << s.nestedRuns
                   << " elementwise runs nested in them); device-memory "
                      "bytes removed "
                   << s.bytesRemoved << "\n";
      llvm::outs() << "  bytes removed by kind: elementwise "
                   << s.bytesByKind[0] << ", row_reduction "
                   << s.bytesByKind[1] << ", matmul_epilogue "
                   << s.bytesByKind[2] << ", classifier_loss "
                   << s.bytesByKind[3] << "; group members checked "
                   << s.memberChecks << "\n";
    });
  }
};

} // namespace
