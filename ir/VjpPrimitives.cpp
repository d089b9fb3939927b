//===- VjpPrimitives.cpp - derivative rules of the primitive ops ---------===//
//
// DifferentiableOpInterface::buildVjp for every primitive op that carries a
// gradient (the contract is in LlmcInterfaces.td and docs/ir.md §5). The
// autodiff pass (passes/Autodiff.cpp) calls these in reverse program order.
// Every op built here takes the forward op's location, so a gradient names
// the model part it comes from. Checked by finite differences in f64 in
// test/compiler/AutodiffTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/VjpHelpers.h"

using namespace mlir;

namespace llmc {
using namespace vjp;

//===----------------------------------------------------------------------===//
// Unary elementwise
//===----------------------------------------------------------------------===//

// A unary rule is `dx = g * f'(x)`; integer ops have no gradient.
#define LLMC_UNARY_VJP(Op, Body)                                               \
  LogicalResult Op::buildVjp(OpBuilder &b, ValueRange resultGrads,             \
                             SmallVectorImpl<Value> &operandGrads) {           \
    Value g = resultGrads[0];                                                  \
    if (!g || !isFloatTensor(getInput()))                                      \
      return noGradients(*this, operandGrads);                                 \
    Location loc = getLoc();                                                   \
    Value x = getInput(), y = getResult();                                     \
    (void)x;                                                                   \
    (void)y;                                                                   \
    (void)loc;                                                                 \
    operandGrads.push_back(Body);                                              \
    return success();                                                          \
  }

LLMC_UNARY_VJP(NegOp, NegOp::create(b, loc, g))
// d|x| = sign(x); at 0 the gradient goes to the positive side. (Nested
// creates below take at most one op-building argument each, so the op order
// does not depend on the compiler's argument evaluation order.)
LLMC_UNARY_VJP(AbsOp, [&] {
  Value positive =
      compare(b, loc, CompareDirection::ge, x, zerosLike(b, loc, x));
  Value negated = NegOp::create(b, loc, g);
  return SelectOp::create(b, loc, g.getType(), positive, g, negated);
}())
LLMC_UNARY_VJP(ExpOp, MulOp::create(b, loc, g, y))
LLMC_UNARY_VJP(LogOp, DivOp::create(b, loc, g, x))
// 1 - tanh²: reuses the forward result.
LLMC_UNARY_VJP(TanhOp, [&] {
  Value one = splat(b, loc, tensorType(y), 1.0);
  Value slope = SubOp::create(b, loc, one, MulOp::create(b, loc, y, y));
  return MulOp::create(b, loc, g, slope);
}())
// d sqrt(x) = 1 / (2 sqrt(x)).
LLMC_UNARY_VJP(SqrtOp, DivOp::create(b, loc, g, AddOp::create(b, loc, y, y)))
// d x^-1/2 = -1/2 x^-3/2 = -0.5 * y / x.
LLMC_UNARY_VJP(RsqrtOp,
               MulOp::create(b, loc, g,
                             DivOp::create(b, loc,
                                           MulOp::create(b, loc, y,
                                                         splat(b, loc,
                                                               tensorType(y),
                                                               -0.5)),
                                           x)))
#undef LLMC_UNARY_VJP

//===----------------------------------------------------------------------===//
// Binary elementwise
//===----------------------------------------------------------------------===//

#define LLMC_BINARY_VJP(Op, LhsBody, RhsBody)                                  \
  LogicalResult Op::buildVjp(OpBuilder &b, ValueRange resultGrads,             \
                             SmallVectorImpl<Value> &operandGrads) {           \
    Value g = resultGrads[0];                                                  \
    if (!g || !isFloatTensor(getLhs()))                                        \
      return noGradients(*this, operandGrads);                                 \
    Location loc = getLoc();                                                   \
    Value lhs = getLhs(), rhs = getRhs(), y = getResult();                     \
    (void)lhs;                                                                 \
    (void)rhs;                                                                 \
    (void)y;                                                                   \
    (void)loc;                                                                 \
    operandGrads.push_back(LhsBody);                                           \
    operandGrads.push_back(RhsBody);                                           \
    return success();                                                          \
  }

LLMC_BINARY_VJP(AddOp, g, g)
LLMC_BINARY_VJP(SubOp, g, NegOp::create(b, loc, g))
LLMC_BINARY_VJP(MulOp, MulOp::create(b, loc, g, rhs),
                MulOp::create(b, loc, g, lhs))
// d(l/r)/dr = -l/r² = -y/r.
LLMC_BINARY_VJP(DivOp, DivOp::create(b, loc, g, rhs),
                NegOp::create(b, loc,
                              DivOp::create(b, loc, MulOp::create(b, loc, g, y),
                                            rhs)))
#undef LLMC_BINARY_VJP

namespace {
/// max/min: the gradient goes to the operand that was chosen; on ties
/// (`lhs == rhs`) it goes to lhs alone, so the sum over operands stays `g`.
LogicalResult chooserVjp(Operation *op, CompareDirection lhsWins,
                         ValueRange resultGrads,
                         SmallVectorImpl<Value> &operandGrads, OpBuilder &b) {
  Value g = resultGrads[0];
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (!g || !isFloatTensor(lhs))
    return noGradients(op, operandGrads);
  Location loc = op->getLoc();
  Value mask = compare(b, loc, lhsWins, lhs, rhs);
  Value zero = zerosLike(b, loc, g);
  operandGrads.push_back(SelectOp::create(b, loc, g.getType(), mask, g, zero));
  operandGrads.push_back(SelectOp::create(b, loc, g.getType(), mask, zero, g));
  return success();
}
} // namespace

LogicalResult MaxOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  return chooserVjp(*this, CompareDirection::ge, resultGrads, operandGrads, b);
}

