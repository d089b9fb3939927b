//===- ShardRules.cpp - sharding rules of the primitive ops ----------------===//
//
// partitionOp, which every op's ShardingRuleOpInterface model calls
// (Registration.cpp), and the rules of elementwise, shape and reduction ops. The composite ops and the
// contractions are in ShardRulesComposite.cpp. docs/sharding.md has the
// table of rules.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "sharding/ShardRuleUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace llmc {
namespace shardrules {

Value makeConstant(OpBuilder &b, Location loc, DenseElementsAttr attr) {
  return ConstantOp::create(b, loc, attr.getType(), cast<ElementsAttr>(attr));
}

int64_t splitWays(const Sharding &sharding, const Mesh &mesh) {
  int64_t n = 1;
  for (const DimSplit &dim : sharding.dims)
    n *= mesh.ways(dim.axes);
  return n;
}

Sharding unsplitDim(Sharding s, int64_t dim) {
  s.dims[dim] = DimSplit{};
  return s;
}

void claimAxes(DimSplit &split, SmallVectorImpl<int64_t> &used) {
  if (llvm::any_of(split.axes,
                   [&](int64_t axis) { return llvm::is_contained(used, axis); }))
    split = DimSplit{};
  llvm::append_range(used, split.axes);
}

FailureOr<Value> reshardTo(PartitionContext &context, Value original,
                           const Sharding &target, Operation *user) {
  return context.reshard(original, target, user);
}

namespace {

/// Among `candidates`, the sharding that splits the value over the most
/// ranks (the first on ties): the others are resharded to it.
Sharding dominant(ArrayRef<Sharding> candidates, const Mesh &mesh) {
  const Sharding *best = &candidates.front();
  for (const Sharding &s : candidates)
    if (splitWays(s, mesh) > splitWays(*best, mesh))
      best = &s;
  return *best;
}

/// Whether the op is linear in its partial operands, so that a pending sum
/// can flow through it: add/sub of operands pending over the same axes,
/// neg, a product or quotient with one pending factor (the numerator).
bool keepsPartial(Operation *op, PartitionContext &context) {
  // A pending sum that is already summed for another user is read summed:
  // carrying it further would sum it a second time later.
  for (Value operand : op->getOperands())
    if (context.isResolved(operand))
      return false;
  auto pendingSum = [&](Value v) {
    const Sharding &s = context.shardingOf(v);
    return s.isPartial() && s.kind == PartialKind::Sum;
  };
  // Keeping a sum pending over an axis that another operand splits would
  // gather that operand (the result cannot be split and pending over one
  // axis); finishing the sum is then the cheaper move (under sequence
  // parallelism it is the reduce-scatter onto the same split).
  SmallVector<int64_t> pendingAxes;
  for (Value operand : op->getOperands())
    llvm::append_range(pendingAxes, context.shardingOf(operand).partial);
  for (Value operand : op->getOperands()) {
    const Sharding &s = context.shardingOf(operand);
    if (s.isPartial())
      continue;
    for (int64_t axis : pendingAxes)
      if (s.dimOfAxis(axis) >= 0)
        return false;
  }
  auto complete = [&](Value v) { return !context.shardingOf(v).isPartial(); };
  if (isa<AddOp, SubOp>(op)) {
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    const PartitionPolicy &policy = context.policy();
    if (policy.scatterEachGradient &&
        llvm::is_contained(context.shardingOf(lhs).partial, policy.zeroAxis))
      return false;
    return pendingSum(lhs) && pendingSum(rhs) &&
           context.shardingOf(lhs).partial == context.shardingOf(rhs).partial;
  }
  if (isa<NegOp>(op))
    return pendingSum(op->getOperand(0));
  if (isa<MulOp>(op)) {
    Value lhs = op->getOperand(0), rhs = op->getOperand(1);
    return (pendingSum(lhs) && complete(rhs)) ||
           (complete(lhs) && pendingSum(rhs));
  }
  if (isa<DivOp>(op))
    return pendingSum(op->getOperand(0)) && complete(op->getOperand(1));
  return false;
}

} // namespace

LogicalResult partitionElementwise(Operation *op, PartitionContext &context) {
  bool keep = keepsPartial(op, context);
  SmallVector<Sharding> candidates;
  SmallVector<int64_t> partial;
  for (Value operand : op->getOperands()) {
    Sharding s = keep ? context.shardingOf(operand).complete()
                      : context.resolvedSharding(operand);
    if (keep && context.shardingOf(operand).isPartial())
      partial = context.shardingOf(operand).partial;
    candidates.push_back(s);
  }
  Sharding target = dominant(candidates, context.mesh());
  // A pending axis cannot also split the result.
  for (DimSplit &dim : target.dims)
    if (llvm::any_of(dim.axes, [&](int64_t axis) {
          return llvm::is_contained(partial, axis);
        }))
      dim = DimSplit{};
  SmallVector<Value> locals;
  for (Value operand : op->getOperands()) {
    Sharding want = target;
    if (keep && context.shardingOf(operand).isPartial())
      want.partial = partial;
    FailureOr<Value> local = reshardTo(context, operand, want, op);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  Sharding result = target;
  result.partial = partial;
  SmallVector<Sharding> results(op->getNumResults(), result);
  return context.cloneLocal(op, locals, results);
}

LogicalResult partitionReplicated(Operation *op, PartitionContext &context) {
  SmallVector<Value> locals;
  bool wasSplit = false;
  for (Value operand : op->getOperands()) {
    wasSplit |= !context.shardingOf(operand).isReplicated();
    FailureOr<Value> local = reshardTo(
        context, operand, Sharding::replicated(rankOf(operand)), op);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  if (wasSplit)
    op->emitWarning() << "has no sharding rule yet: its operands are "
                         "gathered and every rank computes it in full";
  SmallVector<Sharding> results;
  for (Value result : op->getResults())
    results.push_back(Sharding::replicated(rankOf(result)));
  return context.cloneLocal(op, locals, results);
}

namespace {

LogicalResult partitionBroadcast(BroadcastOp op, PartitionContext &context) {
  const Sharding &in = context.shardingOf(op.getInput());
  ArrayRef<int64_t> inShape = shapeOf(op.getInput());
  ArrayRef<int64_t> outShape = shapeOf(op.getResult());
  Sharding out = Sharding::replicated(outShape.size());
  out.partial = in.partial;
  out.kind = in.kind;
  Sharding inWant = in;
  for (auto [i, d] : llvm::enumerate(op.getDims())) {
    if (inShape[i] == outShape[d])
      out.dims[d] = in.dims[i];
    else
      inWant.dims[i] = DimSplit{};
  }
  FailureOr<Value> local = reshardTo(context, op.getInput(), inWant, op);
  if (failed(local))
    return failure();
  return context.cloneLocal(op, {*local}, {out});
}

LogicalResult partitionTranspose(TransposeOp op, PartitionContext &context) {
  const Sharding &in = context.shardingOf(op.getInput());
  Sharding out = in;
  for (auto [i, p] : llvm::enumerate(op.getPermutation()))
    out.dims[i] = in.dims[p];
  return context.cloneLocal(op, {context.localOf(op.getInput())}, {out});
}

/// Reshape: a split is a digit of the flattened index of a group of
/// dimensions whose sizes multiply to the same number on both sides. The
/// digit (stride P, extent E = size / groups, split n ways) lands in the
/// result dimension that holds its top P·E; it stays a contiguous split there
/// if n divides the part of the digit inside that dimension.
LogicalResult partitionReshape(ReshapeOp op, PartitionContext &context) {
  Value input = op.getInput();
  ArrayRef<int64_t> in = shapeOf(input);
  ArrayRef<int64_t> out = shapeOf(op.getResult());
  const Mesh &mesh = context.mesh();
  Sharding current = context.shardingOf(input);
  // Suffix products ("strides" within the whole shape) identify digits;
  // because both shapes have the same element count, a dimension's top is
  // comparable across the two shapes.
  auto suffix = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> stride(shape.size() + 1, 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i)
      stride[i] = stride[i + 1] * shape[i];
    return stride; // stride[i] = product of shape[i..]
  };
  SmallVector<int64_t> inTop = suffix(in), outTop = suffix(out);
  Sharding result = Sharding::replicated(out.size());
  result.partial = current.partial;
  result.kind = current.kind;
  Sharding inWant = current;
  for (auto [d, split] : llvm::enumerate(current.dims)) {
    if (!split.isSplit())
      continue;
    int64_t low = inTop[d + 1];                 // P
    int64_t extent = in[d] / split.groups;      // E
    int64_t top = low * extent;                 // P·E
    int64_t n = mesh.ways(split.axes);
    bool placed = false;
    for (size_t j = 0; j < out.size() && !placed; ++j) {
      int64_t q = outTop[j + 1], qTop = outTop[j];
      if (!(q < top && top <= qTop))
        continue;
      int64_t inside = top / std::max(low, q);
      if (inside % n != 0 || qTop % top != 0 || result.dims[j].isSplit())
        break;
      // A zigzag split stays one when its blocks' digit is inside dimension
      // j: the new block index then has the old one as its lowest digit,
      // and with an even block count the same parity.
      if (split.zigzag &&
          (qTop % inTop[d] != 0 || split.groups % 2 != 0))
        break;
      result.dims[j] = DimSplit{split.axes, qTop / top, split.zigzag};
      placed = true;
    }
    if (!placed)
      inWant.dims[d] = DimSplit{};
  }
  FailureOr<Value> local = reshardTo(context, input, inWant, op);
  if (failed(local))
    return failure();
  return context.cloneLocal(op, {*local}, {result});
}

LogicalResult partitionSlice(SliceOp op, PartitionContext &context) {
  Value input = op.getInput();
  ArrayRef<int64_t> in = shapeOf(input);
  ArrayRef<int64_t> starts = op.getStarts(), limits = op.getLimits();
  std::optional<ArrayRef<int64_t>> strides = op.getStrides();
  Sharding current = context.shardingOf(input);
  Sharding inWant = current;
  Sharding result = current;
  const Mesh &mesh = context.mesh();
  for (size_t d = 0; d < in.size(); ++d) {
    const DimSplit &split = current.dims[d];
    if (!split.isSplit())
      continue;
    int64_t stride = strides ? (*strides)[d] : 1;
    bool whole = starts[d] == 0 && limits[d] == in[d] && stride == 1;
    if (whole)
      continue;
    int64_t block = in[d] / split.groups;
    // A zigzag split's parts of a slice are not a zigzag split: gather.
    if (stride == 1 && !split.zigzag && starts[d] % block == 0 &&
        limits[d] % block == 0) {
      result.dims[d].groups = (limits[d] - starts[d]) / block;
      continue;
    }
    inWant.dims[d] = DimSplit{};
    result.dims[d] = DimSplit{};
  }
  FailureOr<Value> local = reshardTo(context, input, inWant, op);
  if (failed(local))
    return failure();
  // Local bounds: whole split dimensions stay whole; a block-aligned slice
  // of a blocked dimension takes the same blocks of each rank's chunk.
  SmallVector<int64_t> localStarts(starts), localLimits(limits);
  ArrayRef<int64_t> localIn = shapeOf(*local);
  for (size_t d = 0; d < in.size(); ++d) {
    const DimSplit &split = inWant.dims[d];
    if (!split.isSplit())
      continue;
    int64_t block = in[d] / split.groups;
    int64_t chunk = block / mesh.ways(split.axes);
    if (starts[d] == 0 && limits[d] == in[d]) {
      localLimits[d] = localIn[d];
      continue;
    }
    localStarts[d] = starts[d] / block * chunk;
    localLimits[d] = limits[d] / block * chunk;
  }
  FailureOr<RankedTensorType> type =
      context.localType(op.getType(), result, op);
  if (failed(type))
    return failure();
  OpBuilder &b = context.builder();
  auto local2 = SliceOp::create(b, op.getLoc(), *type, *local,
                                b.getDenseI64ArrayAttr(localStarts),
                                b.getDenseI64ArrayAttr(localLimits),
                                op.getStridesAttr());
  context.map(op.getResult(), local2, result);
  return success();
}

LogicalResult partitionConcat(ConcatOp op, PartitionContext &context) {
  int64_t k = static_cast<int64_t>(op.getDim());
  const Mesh &mesh = context.mesh();
  bool allPartial = true;
  SmallVector<int64_t> partial;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    const Sharding &s = context.shardingOf(input);
    if (i == 0)
      partial = s.partial;
    allPartial &= s.isPartial() && s.partial == partial &&
                  s.kind == PartialKind::Sum;
  }
  if (!allPartial)
    partial.clear();
  SmallVector<Sharding> candidates;
  for (Value input : op.getInputs())
    candidates.push_back(partial.empty()
                             ? context.resolvedSharding(input)
                             : context.shardingOf(input).complete());
  // The concatenated dimension: blocks of the first input split along it.
  DimSplit along;
  int64_t block = 0;
  for (auto [input, s] : llvm::zip(op.getInputs(), candidates)) {
    if (!s.dims[k].isSplit())
      continue;
    along = s.dims[k];
    block = shapeOf(input)[k] / along.groups;
    break;
  }
  if (along.zigzag)
    along = DimSplit{}; // Pieces of a zigzag split are gathered first.
  if (along.isSplit())
    for (Value input : op.getInputs())
      if (shapeOf(input)[k] % block != 0) {
        along = DimSplit{};
        break;
      }
  SmallVector<Sharding> others;
  for (Sharding s : candidates)
    others.push_back(unsplitDim(s, k));
  Sharding target = dominant(others, mesh);
  // The split along k must not reuse an axis of the other dims.
  for (int64_t axis : along.axes)
    if (target.dimOfAxis(axis) >= 0)
      along = DimSplit{};
  Sharding result = target;
  result.partial = partial;
  int64_t groups = 0;
  SmallVector<Value> locals;
  for (Value input : op.getInputs()) {
    Sharding want = target;
    want.partial = partial;
    if (along.isSplit()) {
      want.dims[k] = DimSplit{along.axes, shapeOf(input)[k] / block};
      groups += shapeOf(input)[k] / block;
    }
    FailureOr<Value> local = reshardTo(context, input, want, op);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  if (along.isSplit())
    result.dims[k] = DimSplit{along.axes, groups};
  return context.cloneLocal(op, locals, {result});
}

/// Reductions: a reduced dimension that is split leaves a pending sum (or
/// max) over its axes; a mean over split dimensions is the local mean
/// scaled by the local share.
template <typename ReduceT>
LogicalResult partitionReduce(ReduceT op, PartitionContext &context,
                              PartialKind kind) {
  Value input = op.getInput();
  bool linear = kind == PartialKind::Sum;
  const Sharding &s = context.shardingOf(input);
  bool keepPending = linear && s.isPartial() && s.kind == PartialKind::Sum;
  Sharding in = keepPending ? s : context.resolvedSharding(input);
  FailureOr<Value> local = reshardTo(context, input, in, op);
  if (failed(local))
    return failure();
  ArrayRef<int64_t> dims = op.getDims();
  bool keep = op.getKeepDims();
  Sharding result;
  result.partial = in.partial;
  result.kind = in.isPartial() ? in.kind : kind;
  int64_t ways = 1;
  for (auto [d, split] : llvm::enumerate(in.dims)) {
    if (llvm::is_contained(dims, static_cast<int64_t>(d))) {
      for (int64_t axis : split.axes)
        result.partial.push_back(axis);
      ways *= context.mesh().ways(split.axes);
      if (keep)
        result.dims.push_back(DimSplit{});
      continue;
    }
    result.dims.push_back(split);
  }
  llvm::sort(result.partial);
  if (!result.partial.empty() && !in.isPartial())
    result.kind = kind;
  if (failed(context.cloneLocal(op, {*local}, {result})))
    return failure();
  if (!std::is_same_v<ReduceT, ReduceMeanOp> || ways == 1)
    return success();
  // The global mean is the sum over ranks of local means / ways.
  Value mean = context.localOf(op.getResult());
  OpBuilder &b = context.builder();
  auto type = cast<RankedTensorType>(mean.getType());
  Value factor = makeConstant(
      b, op.getLoc(),
      DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(),
                                                  1.0 / ways)));
  Value scaled = MulOp::create(b, op.getLoc(), mean, factor);
  context.map(op.getResult(), scaled, result);
  return success();
}

LogicalResult partitionPrimitive(Operation *op, PartitionContext &context,
                                 bool &handled) {
  handled = true;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](BroadcastOp o) { return partitionBroadcast(o, context); })
      .Case([&](TransposeOp o) { return partitionTranspose(o, context); })
      .Case([&](ReshapeOp o) { return partitionReshape(o, context); })
      .Case([&](SliceOp o) { return partitionSlice(o, context); })
      .Case([&](ConcatOp o) { return partitionConcat(o, context); })
      .Case([&](ReduceSumOp o) {
        return partitionReduce(o, context, PartialKind::Sum);
      })
      .Case([&](ReduceMeanOp o) {
        return partitionReduce(o, context, PartialKind::Sum);
      })
      .Case([&](ReduceMaxOp o) {
        return partitionReduce(o, context, PartialKind::Max);
      })
      .Case<ConstantOp, IotaOp, LrScheduleOp>(
          [&](Operation *o) { return partitionReplicated(o, context); })
      .Default([&](Operation *) {
        handled = false;
        return success();
      });
}

} // namespace
} // namespace shardrules

LogicalResult partitionOp(Operation *op, PartitionContext &context) {
  using namespace shardrules;
  bool handled = false;
  if (failed(partitionPrimitive(op, context, handled)))
    return failure();
  if (handled)
    return success();
  if (failed(partitionComposite(op, context, handled)))
    return failure();
  if (handled)
    return success();
  if (op->hasTrait<OpTrait::Elementwise>())
    return partitionElementwise(op, context);
  return partitionReplicated(op, context);
}

} // namespace llmc
