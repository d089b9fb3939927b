//===- FoldAttentionLayout.cpp - attention reads q, k, v where they are ---===//
//
// The step before fusion (docs/fusion.md, "Attention layout"): a model
// splits heads with reshape + transpose to [B, H, T, D] for llmc.attention
// and transposes the result back; GPT-2 also slices q, k and v out of one
// [B, T, 3C] product, and its backward concatenates dq, dk and dv. The
// flash kernels read any row of D contiguous elements through strides
// (runtime/AttentionLayout.h), so:
//
//  1. attention / attention_grad whose operands are all transposes
//     [0, 2, 1, 3] of [B, T, H, D] values take those values (layout bthd);
//     their results' transposes back become the new results (a result read
//     otherwise gets one transpose);
//  2. bthd attention whose q, k and v are reshapes of the three consecutive
//     column ranges of one [B, T, (Hq + 2 Hkv) D] value read it as one
//     packed [B, T, Hq + 2 Hkv, D] reshape (layout packed), and so does
//     attention_grad when its dq, dk and dv only feed a concat of their
//     [B, T, H D] reshapes in that order: one packed gradient, reshaped,
//     replaces the concat;
//  3. the transposes, reshapes and slices no longer read are erased.
//
// Only the addressing changes: the kernels compute the same values. The pass
// runs after llmc-split-pipeline: every op it creates takes the pipeline
// placement (llmc.stage, ...) of the op it stands beside, or codegen would
// run it on every stage, reading values that exist on one.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

