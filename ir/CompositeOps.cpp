//===- CompositeOps.cpp - verifiers of the composite llmc ops -------------===//
#include "ir/LlmcOps.h"
#include "ir/VerifyUtils.h"

#include <cmath>

using namespace mlir;
using namespace llmc;

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = tensorType(getTable());
  if (failed(expectRank(*this, "table", table.getRank(), 2)) ||
      failed(expectElementType(*this, "result", getType().getElementType(),
                               table.getElementType())))
    return failure();
  SmallVector<int64_t> expected(shapeOf(getIds()));
  expected.push_back(table.getDimSize(1));
  return expectShape(*this, "result", getType().getShape(), expected);
}

/// Norms: gamma (and beta) are vectors over the last input dimension and
/// the result has the input's type.
static LogicalResult verifyNorm(Operation *op, Value input, Value gamma,
                                Value beta, Value result, double epsilon) {
  RankedTensorType in = tensorType(input);
  if (in.getRank() < 1)
    return op->emitOpError()
           << "expected an input of rank at least 1, got rank 0";
  SmallVector<int64_t> featureShape{in.getShape().back()};
  if (failed(expectShape(op, "gamma", shapeOf(gamma), featureShape)) ||
      (beta && failed(expectShape(op, "beta", shapeOf(beta), featureShape))) ||
      (beta && failed(expectElementType(op, "beta", elementOf(beta),
                                        elementOf(gamma)))) ||
      failed(expectType(op, "result", result.getType(), in)))
    return failure();
  if (!(epsilon > 0.0))
    return op->emitOpError() << "expected a positive epsilon, got " << epsilon;
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput(), getGamma(), getBeta(), getResult(),
                    getEpsilon().convertToDouble());
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getInput(), getGamma(), Value(), getResult(),
                    getEpsilon().convertToDouble());
}

/// Norm gradients: the forward operands' checks, the cotangent and dx of
/// the input's type, dgamma (and dbeta) of gamma's.
static LogicalResult verifyNormGrad(Operation *op, Value input, Value gamma,
                                    Value dresult, Value dinput, Value dgamma,
                                    Value dbeta, double epsilon) {
  // The forward's operand checks (the input stands in for its result).
  if (failed(verifyNorm(op, input, gamma, Value(), input, epsilon)) ||
      failed(expectType(op, "dresult", dresult.getType(), tensorType(input))) ||
      failed(expectType(op, "dinput", dinput.getType(), tensorType(input))) ||
      failed(expectType(op, "dgamma", dgamma.getType(), tensorType(gamma))))
    return failure();
  if (dbeta)
    return expectType(op, "dbeta", dbeta.getType(), tensorType(gamma));
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  return verifyNormGrad(*this, getInput(), getGamma(), getDresult(),
                        getDinput(), getDgamma(), getDbeta(),
                        getEpsilon().convertToDouble());
}

LogicalResult RmsNormGradOp::verify() {
  return verifyNormGrad(*this, getInput(), getGamma(), getDresult(),
                        getDinput(), getDgamma(), Value(),
                        getEpsilon().convertToDouble());
}

LogicalResult SoftmaxOp::verify() {
  // The result has the input's type, or the input's shape in f32 when the
  // input is bf16 or f16: llmc-fuse folds a widening cast into the softmax
  // that reads it (the loss gradient's softmax of the bf16 logits), which
  // changes nothing numerically (the softmax computes in double).
  auto inType = cast<RankedTensorType>(getInput().getType());
  bool widened = getType().getShape() == inType.getShape() &&
                 getType().getElementType().isF32() &&
                 (inType.getElementType().isBF16() ||
                  inType.getElementType().isF16());
  if (!widened &&
      failed(expectType(*this, "result", getType(), getInput().getType())))
    return failure();
  return expectDimInRange(*this, "dim", static_cast<int64_t>(getDim()),
                          getType().getRank());
}

