//===- ShardRulesRing.cpp - context parallelism: ring attention, positions -===//
//
// The sharding rules of ops whose sequence dimension is split over the
// context-parallel mesh axis `cp` (docs/sharding.md, "Context parallelism"):
// llmc.attention and llmc.attention_grad become ring attention, llmc.rope
// gets each rank's global positions. Everything else on the sequence is per
// token and is handled by the common rules.
//
// Ring attention, per rank (n ranks on the ring, rank p):
//   forward   K, V and their global positions travel around the ring
//             (shard.shift by +1, n - 1 times); at step s the rank holds the
//             block of rank p - s and computes its local queries against it,
//             masked by GLOBAL positions (key position <= query position),
//             and combines the partial results by online softmax (running
//             row max m, row sum l and the unnormalized output).
//   backward  the same ring with the forward's log-sum-exp L = m + log l
//             (left by the forward rule in PartitionContext::carried):
//             P = exp(S - L), dV += P^T dO, dS = P (dO V^T - delta),
//             dQ += dS K scale, dK += dS^T Q scale; dK and dV travel with
//             their block and take one more step to return to its owner.
// Blocks are computed densely with primitives (matmul, exp, select, ...),
// so every block costs the same: the zigzag split balances the causal work
// of a kernel that skips masked tiles, which these primitives do not do yet.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/VjpHelpers.h"
#include "sharding/ShardRuleUtils.h"

#include <cmath>

using namespace mlir;

namespace llmc::shardrules {

namespace {

/// The context-parallel split of a sequence dimension: one mesh axis named
/// "cp" (the ring), or an unsplit DimSplit.
DimSplit ringSplit(const Mesh &mesh, const DimSplit &split) {
  if (split.axes.size() != 1 || mesh.names[split.axes[0]] != "cp")
    return DimSplit{};
  return split;
}

struct RingShapes {
  int64_t batch, kvHeads, group, seq, headDim;
};

RingShapes ringShapes(Value q, Value k) {
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k);
  return {qs[0], ks[1], qs[1] / ks[1], qs[2], qs[3]};
}

/// The causal mask of one block, [B, Hkv, g·T, T] (i1): key position <= query
/// position, from the global positions of the local queries (`qRows`, [g·T])
/// and of the visiting keys (`kpos`, [T]).
Value blockMask(OpBuilder &b, Location loc, const RingShapes &s, Value qRows,
                Value kpos) {
  Type i32 = b.getI32Type();
  auto plane = RankedTensorType::get({s.group * s.seq, s.seq}, i32);
  Value keys = BroadcastOp::create(b, loc, plane, kpos, ArrayRef<int64_t>{1});
  Value queries =
      BroadcastOp::create(b, loc, plane, qRows, ArrayRef<int64_t>{0});
  Value mask = vjp::compare(b, loc, CompareDirection::le, keys, queries);
  auto full = RankedTensorType::get(
      {s.batch, s.kvHeads, s.group * s.seq, s.seq}, b.getI1Type());
  return BroadcastOp::create(b, loc, full, mask, ArrayRef<int64_t>{2, 3});
}

/// [B, Hkv, g·T, 1] -> [B, Hkv, g·T, W]
Value widenRows(OpBuilder &b, Location loc, Value rows, int64_t width) {
  SmallVector<int64_t> shape(shapeOf(rows));
  shape.back() = width;
  return BroadcastOp::create(
      b, loc,
      RankedTensorType::get(shape, vjp::tensorType(rows).getElementType()),
      rows, ArrayRef<int64_t>{0, 1, 2, 3});
}

Value rowReduce(OpBuilder &b, Location loc, Value x, bool max) {
  SmallVector<int64_t> shape(shapeOf(x));
  shape.back() = 1;
  auto type = RankedTensorType::get(shape, vjp::tensorType(x).getElementType());
  auto dims = b.getDenseI64ArrayAttr({static_cast<int64_t>(shape.size()) - 1});
  if (max)
    return ReduceMaxOp::create(b, loc, type, x, dims, b.getUnitAttr());
  return ReduceSumOp::create(b, loc, type, x, dims, b.getUnitAttr());
}

/// The scores of one block, q [B, Hkv, g·T, D] against k [B, Hkv, T, D]:
/// (q k^T) · scale.
Value scores(OpBuilder &b, Location loc, Value q, Value k, double scale) {
  return vjp::scale(b, loc, vjp::matmul(b, loc, q, k, false, true), scale);
}

/// Where the mask holds `value`, else zero.
Value masked(OpBuilder &b, Location loc, Value mask, Value value) {
  if (!mask)
    return value;
  return SelectOp::create(b, loc, value.getType(), mask, value,
                          vjp::zerosLike(b, loc, value));
}

/// The query rows' positions repeated for the g query heads of a group.
Value groupRows(OpBuilder &b, Location loc, const RingShapes &s, Value qpos) {
  auto grid = RankedTensorType::get({s.group, s.seq}, b.getI32Type());
  Value rows = BroadcastOp::create(b, loc, grid, qpos, ArrayRef<int64_t>{1});
  return vjp::reshapeTo(b, loc, rows, {s.group * s.seq});
}

double scaleOf(Value query, std::optional<APFloat> scale) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(shapeOf(query).back()));
}

