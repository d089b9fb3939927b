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
//             block of rank p - s, and llmc.attention_block computes its
//             local queries against it, masked by GLOBAL positions (key
//             position <= query position), returning the block's output and
//             its rows' log-sum-exp; the blocks merge by log-sum-exp
//             (elementwise primitives on [B, Hq, T/n(, D)]).
//   backward  the same ring with the merged out and log-sum-exp L:
//             llmc.attention_block_grad gives each block's dQ, dK, dV with
//             P = exp(S - L); dQ sums on the rank, dK and dV travel with
//             their block and take one more step to return to its owner.
// The blocks run flash kernels (no [T/n, T/n] score block is stored) that
// skip the tiles whose keys all come after their queries: the zigzag split
// makes every block half visible, so every rank does the same work.
//
//===----------------------------------------------------------------------===//
#include "ir/LlmcOps.h"
#include "ir/VjpHelpers.h"
#include "sharding/ShardRuleUtils.h"

#include <cmath>
#include <string>

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

/// [B, Hq, T] -> [B, Hq, T, D] of `element`: a row's weight for every
/// column of its output.
Value widenRows(OpBuilder &b, Location loc, Value rows, int64_t headDim,
                Type element) {
  SmallVector<int64_t> shape(shapeOf(rows));
  shape.push_back(headDim);
  Value wide = BroadcastOp::create(
      b, loc,
      RankedTensorType::get(shape, vjp::tensorType(rows).getElementType()),
      rows, ArrayRef<int64_t>{0, 1, 2});
  return vjp::castTo(b, loc, wide, element);
}

/// The query positions the blocks mask by: the rank's global positions
/// when causal; otherwise every query at the last position, so that it
/// sees every key (the key positions then need not travel).
Value maskPositions(PartitionContext &context, Location loc, bool causal,
                    int64_t global, Value positions) {
  if (causal)
    return positions;
  OpBuilder &b = context.builder();
  auto scalar = RankedTensorType::get({}, b.getI32Type());
  Value last = makeConstant(
      b, loc, DenseElementsAttr::get(scalar, static_cast<int32_t>(global - 1)));
  return BroadcastOp::create(b, loc, vjp::tensorType(positions), last,
                             ArrayRef<int64_t>{});
}

/// Merges a block's (out, lse) into the running (out, lse) by log-sum-exp:
/// with m = max(lse, lseBlock), a = exp(lse - m), c = exp(lseBlock - m),
///   lse = m + log(a + c),  out = (out a + outBlock c) / (a + c).
/// m is finite: the running lse starts from the rank's own block, where
/// every row sees at least its own position, so no -inf - -inf appears; a
/// block whose row sees nothing (lseBlock -inf) gets weight c = 0.
void mergeBlock(OpBuilder &b, Location loc, Value &out, Value &lse,
                Value outBlock, Value lseBlock) {
  Value m = MaxOp::create(b, loc, lse, lseBlock);
  Value a = ExpOp::create(b, loc, SubOp::create(b, loc, lse, m));
  Value c = ExpOp::create(b, loc, SubOp::create(b, loc, lseBlock, m));
  Value sum = AddOp::create(b, loc, a, c);
  lse = AddOp::create(b, loc, m, LogOp::create(b, loc, sum));
  int64_t headDim = shapeOf(out).back();
  Type element = vjp::tensorType(out).getElementType();
  Value keep =
      widenRows(b, loc, DivOp::create(b, loc, a, sum), headDim, element);
  Value take =
      widenRows(b, loc, DivOp::create(b, loc, c, sum), headDim, element);
  out = AddOp::create(b, loc, MulOp::create(b, loc, out, keep),
                      MulOp::create(b, loc, outBlock, take));
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
  // The blocks run in the operands' type (bf16 keys and values travel as
  // bf16); their outputs are merged in f32 (f64 for f64 models).
  Type compute = vjp::computeType(b, *locals);
  Value lq = (*locals)[0], k = (*locals)[1], v = (*locals)[2];
  int64_t global = shapeOf(op.getQuery())[2];
  Value kpos = localPositions(context, loc, global, seq);
  Value qpos = maskPositions(context, loc, op.getCausal(), global, kpos);
  auto scale = b.getF64FloatAttr(scaleOf(op.getQuery(), op.getScale()));
  auto lseType = RankedTensorType::get(shapeOf(lq).drop_back(), b.getF32Type());
  Value out, lse;
  for (int64_t step = 0; step < n; ++step) {
    if (step > 0) {
      std::string what = "ring attention forward step " +
                         std::to_string(step) + " of " + std::to_string(n - 1);
      k = context.ringShift(k, axis, op, "keys, " + what);
      v = context.ringShift(v, axis, op, "values, " + what);
      if (op.getCausal())
        kpos = context.ringShift(kpos, axis, op, "key positions, " + what);
    }
    auto block = AttentionBlockOp::create(b, loc, lq.getType(), lseType, lq, k,
                                          v, qpos, kpos, scale);
    Value blockOut = vjp::castTo(b, loc, block.getResult(), compute);
    if (step == 0) {
      out = blockOut;
      lse = block.getLse();
    } else {
      mergeBlock(b, loc, out, lse, blockOut, block.getLse());
    }
  }
  context.setCarried(op, lse);
  Value result =
      vjp::castTo(b, loc, out, vjp::tensorType((*locals)[0]).getElementType());
  context.map(op.getResult(), result, q);
  if (op.getLse())
    context.map(op.getLse(), lse, lseSharding(q));
  return success();
}

