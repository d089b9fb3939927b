//===- Cost.cpp - CostOpInterface of every llmc op ------------------------===//
//
// Device-independent costs (see LlmcInterfaces.td for the conventions). The
// per-element constants of composite ops count the primitive ops of their
// decomposition; they only need to be right to within a small factor, since
// these ops are bound by memory bandwidth, not flops.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/VerifyUtils.h"

using namespace mlir;
using namespace llmc;

static double numElements(Value v) {
  return static_cast<double>(tensorType(v).getNumElements());
}

int64_t llmc::tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  int64_t bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * std::max<int64_t>(1, bits / 8);
}

double llmc::detail::defaultFlops(Operation *op) {
  return op->getNumResults() ? numElements(op->getResult(0)) : 0.0;
}

int64_t llmc::detail::operandBytes(Operation *op) {
  int64_t bytes = 0;
  for (Value v : op->getOperands())
    bytes += tensorBytes(v.getType());
  return bytes;
}

int64_t llmc::detail::resultBytes(Operation *op) {
  int64_t bytes = 0;
  for (Value v : op->getResults())
    bytes += tensorBytes(v.getType());
  return bytes;
}

//===----------------------------------------------------------------------===//
// Data movement: no flops.
//===----------------------------------------------------------------------===//

double BroadcastOp::getFlops() { return 0; }
double TransposeOp::getFlops() { return 0; }
double SliceOp::getFlops() { return 0; }
double ConcatOp::getFlops() { return 0; }
double GatherOp::getFlops() { return 0; }
double IotaOp::getFlops() { return 0; }
double AxisOffsetOp::getFlops() { return 0; }
double SendOp::getFlops() { return 0; }
double RecvOp::getFlops() { return 0; }
double ConstantOp::getFlops() { return 0; }
double MoeDispatchOp::getFlops() { return 0; }
double EmbeddingOp::getFlops() { return 0; }

// A reshape of a contiguous tensor is a view: nothing moves.
double ReshapeOp::getFlops() { return 0; }
int64_t ReshapeOp::getBytesRead() { return 0; }
int64_t ReshapeOp::getBytesWritten() { return 0; }

int64_t IotaOp::getBytesRead() { return 0; }
int64_t AxisOffsetOp::getBytesRead() { return 0; }
// A transfer moves bytes over a link, not through this device's memory
// twice: the send reads its input, the receive writes its result.
int64_t SendOp::getBytesWritten() { return 0; }
int64_t RecvOp::getBytesRead() { return 0; }
int64_t ConstantOp::getBytesRead() { return 0; }

