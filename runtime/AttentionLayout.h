//===- AttentionLayout.h - where attention's operands lie in memory -*- C++ -*-===//
//
// The layouts of llmc.attention / llmc.attention_grad (Kernels.def ints[1]),
// shared by the CPU reference (runtime/cpu/Attention.cpp) and the
// CUDA flash kernels' launcher: every operand row of D elements is
// contiguous, and the row of (batch b, head h, position t) starts at
// `offset + b * batch + h * head + t * row` elements.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_ATTENTIONLAYOUT_H
#define LLMC_RUNTIME_ATTENTIONLAYOUT_H

#include "runtime/Kernel.h"

#include <cstdint>
#include <string>

namespace llmc::rt {

/// The value of Kernels.def's attention layout int (ir: AttentionLayout).
enum class AttentionLayout : int64_t {
  /// q [B, Hq, T, D], k and v [B, Hkv, S, D]; results likewise.
  BHTD = 0,
  /// q [B, T, Hq, D], k and v [B, S, Hkv, D]; results likewise.
  BTHD = 1,
  /// q, k and v are one [B, T, Hq + 2 Hkv, D] tensor (query heads, then key
  /// heads, then value heads: GPT-2's c_attn product, reshaped); out and
  /// dout [B, T, Hq, D]; attention_grad writes one [B, T, Hq + 2 Hkv, D]
  /// gradient.
  Packed = 2,
};

/// Where the rows of one operand are, in elements.
struct AttentionStrides {
  int64_t offset = 0, batch = 0, head = 0, row = 0;
  /// The first element of the row of (b, h, t).
  int64_t at(int64_t b, int64_t h, int64_t t) const {
    return offset + b * batch + h * head + t * row;
  }
};

/// The sizes of one attention and the strides of its operands: q (and dq),
/// k (dk), v (dv), and o for the query-side result (out, dout).
struct AttentionGeometry {
  AttentionLayout layout = AttentionLayout::BHTD;
  int64_t batch = 0, heads = 0, seq = 0, kvHeads = 0, kvSeq = 0, headDim = 0;
  AttentionStrides q, k, v, o;
};

/// Reads the sizes from q, k and the query-side result `o` (the forward
/// result, or attention_grad's out) under `layout` (the raw int) and fills
/// the strides; returns why not ("" when they are consistent).
std::string attentionGeometry(int64_t layout, const TensorRef &q,
                              const TensorRef &k, const TensorRef &o,
                              AttentionGeometry &geometry);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_ATTENTIONLAYOUT_H
