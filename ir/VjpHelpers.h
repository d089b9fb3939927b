//===- VjpHelpers.h - builders shared by the derivative rules ---*- C++ -*-===//
//
// Small op-building helpers used by the buildVjp implementations of the
// primitive (VjpPrimitives.cpp) and composite (VjpComposites.cpp,
// VjpAttention.cpp, VjpMoe.cpp) ops. Internal to ir/: every op takes the given
// location.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_IR_VJPHELPERS_H
#define LLMC_IR_VJPHELPERS_H

#include "ir/LlmcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <numeric>

namespace llmc::vjp {

using namespace mlir;

inline RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

inline bool isFloatTensor(Value value) {
  return isa<FloatType>(getElementTypeOrSelf(value.getType()));
}

/// A tensor of `type` with every element `value` (float element types): a
/// rank-0 constant, broadcast when `type` has dimensions. A splat constant
/// of an activation's shape would be stored in the Executable and kept for
/// the whole program; a broadcast is a temporary (and fuses away).
inline Value splat(OpBuilder &b, Location loc, RankedTensorType type,
                   double value) {
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  auto attr = DenseElementsAttr::get(
      scalarType, b.getFloatAttr(type.getElementType(), value));
  Value scalar =
      ConstantOp::create(b, loc, scalarType, cast<ElementsAttr>(attr));
  if (type.getRank() == 0)
    return scalar;
  return BroadcastOp::create(b, loc, type, scalar, ArrayRef<int64_t>{});
}

inline Value zerosLike(OpBuilder &b, Location loc, Value like) {
  return splat(b, loc, tensorType(like), 0.0);
}

/// An i1 tensor of `lhs`'s shape: `lhs <direction> rhs`.
inline Value compare(OpBuilder &b, Location loc, CompareDirection direction,
                     Value lhs, Value rhs) {
  auto type = RankedTensorType::get(tensorType(lhs).getShape(), b.getI1Type());
  return CompareOp::create(b, loc, type, direction, lhs, rhs);
}

/// `value` converted to the element type of `like` (a no-op when they agree).
inline Value castLike(OpBuilder &b, Location loc, Value value, Value like) {
  if (tensorType(value).getElementType() == tensorType(like).getElementType())
    return value;
  auto type = RankedTensorType::get(tensorType(value).getShape(),
                                    tensorType(like).getElementType());
  return CastOp::create(b, loc, type, value);
}

inline Value reshapeTo(OpBuilder &b, Location loc, Value value,
                       ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, tensorType(value).getElementType());
  if (value.getType() == type)
    return value;
  return ReshapeOp::create(b, loc, type, value);
}

/// Swaps the last two dimensions.
inline Value transposeLastTwo(OpBuilder &b, Location loc, Value value) {
  RankedTensorType type = tensorType(value);
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[rank - 1], shape[rank - 2]);
  return TransposeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value, perm);
}

/// `lhs · rhs` with the transpose flags of llmc.matmul; the result type is
/// derived from the operands.
inline Value matmul(OpBuilder &b, Location loc, Value lhs, Value rhs, bool ta,
                    bool tb) {
  ArrayRef<int64_t> l = tensorType(lhs).getShape();
  ArrayRef<int64_t> r = tensorType(rhs).getShape();
  SmallVector<int64_t> shape(l.begin(), l.end() - 2);
  shape.push_back(ta ? l.back() : l[l.size() - 2]);
  shape.push_back(tb ? r[r.size() - 2] : r.back());
  auto type = RankedTensorType::get(shape, tensorType(lhs).getElementType());
  return MatmulOp::create(b, loc, type, lhs, rhs, ta, tb);
}

/// Sums `grad` (of `resultShape`) over `dims` keeping them as size 1, then
/// reshapes to `operand`'s shape: the adjoint of a broadcast.
inline Value sumTo(OpBuilder &b, Location loc, Value grad,
                   ArrayRef<int64_t> dims, Value operand) {
  Value summed = grad;
  if (!dims.empty()) {
    SmallVector<int64_t> shape(tensorType(grad).getShape());
    for (int64_t d : dims)
      shape[d] = 1;
    auto type = RankedTensorType::get(shape, tensorType(grad).getElementType());
    summed = ReduceSumOp::create(b, loc, type, grad, dims, /*keep_dims=*/true);
  }
  return reshapeTo(b, loc, summed, tensorType(operand).getShape());
}

/// Broadcasts `grad` of a reduction's result back over the reduced `dims`
/// of `input`'s shape (with the element type of `grad`).
inline Value expandTo(OpBuilder &b, Location loc, Value grad,
                      ArrayRef<int64_t> dims, Value input) {
  ArrayRef<int64_t> inShape = tensorType(input).getShape();
  SmallVector<int64_t> kept(inShape);
  for (int64_t d : dims)
    kept[d] = 1;
  Value keptGrad = reshapeTo(b, loc, grad, kept);
  SmallVector<int64_t> identity(inShape.size());
  std::iota(identity.begin(), identity.end(), 0);
  auto type = RankedTensorType::get(inShape, tensorType(grad).getElementType());
  return BroadcastOp::create(b, loc, type, keptGrad, identity);
}

/// Appends one null per operand: nothing flows back.
inline LogicalResult noGradients(Operation *op, SmallVectorImpl<Value> &grads) {
  grads.append(op->getNumOperands(), Value());
  return success();
}

/// `value` converted to element type `element` (a no-op when it has it).
inline Value castTo(OpBuilder &b, Location loc, Value value, Type element) {
  if (tensorType(value).getElementType() == element)
    return value;
  auto type = RankedTensorType::get(tensorType(value).getShape(), element);
  return CastOp::create(b, loc, type, value);
}

/// The type the composite rules compute in: f64 when any of `values` is f64,
/// else f32, matching the kernels, which accumulate narrow types in f32.
inline Type computeType(OpBuilder &b, ValueRange values) {
  for (Value v : values)
    if (v && tensorType(v).getElementType().isF64())
      return b.getF64Type();
  return b.getF32Type();
}

/// `value` broadcast to `shape`, its dimensions placed at `dims`.
inline Value broadcastTo(OpBuilder &b, Location loc, Value value,
                         ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  auto type = RankedTensorType::get(shape, tensorType(value).getElementType());
  if (value.getType() == type)
    return value;
  return BroadcastOp::create(b, loc, type, value, dims);
}

/// `lhs * splat(factor)`.
inline Value scale(OpBuilder &b, Location loc, Value lhs, double factor) {
  return MulOp::create(b, loc, lhs, splat(b, loc, tensorType(lhs), factor));
}

/// 1.0 where `mask`, else 0.0, of element type `element`.
inline Value maskToFloat(OpBuilder &b, Location loc, Value mask, Type element) {
  auto type = RankedTensorType::get(tensorType(mask).getShape(), element);
  return SelectOp::create(b, loc, type, mask, splat(b, loc, type, 1.0),
                          splat(b, loc, type, 0.0));
}

} // namespace llmc::vjp

#endif // LLMC_IR_VJPHELPERS_H