LogicalResult MinOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  return chooserVjp(*this, CompareDirection::le, resultGrads, operandGrads, b);
}

LogicalResult CastOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()) || !isFloatTensor(getResult()))
    return noGradients(*this, operandGrads);
  operandGrads.push_back(castLike(b, getLoc(), g, getInput()));
  return success();
}

LogicalResult SelectOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getResult()))
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  Value zero = zerosLike(b, loc, g);
  operandGrads.push_back(Value());
  operandGrads.push_back(
      SelectOp::create(b, loc, g.getType(), getCond(), g, zero));
  operandGrads.push_back(
      SelectOp::create(b, loc, g.getType(), getCond(), zero, g));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()))
    return noGradients(*this, operandGrads);
  // Sum over the new dimensions and over the operand's size-1 dimensions
  // that were stretched.
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  ArrayRef<int64_t> out = getType().getShape();
  ArrayRef<int64_t> dims = getDims();
  SmallVector<int64_t> reduced;
  for (int64_t d = 0, e = out.size(); d < e; ++d) {
    const int64_t *it = llvm::find(dims, d);
    if (it == dims.end() || (in[it - dims.begin()] == 1 && out[d] != 1))
      reduced.push_back(d);
  }
  operandGrads.push_back(sumTo(b, getLoc(), g, reduced, getInput()));
  return success();
}

LogicalResult ReshapeOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()))
    return noGradients(*this, operandGrads);
  operandGrads.push_back(
      reshapeTo(b, getLoc(), g, tensorType(getInput()).getShape()));
  return success();
}

LogicalResult TransposeOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()))
    return noGradients(*this, operandGrads);
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  operandGrads.push_back(
      TransposeOp::create(b, getLoc(), getInput().getType(), g, inverse));
  return success();
}

LogicalResult SliceOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()))
    return noGradients(*this, operandGrads);
  if (std::optional<ArrayRef<int64_t>> strides = getStrides()) {
    if (llvm::any_of(*strides, [](int64_t s) { return s != 1; }))
      return emitError("no derivative rule for strided slices yet");
  }
  // Pad with zeros dimension by dimension: concat(zeros, g, zeros).
  Location loc = getLoc();
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  Value padded = g;
  for (auto [d, start, limit] : llvm::enumerate(getStarts(), getLimits())) {
    if (start == 0 && limit == in[d])
      continue;
    RankedTensorType current = tensorType(padded);
    SmallVector<Value> pieces;
    auto zeros = [&](int64_t size) {
      SmallVector<int64_t> shape(current.getShape());
      shape[d] = size;
      pieces.push_back(splat(
          b, loc, RankedTensorType::get(shape, current.getElementType()), 0.0));
    };
    if (start > 0)
      zeros(start);
    pieces.push_back(padded);
    if (limit < in[d])
      zeros(in[d] - limit);
    SmallVector<int64_t> shape(current.getShape());
    shape[d] = in[d];
    padded = ConcatOp::create(
        b, loc, RankedTensorType::get(shape, current.getElementType()), pieces,
        d);
  }
  operandGrads.push_back(padded);
  return success();
}