LogicalResult partitionRingAttentionGrad(AttentionGradOp op,
                                         PartitionContext &context,
                                         const DimSplit &seq) {
  Sharding q, kv;
  ringShardings(context, op.getQuery(), op.getKey(), seq, q, kv);
  // The merged log-sum-exp of the forward's rows: the op's operand (the
  // forward ring's lse result), else what the forward that made `out` left.
  Value lse;
  if (Value given = op.getLse()) {
    FailureOr<Value> local = reshardTo(context, given, lseSharding(q), op);
    if (failed(local))
      return failure();
    lse = *local;
  } else if (auto forward = op.getOut().getDefiningOp<AttentionOp>()) {
    lse = context.carried(forward);
  }
  if (!lse)
    return op.emitOpError()
           << "ring attention backward needs the log-sum-exp of its forward: "
              "an 'lse' operand or the llmc.attention that computes its 'out' "
              "operand; TODO(#10): recompute it when neither is there";
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
  // The blocks in the operands' type; their gradients summed in f32 (f64
  // for f64 models), in which the partial dK and dV travel.
  Type compute = vjp::computeType(b, *locals);
  SmallVector<Value> wide(locals->begin(), locals->end());
  Value k = wide[1], v = wide[2];
  int64_t global = shapeOf(op.getQuery())[2];
  Value kpos = localPositions(context, loc, global, seq);
  Value qpos = maskPositions(context, loc, op.getCausal(), global, kpos);
  auto scale = b.getF64FloatAttr(scaleOf(op.getQuery(), op.getScale()));
  Value dq, dk, dv;
  for (int64_t step = 0; step < n; ++step) {
    if (step > 0) {
      std::string what = "ring attention backward step " +
                         std::to_string(step) + " of " + std::to_string(n - 1);
      k = context.ringShift(k, axis, op, "keys, " + what);
      v = context.ringShift(v, axis, op, "values, " + what);
      if (op.getCausal())
        kpos = context.ringShift(kpos, axis, op, "key positions, " + what);
      dk = context.ringShift(dk, axis, op,
                             "partial key gradients, " + what);
      dv = context.ringShift(dv, axis, op,
                             "partial value gradients, " + what);
    }
    auto block = AttentionBlockGradOp::create(
        b, loc, wide[0].getType(), k.getType(), v.getType(), wide[0], k, v,
        wide[3], wide[4], lse, qpos, kpos, scale);
    Value dqBlock = vjp::castTo(b, loc, block.getDquery(), compute);
    Value dkBlock = vjp::castTo(b, loc, block.getDkey(), compute);
    Value dvBlock = vjp::castTo(b, loc, block.getDvalue(), compute);
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
    return vjp::castTo(b, loc, value, vjp::tensorType(like).getElementType());
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
