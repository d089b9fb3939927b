//===- PartitionContext.cpp - values, shardings and resharding -------------===//
//
// Resharding moves a local value from one Sharding to another in three steps:
//   1. finish pending sums: reduce-scatter where the target splits a
//      dimension over the summed axis next, all-reduce for the others;
//   2. gather every dimension whose current split is not a prefix of the
//      target's (same groups, target axes start with the current ones) --
//      only its minor axes when the target's split is a prefix of it;
//   3. slice (no communication) the axes the target adds.
// Collectives that upstream defines on a leading dimension only in our
// runtime (all_gather, reduce_scatter) are applied to a view in which the
// split dimension comes first: a reshape when everything before it has size
// 1, else a transpose there and back, both visible in the IR.
//
//===----------------------------------------------------------------------===//

#include "sharding/PartitionContext.h"
#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "sharding/Communication.h"
#include "sharding/ShardRuleUtils.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace llmc {

namespace {

constexpr StringLiteral kGrid = "mesh";

RankedTensorType withShape(Value value, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(
      shape, cast<RankedTensorType>(value.getType()).getElementType());
}

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

SmallVector<int16_t> gridAxes(ArrayRef<int64_t> axes) {
  SmallVector<int16_t> out;
  for (int64_t axis : axes)
    out.push_back(static_cast<int16_t>(axis));
  return out;
}

shard::ReductionKind reductionOf(PartialKind kind) {
  return kind == PartialKind::Sum ? shard::ReductionKind::Sum
                                  : shard::ReductionKind::Max;
}

/// Whether `current` can become `target` by slicing only.
bool isPrefix(const DimSplit &current, const DimSplit &target) {
  if (!current.isSplit())
    return true;
  if (current.groups != target.groups ||
      current.axes.size() > target.axes.size())
    return false;
  // A zigzag split is reached from nothing or from itself only.
  if (current.zigzag || target.zigzag)
    return current == target;
  return llvm::equal(current.axes,
                     ArrayRef<int64_t>(target.axes).take_front(
                         current.axes.size()));
}

int64_t product(ArrayRef<int64_t> values) {
  int64_t n = 1;
  for (int64_t v : values)
    n *= v;
  return n;
}

/// "transformer.h.0.mlp.c_fc (backward)": where a value comes from.
std::string describe(Value value) {
  std::string part = modelPartOf(value.getLoc());
  if (part.empty())
    part = isa<BlockArgument>(value) ? "an argument" : "a value";
  return part + " (" + phaseName(phaseOf(value.getLoc())).str() + ")";
}

} // namespace

void PartitionContext::map(Value original, Value local,
                           const Sharding &sharding) {
  values_[original] = Entry{local, sharding};
}

const Sharding &PartitionContext::shardingOf(Value original) const {
  auto it = values_.find(original);
  assert(it != values_.end() && "value partitioned before its producer");
  return it->second.sharding;
}

Value PartitionContext::localOf(Value original) const {
  auto it = values_.find(original);
  assert(it != values_.end() && "value partitioned before its producer");
  return it->second.local;
}

FailureOr<RankedTensorType>
PartitionContext::localType(Type type, const Sharding &sharding,
                            Operation *where) const {
  auto tensor = cast<RankedTensorType>(type);
  FailureOr<SmallVector<int64_t>> local =
      sharding.localShape(tensor.getShape(), mesh_);
  if (failed(local))
    return where->emitOpError()
           << "cannot split a value of type " << type << " as "
           << sharding.text(mesh_)
           << ": a split does not divide its dimension";
  return RankedTensorType::get(*local, tensor.getElementType());
}

