//===- ShardRulesComposite.cpp - contractions, lookups, composites --------===//
//
// matmul (batch, row, column and contraction splits; a split contraction
// leaves a pending sum), embedding (vocabulary parallel: shifted ids, zero
// rows outside the rank's range, pending sum), scatter_add, gather, the
// norms, their gradients and softmax (normalized dimension whole),
// attention (batch and heads), rope, and the MoE routing ops (tokens split;
// dispatch
// and combine exchange expert slots by all-to-all over ep).
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/VjpHelpers.h"
#include "sharding/ShardRuleUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace llmc::shardrules {

/// Builds `value - offset` on local index tensors, with `offset` this rank's
/// first row along `axes` (vocabulary parallelism).
Value shiftIds(PartitionContext &context, Location loc, Value ids,
               ArrayRef<int64_t> axes, int64_t rows) {
  OpBuilder &b = context.builder();
  auto type = cast<RankedTensorType>(ids.getType());
  Value offset =
      context.axisOffset(loc, axes, rows, type.getElementType());
  Value wide = BroadcastOp::create(b, loc, type, offset,
                                   b.getDenseI64ArrayAttr({}));
  return SubOp::create(b, loc, ids, wide);
}

/// Per row of `x` (local, split over `axes` along dimension `d`):
/// returns x - max and, in `sumExp`, the sum of exp(x - max), both
/// complete over `axes` (an all-reduce max, then an all-reduce sum).
Value shiftedByGlobalMax(PartitionContext &context, Operation *user, Value x,
                         int64_t d, ArrayRef<int64_t> axes, Value &sumExp) {
  OpBuilder &b = context.builder();
  Location loc = user->getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> kept(type.getShape());
  kept[d] = 1;
  auto rowType = RankedTensorType::get(kept, type.getElementType());
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  Value localMax = ReduceMaxOp::create(b, loc, rowType, x,
                                       b.getDenseI64ArrayAttr({d}),
                                       b.getUnitAttr());
  Value max = context.allReduce(localMax, axes, PartialKind::Max, user,
                                "row maximum of a vocabulary-parallel softmax");
  Value shifted = SubOp::create(
      b, loc, x, BroadcastOp::create(b, loc, type, max, all));
  Value e = ExpOp::create(b, loc, shifted);
  Value localSum = ReduceSumOp::create(b, loc, rowType, e,
                                       b.getDenseI64ArrayAttr({d}),
                                       b.getUnitAttr());
  sumExp = context.allReduce(localSum, axes, PartialKind::Sum, user,
                             "row sum of a vocabulary-parallel softmax");
  return shifted;
}

