//===- VjpComposites.cpp - derivative rules of the composite ops ----------===//
//
// DifferentiableOpInterface::buildVjp for embedding, the activations, softmax,
// the norms, cross_entropy and rope, written as closed forms in primitive
// llmc ops (and llmc.softmax / llmc.rope themselves where the backward is one
// of them). Attention is in VjpAttention.cpp. The rules compute in f32, or in
// f64 when an operand is f64, as the kernels do, and cast each gradient back
// to its operand's type. Checked by finite differences in f64 in
// test/compiler/AutodiffTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/VjpHelpers.h"

using namespace mlir;

namespace llmc {
using namespace vjp;

namespace {

/// `reduce_sum(value, dims, keep_dims)`.
Value sumKeep(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape(tensorType(value).getShape());
  for (int64_t d : dims)
    shape[d] = 1;
  auto type = RankedTensorType::get(shape, tensorType(value).getElementType());
  return ReduceSumOp::create(b, loc, type, value, dims, /*keep_dims=*/true);
}

/// 0, 1, ..., rank - 2: the leading dimensions.
SmallVector<int64_t> leadingDims(Value value) {
  SmallVector<int64_t> dims(tensorType(value).getRank() - 1);
  std::iota(dims.begin(), dims.end(), 0);
  return dims;
}

/// sigmoid(x) = 1 / (1 + exp(-x)); exp(-x) = inf gives the correct 0.
Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = splat(b, loc, tensorType(x), 1.0);
  Value e = ExpOp::create(b, loc, NegOp::create(b, loc, x));
  return DivOp::create(b, loc, one, AddOp::create(b, loc, one, e));
}

/// d silu(x)/dx = s (1 + x (1 - s)) with s = sigmoid(x).
Value siluSlope(OpBuilder &b, Location loc, Value x, Value s) {
  Value one = splat(b, loc, tensorType(x), 1.0);
  Value rest = MulOp::create(b, loc, x, SubOp::create(b, loc, one, s));
  return MulOp::create(b, loc, s, AddOp::create(b, loc, one, rest));
}

} // namespace

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  // The cotangent rows are added into a zero table at their ids; repeated ids
  // accumulate and out-of-range ids (zero rows forward) are skipped by
  // scatter_add, so they get nothing.
  Location loc = getLoc();
  Value table = getTable();
  operandGrads.push_back(ScatterAddOp::create(b, loc, table.getType(),
                                              zerosLike(b, loc, table),
                                              getIds(), g, /*dim=*/0));
  operandGrads.push_back(Value());
  return success();
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

LogicalResult SiluOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  Type ct = computeType(b, {getInput()});
  Value x = castTo(b, loc, getInput(), ct);
  Value slope = siluSlope(b, loc, x, sigmoid(b, loc, x));
  Value dx = MulOp::create(b, loc, castTo(b, loc, g, ct), slope);
  operandGrads.push_back(castLike(b, loc, dx, getInput()));
  return success();
}

LogicalResult SwigluOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  // y = silu(gate) * up.
  Location loc = getLoc();
  Type ct = computeType(b, {getGate()});
  Value gate = castTo(b, loc, getGate(), ct);
  Value up = castTo(b, loc, getUp(), ct);
  Value grad = castTo(b, loc, g, ct);
  Value s = sigmoid(b, loc, gate);
  Value silu = MulOp::create(b, loc, gate, s);
  Value dGate = MulOp::create(b, loc, MulOp::create(b, loc, grad, up),
                              siluSlope(b, loc, gate, s));
  Value dUp = MulOp::create(b, loc, grad, silu);
  operandGrads.push_back(castLike(b, loc, dGate, getGate()));
  operandGrads.push_back(castLike(b, loc, dUp, getUp()));
  return success();
}

LogicalResult GeluOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  Type ct = computeType(b, {getInput()});
  Value x = castTo(b, loc, getInput(), ct);
  RankedTensorType type = tensorType(x);
  Value half = splat(b, loc, type, 0.5);
  Value one = splat(b, loc, type, 1.0);
  Value x2 = MulOp::create(b, loc, x, x);
  Value slope;
  if (getApproximation() == GeluApproximation::tanh) {
    // y = 0.5 x (1 + t), t = tanh(u), u = c (x + 0.044715 x³):
    // y' = 0.5 (1 + t) + 0.5 x (1 - t²) c (1 + 3·0.044715 x²).
    const double kC = 0.79788456080286535588; // sqrt(2 / pi)
    Value cubic = MulOp::create(b, loc, x2, splat(b, loc, type, 0.044715));
    Value u = MulOp::create(
        b, loc, splat(b, loc, type, kC),
        MulOp::create(b, loc, x, AddOp::create(b, loc, one, cubic)));
    Value t = TanhOp::create(b, loc, u);
    Value du = MulOp::create(
        b, loc, splat(b, loc, type, kC),
        AddOp::create(
            b, loc, one,
            MulOp::create(b, loc, x2, splat(b, loc, type, 3 * 0.044715))));
    Value sech2 = SubOp::create(b, loc, one, MulOp::create(b, loc, t, t));
    Value left = MulOp::create(b, loc, half, AddOp::create(b, loc, one, t));
    Value right = MulOp::create(b, loc, MulOp::create(b, loc, half, x),
                                MulOp::create(b, loc, sech2, du));
    slope = AddOp::create(b, loc, left, right);
  } else {
    // y = x Φ(x): y' = Φ(x) + x φ(x), φ(x) = exp(-x²/2) / sqrt(2π). There
    // is no erf op, so Φ(x) = y / x is read off the forward result (it
    // carries the result type's rounding); |x| < 1e-20 takes Φ(0) = 0.5.
    const double kInvSqrt2Pi = 0.39894228040143267794; // 1 / sqrt(2 pi)
    Value y = castTo(b, loc, getResult(), ct);
    Value tiny = splat(b, loc, type, 1e-20);
    Value small =
        compare(b, loc, CompareDirection::lt, AbsOp::create(b, loc, x), tiny);
    Value safeX = SelectOp::create(b, loc, type, small, one, x);
    Value phiBig = DivOp::create(b, loc, y, safeX);
    Value cdf = SelectOp::create(b, loc, type, small, half, phiBig);
    Value density = MulOp::create(
        b, loc, splat(b, loc, type, kInvSqrt2Pi),
        ExpOp::create(b, loc,
                      MulOp::create(b, loc, x2, splat(b, loc, type, -0.5))));
    slope = AddOp::create(b, loc, cdf, MulOp::create(b, loc, x, density));
  }
  Value dx = MulOp::create(b, loc, castTo(b, loc, g, ct), slope);
  operandGrads.push_back(castLike(b, loc, dx, getInput()));
  return success();
}