namespace llmc {
#define GEN_PASS_DEF_FOLDATTENTIONLAYOUTPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;
using namespace llmc;

namespace {

constexpr int64_t kSwapHeads[] = {0, 2, 1, 3};

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// [d0, d2, d1, d3] of a rank-4 type.
RankedTensorType swapHeads(RankedTensorType type) {
  ArrayRef<int64_t> s = type.getShape();
  return RankedTensorType::get({s[0], s[2], s[1], s[3]},
                               type.getElementType());
}

/// The [B, T, H, D] value `v` is the transpose [0, 2, 1, 3] of, or null.
Value untransposed(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || t.getPermutation() != ArrayRef<int64_t>(kSwapHeads))
    return Value();
  return t.getInput();
}

/// Replaces every use of `old` ([B, H, T, D]) by `now` ([B, T, H, D]): a
/// transpose [0, 2, 1, 3] of `old` becomes `now`; other readers get one new
/// transpose of `now`.
void replaceSwapped(OpBuilder &b, Value old, Value now) {
  Value transposed;
  for (OpOperand &use : llvm::make_early_inc_range(old.getUses())) {
    auto t = dyn_cast<TransposeOp>(use.getOwner());
    if (t && t.getPermutation() == ArrayRef<int64_t>(kSwapHeads)) {
      t.getResult().replaceAllUsesWith(now);
      t.erase();
      continue;
    }
    if (!transposed) {
      b.setInsertionPointAfterValue(now);
      auto transpose = TransposeOp::create(b, now.getLoc(), old.getType(),
                                           now, ArrayRef<int64_t>(kSwapHeads));
      copyPipelinePlacement(now.getDefiningOp(), transpose);
      transposed = transpose;
    }
    use.set(transposed);
  }
}

/// Step 1 for one attention: operands untransposed, or failure.
LogicalResult foldTransposes(AttentionOp op, SetVector<Operation *> &dead) {
  SmallVector<Value, 3> inner;
  for (Value v : op->getOperands()) {
    inner.push_back(untransposed(v));
    if (!inner.back())
      return failure();
  }
  OpBuilder b(op);
  // The log-sum-exp stays [B, Hq, T].
  Type lse = op.getLse() ? op.getLse().getType() : Type();
  auto now = AttentionOp::create(
      b, op.getLoc(), swapHeads(tensorOf(op.getResult())), lse, inner[0],
      inner[1], inner[2], op.getCausalAttr(), op.getScaleAttr(),
      AttentionLayoutAttr::get(b.getContext(), AttentionLayout::bthd));
  now->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  for (Value v : op->getOperands())
    dead.insert(v.getDefiningOp());
  if (op.getLse())
    op.getLse().replaceAllUsesWith(now.getLse());
  replaceSwapped(b, op.getResult(), now.getResult());
  op.erase();
  return success();
}

LogicalResult foldTransposes(AttentionGradOp op, SetVector<Operation *> &dead) {
  // q, k, v, out, dout (not the log-sum-exp, [B, Hq, T] in every layout).
  SmallVector<Value, 5> inner;
  for (Value v : op->getOperands().take_front(5)) {
    inner.push_back(untransposed(v));
    if (!inner.back())
      return failure();
  }
  OpBuilder b(op);
  SmallVector<Type, 3> types;
  for (Value g : op.getGradients())
    types.push_back(swapHeads(tensorOf(g)));
  auto now = AttentionGradOp::create(
      b, op.getLoc(), types, inner[0], inner[1], inner[2], inner[3], inner[4],
      op.getLse(), op.getCausalAttr(), op.getScaleAttr(),
      AttentionLayoutAttr::get(b.getContext(), AttentionLayout::bthd));
  now->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  for (Value v : op->getOperands().take_front(5))
    dead.insert(v.getDefiningOp());
  for (auto [old, grad] : llvm::zip(op.getGradients(), now.getGradients()))
    replaceSwapped(b, old, grad);
  op.erase();
  return success();
}

/// The packed [B, T, N, D] source of bthd q, k, v: each a reshape of a
/// slice of one [B, T, N D] value S over its last dimension, q at column 0,
/// k right after it, v right after k, together all of S.
struct PackedSource {
  Value source; ///< S
  int64_t heads = 0, kvHeads = 0, headDim = 0;
};

/// The slice of S's last dimension `v` ([B, T, H, D]) reshapes: its start
/// column, or -1.
int64_t sliceStart(Value v, Value &source) {
  auto reshape = v.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return -1;
  auto slice = reshape.getInput().getDefiningOp<SliceOp>();
  if (!slice || (slice.getStrides() &&
                 llvm::any_of(*slice.getStrides(),
                              [](int64_t s) { return s != 1; })))
    return -1;
  RankedTensorType in = tensorOf(slice.getInput());
  RankedTensorType out = tensorOf(slice.getResult());
  RankedTensorType heads = tensorOf(v);
  if (in.getRank() != 3 || heads.getDimSize(0) != in.getDimSize(0) ||
      heads.getDimSize(1) != in.getDimSize(1) ||
      out.getDimSize(0) != in.getDimSize(0) ||
      out.getDimSize(1) != in.getDimSize(1))
    return -1;
  source = slice.getInput();
  return slice.getStarts()[2];
}

std::optional<PackedSource> packedSource(Value q, Value k, Value v) {
  Value sq, sk, sv;
  int64_t cq = sliceStart(q, sq), ck = sliceStart(k, sk),
          cv = sliceStart(v, sv);
  if (cq < 0 || ck < 0 || cv < 0 || sq != sk || sq != sv)
    return std::nullopt;
  PackedSource p;
  p.source = sq;
  p.heads = tensorOf(q).getDimSize(2);
  p.kvHeads = tensorOf(k).getDimSize(2);
  p.headDim = tensorOf(q).getDimSize(3);
  int64_t qWidth = p.heads * p.headDim, kvWidth = p.kvHeads * p.headDim;
  if (cq != 0 || ck != qWidth || cv != qWidth + kvWidth ||
      tensorOf(sq).getDimSize(2) != qWidth + 2 * kvWidth)
    return std::nullopt;
  return p;
}

/// The [B, T, N, D] reshape of S, one per source, right after S.
Value packedView(OpBuilder &b, const PackedSource &p,
                 DenseMap<Value, Value> &views) {
  Value &view = views[p.source];
  if (view)
    return view;
  RankedTensorType s = tensorOf(p.source);
  auto type = RankedTensorType::get(
      {s.getDimSize(0), s.getDimSize(1), p.heads + 2 * p.kvHeads, p.headDim},
      s.getElementType());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(p.source);
  auto reshape = ReshapeOp::create(b, p.source.getLoc(), type, p.source);
  copyPipelinePlacement(p.source.getDefiningOp(), reshape);
  view = reshape;
  return view;
}

/// Step 2 for one bthd attention.
LogicalResult packOperands(AttentionOp op, DenseMap<Value, Value> &views,
                           SetVector<Operation *> &dead) {
  std::optional<PackedSource> p =
      packedSource(op.getQuery(), op.getKey(), op.getValue());
  if (!p)
    return failure();
  OpBuilder b(op);
  Value view = packedView(b, *p, views);
  Type lse = op.getLse() ? op.getLse().getType() : Type();
  auto now = AttentionOp::create(
      b, op.getLoc(), op.getResult().getType(), lse, view, view, view,
      op.getCausalAttr(), op.getScaleAttr(),
      AttentionLayoutAttr::get(b.getContext(), AttentionLayout::packed));
  now->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  for (Value v : op->getOperands())
    dead.insert(v.getDefiningOp());
  op.getResult().replaceAllUsesWith(now.getResult());
  if (op.getLse())
    op.getLse().replaceAllUsesWith(now.getLse());
  op.erase();
  return success();
}

/// The concat of the [B, T, H D] reshapes of dq, dk and dv (in that order,
/// on the last dimension) that is their only reader, or null.
ConcatOp gradientConcat(AttentionGradOp op) {
  ConcatOp concat;
  for (auto [i, g] : llvm::enumerate(op.getGradients())) {
    if (!g.hasOneUse())
      return ConcatOp();
    auto reshape = dyn_cast<ReshapeOp>(*g.getUsers().begin());
    if (!reshape || !reshape.getResult().hasOneUse() ||
        tensorOf(reshape.getResult()).getRank() != 3)
      return ConcatOp();
    auto user = dyn_cast<ConcatOp>(*reshape.getResult().getUsers().begin());
    if (!user || user.getDim() != 2 || user.getInputs().size() != 3 ||
        user.getInputs()[i] != reshape.getResult() || (concat && user != concat))
      return ConcatOp();
    concat = user;
  }
  return concat;
}

LogicalResult packOperands(AttentionGradOp op, DenseMap<Value, Value> &views,
                           SetVector<Operation *> &dead) {
  std::optional<PackedSource> p =
      packedSource(op.getQuery(), op.getKey(), op.getValue());
  ConcatOp concat = gradientConcat(op);
  if (!p || !concat)
    return failure();
  OpBuilder b(op);
  Value view = packedView(b, *p, views);
  auto now = AttentionGradOp::create(
      b, op.getLoc(), TypeRange{view.getType()}, view, view, view,
      op.getOut(), op.getDout(), op.getLse(), op.getCausalAttr(),
      op.getScaleAttr(),
      AttentionLayoutAttr::get(b.getContext(), AttentionLayout::packed));
  now->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  b.setInsertionPoint(concat);
  auto gradient = ReshapeOp::create(b, concat.getLoc(), concat.getType(),
                                    now.getDquery());
  copyPipelinePlacement(concat, gradient);
  concat.getResult().replaceAllUsesWith(gradient.getResult());
  SmallVector<Operation *, 3> reshapes;
  for (Value v : concat.getInputs())
    reshapes.push_back(v.getDefiningOp());
  concat.erase();
  for (Operation *reshape : reshapes)
    reshape->erase();
  for (Value v : op.getOperands().take_front(3))
    dead.insert(v.getDefiningOp());
  op.erase();
  return success();
}

/// Step 3: the collected ops (and what they read, transitively among
/// transposes, reshapes and slices) once nothing reads them.
void eraseDead(SetVector<Operation *> &dead) {
  while (!dead.empty()) {
    Operation *op = dead.pop_back_val();
    if (!op || !isa<TransposeOp, ReshapeOp, SliceOp>(op) || !op->use_empty())
      continue;
    Operation *input = op->getOperand(0).getDefiningOp();
    op->erase();
    dead.remove(op);
    if (input)
      dead.insert(input);
  }
}

struct FoldAttentionLayoutPass
    : llmc::impl::FoldAttentionLayoutPassBase<FoldAttentionLayoutPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      SetVector<Operation *> dead;
      // 1. In program order, so that a forward attention's new transpose
      //    of its result is what its attention_grad's `out` reads.
      SmallVector<Operation *> ops;
      func.walk([&](Operation *op) {
        if (isa<AttentionOp, AttentionGradOp>(op))
          ops.push_back(op);
      });
      SmallVector<Operation *> bthd;
      for (Operation *op : ops) {
        bool layoutIsDefault =
            isa<AttentionOp>(op)
                ? !cast<AttentionOp>(op).getLayout()
                : !cast<AttentionGradOp>(op).getLayout();
        if (!layoutIsDefault)
          continue;
        // The replacement sits where `op` was: find it again by position.
        Operation *before = op->getPrevNode();
        Block *block = op->getBlock();
        LogicalResult folded =
            isa<AttentionOp>(op)
                ? foldTransposes(cast<AttentionOp>(op), dead)
                : foldTransposes(cast<AttentionGradOp>(op), dead);
        if (succeeded(folded))
          bthd.push_back(before ? before->getNextNode() : &block->front());
      }
      eraseDead(dead);
      // 2. Pack q, k, v read from one product.
      DenseMap<Value, Value> views;
      for (Operation *op : bthd) {
        if (auto a = dyn_cast<AttentionOp>(op))
          (void)packOperands(a, views, dead);
        else
          (void)packOperands(cast<AttentionGradOp>(op), views, dead);
      }
      // 3.
      eraseDead(dead);
    });
  }
};

} // namespace
