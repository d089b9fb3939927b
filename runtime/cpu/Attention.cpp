//===- Attention.cpp - CPU kernels of attention and its gradient ----------===//
//
// Attention computes one (batch, head, query) row at a time with a buffer of
// S scores, never the T x S matrix; attention_grad likewise, one task per
// key/value head. All compute in f64 and round once on store.
//
//===----------------------------------------------------------------------===//
#include "runtime/AttentionLayout.h"
#include "runtime/cpu/CompositeCommon.h"

#include <cmath>
#include <limits>
#include <vector>

namespace llmc::rt {

using namespace composite;

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

namespace {

/// The sizes of attention over q [B, Hq, T, D], k and v [B, Hkv, S, D] (or
/// the other layouts of runtime/AttentionLayout.h) and its operands' strides.
struct AttentionShape : AttentionGeometry {
  int64_t group;
  bool causal;
  double scale;
};

/// The checks attention and attention_grad share (operands 0-2 are q, k, v;
/// `result` the query-side result, out; ints [causal, layout], floats
/// [scale]; a missing layout is bhtd).
Status checkAttention(const KernelArgs &args, const TensorRef &result,
                      AttentionShape &shape) {
  // ints [causal] (bhtd) or [causal, layout].
  if (args.attrs.ints.size() != 2)
    LLMC_RETURN_IF_ERROR(args.expectAttrs(1, 1));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(args.attrs.ints.size(), 1));
  const TensorRef &q = args.inputs[0], &k = args.inputs[1], &v = args.inputs[2];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "query", q));
  LLMC_RETURN_IF_ERROR(expectRank(args, "query", q, 4));
  LLMC_RETURN_IF_ERROR(expectDType(args, "key", k, q.dtype));
  LLMC_RETURN_IF_ERROR(expectRank(args, "key", k, 4));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "value", v, k));
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", result, q.dtype));
  LLMC_RETURN_IF_ERROR(expectRank(args, "result", result, 4));
  const int64_t layout = args.attrs.ints.size() > 1 ? args.attrs.ints[1] : 0;
  if (std::string why = attentionGeometry(layout, q, k, result, shape);
      !why.empty())
    return args.error(why);
  shape.group = shape.heads / shape.kvHeads;
  const int64_t causal = args.attrs.ints[0];
  if (causal != 0 && causal != 1)
    return args.error("expected causal to be 0 or 1, got " +
                      std::to_string(causal));
  shape.causal = causal == 1;
  if (shape.causal && shape.seq != shape.kvSeq)
    return args.error("expected equal query and key lengths for causal "
                      "attention, got " +
                      std::to_string(shape.seq) + " and " +
                      std::to_string(shape.kvSeq));
  shape.scale = args.attrs.floats[0];
  if (!(shape.scale > 0.0) || !std::isfinite(shape.scale))
    return args.error("expected a positive finite scale, got " +
                      formatFloat(shape.scale));
  return Status::ok();
}

/// The optional log-sum-exp of attention's rows: f32 [B, Hq, T].
/// The log-sum-exp of every query row: f32 [B, Hq, T] in every layout.
Status checkLse(const KernelArgs &args, const TensorRef &lse,
                const AttentionShape &shape) {
  LLMC_RETURN_IF_ERROR(expectDType(args, "lse", lse, DType::F32));
  return expectShape(args, "lse", lse,
                     Shape{shape.batch, shape.heads, shape.seq});
}

} // namespace