int64_t PartitionContext::zeroDim(ArrayRef<int64_t> shape,
                                  const Sharding &sharding) const {
  if (policy_.zeroAxis < 0)
    return -1;
  int64_t n = mesh_.sizes[policy_.zeroAxis];
  for (auto [d, size] : llvm::enumerate(shape)) {
    const DimSplit &split = sharding.dims[d];
    int64_t chunk = size / (split.groups * mesh_.ways(split.axes));
    if (size % (split.groups * mesh_.ways(split.axes)) == 0 && chunk % n == 0)
      return static_cast<int64_t>(d);
  }
  return -1;
}

void PartitionContext::tag(Operation *collective, Operation *user,
                           StringRef what, int64_t bytesPerRank) {
  std::string part = modelPartOf(user->getLoc());
  Phase phase = phaseOf(user->getLoc());
  std::string reason =
      llvm::formatv("{0}, for {1} ({2})", what, part.empty() ? "?" : part,
                    phaseName(phase))
          .str();
  MLIRContext *context = collective->getContext();
  collective->setAttr("llmc.reason", StringAttr::get(context, reason));
  // The same formula `llmc plan` sums (sharding/Communication.h).
  std::optional<CollectiveTraffic> traffic =
      collectiveTraffic(collective, mesh_);
  if (traffic)
    bytesPerRank = traffic->sentBytesPerRank;
  collective->setAttr("llmc.bytes_per_rank",
                      IntegerAttr::get(IntegerType::get(context, 64),
                                       bytesPerRank));
  collective->setLoc(user->getLoc());
}

Value PartitionContext::allReduce(Value local, ArrayRef<int64_t> axes,
                                  PartialKind kind, Operation *user,
                                  StringRef what) {
  auto op = shard::AllReduceOp::create(builder_, user->getLoc(),
                                       local.getType(), kGrid, gridAxes(axes),
                                       local, reductionOf(kind));
  int64_t n = mesh_.ways(axes);
  int64_t bytes = tensorBytes(local.getType());
  tag(op, user,
      llvm::formatv("{0}: {1} over {2}", what,
                    kind == PartialKind::Sum ? "sum" : "max",
                    mesh_.axesText(axes))
          .str(),
      2 * (n - 1) * bytes / n);
  return op.getResult();
}

Value PartitionContext::ringShift(Value local, int64_t axis, Operation *user,
                                  StringRef what) {
  auto op = shard::ShiftOp::create(
      builder_, user->getLoc(), local.getType(), kGrid,
      gridAxes({axis}), local, APInt(64, axis), /*offset=*/1,
      /*rotate=*/true);
  tag(op, user,
      llvm::formatv("{0}: ring shift over {1}", what, mesh_.names[axis]).str(),
      tensorBytes(local.getType()));
  return op.getResult();
}