//===----------------------------------------------------------------------===//
// softmax and the norms
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  // dx = y (g - sum(g y, dim)), reusing the forward result.
  Location loc = getLoc();
  Type ct = computeType(b, {getInput()});
  Value y = castTo(b, loc, getResult(), ct);
  Value grad = castTo(b, loc, g, ct);
  int64_t dim = getDim();
  Value dot = sumKeep(b, loc, MulOp::create(b, loc, grad, y), {dim});
  Value centered = SubOp::create(b, loc, grad, expandTo(b, loc, dot, {dim}, y));
  Value dx = MulOp::create(b, loc, y, centered);
  operandGrads.push_back(castLike(b, loc, dx, getInput()));
  return success();
}

// The norms' derivatives are one op each (llmc.layer_norm_grad,
// llmc.rms_norm_grad), which recompute the row statistics from x: the
// forward stores nothing for them, and the backward is one row kernel plus
// the column sums of dgamma (and dbeta) instead of ~10 elementwise ops and
// four reductions (docs/autodiff.md, "Norms").

LogicalResult LayerNormOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  Value gamma = getGamma();
  auto grads = LayerNormGradOp::create(
      b, loc, getInput().getType(), gamma.getType(), gamma.getType(),
      getInput(), gamma, castLike(b, loc, g, getResult()), getEpsilonAttr());
  operandGrads.push_back(grads.getDinput());
  operandGrads.push_back(grads.getDgamma());
  if (getBeta())
    operandGrads.push_back(castLike(b, loc, grads.getDbeta(), getBeta()));
  return success();
}

LogicalResult RmsNormOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  auto grads = RmsNormGradOp::create(
      b, loc, getInput().getType(), getGamma().getType(), getInput(),
      getGamma(), castLike(b, loc, g, getResult()), getEpsilonAttr());
  operandGrads.push_back(grads.getDinput());
  operandGrads.push_back(grads.getDgamma());
  return success();
}

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                       SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (resultGrads.size() > 1 && resultGrads[1])
    return emitOpError() << "has no derivative rule for its lse result (it "
                            "is the gradient's operand, not a loss)";
  if (!g)
    return noGradients(*this, operandGrads);
  // dlogits = (softmax(logits) - onehot(targets)) * w as one composite (w is
  // g, g / max(count, 1) or g per position, 0 where ignored): one kernel
  // writes dlogits in the logits' type, and no [..., V] softmax, one-hot or
  // f32 copy of the logits is ever a value of the program. The forward's
  // lse, when it has one, spares the kernel the row statistics
  // (llmc-share-loss-statistics adds it after autodiff).
  operandGrads.push_back(CrossEntropyGradOp::create(
      b, getLoc(), getLogits().getType(), getLogits(), getTargets(), g,
      getLse(), getIgnoreIndexAttr(), getReductionAttr()));
  operandGrads.push_back(Value());
  return success();
}

//===----------------------------------------------------------------------===//
// rope
//===----------------------------------------------------------------------===//

LogicalResult RopeOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  // The rotation is orthogonal, so its transpose is its inverse: the
  // rotation by the negated angle, that is rope with negated positions
  // and the same frequencies (cos is even and sin odd, so the table entries
  // match exactly).
  Location loc = getLoc();
  Value positions = getPositions();
  if (!positions) {
    int64_t seq = getType().getShape()[getType().getRank() - 2];
    positions =
        IotaOp::create(b, loc, RankedTensorType::get({seq}, b.getI32Type()), 0);
  }
  Value negated = NegOp::create(b, loc, positions);
  operandGrads.push_back(
      RopeOp::create(b, loc, getInput().getType(), g, negated, getThetaAttr(),
                     getInvFreqAttr()));
  if (getPositions())
    operandGrads.push_back(Value());
  return success();
}

} // namespace llmc
