//===- VjpAttention.cpp - derivative rule of llmc.attention ---------------===//
//
// DifferentiableOpInterface::buildVjp for attention: one llmc.attention_grad,
// which recomputes the softmax statistics from the query and key (the
// forward op keeps no log-sum-exp) and is run by a flash backward kernel
// that never materializes the [B, Hq, T, S] scores (docs/autodiff.md,
// "Attention"). Checked by finite differences in f64 in
// test/compiler/AutodiffTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/VjpHelpers.h"

using namespace mlir;

namespace llmc {
using namespace vjp;

LogicalResult AttentionOp::buildVjp(OpBuilder &b, ValueRange resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Value g = resultGrads[0];
  if (!g)
    return noGradients(*this, operandGrads);
  Location loc = getLoc();
  // The kernel reads every operand in its storage type and accumulates in
  // f32 or better itself, so no casts beyond matching the cotangent to the
  // forward result's type.
  Value grad = castLike(b, loc, g, getResult());
  // The gradients in the forward's layout; packed: one gradient of the one
  // packed value, given to its first use (the uses' gradients are summed).
  bool packed = getLayout() == AttentionLayout::packed;
  SmallVector<Type, 3> types = {getQuery().getType()};
  if (!packed)
    types.append({getKey().getType(), getValue().getType()});
  auto grads = AttentionGradOp::create(
      b, loc, types, getQuery(), getKey(), getValue(), getResult(), grad,
      getCausalAttr(), getScaleAttr(), getLayoutAttr());
  operandGrads.push_back(grads.getDquery());
  operandGrads.push_back(grads.getDkey());
  operandGrads.push_back(grads.getDvalue());
  return success();
}

} // namespace llmc