namespace {
/// A view of `local` in which dimension `dim` (of `groups` blocks) is split
/// into [groups, chunk]; `axis` is the chunk's dimension in the view.
struct BlockView {
  SmallVector<int64_t> shape;
  int64_t axis;
};

BlockView blockView(ArrayRef<int64_t> local, int64_t dim, int64_t groups) {
  BlockView view;
  for (auto [i, size] : llvm::enumerate(local)) {
    if (static_cast<int64_t>(i) == dim && groups > 1) {
      view.shape.push_back(groups);
      view.shape.push_back(size / groups);
    } else {
      view.shape.push_back(size);
    }
  }
  view.axis = groups > 1 ? dim + 1 : dim;
  return view;
}

Value reshapeIfNeeded(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> shape) {
  if (shapeOf(value) == shape)
    return value;
  return ReshapeOp::create(b, loc, withShape(value, shape), value);
}

/// Moves dimension `axis` to the front (or back, when `inverse`).
Value moveAxis(OpBuilder &b, Location loc, Value value, int64_t axis,
               bool inverse) {
  int64_t rank = static_cast<int64_t>(shapeOf(value).size());
  SmallVector<int64_t> perm;
  if (!inverse) {
    perm.push_back(axis);
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        perm.push_back(i);
  } else {
    for (int64_t i = 1; i <= axis; ++i)
      perm.push_back(i);
    perm.push_back(0);
    for (int64_t i = axis + 1; i < rank; ++i)
      perm.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(shapeOf(value)[p]);
  return TransposeOp::create(b, loc, withShape(value, shape), value,
                             b.getDenseI64ArrayAttr(perm));
}

/// Runs `collective` on the view of `local` in which the chunk dimension
/// leads: `collective` maps the leading-dimension view to its result.
Value onLeadingAxis(OpBuilder &b, Location loc, Value local, int64_t dim,
                    int64_t groups,
                    llvm::function_ref<Value(Value, int64_t)> collective,
                    int64_t resultChunk) {
  SmallVector<int64_t> shape(shapeOf(local));
  BlockView view = blockView(shape, dim, groups);
  Value viewed = reshapeIfNeeded(b, loc, local, view.shape);
  bool leading = product(ArrayRef<int64_t>(view.shape).take_front(view.axis)) == 1;
  Value result;
  if (leading) {
    result = collective(viewed, view.axis);
  } else {
    Value front = moveAxis(b, loc, viewed, view.axis, /*inverse=*/false);
    result = moveAxis(b, loc, collective(front, 0), view.axis,
                      /*inverse=*/true);
  }
  shape[dim] = groups * resultChunk;
  return reshapeIfNeeded(b, loc, result, shape);
}

/// Reverses the order of the `n` chunks inside every odd-numbered block of
/// dimension `dim` (of `groups` blocks) of a value that holds the whole
/// dimension: the static permutation between a zigzag split's rank order
/// and the natural order (its own inverse). Slices and one concat, no
/// communication.
Value mirrorOddBlocks(OpBuilder &b, Location loc, Value value, int64_t dim,
                      int64_t groups, int64_t n) {
  SmallVector<int64_t> shape(shapeOf(value));
  int64_t chunk = shape[dim] / (groups * n);
  SmallVector<Value> pieces;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t i = 0; i < n; ++i) {
      int64_t source = g % 2 == 1 ? n - 1 - i : i;
      SmallVector<int64_t> starts(shape.size(), 0), limits(shape);
      starts[dim] = (g * n + source) * chunk;
      limits[dim] = starts[dim] + chunk;
      SmallVector<int64_t> pieceShape(shape);
      pieceShape[dim] = chunk;
      pieces.push_back(SliceOp::create(b, loc, withShape(value, pieceShape),
                                       value, b.getDenseI64ArrayAttr(starts),
                                       b.getDenseI64ArrayAttr(limits),
                                       nullptr));
    }
  return ConcatOp::create(b, loc, value.getType(), pieces,
                          b.getI64IntegerAttr(dim));
}
} // namespace

Value PartitionContext::gather(Value local, int64_t dim, const DimSplit &split,
                               Operation *user, StringRef what) {
  int64_t n = mesh_.ways(split.axes);
  int64_t chunk = shapeOf(local)[dim] / split.groups;
  Location loc = user->getLoc();
  Value gathered = onLeadingAxis(
      builder_, loc, local, dim, split.groups,
      [&](Value input, int64_t axis) {
        SmallVector<int64_t> out(shapeOf(input));
        out[axis] *= n;
        auto op = shard::AllGatherOp::create(
            builder_, loc, withShape(input, out), kGrid, gridAxes(split.axes),
            input, APInt(64, axis));
        int64_t bytes = tensorBytes(op.getType());
        tag(op, user,
            llvm::formatv("{0}: gather dim {1} over {2}", what, dim,
                          mesh_.axesText(split.axes))
                .str(),
            (n - 1) * bytes / n);
        return op.getResult();
      },
      chunk * n);
  // Rank order to natural order (context parallelism's sequence split).
  if (split.zigzag)
    gathered = mirrorOddBlocks(builder_, loc, gathered, dim, split.groups, n);
  return gathered;
}

