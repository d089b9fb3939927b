//===- Fp8Ops.cpp - verifiers, costs and derivatives of the FP8 ops -------===//
//
// llmc.amax, llmc.scaled_cast, llmc.scaled_cast_transpose, llmc.scaled_matmul
// and llmc.fp8_matmul (Fp8Ops.td), and the builders of ir/Fp8.h.
// fp8_matmul's derivative is the
// FP8 backward of Transformer Engine's and torchao's recipes: the result's
// gradient in f8E5M2, the operands in f8E4M3FN, both operand gradients as
// FP8 products.
//
//===----------------------------------------------------------------------===//
#include "ir/Fp8.h"
#include "ir/LlmcOps.h"
#include "ir/VerifyUtils.h"
#include "ir/VjpHelpers.h"

using namespace mlir;
using namespace llmc;

double llmc::fp8MaxFinite(Type f8) {
  return isa<Float8E5M2Type>(f8) ? 57344.0 : 448.0;
}

static Value scalarConstant(OpBuilder &b, Location loc, double value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  auto attr = DenseElementsAttr::get(type, b.getFloatAttr(b.getF32Type(), value));
  return ConstantOp::create(b, loc, type, cast<ElementsAttr>(attr));
}

Fp8Scale llmc::buildFp8Scale(OpBuilder &b, Location loc, Value x, Type f8) {
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Value amax = AmaxOp::create(b, loc, scalar, x);
  Value floored =
      MaxOp::create(b, loc, amax, scalarConstant(b, loc, kFp8AmaxFloor));
  Value max = scalarConstant(b, loc, fp8MaxFinite(f8));
  return {DivOp::create(b, loc, max, floored),
          DivOp::create(b, loc, floored, max)};
}

Value llmc::buildScaledCast(OpBuilder &b, Location loc, Value x, Value scale,
                            Type f8, bool transpose) {
  // Cast, then transpose: the cast is elementwise, so the codes are the
  // same either way, but this order moves 1-byte codes instead of 2-byte
  // bf16, and the cast is the one the untransposed use of `x` has (CSE
  // keeps one).
  auto type = RankedTensorType::get(shapeOf(x), f8);
  Value cast = ScaledCastOp::create(b, loc, type, x, scale);
  return transpose ? vjp::transposeLastTwo(b, loc, cast) : cast;
}

