//===- VjpAttention.cpp - derivative rule of llmc.attention ---------------===//
//
// DifferentiableOpInterface::buildVjp for attention: one llmc.attention_grad
// run by a flash backward kernel that never materializes the [B, Hq, T, S]
// scores (docs/autodiff.md, "Attention"). The rule gives the forward op its
// log-sum-exp result (f32 [B, Hq, T]) and passes it to the gradient, so that
// the backward kernel need not recompute the softmax statistics. Checked by
// finite differences in f64 in test/compiler/AutodiffTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/VjpHelpers.h"

using namespace mlir;

namespace llmc {
using namespace vjp;

namespace {

/// The same attention as `op` (operands, attributes and properties, so an
/// attribute added later travels too) with the log-sum-exp as a second
/// result, inserted before `op`; `op`'s uses move to it, and `op` is left
/// without uses (pure: the autodiff pass erases it). The new op is built
/// without the rule's builder, whose listener would tag it as backward.
AttentionOp withLogSumExp(AttentionOp op) {
  Operation *old = op.getOperation();
  // [B, Hq, T] in every layout, from the result ([B, T, Hq, D] unless bhtd).
  ArrayRef<int64_t> o = tensorType(op.getResult()).getShape();
  SmallVector<int64_t, 3> rows = {o[0], o[1], o[2]};
  if (op.getLayout().value_or(AttentionLayout::bhtd) != AttentionLayout::bhtd)
    rows = {o[0], o[2], o[1]};
  auto lseType = RankedTensorType::get(rows, Float32Type::get(op.getContext()));
  SmallVector<Type> types = {op.getResult().getType(), lseType};
  Operation *created = Operation::create(
      old->getLoc(), old->getName(), types, old->getOperands(),
      NamedAttrList(old->getDiscardableAttrDictionary()),
      old->getPropertiesStorage(), BlockRange(), /*numRegions=*/0u);
  OpBuilder before(old);
  before.insert(created);
  auto forward = cast<AttentionOp>(created);
  op.getResult().replaceAllUsesWith(forward.getResult());
  return forward;
}

} // namespace

LogicalResult AttentionOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  if (resultGrads.size() > 1 && resultGrads[1])
    return emitOpError() << "cannot differentiate through the log-sum-exp "
                            "result; only the attention result has a rule";
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  AttentionOp forward = getLse() ? *this : withLogSumExp(*this);
  // The kernel reads every operand in its storage type and accumulates in
  // f32 or better itself, so no casts beyond matching the cotangent to the
  // forward result's type.
  Value grad = castLike(b, loc, g, forward.getResult());
  // The gradients in the forward's layout; packed: one gradient of the one
  // packed value, given to its first use (the uses' gradients are summed).
  bool packed = getLayout() == AttentionLayout::packed;
  SmallVector<Type, 3> types = {getQuery().getType()};
  if (!packed)
    types.append({getKey().getType(), getValue().getType()});
  auto grads = AttentionGradOp::create(
      b, loc, types, getQuery(), getKey(), getValue(), forward.getResult(),
      grad, forward.getLse(), getCausalAttr(), getScaleAttr(),
      getLayoutAttr());
  operandGrads.push_back(grads.getDquery());
  operandGrads.push_back(grads.getDkey());
  operandGrads.push_back(grads.getDvalue());
  return success();
}

} // namespace llmc