Value PartitionContext::reduceScatter(Value local, int64_t dim,
                                      ArrayRef<int64_t> axes, int64_t groups,
                                      bool zigzag, PartialKind kind,
                                      Operation *user, StringRef what) {
  int64_t n = mesh_.ways(axes);
  int64_t chunk = shapeOf(local)[dim] / groups;
  Location loc = user->getLoc();
  if (zigzag)
    local = mirrorOddBlocks(builder_, loc, local, dim, groups, n);
  return onLeadingAxis(
      builder_, loc, local, dim, groups,
      [&](Value input, int64_t axis) {
        SmallVector<int64_t> out(shapeOf(input));
        out[axis] /= n;
        auto op = shard::ReduceScatterOp::create(
            builder_, loc, withShape(input, out), kGrid, gridAxes(axes), input,
            reductionOf(kind), APInt(64, axis));
        int64_t bytes = tensorBytes(input.getType());
        tag(op, user,
            llvm::formatv("{0}: {1} over {2}, scattered along dim {3}", what,
                          kind == PartialKind::Sum ? "sum" : "max",
                          mesh_.axesText(axes), dim)
                .str(),
            (n - 1) * bytes / n);
        return op.getResult();
      },
      chunk / n);
}

Value PartitionContext::allToAll(Value local, int64_t splitDim,
                                 int64_t concatDim, int64_t axis,
                                 Operation *user, StringRef what) {
  OpBuilder &b = builder_;
  Location loc = user->getLoc();
  int64_t n = mesh_.sizes[axis];
  SmallVector<int64_t> shape(shapeOf(local));
  int64_t rank = static_cast<int64_t>(shape.size());
  // 1. splitDim first: the runtime sends leading-dimension chunk j to rank j.
  Value front =
      product(ArrayRef<int64_t>(shape).take_front(splitDim)) == 1
          ? local
          : moveAxis(b, loc, local, splitDim, /*inverse=*/false);
  auto op = shard::AllToAllOp::create(b, loc, front.getType(), kGrid,
                                      gridAxes({axis}), front, APInt(64, 0),
                                      APInt(64, 0));
  tag(op, user,
      llvm::formatv("{0}: all-to-all over {1}, split dim {2}, concat dim {3}",
                    what, mesh_.axesText({axis}), splitDim, concatDim)
          .str(),
      (n - 1) * tensorBytes(local.getType()) / n);
  // 2. The received [N (source), S/N, rest...] laid out as the result:
  // dimension d of `local` is view dimension 1 (d = splitDim) or 2 + its
  // position among the others; the source axis goes just before concatDim.
  SmallVector<int64_t> view = {n, shape[splitDim] / n};
  for (int64_t d = 0; d < rank; ++d)
    if (d != splitDim)
      view.push_back(shape[d]);
  Value received = reshapeIfNeeded(b, loc, op.getResult(), view);
  SmallVector<int64_t> perm, permuted;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == concatDim)
      perm.push_back(0);
    perm.push_back(d == splitDim ? 1 : 2 + (d < splitDim ? d : d - 1));
  }
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm)) {
    identity &= static_cast<int64_t>(i) == p;
    permuted.push_back(view[p]);
  }
  if (!identity)
    received = TransposeOp::create(b, loc, withShape(received, permuted),
                                   received, b.getDenseI64ArrayAttr(perm));
  SmallVector<int64_t> out(shape);
  out[splitDim] /= n;
  out[concatDim] *= n;
  return reshapeIfNeeded(b, loc, received, out);
}

Value PartitionContext::slice(Value local, int64_t dim, ArrayRef<int64_t> axes,
                              int64_t groups, bool zigzag) {
  Location loc = local.getLoc();
  if (zigzag)
    local = mirrorOddBlocks(builder_, loc, local, dim, groups, mesh_.ways(axes));
  SmallVector<int64_t> shape(shapeOf(local));
  BlockView view = blockView(shape, dim, groups);
  Value viewed = reshapeIfNeeded(builder_, loc, local, view.shape);
  SmallVector<int64_t> out(view.shape);
  out[view.axis] /= mesh_.ways(axes);
  Value sliced = shard::AllSliceOp::create(builder_, loc, withShape(viewed, out),
                                           viewed, kGrid, gridAxes(axes),
                                           view.axis);
  shape[dim] /= mesh_.ways(axes);
  return reshapeIfNeeded(builder_, loc, sliced, shape);
}