/// The shardings ring attention takes: the query's batch and head splits
/// (attention's usual), and the sequence split over cp on q, k and v alike.
void ringShardings(PartitionContext &context, Value query, Value key,
                   const DimSplit &seq, Sharding &q, Sharding &kv) {
  q = context.resolvedSharding(query);
  q.dims[3] = DimSplit{};
  if (q.dims[1].groups != 1)
    q.dims[1] = DimSplit{};
  int64_t kvHeads = shapeOf(key)[1];
  if (q.dims[1].isSplit() &&
      kvHeads % context.mesh().ways(q.dims[1].axes) != 0)
    q.dims[1] = DimSplit{};
  q.dims[2] = seq;
  kv = Sharding::replicated(4);
  kv.dims[0] = q.dims[0];
  kv.dims[1] = q.dims[1];
  kv.dims[2] = seq;
}

FailureOr<SmallVector<Value>> localOperands(PartitionContext &context,
                                            Operation *op,
                                            ArrayRef<Value> values,
                                            ArrayRef<Sharding> wants) {
  SmallVector<Value> locals;
  for (auto [value, want] : llvm::zip(values, wants)) {
    FailureOr<Value> local = reshardTo(context, value, want, op);
    if (failed(local))
      return failure();
    locals.push_back(*local);
  }
  return locals;
}

} // namespace

Sharding lseSharding(const Sharding &query) {
  Sharding lse = Sharding::replicated(3);
  for (int64_t d = 0; d < 3; ++d)
    lse.dims[d] = query.dims[d];
  return lse;
}

DimSplit contextParallelSplit(PartitionContext &context, Value sequenceOf,
                              int64_t dim) {
  return ringSplit(context.mesh(),
                   context.resolvedSharding(sequenceOf).dims[dim]);
}

Value localPositions(PartitionContext &context, Location loc, int64_t global,
                     const DimSplit &split) {
  OpBuilder &b = context.builder();
  const Mesh &mesh = context.mesh();
  int64_t n = mesh.ways(split.axes);
  int64_t groups = split.groups;
  int64_t chunk = global / (groups * n);
  int64_t local = global / n;
  // position[j] = base[j] + sign[j] · (p · chunk), p the rank's position
  // along the axes: block g holds chunk p, or chunk n - 1 - p in the odd
  // blocks of a zigzag split.
  SmallVector<int32_t> base, sign;
  for (int64_t j = 0; j < local; ++j) {
    int64_t g = j / chunk, i = j % chunk;
    bool reversed = split.zigzag && g % 2 == 1;
    base.push_back(static_cast<int32_t>(g * (global / groups) +
                                        (reversed ? (n - 1) * chunk : 0) + i));
    sign.push_back(reversed ? -1 : 1);
  }
  auto type = RankedTensorType::get({local}, b.getI32Type());
  Value offset = context.axisOffset(loc, split.axes, chunk, b.getI32Type());
  Value spread = BroadcastOp::create(b, loc, type, offset, ArrayRef<int64_t>{});
  Value signs = makeConstant(
      b, loc, DenseElementsAttr::get(type, ArrayRef<int32_t>(sign)));
  Value bases = makeConstant(
      b, loc, DenseElementsAttr::get(type, ArrayRef<int32_t>(base)));
  return AddOp::create(b, loc, bases, MulOp::create(b, loc, signs, spread));
}

