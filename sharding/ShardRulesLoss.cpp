//===- ShardRulesLoss.cpp - sharding rules of the loss and its gradient ---===//
//
// cross_entropy and cross_entropy_grad: positions split like the logits'
// leading dimensions (a sum leaves a pending sum, a mean is finished with
// the global count of counted positions); the vocabulary split when its
// axes are free (vocabulary-parallel cross-entropy, as Megatron does it),
// with the row max and sum of exponentials all-reduced and the one-hot
// built from ids shifted by this rank's first class. The forward's optional
// lse result and the gradient's lse operand are split like the positions.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/VjpHelpers.h"
#include "sharding/ShardRuleUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace llmc::shardrules {

namespace {

/// The shardings a loss and its gradient take: positions split like the
/// logits' leading dimensions (else the targets'), the vocabulary split only
/// over axes no position dimension uses.
void lossShardings(PartitionContext &context, Value logits, Value targets,
                   Sharding &tokens, Sharding &logitsWant) {
  int64_t rank = rankOf(logits);
  Sharding ls = context.resolvedSharding(logits);
  Sharding ts = context.resolvedSharding(targets);
  SmallVector<int64_t> used;
  tokens = Sharding::replicated(rank - 1);
  for (int64_t d = 0; d < rank - 1; ++d) {
    tokens.dims[d] = ls.dims[d].isSplit() ? ls.dims[d] : ts.dims[d];
    claimAxes(tokens.dims[d], used);
  }
  DimSplit vocab = ls.dims[rank - 1];
  if (vocab.groups != 1)
    vocab = DimSplit{};
  claimAxes(vocab, used);
  logitsWant = tokens;
  logitsWant.dims.push_back(vocab);
}

/// The axes that split the positions, sorted: a sum over positions is
/// pending over them.
SmallVector<int64_t> positionAxes(const Sharding &tokens) {
  SmallVector<int64_t> axes;
  for (const DimSplit &d : tokens.dims)
    llvm::append_range(axes, d.axes);
  llvm::sort(axes);
  return axes;
}

/// 1 where a local target counts, 0 where it is `ignore` (f32, the targets'
/// shape); null without an ignore_index.
Value countedMask(OpBuilder &b, Location loc, Value targets,
                  std::optional<uint64_t> ignore) {
  if (!ignore)
    return Value();
  auto idsType = cast<RankedTensorType>(targets.getType());
  Value ignored = makeConstant(
      b, loc,
      DenseElementsAttr::get(idsType,
                             b.getIntegerAttr(idsType.getElementType(),
                                              static_cast<int64_t>(*ignore))));
  Value kept = vjp::compare(b, loc, CompareDirection::ne, targets, ignored);
  return vjp::maskToFloat(b, loc, kept, b.getF32Type());
}

/// max(global count, 1): the positions counted by a mean (those not
/// ignored, `counted` when there is an ignore_index, else all of `op`'s
/// positions), summed over the ranks that split them (`axes`).
Value globalCount(PartitionContext &context, Operation *op, Value counted,
                  Value globalTargets, ArrayRef<int64_t> axes) {
  OpBuilder &b = context.builder();
  Location loc = op->getLoc();
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  Value count;
  if (counted) {
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < rankOf(counted); ++d)
      all.push_back(d);
    count = ReduceSumOp::create(b, loc, f32, counted,
                                b.getDenseI64ArrayAttr(all), nullptr);
    if (!axes.empty())
      count = context.allReduce(count, axes, PartialKind::Sum, op,
                                "counted positions");
  } else {
    int64_t n = 1;
    for (int64_t size : shapeOf(globalTargets))
      n *= size;
    count = makeConstant(
        b, loc,
        DenseElementsAttr::get(f32, b.getF32FloatAttr(static_cast<float>(n))));
  }
  return MaxOp::create(b, loc, count, vjp::splat(b, loc, f32, 1.0));
}