Value llmc::buildScaledMatmul(OpBuilder &b, Location loc, Value lhs,
                              bool transposeLhs, const Fp8Scale &lhsScale,
                              Type lhsType, Value rhs, bool transposeRhs,
                              const Fp8Scale &rhsScale, Type rhsType,
                              Type result) {
  Value a = buildScaledCast(b, loc, lhs, lhsScale.scale, lhsType, transposeLhs);
  Value c = buildScaledCast(b, loc, rhs, rhsScale.scale, rhsType, transposeRhs);
  auto type =
      RankedTensorType::get({shapeOf(a)[0], shapeOf(c)[0]}, result);
  return ScaledMatmulOp::create(b, loc, type, a, c, lhsScale.inverse,
                                rhsScale.inverse);
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

static LogicalResult expectScalar(Operation *op, StringRef what, Value v) {
  return expectRank(op, what, tensorType(v).getRank(), 0);
}

LogicalResult AmaxOp::verify() {
  return expectScalar(*this, "result", getResult());
}

LogicalResult ScaledCastOp::verify() {
  return expectShape(*this, "result", shapeOf(getResult()),
                     shapeOf(getInput()));
}

LogicalResult ScaledCastTransposeOp::verify() {
  RankedTensorType input = tensorType(getInput());
  if (failed(expectRank(*this, "input", input.getRank(), 2)) ||
      failed(expectShape(*this, "result", shapeOf(getResult()),
                         shapeOf(getInput()))) ||
      failed(expectShape(*this, "transposed", shapeOf(getTransposed()),
                         {input.getDimSize(1), input.getDimSize(0)})))
    return failure();
  return expectElementType(*this, "transposed",
                           tensorType(getTransposed()).getElementType(),
                           tensorType(getResult()).getElementType());
}

LogicalResult ScaledMatmulOp::verify() {
  RankedTensorType lhs = tensorType(getLhs()), rhs = tensorType(getRhs());
  if (lhs.getRank() != 2 || rhs.getRank() != 2)
    return emitOpError() << "expected operands of rank 2, got ranks "
                         << lhs.getRank() << " and " << rhs.getRank();
  if (lhs.getDimSize(1) != rhs.getDimSize(1))
    return emitOpError()
           << "expected the contraction sizes (the last dimension of both "
              "operands) to match, got "
           << lhs.getDimSize(1) << " and " << rhs.getDimSize(1);
  if (isa<Float8E5M2Type>(lhs.getElementType()) &&
      isa<Float8E5M2Type>(rhs.getElementType()))
    return emitOpError() << "expected at most one f8E5M2 operand (FP8 GEMMs "
                            "take no f8E5M2 x f8E5M2 product), got two";
  Type out = getType().getElementType();
  if (!out.isBF16() && !out.isF32())
    return emitOpError() << "expected a bf16 or f32 result, got " << out;
  return expectShape(*this, "result", getType().getShape(),
                     {lhs.getDimSize(0), rhs.getDimSize(0)});
}

LogicalResult Fp8MatmulOp::verify() {
  RankedTensorType lhs = tensorType(getLhs()), rhs = tensorType(getRhs());
  if (lhs.getRank() < 2)
    return emitOpError() << "expected an lhs of rank at least 2, got rank "
                         << lhs.getRank();
  if (failed(expectRank(*this, "rhs", rhs.getRank(), 2)) ||
      failed(expectElementType(*this, "rhs", rhs.getElementType(),
                               lhs.getElementType())) ||
      failed(expectElementType(*this, "result", getType().getElementType(),
                               lhs.getElementType())))
    return failure();
  int64_t k = lhs.getShape().back();
  int64_t rhsK = rhs.getDimSize(getTransposeB() ? 1 : 0);
  if (k != rhsK)
    return emitOpError() << "expected contraction sizes to match, got " << k
                         << " and " << rhsK;
  SmallVector<int64_t> expected(lhs.getShape().drop_back());
  expected.push_back(rhs.getDimSize(getTransposeB() ? 0 : 1));
  return expectShape(*this, "result", getType().getShape(), expected);
}

//===----------------------------------------------------------------------===//
// Costs
//===----------------------------------------------------------------------===//

double AmaxOp::getFlops() {
  return static_cast<double>(tensorType(getInput()).getNumElements());
}
double ScaledCastOp::getFlops() {
  return static_cast<double>(tensorType(getInput()).getNumElements());
}
double ScaledCastTransposeOp::getFlops() {
  return static_cast<double>(tensorType(getInput()).getNumElements());
}
double ScaledMatmulOp::getFlops() {
  // k multiply-adds per result element, and the two descaling products.
  double k = static_cast<double>(tensorType(getLhs()).getDimSize(1));
  return static_cast<double>(getType().getNumElements()) * (2.0 * k + 2.0);
}
double Fp8MatmulOp::getFlops() {
  double k = static_cast<double>(tensorType(getLhs()).getShape().back());
  return 2.0 * static_cast<double>(getType().getNumElements()) * k;
}

//===----------------------------------------------------------------------===//
// Derivatives
//===----------------------------------------------------------------------===//

LogicalResult AmaxOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  // A scale is a constant of the step (every FP8 recipe stops its gradient).
  return vjp::noGradients(*this, operandGrads);
}

/// With X = lhs as [M, K] (batch dimensions flattened), W = rhs as [K, N]
/// (transposed when transpose_b) and G = dy as [M, N]:
///   dX = G · Wᵀ: scaled_matmul(G8 [M, N], W8 as [K, N])
///   dW = Xᵀ · G: scaled_matmul(X8ᵀ [K, M], G8ᵀ [N, M])  (its transpose,
///        dWᵀ = Gᵀ · X, for transpose_b)
/// with G in f8E5M2 and X, W in f8E4M3FN, each scale the tensor's own
/// (the same scales and casts as the forward's expansion, which CSE merges).
LogicalResult Fp8MatmulOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return vjp::noGradients(*this, operandGrads);
  Location loc = getLoc();
  Type e4m3 = b.getType<Float8E4M3FNType>();
  Type e5m2 = b.getType<Float8E5M2Type>();
  Type element = getType().getElementType();
  ArrayRef<int64_t> x = shapeOf(getLhs());
  int64_t k = x.back(), n = shapeOf(getResult()).back();
  int64_t m = tensorType(getLhs()).getNumElements() / k;
  bool tb = getTransposeB();
  Value x2 = vjp::reshapeTo(b, loc, getLhs(), {m, k});
  Value g2 = vjp::reshapeTo(b, loc, g, {m, n});
  Fp8Scale xs = buildFp8Scale(b, loc, x2, e4m3);
  Fp8Scale ws = buildFp8Scale(b, loc, getRhs(), e4m3);
  Fp8Scale gs = buildFp8Scale(b, loc, g2, e5m2);
  // 1. dX [M, K]: the weight as [K, N] (contraction N innermost).
  Value dx = buildScaledMatmul(b, loc, g2, false, gs, e5m2, getRhs(), tb, ws,
                               e4m3, element);
  operandGrads.push_back(vjp::reshapeTo(b, loc, dx, x));
  // 2. dW [K, N], or dWᵀ [N, K] under transpose_b: contraction over M.
  operandGrads.push_back(
      tb ? buildScaledMatmul(b, loc, g2, true, gs, e5m2, x2, true, xs, e4m3,
                             element)
         : buildScaledMatmul(b, loc, x2, true, xs, e4m3, g2, true, gs, e5m2,
                             element));
  return success();
}