LogicalResult partitionRingAttention(AttentionOp op, PartitionContext &context,
                                     const DimSplit &seq) {
  Sharding q, kv;
  ringShardings(context, op.getQuery(), op.getKey(), seq, q, kv);
  FailureOr<SmallVector<Value>> locals = localOperands(
      context, op, {op.getQuery(), op.getKey(), op.getValue()}, {q, kv, kv});
  if (failed(locals))
    return failure();
  OpBuilder &b = context.builder();
  Location loc = op.getLoc();
  int64_t axis = seq.axes[0];
  int64_t n = context.mesh().sizes[axis];
  Type compute = vjp::computeType(b, *locals);
  Value lq = vjp::castTo(b, loc, (*locals)[0], compute);
  Value k = vjp::castTo(b, loc, (*locals)[1], compute);
  Value v = vjp::castTo(b, loc, (*locals)[2], compute);
  RingShapes s = ringShapes(lq, k);
  double scale = scaleOf(op.getQuery(), op.getScale());
  Value qg = vjp::reshapeTo(b, loc, lq,
                            {s.batch, s.kvHeads, s.group * s.seq, s.headDim});
  int64_t global = shapeOf(op.getQuery())[2];
  Value qpos = localPositions(context, loc, global, seq);
  Value qRows = groupRows(b, loc, s, qpos);
  Value kpos = qpos;
  Value m, l, acc;
  for (int64_t step = 0; step < n; ++step) {
    if (step > 0) {
      std::string what = "ring attention forward step " +
                         std::to_string(step) + " of " + std::to_string(n - 1);
      k = context.ringShift(k, axis, op, "keys, " + what);
      v = context.ringShift(v, axis, op, "values, " + what);
      kpos = context.ringShift(kpos, axis, op, "key positions, " + what);
    }
    Value mask = op.getCausal() ? blockMask(b, loc, s, qRows, kpos) : Value();
    Value sc = scores(b, loc, qg, k, scale);
    // Masked scores are -1e30, not -inf: a row with no visible key in this
    // block then has max -1e30 and its terms are zeroed by `masked`.
    Value floor = vjp::splat(b, loc, vjp::tensorType(sc), -1.0e30);
    Value visible =
        mask ? SelectOp::create(b, loc, sc.getType(), mask, sc, floor)
                   .getResult()
             : sc;
    Value blockMax = rowReduce(b, loc, visible, /*max=*/true);
    Value newMax = step == 0 ? blockMax : MaxOp::create(b, loc, m, blockMax);
    Value p = masked(b, loc, mask,
                     ExpOp::create(b, loc,
                                   SubOp::create(b, loc, sc,
                                                 widenRows(b, loc, newMax,
                                                           s.seq))));
    Value blockSum = rowReduce(b, loc, p, /*max=*/false);
    Value pv = vjp::matmul(b, loc, p, v, false, false);
    if (step == 0) {
      l = blockSum;
      acc = pv;
    } else {
      // Rescale what was summed under the old max.
      Value alpha = ExpOp::create(b, loc, SubOp::create(b, loc, m, newMax));
      l = AddOp::create(b, loc, MulOp::create(b, loc, l, alpha), blockSum);
      acc = AddOp::create(
          b, loc, MulOp::create(b, loc, acc, widenRows(b, loc, alpha, s.headDim)),
          pv);
    }
    m = newMax;
  }
  // The first block is the rank's own: every row sees its diagonal, so l > 0.
  Value out = DivOp::create(b, loc, acc, widenRows(b, loc, l, s.headDim));
  Value lse = AddOp::create(b, loc, m, LogOp::create(b, loc, l));
  context.setCarried(op, lse);
  Value result = vjp::reshapeTo(b, loc, out, shapeOf((*locals)[0]));
  result = vjp::castTo(b, loc, result,
                       vjp::tensorType((*locals)[0]).getElementType());
  context.map(op.getResult(), result, q);
  if (op.getLse()) {
    // The rows' log-sum-exp as the op's result ([B, Hq, T] local, f32).
    Value rows = vjp::reshapeTo(b, loc, lse, shapeOf((*locals)[0]).drop_back());
    context.map(op.getLse(), vjp::castTo(b, loc, rows, b.getF32Type()),
                lseSharding(q));
  }
  return success();
}