namespace {

LogicalResult partitionMatmul(MatmulOp op, PartitionContext &context) {
  Value lhs = op.getLhs(), rhs = op.getRhs();
  int64_t rl = rankOf(lhs), rr = rankOf(rhs);
  int64_t nb = rl - 2;
  bool batchedRhs = rr == rl;
  int64_t rb = rr - 2;
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  int64_t mL = ta ? nb + 1 : nb, kL = ta ? nb : nb + 1;
  int64_t kR = tb ? rb + 1 : rb, nR = tb ? rb : rb + 1;
  Sharding ls = context.resolvedSharding(lhs);
  Sharding rs = context.resolvedSharding(rhs);
  // Loops: batch..., M, N, K; claimed in that order so the activation's
  // splits win over a weight's (a ZeRO-3 weight is gathered), and a split
  // contraction yields to a split row or column over the same axis: keeping
  // the contraction split would leave a pending sum of the whole result and
  // gather the other operand anyway, where dropping it gathers one operand
  // (Megatron-SP's weight gradients: the sequence-split activation or
  // cotangent is gathered, the gradient keeps the weight's split).
  SmallVector<DimSplit> batch(nb);
  SmallVector<int64_t> used;
  for (int64_t i = 0; i < nb; ++i) {
    batch[i] = ls.dims[i].isSplit() || !batchedRhs ? ls.dims[i] : rs.dims[i];
    claimAxes(batch[i], used);
  }
  DimSplit m = ls.dims[mL];
  // Sequence parallelism: the activation's sequence split yields to the
  // weight's tensor-parallel column split (Megatron-SP gathers the sequence
  // before a column-parallel matmul and scatters it after a row-parallel
  // one).
  int64_t seq = context.policy().sequenceAxis;
  if (seq >= 0 && llvm::is_contained(m.axes, seq) &&
      llvm::is_contained(rs.dims[nR].axes, seq))
    m = DimSplit{};
  claimAxes(m, used);
  DimSplit n = rs.dims[nR];
  claimAxes(n, used);
  DimSplit k = ls.dims[kL].isSplit() ? ls.dims[kL] : rs.dims[kR];
  claimAxes(k, used);

  Sharding lhsWant = Sharding::replicated(rl);
  for (int64_t i = 0; i < nb; ++i)
    lhsWant.dims[i] = batch[i];
  lhsWant.dims[mL] = m;
  lhsWant.dims[kL] = k;
  Sharding rhsWant = Sharding::replicated(rr);
  if (batchedRhs)
    for (int64_t i = 0; i < nb; ++i)
      rhsWant.dims[i] = batch[i];
  rhsWant.dims[kR] = k;
  rhsWant.dims[nR] = n;
  FailureOr<Value> l = reshardTo(context, lhs, lhsWant, op);
  if (failed(l))
    return failure();
  FailureOr<Value> r = reshardTo(context, rhs, rhsWant, op);
  if (failed(r))
    return failure();
  Sharding result = Sharding::replicated(rl);
  for (int64_t i = 0; i < nb; ++i)
    result.dims[i] = batch[i];
  result.dims[nb] = m;
  result.dims[nb + 1] = n;
  result.partial = k.axes;
  llvm::sort(result.partial);
  return context.cloneLocal(op, {*l, *r}, {result});
}

LogicalResult partitionEmbedding(EmbeddingOp op, PartitionContext &context) {
  Value table = op.getTable(), ids = op.getIds();
  Sharding is = context.resolvedSharding(ids);
  Sharding ts = context.resolvedSharding(table);
  SmallVector<int64_t> used;
  for (DimSplit &d : is.dims)
    claimAxes(d, used);
  DimSplit width = ts.dims[1];
  claimAxes(width, used);
  DimSplit vocab = ts.dims[0];
  // A ZeRO split of the table is storage only: the table is gathered for
  // its use, not looked up in pieces (which would leave a sum over dp).
  int64_t zeroAxis = context.policy().zeroAxis;
  if (vocab.groups != 1 || llvm::is_contained(vocab.axes, zeroAxis))
    vocab = DimSplit{};
  claimAxes(vocab, used);
  Sharding tableWant = Sharding::replicated(2);
  tableWant.dims[0] = vocab;
  tableWant.dims[1] = width;
  FailureOr<Value> t = reshardTo(context, table, tableWant, op);
  FailureOr<Value> i = reshardTo(context, ids, is, op);
  if (failed(t) || failed(i))
    return failure();
  Value localIds = *i;
  if (vocab.isSplit())
    localIds = shiftIds(context, op.getLoc(), localIds, vocab.axes,
                        shapeOf(*t)[0]);
  Sharding result = is;
  result.dims.push_back(width);
  result.partial = vocab.axes;
  llvm::sort(result.partial);
  return context.cloneLocal(op, {*t, localIds}, {result});
}

/// scatter_add into a zero table: every rank adds its own updates; a split
/// over the index dimensions leaves a pending sum, a split of the table's
/// scattered dimension shifts the indices (out-of-range rows are skipped by
/// definition).
LogicalResult partitionScatterAdd(ScatterAddOp op, PartitionContext &context) {
  Value dest = op.getDest(), indices = op.getIndices(),
        updates = op.getUpdates();
  int64_t k = static_cast<int64_t>(op.getDim());
  int64_t ri = rankOf(indices);
  if (!isZeroSplat(dest))
    return partitionReplicated(op, context);
  Sharding is = context.resolvedSharding(indices);
  Sharding ds = context.resolvedSharding(dest);
  SmallVector<int64_t> used;
  for (DimSplit &d : is.dims)
    claimAxes(d, used);
  Sharding destWant = ds;
  for (auto [d, split] : llvm::enumerate(destWant.dims)) {
    if (static_cast<int64_t>(d) == k && split.groups != 1)
      split = DimSplit{};
    claimAxes(split, used);
  }
  // updates = dest[:k] ++ indices ++ dest[k+1:]
  Sharding updWant = Sharding::replicated(rankOf(updates));
  for (int64_t d = 0; d < k; ++d)
    updWant.dims[d] = destWant.dims[d];
  for (int64_t d = 0; d < ri; ++d)
    updWant.dims[k + d] = is.dims[d];
  for (int64_t d = k + 1; d < rankOf(dest); ++d)
    updWant.dims[d - 1 + ri] = destWant.dims[d];
  FailureOr<Value> dl = reshardTo(context, dest, destWant, op);
  FailureOr<Value> il = reshardTo(context, indices, is, op);
  FailureOr<Value> ul = reshardTo(context, updates, updWant, op);
  if (failed(dl) || failed(il) || failed(ul))
    return failure();
  Value localIndices = *il;
  if (destWant.dims[k].isSplit())
    localIndices = shiftIds(context, op.getLoc(), localIndices,
                            destWant.dims[k].axes, shapeOf(*dl)[k]);
  Sharding result = destWant;
  for (const DimSplit &d : is.dims)
    llvm::append_range(result.partial, d.axes);
  llvm::sort(result.partial);
  return context.cloneLocal(op, {*dl, localIndices, *ul}, {result});
}

/// gather along `dim`: the indexed dimension is whole on every rank.
LogicalResult partitionGather(GatherOp op, PartitionContext &context) {
  Value input = op.getInput(), indices = op.getIndices();
  int64_t k = static_cast<int64_t>(op.getDim());
  int64_t ri = rankOf(indices);
  Sharding is = context.resolvedSharding(indices);
  Sharding in = context.resolvedSharding(input);
  SmallVector<int64_t> used;
  for (DimSplit &d : is.dims)
    claimAxes(d, used);
  Sharding inWant = in;
  inWant.dims[k] = DimSplit{};
  for (auto [d, split] : llvm::enumerate(inWant.dims))
    if (static_cast<int64_t>(d) != k)
      claimAxes(split, used);
  FailureOr<Value> l = reshardTo(context, input, inWant, op);
  FailureOr<Value> i = reshardTo(context, indices, is, op);
  if (failed(l) || failed(i))
    return failure();
  Sharding result;
  for (int64_t d = 0; d < k; ++d)
    result.dims.push_back(inWant.dims[d]);
  for (int64_t d = 0; d < ri; ++d)
    result.dims.push_back(is.dims[d]);
  for (int64_t d = k + 1; d < rankOf(input); ++d)
    result.dims.push_back(inWant.dims[d]);
  return context.cloneLocal(op, {*l, *i}, {result});
}

/// Ops normalized over trailing dimensions (norms over the last, softmax
/// over `dim`, rope over [T, D]): those dimensions stay whole, every other
/// operand (gamma, beta, positions) is replicated.
LogicalResult partitionNormalized(Operation *op, PartitionContext &context,
                                  ArrayRef<int64_t> wholeDims) {
  Value input = op->getOperand(0);
  Sharding want = context.resolvedSharding(input);
  for (int64_t d : wholeDims)
    want.dims[d] = DimSplit{};
  SmallVector<Value> locals;
  FailureOr<Value> x = reshardTo(context, input, want, op);
  if (failed(x))
    return failure();
  locals.push_back(*x);
  for (Value other : op->getOperands().drop_front()) {
    FailureOr<Value> local = reshardTo(
        context, other, Sharding::replicated(rankOf(other)), op);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  return context.cloneLocal(op, locals, {want});
}

/// layer_norm_grad, rms_norm_grad: as the forward norm, the normalized
/// (last) dimension whole (a tensor-parallel split of it is gathered, as
/// layer_norm gathers it) and gamma replicated; x and dy share the leading
/// splits of whichever splits more. dx takes them; dgamma and dbeta are
/// sums over the rows, so each rank's are a pending sum over the axes that
/// split the rows, finished where a user needs them (the optimizer's
/// gradient all-reduce, as for a matmul's weight gradient).
LogicalResult partitionNormGrad(Operation *op, PartitionContext &context) {
  Value input = op->getOperand(0), gamma = op->getOperand(1),
        dresult = op->getOperand(2);
  int64_t rank = rankOf(input);
  auto splitAxes = [&](const Sharding &s) {
    int64_t count = 0;
    for (int64_t d = 0; d + 1 < rank; ++d)
      count += static_cast<int64_t>(s.dims[d].axes.size());
    return count;
  };
  Sharding xs = context.resolvedSharding(input).complete();
  Sharding gs = context.resolvedSharding(dresult).complete();
  Sharding want = splitAxes(gs) > splitAxes(xs) ? gs : xs;
  want.dims[rank - 1] = DimSplit{};
  FailureOr<Value> x = reshardTo(context, input, want, op);
  if (failed(x))
    return failure();
  FailureOr<Value> g = reshardTo(context, gamma, Sharding::replicated(1), op);
  if (failed(g))
    return failure();
  FailureOr<Value> dy = reshardTo(context, dresult, want, op);
  if (failed(dy))
    return failure();
  Sharding columns = Sharding::replicated(1);
  for (int64_t d = 0; d + 1 < rank; ++d)
    llvm::append_range(columns.partial, want.dims[d].axes);
  llvm::sort(columns.partial);
  SmallVector<Sharding> results{want, columns};
  if (op->getNumResults() == 3)
    results.push_back(columns);
  return context.cloneLocal(op, {*x, *g, *dy}, results);
}

/// The split of `s`'s dimension `d` when a normalization over it can be done
/// in place (vocabulary parallel): split, in one block, over axes that no
/// other dimension of `s` uses. Otherwise an unsplit DimSplit.
DimSplit normalizedSplit(const Sharding &s, int64_t d) {
  const DimSplit &split = s.dims[d];
  if (!split.isSplit() || split.groups != 1)
    return DimSplit{};
  for (auto [i, other] : llvm::enumerate(s.dims))
    if (static_cast<int64_t>(i) != d)
      for (int64_t axis : other.axes)
        if (llvm::is_contained(split.axes, axis))
          return DimSplit{};
  return split;
}

/// softmax over a dimension split over the vocabulary: exp(x - max) / sum
/// with the max and the sum taken over every rank of the split.
LogicalResult partitionSoftmax(SoftmaxOp op, PartitionContext &context) {
  int64_t d = static_cast<int64_t>(op.getDim());
  Sharding want = context.resolvedSharding(op.getInput());
  DimSplit split = normalizedSplit(want, d);
  if (!split.isSplit())
    return partitionNormalized(op, context, {d});
  FailureOr<Value> x = reshardTo(context, op.getInput(), want, op);
  if (failed(x))
    return failure();
  OpBuilder &b = context.builder();
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>((*x).getType());
  Type compute = vjp::computeType(b, {*x});
  Value wide = vjp::castTo(b, loc, *x, compute);
  Value sum;
  Value shifted = shiftedByGlobalMax(context, op, wide, d, split.axes, sum);
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  Value probs = DivOp::create(
      b, loc, ExpOp::create(b, loc, shifted),
      BroadcastOp::create(b, loc, cast<RankedTensorType>(shifted.getType()),
                          sum, all));
  context.map(op.getResult(), vjp::castTo(b, loc, probs, type.getElementType()),
              want);
  return success();
}

/// The shardings attention and its derivative take: the query's batch and
/// head splits (sequence and head dimension whole); key and value heads
/// split the same way when the split divides them, else the heads are whole.
/// The heads are dimension 1 (bhtd) or 2 (bthd); a packed q/k/v value
/// splits its batch only (a split of its heads would cut across the query,
/// key and value ranges).
void attentionShardings(PartitionContext &context, Value query, Value key,
                        AttentionLayout layout, Sharding &q, Sharding &kv) {
  const int headDim = layout == AttentionLayout::bhtd ? 1 : 2;
  const int seqDim = 3 - headDim;
  q = context.resolvedSharding(query);
  q.dims[seqDim] = q.dims[3] = DimSplit{};
  if (q.dims[headDim].groups != 1 || layout == AttentionLayout::packed)
    q.dims[headDim] = DimSplit{};
  int64_t kvHeads = shapeOf(key)[headDim];
  if (q.dims[headDim].isSplit() &&
      kvHeads % context.mesh().ways(q.dims[headDim].axes) != 0)
    q.dims[headDim] = DimSplit{};
  kv = Sharding::replicated(4);
  kv.dims[0] = q.dims[0];
  kv.dims[headDim] = q.dims[headDim];
}

/// The sharding of attention's log-sum-exp [B, Hq, T] from the query's in
/// `layout` (heads and positions swapped unless bhtd).
Sharding layoutLseSharding(const Sharding &query, AttentionLayout layout) {
  Sharding lse = lseSharding(query);
  if (layout != AttentionLayout::bhtd)
    std::swap(lse.dims[1], lse.dims[2]);
  return lse;
}

/// attention: batch and heads split, sequence and head dimension whole. Key
/// and value heads follow the query heads when the split divides them, so
/// that each rank keeps whole groups of grouped-query attention.
LogicalResult partitionAttention(AttentionOp op, PartitionContext &context) {
  AttentionLayout layout = op.getLayout().value_or(AttentionLayout::bhtd);
  // Ring attention (sequence split) is written for bhtd.
  if (layout == AttentionLayout::bhtd)
    if (DimSplit seq = contextParallelSplit(context, op.getQuery(), 2);
        seq.isSplit())
      return partitionRingAttention(op, context, seq);
  Sharding q, kv;
  attentionShardings(context, op.getQuery(), op.getKey(), layout, q, kv);
  FailureOr<Value> lq = reshardTo(context, op.getQuery(), q, op);
  FailureOr<Value> lk = reshardTo(context, op.getKey(), kv, op);
  FailureOr<Value> lv = reshardTo(context, op.getValue(), kv, op);
  if (failed(lq) || failed(lk) || failed(lv))
    return failure();
  return context.cloneLocal(op, {*lq, *lk, *lv},
                            {q, layoutLseSharding(q, layout)});
}

/// attention_grad: the same splits as attention; q, out, dout and dq share
/// the query's, k, v, dk and dv the key/value heads'.
LogicalResult partitionAttentionGrad(AttentionGradOp op,
                                     PartitionContext &context) {
  AttentionLayout layout = op.getLayout().value_or(AttentionLayout::bhtd);
  if (layout == AttentionLayout::bhtd)
    if (DimSplit seq = contextParallelSplit(context, op.getQuery(), 2);
        seq.isSplit())
      return partitionRingAttentionGrad(op, context, seq);
  Sharding q, kv;
  attentionShardings(context, op.getQuery(), op.getKey(), layout, q, kv);
  SmallVector<Value> values = {op.getQuery(), op.getKey(), op.getValue(),
                               op.getOut(), op.getDout()};
  SmallVector<Sharding> wants = {q, kv, kv, q, q};
  if (op.getLse()) {
    values.push_back(op.getLse());
    wants.push_back(layoutLseSharding(q, layout));
  }
  SmallVector<Value> locals;
  for (auto [value, want] : llvm::zip(values, wants)) {
    FailureOr<Value> local = reshardTo(context, value, want, op);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  if (layout == AttentionLayout::packed)
    return context.cloneLocal(op, locals, {q});
  return context.cloneLocal(op, locals, {q, kv, kv});
}

/// The split of the tokens (dimension 0) of an MoE op's token operands: a
/// plain split (groups 1) taken from the first split operand, or none.
DimSplit moeTokenSplit(PartitionContext &context, ValueRange tokenOperands) {
  for (Value v : tokenOperands) {
    Sharding s = context.resolvedSharding(v);
    if (s.dims[0].isSplit())
      return s.dims[0].groups == 1 ? s.dims[0] : DimSplit{};
  }
  return DimSplit{};
}

/// Token operands split as `tokens` on dimension 0, everything else whole.
LogicalResult reshardTokens(PartitionContext &context, Operation *op,
                            ValueRange values, const DimSplit &tokens,
                            SmallVectorImpl<Value> &locals) {
  for (Value v : values) {
    Sharding want = Sharding::replicated(rankOf(v));
    want.dims[0] = tokens;
    FailureOr<Value> local = reshardTo(context, v, want, op);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  return success();
}

/// The ep axis when it is the minor-most axis of the token split `tokens`
/// and divides the experts, else -1: then dispatch sends each expert's slots
/// to the rank that owns the expert.
int64_t expertAxis(PartitionContext &context, const DimSplit &tokens,
                   int64_t experts) {
  int64_t ep = context.mesh().axisIndex("ep");
  if (ep < 0 || tokens.axes.empty() || tokens.axes.back() != ep ||
      experts % context.mesh().sizes[ep] != 0)
    return -1;
  return ep;
}

/// moe_topk: row-wise over the tokens; the experts' dimension whole.
LogicalResult partitionMoeTopK(MoeTopKOp op, PartitionContext &context) {
  DimSplit tokens = moeTokenSplit(context, op->getOperands());
  SmallVector<Value> locals;
  if (failed(reshardTokens(context, op, op->getOperands(), tokens, locals)))
    return failure();
  Sharding out = Sharding::replicated(2);
  out.dims[0] = tokens;
  return context.cloneLocal(op, locals, {out, out});
}

/// moe_dispatch (expert parallelism, docs/sharding.md): each rank
/// dispatches its own tokens into [E, C / n, D], n the ranks that split the
/// tokens, so the slot dimension holds each token group's own slots (the
/// same values as one device whenever no expert overflows). Under ep, an
/// all-to-all then sends each expert's slots to the rank that owns it:
/// locally [E, C/(dp·ep), D], the slots split (dp, ep), becomes
/// [E/ep, C/dp, D], the experts split over ep and the slots over dp.
LogicalResult partitionMoeDispatch(MoeDispatchOp op,
                                   PartitionContext &context) {
  DimSplit tokens = moeTokenSplit(context, op->getOperands());
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  int64_t ways = context.mesh().ways(tokens.axes);
  if (shape[1] % ways != 0) {
    op->emitWarning() << "expert capacity " << shape[1]
                      << " is not a multiple of the " << ways
                      << " ranks that split the tokens: every rank "
                         "dispatches all tokens";
    tokens = DimSplit{};
  }
  SmallVector<Value> locals;
  if (failed(reshardTokens(context, op, op->getOperands(), tokens, locals)))
    return failure();
  Sharding slots = Sharding::replicated(3);
  slots.dims[1] = tokens;
  int64_t ep = expertAxis(context, tokens, shape[0]);
  if (ep < 0)
    return context.cloneLocal(op, locals, {slots});
  FailureOr<RankedTensorType> type =
      context.localType(op.getResult().getType(), slots, op);
  if (failed(type))
    return failure();
  OpBuilder &b = context.builder();
  Value local = MoeDispatchOp::create(b, op.getLoc(), *type, locals[0],
                                      locals[1]);
  Value moved = context.allToAll(local, /*splitDim=*/0, /*concatDim=*/1, ep,
                                 op, "moe dispatch: tokens to their experts");
  Sharding byExpert = slots;
  byExpert.dims[1].axes.pop_back();
  byExpert.dims[0] = DimSplit{{ep}, 1};
  context.map(op.getResult(), moved, byExpert);
  return success();
}

/// moe_combine: the expert outputs come back to the ranks of their tokens
/// (an all-to-all under ep, the inverse of dispatch's) and each rank
/// combines its own tokens.
LogicalResult partitionMoeCombine(MoeCombineOp op, PartitionContext &context) {
  Value expertOut = op.getExpertOut();
  DimSplit tokens =
      moeTokenSplit(context, {op.getWeights(), op.getIndices()});
  ArrayRef<int64_t> shape = shapeOf(expertOut);
  if (shape[1] % context.mesh().ways(tokens.axes) != 0)
    tokens = DimSplit{};
  SmallVector<Value> locals;
  Sharding slots = Sharding::replicated(3);
  slots.dims[1] = tokens;
  int64_t ep = expertAxis(context, tokens, shape[0]);
  Sharding byExpert = slots;
  if (ep >= 0) {
    byExpert.dims[1].axes.pop_back();
    byExpert.dims[0] = DimSplit{{ep}, 1};
  }
  if (ep >= 0 && context.resolvedSharding(expertOut) == byExpert) {
    Value moved = context.movedToTokens(expertOut);
    if (!moved) {
      FailureOr<Value> done = context.resolve(expertOut, op);
      if (failed(done))
        return failure();
      moved = context.allToAll(
          *done, /*splitDim=*/1, /*concatDim=*/0, ep, op,
          "moe combine: expert outputs back to their tokens");
      context.setMovedToTokens(expertOut, moved);
    }
    locals.push_back(moved);
  } else {
    FailureOr<Value> local = reshardTo(context, expertOut, slots, op);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  if (failed(reshardTokens(context, op, {op.getWeights(), op.getIndices()},
                           tokens, locals)))
    return failure();
  Sharding out = Sharding::replicated(2);
  out.dims[0] = tokens;
  return context.cloneLocal(op, locals, {out});
}

} // namespace

LogicalResult partitionComposite(Operation *op, PartitionContext &context,
                                 bool &handled) {
  handled = true;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](MatmulOp o) { return partitionMatmul(o, context); })
      .Case([&](EmbeddingOp o) { return partitionEmbedding(o, context); })
      .Case([&](ScatterAddOp o) { return partitionScatterAdd(o, context); })
      .Case([&](GatherOp o) { return partitionGather(o, context); })
      .Case<LayerNormOp, RmsNormOp>([&](Operation *o) {
        return partitionNormalized(o, context, {rankOf(o->getOperand(0)) - 1});
      })
      .Case<LayerNormGradOp, RmsNormGradOp>(
          [&](Operation *o) { return partitionNormGrad(o, context); })
      .Case([&](SoftmaxOp o) { return partitionSoftmax(o, context); })
      .Case([&](RopeOp o) {
        int64_t r = rankOf(o.getInput());
        if (DimSplit seq = contextParallelSplit(context, o.getInput(), r - 2);
            seq.isSplit())
          return partitionRingRope(o, context, seq);
        return partitionNormalized(o, context, {r - 2, r - 1});
      })
      .Case([&](AttentionOp o) { return partitionAttention(o, context); })
      .Case([&](AttentionGradOp o) {
        return partitionAttentionGrad(o, context);
      })
      .Case([&](CrossEntropyOp o) { return partitionCrossEntropy(o, context); })
      .Case([&](CrossEntropyGradOp o) {
        return partitionCrossEntropyGrad(o, context);
      })
      .Case([&](MoeTopKOp o) { return partitionMoeTopK(o, context); })
      .Case([&](MoeDispatchOp o) { return partitionMoeDispatch(o, context); })
      .Case([&](MoeCombineOp o) { return partitionMoeCombine(o, context); })
      .Default([&](Operation *) {
        handled = false;
        return success();
      });
}

} // namespace llmc::shardrules