Status cpuAttention(const KernelArgs &args) {
  // The result, and optionally the rows' log-sum-exp.
  LLMC_RETURN_IF_ERROR(
      expectOperands(args, 3, 3, args.outputs.size() == 2 ? 2 : 1));
  AttentionShape shape;
  LLMC_RETURN_IF_ERROR(checkAttention(args, args.outputs[0], shape));
  const TensorRef &q = args.inputs[0], &k = args.inputs[1], &v = args.inputs[2],
                  &out = args.outputs[0];
  const TensorRef *lse = args.outputs.size() == 2 ? &args.outputs[1] : nullptr;
  if (lse)
    LLMC_RETURN_IF_ERROR(checkLse(args, *lse, shape));
  if (out.numElements() == 0)
    return Status::ok();

  const int64_t heads = shape.heads, seq = shape.seq, headDim = shape.headDim,
                kvSeq = shape.kvSeq, group = shape.group;
  const double scale = shape.scale;
  const int64_t rows = shape.batch * heads * seq;
  args.pool.parallelFor(
      rows, rowGrain(kvSeq * headDim), [&](int64_t begin, int64_t end) {
        std::vector<double> query(headDim), kvRow(headDim), acc(headDim);
        std::vector<double> scores(kvSeq);
        for (int64_t row = begin; row < end; ++row) {
          // row = (b * heads + h) * seq + t.
          const int64_t t = row % seq, h = (row / seq) % heads,
                        b = row / (seq * heads);
          const int64_t kvh = h / group;
          // Causal: query t sees keys 0..t.
          const int64_t visible = shape.causal ? t + 1 : kvSeq;
          loadRow(q, shape.q.at(b, h, t), headDim, query.data());

          // 1. Scores and their max.
          double max = -std::numeric_limits<double>::infinity();
          for (int64_t s = 0; s < visible; ++s) {
            loadRow(k, shape.k.at(b, kvh, s), headDim, kvRow.data());
            double dot = 0.0;
            for (int64_t d = 0; d < headDim; ++d)
              dot += query[d] * kvRow[d];
            scores[s] = dot * scale;
            max = std::max(max, scores[s]);
          }
          // 2. Max-subtracted exponentials, and the value rows they weight.
          std::fill(acc.begin(), acc.end(), 0.0);
          double sum = 0.0;
          for (int64_t s = 0; s < visible; ++s) {
            double p = std::exp(scores[s] - max);
            sum += p;
            loadRow(v, shape.v.at(b, kvh, s), headDim, kvRow.data());
            for (int64_t d = 0; d < headDim; ++d)
              acc[d] += p * kvRow[d];
          }
          // 3. Normalize. No visible key (S = 0) gives a zero row.
          for (double &a : acc)
            a = visible > 0 ? a / sum : 0.0;
          storeRow(out, shape.o.at(b, h, t), headDim, acc.data());
          // log(sum of exp(scores)): -inf for a row that sees no key.
          if (lse) {
            double rowLse = visible > 0
                                ? max + std::log(sum)
                                : -std::numeric_limits<double>::infinity();
            storeRow(*lse, row, 1, &rowLse);
          }
        }
      });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// attention_grad
//===----------------------------------------------------------------------===//

// One task per (batch, key/value head): it walks the rows of the group's
// query heads, recomputing each row's probabilities from q and k (a buffer
// of S, never T x S), writes that row's dq and accumulates dk and dv of its
// head in [S, D] buffers. No two tasks write the same element, so the sums
// are in a fixed order and the result is the same for any thread count.
Status cpuAttentionGrad(const KernelArgs &args) {
  // q, k, v, out, dout and optionally the forward's log-sum-exp, which this
  // reference checks but does not read: it recomputes the rows' statistics
  // in f64 (the CUDA kernels read it instead of recomputing it). Three
  // gradients, or one packed.
  if ((args.inputs.size() != 5 && args.inputs.size() != 6) ||
      (args.outputs.size() != 3 && args.outputs.size() != 1))
    return args.error("expected 5-6 inputs and 3 outputs (1 when packed), "
                      "got " +
                      std::to_string(args.inputs.size()) + " and " +
                      std::to_string(args.outputs.size()));
  AttentionShape shape;
  LLMC_RETURN_IF_ERROR(checkAttention(args, args.inputs[3], shape));
  if (args.inputs.size() == 6)
    LLMC_RETURN_IF_ERROR(checkLse(args, args.inputs[5], shape));
  const TensorRef &q = args.inputs[0], &k = args.inputs[1], &v = args.inputs[2],
                  &out = args.inputs[3], &dout = args.inputs[4];
  // Packed: dq, dk and dv are the head ranges of one gradient, with the
  // strides of q, k and v.
  const bool packed = shape.layout == AttentionLayout::Packed;
  if (packed != (args.outputs.size() == 1))
    return args.error(packed ? "expected one packed gradient"
                             : "expected three gradients dq, dk, dv");
  const TensorRef &dq = args.outputs[0], &dk = args.outputs[packed ? 0 : 1],
                  &dv = args.outputs[packed ? 0 : 2];
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dout", dout, out));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dquery", dq, q));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dkey", dk, k));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dvalue", dv, v));

  const int64_t seq = shape.seq, headDim = shape.headDim,
                kvHeads = shape.kvHeads, kvSeq = shape.kvSeq,
                group = shape.group;
  const double scale = shape.scale;
  args.pool.parallelFor(
      shape.batch * kvHeads, 1, [&](int64_t begin, int64_t end) {
        std::vector<double> query(headDim), outRow(headDim), dOut(headDim),
            dQuery(headDim), kvRow(headDim);
        std::vector<double> probs(kvSeq), dKey(kvSeq * headDim),
            dValue(kvSeq * headDim);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t b = task / kvHeads, kvh = task % kvHeads;
          std::fill(dKey.begin(), dKey.end(), 0.0);
          std::fill(dValue.begin(), dValue.end(), 0.0);
          for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h)
            for (int64_t t = 0; t < seq; ++t) {
              const int64_t visible = shape.causal ? t + 1 : kvSeq;
              loadRow(q, shape.q.at(b, h, t), headDim, query.data());
              loadRow(out, shape.o.at(b, h, t), headDim, outRow.data());
              loadRow(dout, shape.o.at(b, h, t), headDim, dOut.data());

              // 1. p = softmax(q k^T * scale) over the visible keys, the
              //    statistics recomputed (the forward kept none).
              double max = -std::numeric_limits<double>::infinity();
              for (int64_t s = 0; s < visible; ++s) {
                loadRow(k, shape.k.at(b, kvh, s), headDim, kvRow.data());
                double dot = 0.0;
                for (int64_t d = 0; d < headDim; ++d)
                  dot += query[d] * kvRow[d];
                probs[s] = dot * scale;
                max = std::max(max, probs[s]);
              }
              double sum = 0.0;
              for (int64_t s = 0; s < visible; ++s) {
                probs[s] = std::exp(probs[s] - max);
                sum += probs[s];
              }
              for (int64_t s = 0; s < visible; ++s)
                probs[s] /= sum;

              // 2. delta = dout . out, the row's sum of dp p.
              double delta = 0.0;
              for (int64_t d = 0; d < headDim; ++d)
                delta += dOut[d] * outRow[d];

              // 3. Per key: dp = dout . v, ds = p (dp - delta); dq += ds k,
              //    dk += ds q, dv += p dout (scale applied to dq, dk).
              std::fill(dQuery.begin(), dQuery.end(), 0.0);
              for (int64_t s = 0; s < visible; ++s) {
                loadRow(v, shape.v.at(b, kvh, s), headDim, kvRow.data());
                double dp = 0.0;
                for (int64_t d = 0; d < headDim; ++d)
                  dp += dOut[d] * kvRow[d];
                const double ds = probs[s] * (dp - delta) * scale;
                loadRow(k, shape.k.at(b, kvh, s), headDim, kvRow.data());
                double *dKeyRow = &dKey[s * headDim];
                double *dValueRow = &dValue[s * headDim];
                for (int64_t d = 0; d < headDim; ++d) {
                  dQuery[d] += ds * kvRow[d];
                  dKeyRow[d] += ds * query[d];
                  dValueRow[d] += probs[s] * dOut[d];
                }
              }
              storeRow(dq, shape.q.at(b, h, t), headDim, dQuery.data());
            }
          for (int64_t s = 0; s < kvSeq; ++s) {
            storeRow(dk, shape.k.at(b, kvh, s), headDim, &dKey[s * headDim]);
            storeRow(dv, shape.v.at(b, kvh, s), headDim, &dValue[s * headDim]);
          }
        }
      });
  return Status::ok();
}

} // namespace llmc::rt