/// The operand checks llmc.attention and llmc.attention_grad share: query
/// [B, Hq, T, D], key and value [B, Hkv, S, D] of one element type (bthd:
/// [B, T, Hq, D] and [B, S, Hkv, D]; packed: one [B, T, Hq + 2 Hkv, D]
/// value, with Hq read from the query-side result `out`), Hq a multiple of
/// Hkv, T == S when causal, a positive scale.
static LogicalResult verifyAttentionOperands(Operation *op, Value query,
                                             Value key, Value value,
                                             RankedTensorType out,
                                             AttentionLayout layout,
                                             bool causal,
                                             std::optional<APFloat> scale) {
  RankedTensorType q = tensorType(query), k = tensorType(key),
                   v = tensorType(value);
  if (failed(expectRank(op, "query", q.getRank(), 4)) ||
      failed(expectRank(op, "key", k.getRank(), 4)) ||
      failed(expectType(op, "value", v, k)) ||
      failed(expectElementType(op, "key", k.getElementType(),
                               q.getElementType())))
    return failure();
  // Where the heads and positions are: dims 1 and 2 (bhtd), 2 and 1.
  const int headDimIndex = layout == AttentionLayout::bhtd ? 1 : 2;
  const int seqDimIndex = layout == AttentionLayout::bhtd ? 2 : 1;
  int64_t batch = q.getDimSize(0), heads = q.getDimSize(headDimIndex),
          seq = q.getDimSize(seqDimIndex), headDim = q.getDimSize(3);
  int64_t kvHeads = k.getDimSize(headDimIndex),
          kvSeq = k.getDimSize(seqDimIndex);
  if (layout == AttentionLayout::packed) {
    if (query != key || query != value)
      return op->emitOpError()
             << "expected one packed value as query, key and value";
    if (failed(expectRank(op, "out", out.getRank(), 4)))
      return failure();
    if (out.getDimSize(0) != batch || out.getDimSize(1) != seq ||
        out.getDimSize(3) != headDim)
      return op->emitOpError()
             << "expected the query-side result [" << batch << ", " << seq
             << ", Hq, " << headDim << "] of the packed " << q << ", got "
             << out;
    // The packed heads: Hq query heads, then Hkv key and Hkv value heads.
    heads = out.getDimSize(2);
    int64_t rest = q.getDimSize(2) - heads;
    if (heads < 1 || rest < 2 || rest % 2 != 0)
      return op->emitOpError()
             << "expected " << q.getDimSize(2)
             << " packed heads to be Hq = " << heads
             << " query heads and as many key as value heads";
    kvHeads = rest / 2;
  }
  if (k.getDimSize(0) != batch)
    return op->emitOpError() << "expected key batch size " << batch
                             << ", got " << k.getDimSize(0);
  if (k.getDimSize(3) != headDim)
    return op->emitOpError() << "expected key head dimension " << headDim
                             << ", got " << k.getDimSize(3);
  // Checked before the modulo below, which would divide by zero.
  if (kvHeads < 1)
    return op->emitOpError() << "expected at least one key/value head, got "
                             << kvHeads;
  if (heads % kvHeads != 0)
    return op->emitOpError() << "expected the query heads to be a multiple of "
                                "the key/value heads, got "
                             << heads << " and " << kvHeads;
  if (causal && seq != kvSeq)
    return op->emitOpError() << "expected equal query and key lengths for "
                                "causal attention, got "
                             << seq << " and " << kvSeq;
  if (scale && !(scale->convertToDouble() > 0.0))
    return op->emitOpError() << "expected a positive scale, got "
                             << scale->convertToDouble();
  return success();
}