/// Cross-entropy over logits whose vocabulary is split over `axes`: per
/// position lse - x[target], with lse from the global max and sum (two
/// all-reduces of one number per position) and x[target] picked on the rank
/// that holds it (the others add zero: a third all-reduce). Then the
/// reduction over positions, as the unsplit rule does it.
LogicalResult partitionVocabParallelLoss(CrossEntropyOp op,
                                         PartitionContext &context, Value l,
                                         Value t, const Sharding &tokens,
                                         ArrayRef<int64_t> axes) {
  OpBuilder &b = context.builder();
  Location loc = op.getLoc();
  auto logitsType = cast<RankedTensorType>(l.getType());
  auto idsType = cast<RankedTensorType>(t.getType());
  int64_t rank = logitsType.getRank();
  int64_t d = rank - 1;
  int64_t localVocab = logitsType.getShape()[d];
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  Value x = vjp::castTo(b, loc, l, b.getF32Type());
  auto wideType = cast<RankedTensorType>(x.getType());
  Value sum;
  Value shifted = shiftedByGlobalMax(context, op, x, d, axes, sum);
  SmallVector<int64_t> rowShape(wideType.getShape());
  rowShape[d] = 1;
  Value lse = LogOp::create(b, loc, sum);
  // x[target] - max: the target's column on this rank, if it has it.
  Value local = shiftIds(context, loc, t, axes, localVocab);
  auto classesType =
      RankedTensorType::get(wideType.getShape(), idsType.getElementType());
  Value classes = IotaOp::create(b, loc, classesType, d);
  SmallVector<int64_t> leading;
  for (int64_t i = 0; i < rank - 1; ++i)
    leading.push_back(i);
  Value wanted = BroadcastOp::create(b, loc, classesType, local, leading);
  Value hit = vjp::compare(b, loc, CompareDirection::eq, classes, wanted);
  Value picked = SelectOp::create(b, loc, wideType, hit, shifted,
                                  vjp::zerosLike(b, loc, shifted));
  auto rowType = RankedTensorType::get(rowShape, b.getF32Type());
  Value localPick = ReduceSumOp::create(b, loc, rowType, picked,
                                        b.getDenseI64ArrayAttr({d}),
                                        b.getUnitAttr());
  Value target = context.allReduce(localPick, axes, PartialKind::Sum, op,
                                   "target logit of a vocabulary-parallel "
                                   "cross-entropy");
  Value perRow = SubOp::create(b, loc, lse, target);
  auto positionsType = RankedTensorType::get(idsType.getShape(),
                                             b.getF32Type());
  Value losses = ReshapeOp::create(b, loc, positionsType, perRow);
  // The optional lse result: the global max (its all-reduce again; CSE
  // merges the local max with the one above) plus log(sum).
  if (Value wantedLse = op.getLse()) {
    Value localMax = ReduceMaxOp::create(b, loc, rowType, x,
                                         b.getDenseI64ArrayAttr({d}),
                                         b.getUnitAttr());
    Value max = context.allReduce(localMax, axes, PartialKind::Max, op,
                                  "row maximum of a vocabulary-parallel "
                                  "cross-entropy's lse");
    Value rowLse = AddOp::create(b, loc, max, lse);
    context.map(wantedLse, ReshapeOp::create(b, loc, positionsType, rowLse),
                tokens);
  }
  Value weights;
  if (std::optional<uint64_t> ignore = op.getIgnoreIndex()) {
    Value ignored = makeConstant(
        b, loc,
        DenseElementsAttr::get(
            idsType, b.getIntegerAttr(idsType.getElementType(),
                                      static_cast<int64_t>(*ignore))));
    Value kept = vjp::compare(b, loc, CompareDirection::ne, t, ignored);
    weights = vjp::maskToFloat(b, loc, kept, b.getF32Type());
    losses = MulOp::create(b, loc, losses, weights);
  }
  if (op.getReduction() == LossReduction::none) {
    context.map(op.getResult(), losses, tokens);
    return success();
  }
  Sharding scalar;
  for (const DimSplit &dim : tokens.dims)
    llvm::append_range(scalar.partial, dim.axes);
  llvm::sort(scalar.partial);
  SmallVector<int64_t> positions(leading);
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  Value total = ReduceSumOp::create(b, loc, f32, losses,
                                    b.getDenseI64ArrayAttr(positions), nullptr);
  if (op.getReduction() == LossReduction::sum) {
    context.map(op.getResult(), total, scalar);
    return success();
  }
  Value count;
  if (weights) {
    Value localCount = ReduceSumOp::create(
        b, loc, f32, weights, b.getDenseI64ArrayAttr(positions), nullptr);
    count = scalar.partial.empty()
                ? localCount
                : context.allReduce(localCount, scalar.partial,
                                    PartialKind::Sum, op, "counted positions");
  } else {
    int64_t n = 1;
    for (int64_t size : shapeOf(op.getTargets()))
      n *= size;
    count = makeConstant(
        b, loc, DenseElementsAttr::get(f32, b.getF32FloatAttr(float(n))));
  }
  context.map(op.getResult(), DivOp::create(b, loc, total, count), scalar);
  return success();
}

} // namespace

