//===- VjpMoe.cpp - derivative rules of moe_topk, dispatch, combine -------===//
//
// DifferentiableOpInterface::buildVjp for the mixture-of-experts routing
// ops. Dispatch and combine are each other's adjoints given the same
// indices (they share one slot assignment, and both skip dropped pairs), so
// their rules are built from each other: a per-pair view (the [N, k] indices
// reshaped to [N·k, 1]) keeps the token-then-choice order and so the slots.
// The routing indices get no gradient; top-k selection is piecewise
// constant. Checked by finite differences in f64 in
// test/compiler/AutodiffTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/VjpHelpers.h"

using namespace mlir;

namespace llmc {
using namespace vjp;

namespace {

/// [N, k] indices as [N·k, 1]: one routed pair per row, in the same order.
Value perPair(OpBuilder &b, Location loc, Value indices) {
  ArrayRef<int64_t> s = tensorType(indices).getShape();
  return reshapeTo(b, loc, indices, {s[0] * s[1], 1});
}

} // namespace

LogicalResult MoeTopKOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  // With p = softmax(logits) and u_j = p[e_j] the chosen probabilities,
  // du_j/dlogits = u_j (onehot(e_j) - p). Under normalize, w = u / Σu, so
  // du_j = (g_j - Σ_i g_i w_i) / Σu first. Then
  // dlogits = Σ_j du_j u_j onehot(e_j) - p Σ_j du_j u_j.
  Location loc = getLoc();
  Value logitsIn = getLogits();
  Type ct = computeType(b, {logitsIn});
  Value logits = castTo(b, loc, logitsIn, ct);
  RankedTensorType type = tensorType(logits);
  int64_t tokens = type.getDimSize(0), experts = type.getDimSize(1);
  int64_t k = getK();
  Value indices = getIndices();
  // 1. onehot [N, k, E] of the chosen experts, and u = Σ_e onehot · p.
  SmallVector<int64_t> wide = {tokens, k, experts};
  Value classes = IotaOp::create(
      b, loc, RankedTensorType::get(wide, tensorType(indices).getElementType()),
      2);
  Value chosen = broadcastTo(b, loc, indices, wide, {0, 1});
  Value onehot = maskToFloat(
      b, loc, compare(b, loc, CompareDirection::eq, classes, chosen), ct);
  Value probs = SoftmaxOp::create(b, loc, type, logits, b.getI64IntegerAttr(1));
  Value picked =
      MulOp::create(b, loc, onehot, broadcastTo(b, loc, probs, wide, {0, 2}));
  auto pairType = RankedTensorType::get({tokens, k}, ct);
  Value u = ReduceSumOp::create(b, loc, pairType, picked, ArrayRef<int64_t>{2},
                                /*keep_dims=*/false);
  // 2. The cotangent of u.
  Value du = castTo(b, loc, g, ct);
  if (getNormalize()) {
    auto rowType = RankedTensorType::get({tokens, 1}, ct);
    Value total = ReduceSumOp::create(b, loc, rowType, u, ArrayRef<int64_t>{1},
                                      /*keep_dims=*/true);
    Value totalWide = expandTo(b, loc, total, {1}, u);
    Value w = DivOp::create(b, loc, u, totalWide);
    Value dot =
        ReduceSumOp::create(b, loc, rowType, MulOp::create(b, loc, du, w),
                            ArrayRef<int64_t>{1}, /*keep_dims=*/true);
    du = DivOp::create(b, loc,
                       SubOp::create(b, loc, du, expandTo(b, loc, dot, {1}, u)),
                       totalWide);
  }
  // 3. dlogits.
  Value c = MulOp::create(b, loc, du, u); // [N, k]
  Value spread = ReduceSumOp::create(
      b, loc, type,
      MulOp::create(b, loc, onehot, broadcastTo(b, loc, c, wide, {0, 1})),
      ArrayRef<int64_t>{1}, /*keep_dims=*/false);
  Value cSum =
      ReduceSumOp::create(b, loc, RankedTensorType::get({tokens, 1}, ct), c,
                          ArrayRef<int64_t>{1}, /*keep_dims=*/true);
  Value dLogits = SubOp::create(
      b, loc, spread,
      MulOp::create(b, loc, probs, expandTo(b, loc, cSum, {1}, probs)));
  operandGrads.push_back(castLike(b, loc, dLogits, logitsIn));
  return success();
}

LogicalResult MoeDispatchOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  // dx[n] = Σ_j g[e(n, j), slot(n, j)] over the kept pairs: a combine of the
  // cotangent with unit weights.
  Location loc = getLoc();
  Value indices = getIndices();
  auto weightType = RankedTensorType::get(tensorType(indices).getShape(),
                                          tensorType(g).getElementType());
  operandGrads.push_back(MoeCombineOp::create(b, loc, getInput().getType(), g,
                                              splat(b, loc, weightType, 1.0),
                                              indices));
  operandGrads.push_back(Value());
  return success();
}

LogicalResult MoeCombineOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  // Per routed pair (n, j) with a slot: d expert_out[e, slot] = w[n, j] g[n]
  // and d w[n, j] = <g[n], expert_out[e, slot]>; dropped pairs get 0. Both
  // use the [N·k, 1] per-pair view, whose slots are the [N, k] ones.
  Location loc = getLoc();
  Value expertOut = getExpertOut(), weights = getWeights();
  Value indices = getIndices();
  ArrayRef<int64_t> pairs = tensorType(indices).getShape();
  int64_t tokens = pairs[0], k = pairs[1];
  int64_t dim = tensorType(expertOut).getDimSize(2);
  Type element = tensorType(g).getElementType();
  Value pairIndices = perPair(b, loc, indices);
  SmallVector<int64_t> wide = {tokens, k, dim};
  Value gWide = broadcastTo(b, loc, g, wide, {0, 2}); // [N, k, D]
  // 1. expert_out: dispatch of the weighted cotangent rows, one per pair.
  Value w = castTo(b, loc, weights, element);
  Value weighted =
      MulOp::create(b, loc, gWide, broadcastTo(b, loc, w, wide, {0, 1}));
  Value rows = reshapeTo(b, loc, weighted, {tokens * k, dim});
  operandGrads.push_back(
      MoeDispatchOp::create(b, loc, expertOut.getType(), rows, pairIndices));
  // 2. weights: the slot each pair read (zero if dropped), dotted with g.
  auto unitType = RankedTensorType::get({tokens * k, 1},
                                        tensorType(expertOut).getElementType());
  Value read = MoeCombineOp::create(
      b, loc,
      RankedTensorType::get({tokens * k, dim},
                            tensorType(expertOut).getElementType()),
      expertOut, splat(b, loc, unitType, 1.0), pairIndices);
  Value readWide = castTo(b, loc, reshapeTo(b, loc, read, wide), element);
  Value dW = ReduceSumOp::create(
      b, loc, RankedTensorType::get({tokens, k}, element),
      MulOp::create(b, loc, readWide, gWide), ArrayRef<int64_t>{2},
      /*keep_dims=*/false);
  operandGrads.push_back(castLike(b, loc, dW, weights));
  operandGrads.push_back(Value());
  return success();
}

} // namespace llmc