/// The log-sum-exp of attention's rows: f32 [B, Hq, T] (absent is fine).
/// lse is [B, Hq, T] in every layout: read from the query-side result
/// `out` ([B, Hq, T, D] in bhtd, else [B, T, Hq, D]).
static LogicalResult verifyAttentionLse(Operation *op, Value lse,
                                        RankedTensorType out,
                                        AttentionLayout layout) {
  if (!lse)
    return success();
  ArrayRef<int64_t> o = out.getShape();
  SmallVector<int64_t, 3> rows = {o[0], o[1], o[2]};
  if (layout != AttentionLayout::bhtd)
    rows = {o[0], o[2], o[1]};
  return expectShape(op, "lse", shapeOf(lse), rows);
}

LogicalResult AttentionOp::verify() {
  AttentionLayout layout = getLayout().value_or(AttentionLayout::bhtd);
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     tensorType(getResult()), layout,
                                     getCausal(), getScale())))
    return failure();
  if (failed(verifyAttentionLse(*this, getLse(), tensorType(getResult()),
                                layout)))
    return failure();
  if (layout == AttentionLayout::packed)
    return expectElementType(*this, "result",
                             tensorType(getResult()).getElementType(),
                             tensorType(getQuery()).getElementType());
  return expectType(*this, "result", tensorType(getResult()),
                    tensorType(getQuery()));
}

LogicalResult AttentionGradOp::verify() {
  AttentionLayout layout = getLayout().value_or(AttentionLayout::bhtd);
  RankedTensorType q = tensorType(getQuery()), out = tensorType(getOut());
  if (failed(verifyAttentionOperands(*this, getQuery(), getKey(), getValue(),
                                     out, layout, getCausal(), getScale())))
    return failure();
  size_t expected = layout == AttentionLayout::packed ? 1 : 3;
  if (getGradients().size() != expected)
    return emitOpError() << "expected " << expected << " gradient"
                         << (expected == 1 ? "" : "s") << " in the "
                         << stringifyAttentionLayout(layout)
                         << " layout, got " << getGradients().size();
  if (layout == AttentionLayout::packed
          ? failed(expectElementType(*this, "out", out.getElementType(),
                                     q.getElementType()))
          : failed(expectType(*this, "out", out, q)))
    return failure();
  if (failed(verifyAttentionLse(*this, getLse(), out, layout)) ||
      failed(expectType(*this, "dout", tensorType(getDout()), out)) ||
      failed(expectType(*this, "dquery", tensorType(getDquery()), q)))
    return failure();
  if (layout == AttentionLayout::packed)
    return success();
  if (failed(expectType(*this, "dkey", tensorType(getDkey()),
                        tensorType(getKey()))))
    return failure();
  return expectType(*this, "dvalue", tensorType(getDvalue()),
                    tensorType(getValue()));
}

/// The positions of a block's queries or keys: i32 [length].
static LogicalResult verifyBlockPositions(Operation *op, StringRef what,
                                          Value positions, int64_t length) {
  RankedTensorType type = tensorType(positions);
  if (!type.getElementType().isSignlessInteger(32) || type.getRank() != 1 ||
      type.getDimSize(0) != length)
    return op->emitOpError()
           << "expected i32 " << what << " positions [" << length
           << "], got " << type;
  return success();
}

/// What llmc.attention_block and its gradient share: bhtd operands as
/// llmc.attention's (no causal: the positions mask), positions [T] and [S],
/// lse f32 [B, Hq, T].
static LogicalResult verifyAttentionBlock(Operation *op, Value query,
                                          Value key, Value value, Value lse,
                                          Value queryPositions,
                                          Value keyPositions,
                                          std::optional<APFloat> scale) {
  RankedTensorType q = tensorType(query);
  if (failed(verifyAttentionOperands(op, query, key, value, q,
                                     AttentionLayout::bhtd, false, scale)) ||
      failed(verifyAttentionLse(op, lse, q, AttentionLayout::bhtd)))
    return failure();
  if (failed(verifyBlockPositions(op, "query", queryPositions,
                                  q.getDimSize(2))))
    return failure();
  return verifyBlockPositions(op, "key", keyPositions,
                              tensorType(key).getDimSize(2));
}