/// cross-entropy: positions split like the logits' leading dimensions, the
/// vocabulary whole. A sum leaves a pending sum; a mean divides the pending
/// sum by the global number of counted positions.
LogicalResult partitionCrossEntropy(CrossEntropyOp op,
                                    PartitionContext &context) {
  Value logits = op.getLogits(), targets = op.getTargets();
  // The vocabulary stays split when its axes are free (vocabulary-parallel
  // cross-entropy, as Megatron does it); otherwise it is gathered.
  Sharding tokens, logitsWant;
  lossShardings(context, logits, targets, tokens, logitsWant);
  const DimSplit &vocab = logitsWant.dims.back();
  FailureOr<Value> l = reshardTo(context, logits, logitsWant, op);
  FailureOr<Value> t = reshardTo(context, targets, tokens, op);
  if (failed(l) || failed(t))
    return failure();
  if (vocab.isSplit())
    return partitionVocabParallelLoss(op, context, *l, *t, tokens,
                                      vocab.axes);
  // The lse, when asked for, is per position: split like the positions.
  if (op.getReduction() == LossReduction::none)
    return context.cloneLocal(op, {*l, *t}, {tokens, tokens});
  Sharding scalar;
  for (const DimSplit &d : tokens.dims)
    llvm::append_range(scalar.partial, d.axes);
  llvm::sort(scalar.partial);
  if (op.getReduction() == LossReduction::sum || scalar.partial.empty())
    return context.cloneLocal(op, {*l, *t}, {scalar, tokens});
  // Mean over split positions: local sum / global count, both summed over
  // the ranks that split the positions.
  OpBuilder &b = context.builder();
  Location loc = op.getLoc();
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  Type lseType;
  if (op.getLse())
    lseType = RankedTensorType::get(
        cast<RankedTensorType>((*t).getType()).getShape(), b.getF32Type());
  auto sum = CrossEntropyOp::create(b, loc, f32, lseType, *l, *t,
                                    op.getIgnoreIndexAttr(),
                                    LossReduction::sum);
  if (op.getLse())
    context.map(op.getLse(), sum.getLse(), tokens);
  Value count;
  if (std::optional<uint64_t> ignore = op.getIgnoreIndex()) {
    auto idsType = cast<RankedTensorType>((*t).getType());
    Value ignored = makeConstant(
        b, loc,
        DenseElementsAttr::get(
            idsType, b.getIntegerAttr(idsType.getElementType(),
                                      static_cast<int64_t>(*ignore))));
    auto maskType =
        RankedTensorType::get(idsType.getShape(), b.getI1Type());
    Value kept = CompareOp::create(b, loc, maskType, CompareDirection::ne,
                                   *t, ignored);
    auto floatType = RankedTensorType::get(idsType.getShape(), b.getF32Type());
    Value ones = makeConstant(
        b, loc, DenseElementsAttr::get(floatType, b.getF32FloatAttr(1.0)));
    Value zeros = makeConstant(
        b, loc, DenseElementsAttr::get(floatType, b.getF32FloatAttr(0.0)));
    Value weights = SelectOp::create(b, loc, floatType, kept, ones, zeros);
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < idsType.getRank(); ++d)
      all.push_back(d);
    Value local = ReduceSumOp::create(b, loc, f32, weights,
                                      b.getDenseI64ArrayAttr(all), nullptr);
    count = context.allReduce(local, scalar.partial, PartialKind::Sum, op,
                              "counted positions");
  } else {
    int64_t total = 1;
    for (int64_t size : shapeOf(targets))
      total *= size;
    count = makeConstant(
        b, loc,
        DenseElementsAttr::get(f32, b.getF32FloatAttr(static_cast<float>(total))));
  }
  Value loss = DivOp::create(b, loc, sum.getResult(), count);
  context.map(op.getResult(), loss, scalar);
  return success();
}