// Only the looked-up rows of the table are read, not the whole table.
int64_t EmbeddingOp::getBytesRead() {
  return tensorBytes(getIds().getType()) + tensorBytes(getType());
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

double ScatterAddOp::getFlops() { return numElements(getUpdates()); }
double ReduceSumOp::getFlops() { return numElements(getInput()); }
double ReduceMaxOp::getFlops() { return numElements(getInput()); }
double ReduceMeanOp::getFlops() { return numElements(getInput()) + 1; }

double MatmulOp::getFlops() {
  RankedTensorType lhs = tensorType(getLhs());
  int64_t k = lhs.getDimSize(lhs.getRank() - (getTransposeA() ? 2 : 1));
  // Every result element is a dot product of length k: k multiply-adds.
  return 2.0 * numElements(getResult()) * static_cast<double>(k);
}

// mean, subtract, square, mean, rsqrt, scale, gamma, beta.
double LayerNormOp::getFlops() { return 8.0 * numElements(getInput()); }
// square, mean, rsqrt, scale, gamma.
double RmsNormOp::getFlops() { return 5.0 * numElements(getInput()); }
// The forward's statistics again (mean, centre, square, sum, rsqrt,
// normalize), g = dy gamma, the two row sums, dx's four ops, and the two
// column sums of dgamma and dbeta.
double LayerNormGradOp::getFlops() { return 16.0 * numElements(getInput()); }
// square, sum, rsqrt, normalize, g, one row sum, dx's three ops, dgamma.
double RmsNormGradOp::getFlops() { return 11.0 * numElements(getInput()); }
// max, subtract, exp, sum, divide.
double SoftmaxOp::getFlops() { return 5.0 * numElements(getInput()); }

/// The scores of attention: query rows (B Hq T, from the query-side result
/// `out`, in any layout) times keys (S: key dimension 2 in bhtd, else 1).
static double attentionScores(Value out, Value key,
                              std::optional<AttentionLayout> layout) {
  RankedTensorType o = tensorType(out), k = tensorType(key);
  double rows = static_cast<double>(o.getNumElements() / o.getDimSize(3));
  int keyDim = layout.value_or(AttentionLayout::bhtd) == AttentionLayout::bhtd
                   ? 2
                   : 1;
  return rows * static_cast<double>(k.getDimSize(keyDim));
}

double AttentionOp::getFlops() {
  double scores = attentionScores(getResult(), getKey(), getLayout());
  // q k^T and p v: two contractions over the head dimension, plus the
  // softmax over the scores. A causal mask skips half of the scores.
  double headDim = static_cast<double>(tensorType(getQuery()).getDimSize(3));
  double flops = scores * (4.0 * headDim + 5.0);
  return getCausal() ? flops / 2.0 : flops;
}

double AttentionGradOp::getFlops() {
  double scores = attentionScores(getOut(), getKey(), getLayout());
  // Per score: q k^T twice (the statistics pass, which the forward's
  // log-sum-exp operand saves, then the gradients), dout v^T, and the
  // contractions of dv, dq and dk, all over the head dimension; exp and
  // ds = p (dp - delta). Causal skips half the scores.
  double contractions = getLse() ? 10.0 : 12.0;
  double headDim = static_cast<double>(tensorType(getQuery()).getDimSize(3));
  double flops = scores * (contractions * headDim + 8.0);
  return getCausal() ? flops / 2.0 : flops;
}

// A position-masked block counts half its scores, as causal attention: the
// positions are known only at run time, and under the ring's zigzag split
// every block is exactly half visible (the rank's own block is causal; in
// any other, one of the two query chunks sees all of the two key chunks'
// earlier one and the other none), which the kernels' tile skipping
// realizes up to the tiles that straddle a chunk edge.
double AttentionBlockOp::getFlops() {
  double scores = attentionScores(getResult(), getKey(), std::nullopt);
  double headDim = static_cast<double>(tensorType(getQuery()).getDimSize(3));
  return scores * (4.0 * headDim + 5.0) / 2.0;
}

// As attention_grad given the log-sum-exp: no statistics pass.
double AttentionBlockGradOp::getFlops() {
  double scores = attentionScores(getOut(), getKey(), std::nullopt);
  double headDim = static_cast<double>(tensorType(getQuery()).getDimSize(3));
  return scores * (10.0 * headDim + 8.0) / 2.0;
}

// cos/sin of the angle, two multiplies and an add per element.
double RopeOp::getFlops() { return 6.0 * numElements(getInput()); }
// The tanh form: x^3, a multiply-add, tanh, 1+, two multiplies; erf alike.
double GeluOp::getFlops() { return 8.0 * numElements(getInput()); }
// exp, add, divide, multiply.
double SiluOp::getFlops() { return 4.0 * numElements(getInput()); }
double SwigluOp::getFlops() { return 5.0 * numElements(getGate()); }
// max, subtract, exp, sum per logit; a log and a subtract per position.
double CrossEntropyOp::getFlops() { return 4.0 * numElements(getLogits()); }

// max, subtract, exp, sum per logit (the statistics, unless the forward's
// lse is an operand), then exp, subtract, multiply per logit (the
// gradient; with the lse, x - lse is one more subtract).
double CrossEntropyGradOp::getFlops() {
  return (getLse() ? 4.0 : 7.0) * numElements(getLogits());
}

double MoeTopKOp::getFlops() {
  // softmax over the experts, then k passes to pick the largest.
  return (5.0 + static_cast<double>(getK())) * numElements(getLogits());
}

double MoeCombineOp::getFlops() {
  // One multiply-add per (token, choice, feature).
  return 2.0 * numElements(getWeights()) *
         static_cast<double>(getType().getDimSize(1));
}

double LrScheduleOp::getFlops() {
  // A handful of scalar operations and one cosine.
  return 10.0;
}

double FusedOp::getFlops() {
  // The work of the body; the bytes stay the defaults (operands read and
  // results written once), since values made and used inside stay on chip.
  double flops = 0.0;
  for (Operation &op : getBody().front())
    if (auto cost = dyn_cast<CostOpInterface>(op))
      flops += cost.getFlops();
  return flops;
}

double YieldOp::getFlops() { return 0.0; }
int64_t YieldOp::getBytesRead() { return 0; }