LogicalResult AttentionBlockOp::verify() {
  if (failed(verifyAttentionBlock(*this, getQuery(), getKey(), getValue(),
                                  getLse(), getQueryPositions(),
                                  getKeyPositions(), getScale())))
    return failure();
  return expectType(*this, "result", tensorType(getResult()),
                    tensorType(getQuery()));
}

LogicalResult AttentionBlockGradOp::verify() {
  if (failed(verifyAttentionBlock(*this, getQuery(), getKey(), getValue(),
                                  getLse(), getQueryPositions(),
                                  getKeyPositions(), getScale())))
    return failure();
  RankedTensorType q = tensorType(getQuery());
  if (failed(expectType(*this, "out", tensorType(getOut()), q)) ||
      failed(expectType(*this, "dout", tensorType(getDout()), q)) ||
      failed(expectType(*this, "dquery", tensorType(getDquery()), q)) ||
      failed(expectType(*this, "dkey", tensorType(getDkey()),
                        tensorType(getKey()))))
    return failure();
  return expectType(*this, "dvalue", tensorType(getDvalue()),
                    tensorType(getValue()));
}

LogicalResult RopeOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (in.getRank() < 2)
    return emitOpError() << "expected an input [..., T, D] of rank at least "
                            "2, got rank "
                         << in.getRank();
  int64_t seq = in.getDimSize(in.getRank() - 2);
  int64_t headDim = in.getShape().back();
  if (headDim % 2 != 0)
    return emitOpError() << "expected an even head dimension, got " << headDim;
  if (getPositions() &&
      failed(expectShape(*this, "positions", shapeOf(getPositions()), {seq})))
    return failure();
  if (!(getTheta().convertToDouble() > 0.0))
    return emitOpError() << "expected a positive theta, got "
                         << getTheta().convertToDouble();
  if (std::optional<ArrayRef<double>> invFreq = getInvFreq()) {
    if (static_cast<int64_t>(invFreq->size()) != headDim / 2)
      return emitOpError() << "expected " << headDim / 2
                           << " inverse frequencies (one per pair of the head "
                              "dimension "
                           << headDim << "), got " << invFreq->size();
    for (auto [i, f] : llvm::enumerate(*invFreq))
      if (!(f > 0.0) || !std::isfinite(f))
        return emitOpError() << "expected positive finite inverse "
                                "frequencies, got "
                             << f << " at pair " << i;
  }
  return expectType(*this, "result", getType(), in);
}

LogicalResult CrossEntropyOp::verify() {
  RankedTensorType logits = tensorType(getLogits());
  if (logits.getRank() < 1)
    return emitOpError() << "expected logits of rank at least 1, got rank 0";
  if (failed(expectShape(*this, "targets", shapeOf(getTargets()),
                         logits.getShape().drop_back())))
    return failure();
  SmallVector<int64_t> expected;
  if (getReduction() == LossReduction::none)
    expected.assign(shapeOf(getTargets()).begin(),
                    shapeOf(getTargets()).end());
  if (failed(expectShape(*this, "result", shapeOf(getResult()), expected)))
    return failure();
  // The lse: one per position, whatever the reduction.
  if (Value lse = getLse())
    return expectShape(*this, "lse", shapeOf(lse), shapeOf(getTargets()));
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  RankedTensorType logits = tensorType(getLogits());
  if (logits.getRank() < 1)
    return emitOpError() << "expected logits of rank at least 1, got rank 0";
  if (failed(expectShape(*this, "targets", shapeOf(getTargets()),
                         logits.getShape().drop_back())))
    return failure();
  SmallVector<int64_t> expected;
  if (getReduction() == LossReduction::none)
    expected.assign(shapeOf(getTargets()).begin(),
                    shapeOf(getTargets()).end());
  if (failed(expectShape(*this, "dloss", shapeOf(getDloss()), expected)))
    return failure();
  if (Value lse = getLse();
      lse && failed(expectShape(*this, "lse", shapeOf(lse),
                                shapeOf(getTargets()))))
    return failure();
  return expectType(*this, "dlogits", getType(), logits);
}