namespace {

/// The weight of every position of cross_entropy_grad (f32, the local
/// targets' shape): dloss, dloss / max(global count, 1) or dloss per
/// position, times `counted` (when there is an ignore_index).
Value positionWeights(PartitionContext &context, CrossEntropyGradOp op,
                      Value dloss, Value counted, Value targets,
                      ArrayRef<int64_t> axes) {
  OpBuilder &b = context.builder();
  Location loc = op.getLoc();
  auto idsType = cast<RankedTensorType>(targets.getType());
  auto positionsType = RankedTensorType::get(idsType.getShape(),
                                             b.getF32Type());
  Value weight = dloss;
  if (op.getReduction() == LossReduction::mean)
    weight = DivOp::create(
        b, loc, dloss,
        globalCount(context, op, counted, op.getTargets(), axes));
  if (op.getReduction() != LossReduction::none)
    weight = vjp::broadcastTo(b, loc, weight, positionsType.getShape(), {});
  return counted ? MulOp::create(b, loc, weight, counted) : weight;
}

/// cross_entropy_grad over a vocabulary split over `axes`: the expansion
/// (softmax - onehot) * weight on the local columns, the softmax from the
/// global row max and sum (two all-reduces of one number per position) and
/// the one-hot from the targets shifted by this rank's first class.
LogicalResult partitionVocabParallelLossGrad(CrossEntropyGradOp op,
                                             PartitionContext &context,
                                             Value l, Value t, Value dloss,
                                             const Sharding &tokens,
                                             const Sharding &logitsWant,
                                             ArrayRef<int64_t> axes) {
  OpBuilder &b = context.builder();
  Location loc = op.getLoc();
  auto logitsType = cast<RankedTensorType>(l.getType());
  auto idsType = cast<RankedTensorType>(t.getType());
  int64_t rank = logitsType.getRank();
  int64_t d = rank - 1;
  SmallVector<int64_t> all, leading;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  for (int64_t i = 0; i < rank - 1; ++i)
    leading.push_back(i);
  // 1. The softmax of the local columns with the global statistics.
  Value x = vjp::castTo(b, loc, l, b.getF32Type());
  auto wideType = cast<RankedTensorType>(x.getType());
  Value sum;
  Value shifted = shiftedByGlobalMax(context, op, x, d, axes, sum);
  Value probs = DivOp::create(b, loc, ExpOp::create(b, loc, shifted),
                              BroadcastOp::create(b, loc, wideType, sum, all));
  // 2. The one-hot of the local columns.
  Value local = shiftIds(context, loc, t, axes, logitsType.getShape()[d]);
  auto classesType =
      RankedTensorType::get(wideType.getShape(), idsType.getElementType());
  Value classes = IotaOp::create(b, loc, classesType, d);
  Value wanted = BroadcastOp::create(b, loc, classesType, local, leading);
  Value onehot = vjp::maskToFloat(
      b, loc, vjp::compare(b, loc, CompareDirection::eq, classes, wanted),
      b.getF32Type());
  // 3. Times the weight of each position.
  Value counted = countedMask(b, loc, t, op.getIgnoreIndex());
  Value weights =
      positionWeights(context, op, dloss, counted, t, positionAxes(tokens));
  Value grad = MulOp::create(
      b, loc, SubOp::create(b, loc, probs, onehot),
      vjp::broadcastTo(b, loc, weights, wideType.getShape(), leading));
  context.map(op.getResult(),
              vjp::castTo(b, loc, grad, logitsType.getElementType()),
              logitsWant);
  return success();
}

} // namespace

/// cross_entropy_grad: dlogits split like the logits the loss reads. A sum,
/// a none, or a mean over whole positions run locally; a mean over split
/// positions becomes a sum with dloss / max(global count, 1).
LogicalResult partitionCrossEntropyGrad(CrossEntropyGradOp op,
                                        PartitionContext &context) {
  Sharding tokens, logitsWant;
  lossShardings(context, op.getLogits(), op.getTargets(), tokens, logitsWant);
  bool none = op.getReduction() == LossReduction::none;
  FailureOr<Value> l = reshardTo(context, op.getLogits(), logitsWant, op);
  FailureOr<Value> t = reshardTo(context, op.getTargets(), tokens, op);
  FailureOr<Value> g = reshardTo(context, op.getDloss(),
                                 none ? tokens : Sharding::replicated(0), op);
  if (failed(l) || failed(t) || failed(g))
    return failure();
  const DimSplit &vocab = logitsWant.dims.back();
  // The expansion over a split vocabulary recomputes the row statistics
  // (its all-reduces), so it does not read the forward's lse.
  if (vocab.isSplit())
    return partitionVocabParallelLossGrad(op, context, *l, *t, *g, tokens,
                                          logitsWant, vocab.axes);
  // The lse, when given, is per position: split like the positions.
  Value lse;
  if (op.getLse()) {
    FailureOr<Value> s = reshardTo(context, op.getLse(), tokens, op);
    if (failed(s))
      return failure();
    lse = *s;
  }
  SmallVector<Value> operands = {*l, *t, *g};
  if (lse)
    operands.push_back(lse);
  SmallVector<int64_t> axes = positionAxes(tokens);
  if (op.getReduction() != LossReduction::mean || axes.empty())
    return context.cloneLocal(op, operands, {logitsWant});
  OpBuilder &b = context.builder();
  Location loc = op.getLoc();
  Value counted = countedMask(b, loc, *t, op.getIgnoreIndex());
  Value scale = DivOp::create(
      b, loc, *g, globalCount(context, op, counted, op.getTargets(), axes));
  Value grad = CrossEntropyGradOp::create(
      b, loc, (*l).getType(), *l, *t, scale, lse, op.getIgnoreIndexAttr(),
      LossReduction::sum);
  context.map(op.getResult(), grad, logitsWant);
  return success();
}

} // namespace llmc::shardrules