FailureOr<Value> PartitionContext::reshardLocal(Value local, Sharding current,
                                                const Sharding &target,
                                                ArrayRef<int64_t> global,
                                                Operation *user,
                                                StringRef what) {
  if (current == target)
    return local;
  // The target must be reachable: its own pending sums must already be
  // pending here, of the same kind.
  for (int64_t axis : target.partial)
    if (!llvm::is_contained(current.partial, axis) ||
        current.kind != target.kind)
      return user->emitOpError()
             << "internal partitioner error: cannot make a value partial ("
             << current.text(mesh_) << " -> " << target.text(mesh_) << ")";
  // 1. Pending sums.
  SmallVector<int64_t> reduceAll, scatter;
  for (int64_t axis : current.partial) {
    if (llvm::is_contained(target.partial, axis))
      continue;
    int64_t d = target.dimOfAxis(axis);
    bool next = d >= 0 && isPrefix(current.dims[d], target.dims[d]) &&
                target.dims[d].axes.size() > current.dims[d].axes.size() &&
                target.dims[d].axes[current.dims[d].axes.size()] == axis;
    (next ? scatter : reduceAll).push_back(axis);
  }
  if (!reduceAll.empty())
    local = allReduce(local, reduceAll, current.kind, user, what);
  for (int64_t axis : scatter) {
    int64_t d = target.dimOfAxis(axis);
    int64_t groups = target.dims[d].groups;
    bool zigzag = target.dims[d].zigzag;
    if (!current.dims[d].isSplit()) {
      current.dims[d].groups = groups;
      current.dims[d].zigzag = zigzag;
    }
    local = reduceScatter(local, d, {axis}, groups, zigzag, current.kind, user,
                          what);
    current.dims[d].axes.push_back(axis);
  }
  current.partial = target.partial;
  // 2. Gathers. When the target keeps the major axes of a split, only the
  // minor ones are gathered: [ep, dp] -> [ep] is a gather over dp (a ZeRO
  // shard of an expert-parallel weight), each ep chunk being its dp chunks
  // in order.
  for (auto [d, split] : llvm::enumerate(current.dims)) {
    const DimSplit &want = target.dims[d];
    if (isPrefix(split, want))
      continue;
    if (want.isSplit() && isPrefix(want, split)) {
      DimSplit minor{SmallVector<int64_t>(ArrayRef<int64_t>(split.axes)
                                              .drop_front(want.axes.size())),
                     split.groups};
      local = gather(local, static_cast<int64_t>(d), minor, user, what);
      split = want;
      continue;
    }
    local = gather(local, static_cast<int64_t>(d), split, user, what);
    split = DimSplit{};
  }
  // 3. Slices.
  for (auto [d, split] : llvm::enumerate(current.dims)) {
    const DimSplit &want = target.dims[d];
    if (split.axes.size() == want.axes.size())
      continue;
    ArrayRef<int64_t> extra =
        ArrayRef<int64_t>(want.axes).drop_front(split.axes.size());
    if (global[d] % (want.groups * mesh_.ways(want.axes)) != 0)
      return user->emitOpError()
             << "dimension " << d << " of size " << global[d]
             << " cannot be split " << want.groups << " x "
             << mesh_.ways(want.axes) << " ways (" << target.text(mesh_)
             << ")";
    local = slice(local, static_cast<int64_t>(d), extra, want.groups,
                  want.zigzag);
    split = want;
  }
  return local;
}