LogicalResult MoeTopKOp::verify() {
  RankedTensorType logits = tensorType(getLogits());
  if (failed(expectRank(*this, "router logits", logits.getRank(), 2)))
    return failure();
  int64_t tokens = logits.getDimSize(0), experts = logits.getDimSize(1);
  int64_t k = static_cast<int64_t>(getK());
  if (k < 1 || k > experts)
    return emitOpError() << "expected k in [1, " << experts << "], got " << k;
  SmallVector<int64_t> expected{tokens, k};
  if (failed(expectShape(*this, "weights", shapeOf(getWeights()), expected)))
    return failure();
  return expectShape(*this, "indices", shapeOf(getIndices()), expected);
}

/// The routing indices of MoE dispatch/combine: `[N, k]` for N tokens.
static LogicalResult verifyRouting(Operation *op, Value indices,
                                   int64_t tokens) {
  RankedTensorType type = tensorType(indices);
  if (failed(expectRank(op, "indices", type.getRank(), 2)))
    return failure();
  if (type.getDimSize(0) != tokens)
    return op->emitOpError() << "expected indices for " << tokens
                             << " tokens, got " << type.getDimSize(0);
  return success();
}

LogicalResult MoeDispatchOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (failed(expectRank(*this, "input", in.getRank(), 2)) ||
      failed(verifyRouting(*this, getIndices(), in.getDimSize(0))) ||
      failed(expectRank(*this, "result", getType().getRank(), 3)) ||
      failed(expectElementType(*this, "result", getType().getElementType(),
                               in.getElementType())))
    return failure();
  if (getType().getDimSize(2) != in.getDimSize(1))
    return emitOpError() << "expected result feature size " << in.getDimSize(1)
                         << ", got " << getType().getDimSize(2);
  return success();
}

LogicalResult MoeCombineOp::verify() {
  RankedTensorType experts = tensorType(getExpertOut());
  RankedTensorType result = getType();
  if (failed(expectRank(*this, "expert output", experts.getRank(), 3)) ||
      failed(expectRank(*this, "result", result.getRank(), 2)) ||
      failed(verifyRouting(*this, getIndices(), result.getDimSize(0))) ||
      failed(expectShape(*this, "weights", shapeOf(getWeights()),
                         shapeOf(getIndices()))) ||
      failed(expectElementType(*this, "result", result.getElementType(),
                               experts.getElementType())))
    return failure();
  if (result.getDimSize(1) != experts.getDimSize(2))
    return emitOpError() << "expected result feature size "
                         << experts.getDimSize(2) << ", got "
                         << result.getDimSize(1);
  return success();
}

LogicalResult LrScheduleOp::verify() {
  if (failed(expectRank(*this, "step", tensorType(getStep()).getRank(), 0)) ||
      failed(expectType(*this, "result", getType(), getStep().getType())))
    return failure();
  double peak = getPeak().convertToDouble();
  double minimum = getMinimum().convertToDouble();
  if (!(peak > 0.0))
    return emitOpError() << "expected a positive peak rate, got " << peak;
  if (!(minimum >= 0.0 && minimum <= peak))
    return emitOpError() << "expected min in [0, peak " << peak << "], got "
                         << minimum;
  int64_t warmup = static_cast<int64_t>(getWarmup());
  int64_t total = static_cast<int64_t>(getTotal());
  if (total < 1)
    return emitOpError() << "expected total >= 1 step, got " << total;
  if (warmup < 0 || warmup >= total)
    return emitOpError() << "expected warmup in [0, total " << total
                         << "), got " << warmup;
  return success();
}
