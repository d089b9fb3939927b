//===- AttentionLayout.cpp - attention's sizes and strides per layout -----===//
#include "runtime/AttentionLayout.h"

namespace llmc::rt {

namespace {

/// Dense [B, H, T, D] (bhtd) or [B, T, H, D] (bthd) rows of `heads` heads.
AttentionStrides denseStrides(AttentionLayout layout, int64_t heads,
                              int64_t seq, int64_t headDim) {
  AttentionStrides s;
  if (layout == AttentionLayout::BHTD) {
    s.batch = heads * seq * headDim;
    s.head = seq * headDim;
    s.row = headDim;
  } else {
    s.batch = seq * heads * headDim;
    s.head = headDim;
    s.row = heads * headDim;
  }
  return s;
}

} // namespace

std::string attentionGeometry(int64_t layout, const TensorRef &q,
                              const TensorRef &k, const TensorRef &o,
                              AttentionGeometry &g) {
  if (layout < 0 || layout > 2)
    return "expected the attention layout 0 (bhtd), 1 (bthd) or 2 (packed), "
           "got " + std::to_string(layout);
  if (q.rank() != 4 || k.rank() != 4 || o.rank() != 4)
    return "expected rank-4 query, key and result";
  g = AttentionGeometry();
  g.layout = static_cast<AttentionLayout>(layout);
  g.batch = q.shape[0];
  g.headDim = q.shape[3];
  if (g.layout == AttentionLayout::BHTD) {
    g.heads = q.shape[1];
    g.seq = q.shape[2];
    g.kvHeads = k.shape[1];
    g.kvSeq = k.shape[2];
  } else if (g.layout == AttentionLayout::BTHD) {
    g.heads = q.shape[2];
    g.seq = q.shape[1];
    g.kvHeads = k.shape[2];
    g.kvSeq = k.shape[1];
  } else {
    // Packed: the query heads come from the result, the rest is split
    // evenly between keys and values.
    g.heads = o.shape[2];
    g.seq = q.shape[1];
    g.kvSeq = q.shape[1];
    int64_t rest = q.shape[2] - g.heads;
    if (q.shape != k.shape || rest < 2 || rest % 2 != 0)
      return "expected one packed [B, T, Hq + 2 Hkv, D] query/key/value "
             "tensor with Hq = " + std::to_string(g.heads) + ", got " +
             std::to_string(q.shape[2]) + " heads";
    g.kvHeads = rest / 2;
  }
  if (k.shape[0] != g.batch || k.shape[3] != g.headDim)
    return "expected the key's batch and head dimension to match the query's";
  if (g.kvHeads < 1 || g.heads % g.kvHeads != 0)
    return "expected the query heads to be a multiple of the key/value heads, "
           "got " + std::to_string(g.heads) + " and " +
           std::to_string(g.kvHeads);
  Shape result = g.layout == AttentionLayout::BHTD
                     ? Shape{g.batch, g.heads, g.seq, g.headDim}
                     : Shape{g.batch, g.seq, g.heads, g.headDim};
  if (o.shape != result)
    return "expected the query-side result of shape " + formatShape(result) +
           ", got " + formatShape(o.shape);
  if (g.layout == AttentionLayout::Packed) {
    int64_t all = g.heads + 2 * g.kvHeads;
    g.q = denseStrides(AttentionLayout::BTHD, all, g.seq, g.headDim);
    g.k = g.q;
    g.k.offset = g.heads * g.headDim;
    g.v = g.q;
    g.v.offset = (g.heads + g.kvHeads) * g.headDim;
  } else {
    g.q = denseStrides(g.layout, g.heads, g.seq, g.headDim);
    g.k = denseStrides(g.layout, g.kvHeads, g.kvSeq, g.headDim);
    g.v = g.k;
  }
  g.o = denseStrides(g.layout == AttentionLayout::BHTD ? AttentionLayout::BHTD
                                                       : AttentionLayout::BTHD,
                     g.heads, g.seq, g.headDim);
  return "";
}

} // namespace llmc::rt
