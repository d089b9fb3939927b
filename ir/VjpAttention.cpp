//===- VjpAttention.cpp - derivative rule of llmc.attention ---------------===//
//
// DifferentiableOpInterface::buildVjp for attention, decomposed into
// primitives and llmc.softmax. This is the reference rule: it materializes
// the [B, Hq, T, S] scores and probabilities, which a flash backward kernel
// would not; a backend that has one can match this pattern or replace the
// rule. Checked by finite differences in f64 in test/compiler/AutodiffTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/VjpHelpers.h"

#include <cmath>

using namespace mlir;

namespace llmc {
using namespace vjp;

namespace {

/// [B, Hkv, S, D] -> [B, Hkv·group, S, D]: each key/value head repeated for
/// the `group` query heads that read it (query head h reads h / group).
Value expandHeads(OpBuilder &b, Location loc, Value value, int64_t group) {
  if (group == 1)
    return value;
  ArrayRef<int64_t> s = tensorType(value).getShape();
  Type element = tensorType(value).getElementType();
  Value split = reshapeTo(b, loc, value, {s[0], s[1], 1, s[2], s[3]});
  auto wide = RankedTensorType::get({s[0], s[1], group, s[2], s[3]}, element);
  Value repeated = BroadcastOp::create(b, loc, wide, split,
                                       ArrayRef<int64_t>{0, 1, 2, 3, 4});
  return reshapeTo(b, loc, repeated, {s[0], s[1] * group, s[2], s[3]});
}

/// The adjoint of expandHeads: sums each group of query-head gradients.
Value reduceHeads(OpBuilder &b, Location loc, Value grad, int64_t group) {
  if (group == 1)
    return grad;
  ArrayRef<int64_t> s = tensorType(grad).getShape();
  Value split =
      reshapeTo(b, loc, grad, {s[0], s[1] / group, group, s[2], s[3]});
  auto type = RankedTensorType::get({s[0], s[1] / group, s[2], s[3]},
                                    tensorType(grad).getElementType());
  return ReduceSumOp::create(b, loc, type, split, ArrayRef<int64_t>{2},
                             /*keep_dims=*/false);
}

} // namespace

LogicalResult AttentionOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  Type ct = computeType(b, {getQuery()});
  Value q = castTo(b, loc, getQuery(), ct);
  Value grad = castTo(b, loc, g, ct);
  int64_t heads = tensorType(q).getShape()[1];
  int64_t headDim = tensorType(q).getShape()[3];
  int64_t group = heads / tensorType(getKey()).getShape()[1];
  double factor = getScale() ? getScale()->convertToDouble()
                             : 1.0 / std::sqrt(static_cast<double>(headDim));
  // 1. Key and value at the query heads' count.
  Value k = expandHeads(b, loc, castTo(b, loc, getKey(), ct), group);
  Value v = expandHeads(b, loc, castTo(b, loc, getValue(), ct), group);
  // 2. Recompute p = softmax(q kᵀ · scale + mask) over the key positions.
  Value scores = scale(b, loc, matmul(b, loc, q, k, false, true), factor);
  RankedTensorType scoreType = tensorType(scores);
  if (getCausal()) {
    // Query t sees keys s <= t. The masked scores get a large finite
    // negative, whose exponential is exactly 0 after the max subtraction.
    auto ids = RankedTensorType::get(scoreType.getShape(), b.getI32Type());
    Value t = IotaOp::create(b, loc, ids, 2);
    Value s = IotaOp::create(b, loc, ids, 3);
    Value visible = compare(b, loc, CompareDirection::le, s, t);
    scores = SelectOp::create(b, loc, scoreType, visible, scores,
                              splat(b, loc, scoreType, -1e30));
  }
  Value p =
      SoftmaxOp::create(b, loc, scoreType, scores, b.getI64IntegerAttr(3));
  // 3. dV = pᵀ g, dP = g vᵀ, dS = p (dP - Σ_s dP p), dQ = dS k · scale,
  //    dK = dSᵀ q · scale; k and v gradients summed back over each group.
  Value dV = matmul(b, loc, p, grad, true, false);
  Value dP = matmul(b, loc, grad, v, false, true);
  Value dot = ReduceSumOp::create(
      b, loc,
      RankedTensorType::get({scoreType.getDimSize(0), scoreType.getDimSize(1),
                             scoreType.getDimSize(2), 1},
                            ct),
      MulOp::create(b, loc, dP, p), ArrayRef<int64_t>{3}, /*keep_dims=*/true);
  Value dS = MulOp::create(
      b, loc, p, SubOp::create(b, loc, dP, expandTo(b, loc, dot, {3}, dP)));
  Value dQ = scale(b, loc, matmul(b, loc, dS, k, false, false), factor);
  Value dK = scale(b, loc, matmul(b, loc, dS, q, true, false), factor);
  operandGrads.push_back(castLike(b, loc, dQ, getQuery()));
  operandGrads.push_back(
      castLike(b, loc, reduceHeads(b, loc, dK, group), getKey()));
  operandGrads.push_back(
      castLike(b, loc, reduceHeads(b, loc, dV, group), getValue()));
  return success();
}

} // namespace llmc
