//===- AttentionBlock.cpp - CPU kernels of ring attention's blocks --------===//
//
// AttentionBlock and AttentionBlockGrad (Kernels.def): attention of a block
// of queries against a block of keys masked by global positions (key s is
// visible to query t when kpos[s] <= qpos[t]), the forward returning the
// rows' log-sum-exp, the backward reading the merged out and lse of the
// whole ring (docs/sharding.md, "Context parallelism"). As Attention.cpp:
// one row at a time with a buffer of S scores, f64 arithmetic, one rounding
// on store. A row whose position is below every key position sees nothing
// and is skipped whole (zero out, lse -inf; zero dq), and within a row only
// the visible keys are computed: the CPU's form of skipping masked tiles.
//
//===----------------------------------------------------------------------===//
#include "runtime/AttentionLayout.h"
#include "runtime/cpu/CompositeCommon.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace llmc::rt {

using namespace composite;

namespace {

/// The sizes, strides and positions of one block: q [B, Hq, T, D], k and v
/// [B, Hkv, S, D] (bhtd), positions i32 [T] and [S].
struct BlockShape : AttentionGeometry {
  int64_t group = 1;
  double scale = 0.0;
  std::vector<int64_t> queryPositions, keyPositions;
  /// The smallest key position: a query below it sees no key.
  int64_t firstKey = std::numeric_limits<int64_t>::max();
  bool sees(int64_t t, int64_t s) const {
    return keyPositions[s] <= queryPositions[t];
  }
};

Status checkPositions(const KernelArgs &args, const std::string &what,
                      const TensorRef &positions, int64_t length,
                      std::vector<int64_t> &values) {
  LLMC_RETURN_IF_ERROR(expectDType(args, what, positions, DType::I32));
  LLMC_RETURN_IF_ERROR(expectShape(args, what, positions, Shape{length}));
  values.resize(length);
  for (int64_t i = 0; i < length; ++i)
    values[i] = loadInt(positions, i);
  return Status::ok();
}

/// The checks both kernels share: q, k, v (inputs 0-2), the query-side
/// tensor `rows` (out), lse f32 [B, Hq, T], the positions at inputs
/// `positionsAt` and `positionsAt + 1`, floats [scale].
Status checkBlock(const KernelArgs &args, const TensorRef &rows,
                  const TensorRef &lse, size_t positionsAt, BlockShape &shape) {
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 1));
  const TensorRef &q = args.inputs[0], &k = args.inputs[1], &v = args.inputs[2];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "query", q));
  LLMC_RETURN_IF_ERROR(expectRank(args, "query", q, 4));
  LLMC_RETURN_IF_ERROR(expectDType(args, "key", k, q.dtype));
  LLMC_RETURN_IF_ERROR(expectRank(args, "key", k, 4));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "value", v, k));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "out", rows, q));
  if (std::string why = attentionGeometry(0, q, k, rows, shape); !why.empty())
    return args.error(why);
  shape.group = shape.heads / shape.kvHeads;
  shape.scale = args.attrs.floats[0];
  if (!(shape.scale > 0.0) || !std::isfinite(shape.scale))
    return args.error("expected a positive finite scale, got " +
                      formatFloat(shape.scale));
  LLMC_RETURN_IF_ERROR(expectDType(args, "lse", lse, DType::F32));
  LLMC_RETURN_IF_ERROR(expectShape(args, "lse", lse,
                                   Shape{shape.batch, shape.heads, shape.seq}));
  LLMC_RETURN_IF_ERROR(checkPositions(args, "query positions",
                                      args.inputs[positionsAt], shape.seq,
                                      shape.queryPositions));
  LLMC_RETURN_IF_ERROR(checkPositions(args, "key positions",
                                      args.inputs[positionsAt + 1], shape.kvSeq,
                                      shape.keyPositions));
  for (int64_t p : shape.keyPositions)
    shape.firstKey = std::min(shape.firstKey, p);
  return Status::ok();
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double sum = 0.0;
  for (size_t d = 0; d < a.size(); ++d)
    sum += a[d] * b[d];
  return sum;
}

} // namespace