LogicalResult ConcatOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getResult()))
    return noGradients(*this, operandGrads);
  int64_t dim = getDim();
  int64_t offset = 0;
  SmallVector<int64_t> limits(getType().getShape());
  for (Value input : getInputs()) {
    SmallVector<int64_t> starts(limits.size(), 0);
    starts[dim] = offset;
    offset += tensorType(input).getDimSize(dim);
    limits[dim] = offset;
    operandGrads.push_back(SliceOp::create(
        b, getLoc(), input.getType(), g, starts, limits, DenseI64ArrayAttr()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()))
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  Value expanded = expandTo(b, loc, g, getDims(), getInput());
  operandGrads.push_back(castLike(b, loc, expanded, getInput()));
  return success();
}

LogicalResult ReduceMeanOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()))
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  ArrayRef<int64_t> in = tensorType(getInput()).getShape();
  int64_t count = 1;
  for (int64_t d : getDims())
    count *= in[d];
  // Scale the small tensor before broadcasting it.
  Value scaled = MulOp::create(
      b, loc, g,
      splat(b, loc, tensorType(g), 1.0 / static_cast<double>(count)));
  Value expanded = expandTo(b, loc, scaled, getDims(), getInput());
  operandGrads.push_back(castLike(b, loc, expanded, getInput()));
  return success();
}

LogicalResult ReduceMaxOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()))
    return noGradients(*this, operandGrads);
  // Every maximum of a reduced group gets an equal share of `g`, so ties
  // split the gradient and the sum over the group stays `g`.
  Location loc = getLoc();
  Value x = getInput();
  Value maxima = expandTo(b, loc, getResult(), getDims(), x);
  Value mask = compare(b, loc, CompareDirection::eq, x, maxima);
  Value ones = splat(b, loc, tensorType(x), 1.0);
  Value hits =
      SelectOp::create(b, loc, x.getType(), mask, ones, zerosLike(b, loc, x));
  SmallVector<int64_t> countShape(getType().getShape());
  Value counts = ReduceSumOp::create(
      b, loc, RankedTensorType::get(countShape, tensorType(x).getElementType()),
      hits, getDims(), getKeepDims());
  Value share = DivOp::create(b, loc, g, counts);
  operandGrads.push_back(
      MulOp::create(b, loc, hits, expandTo(b, loc, share, getDims(), x)));
  return success();
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getLhs()))
    return noGradients(*this, operandGrads);
  // With opA = A or Aᵀ and opB = B or Bᵀ (the flags), C = opA · opB gives
  // d(opA) = G · opBᵀ and d(opB) = opAᵀ · G; a transposed operand takes the
  // transpose of that.
  Location loc = getLoc();
  Value lhs = getLhs(), rhs = getRhs();
  bool ta = getTransposeA(), tb = getTransposeB();
  Value grad = castLike(b, loc, g, lhs); // a wider result: back to operands'
  // 1. lhs: G · opBᵀ, which a shared rank-2 rhs supports as is.
  Value dOpA = matmul(b, loc, grad, rhs, false, !tb);
  operandGrads.push_back(ta ? transposeLastTwo(b, loc, dOpA) : dOpA);
  // 2. rhs.
  int64_t lhsRank = tensorType(lhs).getRank();
  int64_t rhsRank = tensorType(rhs).getRank();
  if (rhsRank == lhsRank) {
    operandGrads.push_back(tb ? matmul(b, loc, grad, lhs, true, ta)
                              : matmul(b, loc, lhs, grad, !ta, false));
    return success();
  }
  // A rank-2 rhs shared by every batch: its gradient sums over the batch,
  // which one matmul of the flattened [batch·M, K] and [batch·M, N] does.
  Value opA = ta ? transposeLastTwo(b, loc, lhs) : lhs;
  ArrayRef<int64_t> a = tensorType(opA).getShape();
  ArrayRef<int64_t> c = tensorType(grad).getShape();
  int64_t rows = tensorType(opA).getNumElements() / a.back();
  Value a2 = reshapeTo(b, loc, opA, {rows, a.back()});
  Value g2 = reshapeTo(b, loc, grad, {rows, c.back()});
  operandGrads.push_back(tb ? matmul(b, loc, g2, a2, true, false)
                            : matmul(b, loc, a2, g2, true, false));
  return success();
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getInput()))
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  // Repeated indices accumulate, as the chain rule wants.
  operandGrads.push_back(ScatterAddOp::create(b, loc, getInput().getType(),
                                              zerosLike(b, loc, getInput()),
                                              getIndices(), g, getDim()));
  operandGrads.push_back(Value());
  return success();
}

LogicalResult ScatterAddOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                     SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g || !isFloatTensor(getDest()))
    return noGradients(*this, operandGrads);
  operandGrads.push_back(g);
  operandGrads.push_back(Value());
  operandGrads.push_back(GatherOp::create(b, getLoc(), getUpdates().getType(),
                                          g, getIndices(), getDim()));
  return success();
}

} // namespace llmc