LogicalResult partitionRingAttentionGrad(AttentionGradOp op,
                                         PartitionContext &context,
                                         const DimSplit &seq) {
  // The forward's log-sum-exp: its attention op made `out`.
  auto forward = op.getOut().getDefiningOp<AttentionOp>();
  Value lse = forward ? context.carried(forward) : Value();
  if (!lse)
    return op.emitOpError()
           << "ring attention backward needs the log-sum-exp of its forward "
              "llmc.attention (the op that computes its 'out' operand); "
              "TODO(#10): recompute it when the forward is not in the program";
  Sharding q, kv;
  ringShardings(context, op.getQuery(), op.getKey(), seq, q, kv);
  FailureOr<SmallVector<Value>> locals = localOperands(
      context, op,
      {op.getQuery(), op.getKey(), op.getValue(), op.getOut(), op.getDout()},
      {q, kv, kv, q, q});
  if (failed(locals))
    return failure();
  OpBuilder &b = context.builder();
  Location loc = op.getLoc();
  int64_t axis = seq.axes[0];
  int64_t n = context.mesh().sizes[axis];
  Type compute = vjp::computeType(b, *locals);
  SmallVector<Value> wide;
  for (Value local : *locals)
    wide.push_back(vjp::castTo(b, loc, local, compute));
  Value k = wide[1], v = wide[2];
  RingShapes s = ringShapes(wide[0], k);
  SmallVector<int64_t> rows = {s.batch, s.kvHeads, s.group * s.seq, s.headDim};
  Value qg = vjp::reshapeTo(b, loc, wide[0], rows);
  Value og = vjp::reshapeTo(b, loc, wide[3], rows);
  Value dog = vjp::reshapeTo(b, loc, wide[4], rows);
  double scale = scaleOf(op.getQuery(), op.getScale());
  int64_t global = shapeOf(op.getQuery())[2];
  Value qpos = localPositions(context, loc, global, seq);
  Value qRows = groupRows(b, loc, s, qpos);
  Value kpos = qpos;
  // delta = rowsum(dO * O): the softmax's correction term, per query row.
  Value delta = widenRows(
      b, loc, rowReduce(b, loc, MulOp::create(b, loc, dog, og), false), s.seq);
  Value lseWide = widenRows(b, loc, lse, s.seq);
  Value dq, dk, dv;
  for (int64_t step = 0; step < n; ++step) {
    if (step > 0) {
      std::string what = "ring attention backward step " +
                         std::to_string(step) + " of " + std::to_string(n - 1);
      k = context.ringShift(k, axis, op, "keys, " + what);
      v = context.ringShift(v, axis, op, "values, " + what);
      kpos = context.ringShift(kpos, axis, op, "key positions, " + what);
      dk = context.ringShift(dk, axis, op,
                             "partial key gradients, " + what);
      dv = context.ringShift(dv, axis, op,
                             "partial value gradients, " + what);
    }
    Value mask = op.getCausal() ? blockMask(b, loc, s, qRows, kpos) : Value();
    Value p = masked(
        b, loc, mask,
        ExpOp::create(b, loc,
                      SubOp::create(b, loc, scores(b, loc, qg, k, scale),
                                    lseWide)));
    Value dvBlock = vjp::matmul(b, loc, p, dog, true, false);
    Value dp = vjp::matmul(b, loc, dog, v, false, true);
    Value ds = MulOp::create(b, loc, p, SubOp::create(b, loc, dp, delta));
    Value dqBlock = vjp::scale(b, loc, vjp::matmul(b, loc, ds, k, false, false),
                               scale);
    Value dkBlock = vjp::scale(b, loc, vjp::matmul(b, loc, ds, qg, true, false),
                               scale);
    if (step == 0) {
      dq = dqBlock;
      dk = dkBlock;
      dv = dvBlock;
    } else {
      dq = AddOp::create(b, loc, dq, dqBlock);
      dk = AddOp::create(b, loc, dk, dkBlock);
      dv = AddOp::create(b, loc, dv, dvBlock);
    }
  }
  // After n - 1 steps rank p holds the gradients of rank p + 1's block: one
  // more step home.
  std::string home = "ring attention backward: return to the owner";
  dk = context.ringShift(dk, axis, op, "key gradients, " + home);
  dv = context.ringShift(dv, axis, op, "value gradients, " + home);
  auto back = [&](Value value, Value like) {
    Value shaped = vjp::reshapeTo(b, loc, value, shapeOf(like));
    return vjp::castTo(b, loc, shaped, vjp::tensorType(like).getElementType());
  };
  context.map(op.getDquery(), back(dq, (*locals)[0]), q);
  context.map(op.getDkey(), back(dk, (*locals)[1]), kv);
  context.map(op.getDvalue(), back(dv, (*locals)[2]), kv);
  return success();
}

LogicalResult partitionRingRope(RopeOp op, PartitionContext &context,
                                const DimSplit &seq) {
  Value input = op.getInput();
  int64_t r = rankOf(input);
  Sharding want = context.resolvedSharding(input);
  want.dims[r - 1] = DimSplit{};
  want.dims[r - 2] = seq;
  FailureOr<Value> x = reshardTo(context, input, want, op);
  if (failed(x))
    return failure();
  Value positions;
  if (Value given = op.getPositions()) {
    Sharding split = Sharding::replicated(1);
    split.dims[0] = seq;
    FailureOr<Value> local = reshardTo(context, given, split, op);
    if (failed(local))
      return failure();
    positions = *local;
  } else {
    positions = localPositions(context, op.getLoc(), shapeOf(input)[r - 2], seq);
  }
  OpBuilder &b = context.builder();
  auto type = vjp::tensorType(*x);
  if (vjp::tensorType(positions).getElementType() != b.getI32Type() &&
      vjp::tensorType(positions).getElementType() != b.getI64Type())
    return op.emitOpError() << "expected integer positions";
  Value result =
      RopeOp::create(b, op.getLoc(), type, *x, positions, op.getThetaAttr(),
                     op.getInvFreqAttr());
  context.map(op.getResult(), result, want);
  return success();
}

} // namespace llmc::shardrules