Sharding PartitionContext::resolvedSharding(Value original) {
  const Sharding &current = shardingOf(original);
  Sharding target = current.complete();
  if (!current.isPartial())
    return target;
  ArrayRef<int64_t> shape = shapeOf(original);
  for (int64_t axis : current.partial) {
    if (axis == policy_.zeroAxis && current.kind == PartialKind::Sum) {
      int64_t d = zeroDim(shape, target);
      if (d >= 0)
        target.dims[d].axes.push_back(axis);
    } else if (axis == policy_.sequenceAxis &&
               current.kind == PartialKind::Sum && shape.size() == 3 &&
               !target.dims[1].isSplit() &&
               shape[1] % mesh_.sizes[axis] == 0) {
      target.dims[1].axes.push_back(axis);
    }
  }
  return target;
}

FailureOr<Value> PartitionContext::resolve(Value original, Operation *user) {
  if (!shardingOf(original).isPartial())
    return localOf(original);
  auto cached = resolved_.find(original);
  if (cached != resolved_.end())
    return cached->second.local;
  Sharding target = resolvedSharding(original);
  std::string what = "pending " + describe(original);
  FailureOr<Value> local =
      reshardLocal(localOf(original), shardingOf(original), target,
                   shapeOf(original), user, what);
  if (failed(local))
    return failure();
  resolved_[original] = Entry{*local, target};
  return *local;
}

FailureOr<Value> PartitionContext::reshard(Value original,
                                           const Sharding &target,
                                           Operation *user) {
  const Sharding &current = shardingOf(original);
  if (current == target)
    return localOf(original);
  Location loc = user->getLoc();
  // A splat or a broadcast is rebuilt at the target's local shape from its
  // (small) input rather than materialized, moved and sliced: a ZeRO-3 bias
  // is gathered as [C], not as the [B, T, C] it is broadcast to.
  if (!target.isPartial()) {
    Operation *producer = original.getDefiningOp();
    if (auto constant = dyn_cast_or_null<ConstantOp>(producer)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (dense && dense.isSplat()) {
        FailureOr<RankedTensorType> type =
            localType(original.getType(), target, user);
        if (failed(type))
          return failure();
        return shardrules::makeConstant(builder_, loc,
                                        dense.resizeSplat(*type));
      }
    }
    // An iota along a dimension the target keeps whole is the same iota at
    // the local shape (the class ids of a loss under dp or cp): built, not
    // computed whole and sliced.
    if (auto iota = dyn_cast_or_null<IotaOp>(producer);
        iota && !current.isPartial() &&
        !target.dims[iota.getDim()].isSplit()) {
      FailureOr<RankedTensorType> type =
          localType(original.getType(), target, user);
      if (failed(type))
        return failure();
      return IotaOp::create(builder_, loc, *type, iota.getDim()).getResult();
    }
    if (auto broadcast = dyn_cast_or_null<BroadcastOp>(producer);
        broadcast && !current.isPartial()) {
      Value input = broadcast.getInput();
      ArrayRef<int64_t> inShape = shapeOf(input);
      ArrayRef<int64_t> outShape = shapeOf(original);
      Sharding inTarget = Sharding::replicated(inShape.size());
      for (auto [i, d] : llvm::enumerate(broadcast.getDims()))
        if (inShape[i] == outShape[d])
          inTarget.dims[i] = target.dims[d];
      FailureOr<Value> inLocal = reshard(input, inTarget, user);
      FailureOr<RankedTensorType> type =
          localType(original.getType(), target, user);
      if (failed(inLocal) || failed(type))
        return failure();
      return BroadcastOp::create(builder_, loc, *type, *inLocal,
                                 broadcast.getDimsAttr())
          .getResult();
    }
  }
  // Sequence parallelism: a value gathered along the sequence once is read
  // gathered by its later users (the weight gradients of the backward read
  // the forward's gathered activation and the gathered cotangent of the
  // input gradient); one gather per tp region and direction.
  bool cacheable = isSequenceGather(current, target);
  if (cacheable) {
    for (Entry entry : gathered_.lookup(original))
      if (entry.sharding == target &&
          entry.local.getParentBlock() == builder_.getInsertionBlock())
        return entry.local;
    // A reshape or a sum over whole dimensions, gathered whole, is the same
    // op on its gathered input: the weight gradients' [B·T, C] view of an
    // activation the forward gathered as [B, T, C], and the position
    // embedding's gradient (the cotangent summed over the batch), computed
    // from the cotangent the token embedding's vocabulary-parallel gradient
    // gathers anyway (B times the bytes of gathering the sum, but the same
    // gather: one fewer collective, no more bytes in all).
    Operation *producer = original.getDefiningOp();
    if (producer && isa<ReshapeOp, ReduceSumOp>(producer) &&
        target.isReplicated()) {
      Value input = producer->getOperand(0);
      Sharding whole = Sharding::replicated(shapeOf(input).size());
      if (isSequenceGather(shardingOf(input), whole)) {
        FailureOr<Value> inLocal = reshard(input, whole, user);
        if (failed(inLocal))
          return failure();
        IRMapping mapping;
        mapping.map(input, *inLocal);
        Value local = builder_.clone(*producer, mapping)->getResult(0);
        gathered_[original].push_back(Entry{local, target});
        return local;
      }
    }
  }
  Value local = localOf(original);
  Sharding from = current;
  if (current.isPartial() && target.partial.empty()) {
    // Resolve once, the policy's way, unless the target wants exactly a
    // split that a reduce-scatter gives directly.
    Sharding resolved = resolvedSharding(original);
    FailureOr<Value> done = resolve(original, user);
    if (failed(done))
      return failure();
    local = *done;
    from = resolved;
  }
  std::string what = "value of " + describe(original);
  FailureOr<Value> moved =
      reshardLocal(local, from, target, shapeOf(original), user, what);
  if (succeeded(moved) && cacheable)
    gathered_[original].push_back(Entry{*moved, target});
  return moved;
}