Status cpuAttentionBlock(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 5, 5, 2));
  const TensorRef &q = args.inputs[0], &k = args.inputs[1], &v = args.inputs[2],
                  &out = args.outputs[0], &lse = args.outputs[1];
  BlockShape shape;
  LLMC_RETURN_IF_ERROR(checkBlock(args, out, lse, 3, shape));
  const int64_t heads = shape.heads, seq = shape.seq, headDim = shape.headDim,
                kvSeq = shape.kvSeq;
  const double negInf = -std::numeric_limits<double>::infinity();
  args.pool.parallelFor(
      shape.batch * heads * seq, rowGrain(kvSeq * headDim),
      [&](int64_t begin, int64_t end) {
        std::vector<double> query(headDim), kvRow(headDim), acc(headDim);
        std::vector<double> scores(kvSeq);
        for (int64_t row = begin; row < end; ++row) {
          // row = (b * heads + h) * seq + t.
          const int64_t t = row % seq, h = (row / seq) % heads,
                        b = row / (seq * heads), kvh = h / shape.group;
          std::fill(acc.begin(), acc.end(), 0.0);
          double max = negInf, sum = 0.0;
          // 1. Scores of the visible keys and their max (none when the
          //    row's position is below every key's: the row is skipped).
          if (shape.queryPositions[t] >= shape.firstKey) {
            loadRow(q, shape.q.at(b, h, t), headDim, query.data());
            for (int64_t s = 0; s < kvSeq; ++s) {
              if (!shape.sees(t, s))
                continue;
              loadRow(k, shape.k.at(b, kvh, s), headDim, kvRow.data());
              scores[s] = dot(query, kvRow) * shape.scale;
              max = std::max(max, scores[s]);
            }
          }
          // 2. Their exponentials against the max, weighting the values.
          if (max > negInf)
            for (int64_t s = 0; s < kvSeq; ++s) {
              if (!shape.sees(t, s))
                continue;
              double p = std::exp(scores[s] - max);
              sum += p;
              loadRow(v, shape.v.at(b, kvh, s), headDim, kvRow.data());
              for (int64_t d = 0; d < headDim; ++d)
                acc[d] += p * kvRow[d];
            }
          // 3. Normalize; a row that sees no key is zero with lse -inf.
          for (double &a : acc)
            a = sum > 0.0 ? a / sum : 0.0;
          storeRow(out, shape.o.at(b, h, t), headDim, acc.data());
          double rowLse = sum > 0.0 ? max + std::log(sum) : negInf;
          storeRow(lse, row, 1, &rowLse);
        }
      });
  return Status::ok();
}

// One task per (batch, key/value head), as attention_grad's: the rows of
// the group's query heads in order, dk and dv summed in [S, D] buffers, so
// the sums are in a fixed order for any thread count.
Status cpuAttentionBlockGrad(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 8, 8, 3));
  const TensorRef &q = args.inputs[0], &k = args.inputs[1], &v = args.inputs[2],
                  &out = args.inputs[3], &dout = args.inputs[4],
                  &lse = args.inputs[5];
  const TensorRef &dq = args.outputs[0], &dk = args.outputs[1],
                  &dv = args.outputs[2];
  BlockShape shape;
  LLMC_RETURN_IF_ERROR(checkBlock(args, out, lse, 6, shape));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dout", dout, out));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dquery", dq, q));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dkey", dk, k));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dvalue", dv, v));
  const int64_t seq = shape.seq, headDim = shape.headDim,
                kvHeads = shape.kvHeads, kvSeq = shape.kvSeq,
                group = shape.group, heads = shape.heads;
  const double scale = shape.scale;
  args.pool.parallelFor(
      shape.batch * kvHeads, 1, [&](int64_t begin, int64_t end) {
        std::vector<double> query(headDim), outRow(headDim), dOut(headDim),
            dQuery(headDim), keyRow(headDim), valueRow(headDim);
        std::vector<double> dKey(kvSeq * headDim), dValue(kvSeq * headDim);
        for (int64_t task = begin; task < end; ++task) {
          const int64_t b = task / kvHeads, kvh = task % kvHeads;
          std::fill(dKey.begin(), dKey.end(), 0.0);
          std::fill(dValue.begin(), dValue.end(), 0.0);
          for (int64_t h = kvh * group; h < (kvh + 1) * group; ++h)
            for (int64_t t = 0; t < seq; ++t) {
              std::fill(dQuery.begin(), dQuery.end(), 0.0);
              double rowLse = 0.0;
              loadRow(lse, (b * heads + h) * seq + t, 1, &rowLse);
              // A row that sees no key of the block (or of any block: lse
              // -inf) contributes nothing.
              bool skip = shape.queryPositions[t] < shape.firstKey ||
                          !std::isfinite(rowLse);
              if (!skip) {
                loadRow(q, shape.q.at(b, h, t), headDim, query.data());
                loadRow(out, shape.o.at(b, h, t), headDim, outRow.data());
                loadRow(dout, shape.o.at(b, h, t), headDim, dOut.data());
                // delta = dout . out over the whole ring's out.
                const double delta = dot(dOut, outRow);
                for (int64_t s = 0; s < kvSeq; ++s) {
                  if (!shape.sees(t, s))
                    continue;
                  // p with the ring's statistics; ds = p (dp - delta).
                  loadRow(k, shape.k.at(b, kvh, s), headDim, keyRow.data());
                  loadRow(v, shape.v.at(b, kvh, s), headDim, valueRow.data());
                  const double p =
                      std::exp(dot(query, keyRow) * scale - rowLse);
                  const double ds = p * (dot(dOut, valueRow) - delta) * scale;
                  double *dKeyRow = &dKey[s * headDim];
                  double *dValueRow = &dValue[s * headDim];
                  for (int64_t d = 0; d < headDim; ++d) {
                    dQuery[d] += ds * keyRow[d];
                    dKeyRow[d] += ds * query[d];
                    dValueRow[d] += p * dOut[d];
                  }
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