bool PartitionContext::isSequenceGather(const Sharding &current,
                                        const Sharding &target) const {
  int64_t seq = policy_.sequenceAxis;
  if (seq < 0 || current.isPartial() || target.isPartial() || current == target)
    return false;
  // Only splits over the sequence axis are dropped; anything else (a ZeRO
  // weight's dp split, gathered again for the backward so that the whole
  // weight does not live through the step) is not kept.
  for (auto [have, want] : llvm::zip(current.dims, target.dims))
    if (have != want &&
        (want.isSplit() || have.axes.size() != 1 || have.axes[0] != seq))
      return false;
  return true;
}

LogicalResult PartitionContext::cloneLocal(Operation *op, ValueRange operands,
                                           ArrayRef<Sharding> results) {
  SmallVector<Type> types;
  for (auto [result, sharding] : llvm::zip(op->getResults(), results)) {
    FailureOr<RankedTensorType> type =
        localType(result.getType(), sharding, op);
    if (failed(type))
      return failure();
    types.push_back(*type);
  }
  IRMapping mapping;
  for (auto [original, local] : llvm::zip(op->getOperands(), operands))
    mapping.map(original, local);
  Operation *clone = builder_.clone(*op, mapping);
  for (auto [result, type] : llvm::zip(clone->getResults(), types))
    result.setType(type);
  for (auto [result, local, sharding] :
       llvm::zip(op->getResults(), clone->getResults(), results))
    map(result, local, sharding);
  return success();
}

Value PartitionContext::axisOffset(Location loc, ArrayRef<int64_t> axes,
                                   int64_t stride, Type element) {
  return AxisOffsetOp::create(builder_, loc,
                              RankedTensorType::get({}, element),
                              builder_.getDenseI64ArrayAttr(axes),
                              builder_.getI64IntegerAttr(stride));
}

} // namespace llmc
