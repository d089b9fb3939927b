//===- Moe.cpp - CPU kernels of moe_topk, dispatch, combine -----===//
//
// moe_topk picks each token's experts; moe_dispatch copies tokens into
// per-expert buffers [E, C, D]; moe_combine sums the expert outputs back.
// Dispatch and combine share one slot assignment (assignSlots), so combine
// reads exactly the slots dispatch wrote.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CompositeCommon.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace llmc::rt {

using namespace composite;

namespace {

/// The slot of each (token n, choice j) pair in its expert's buffer, indexed
/// n * k + j. Pairs are taken in order of token, then choice (the flat order
/// of `indices`); the first `capacity` pairs that chose expert e get slots
/// 0..capacity-1. A pair that comes later (dropped), or that names an expert
/// outside [0, numExperts), gets -1.
std::vector<int64_t> assignSlots(const TensorRef &indices, int64_t numExperts,
                                 int64_t capacity) {
  std::vector<int64_t> used(numExperts, 0);
  std::vector<int64_t> slots(indices.numElements(), -1);
  for (int64_t pair = 0; pair < indices.numElements(); ++pair) {
    int64_t expert = loadInt(indices, pair);
    if (expert < 0 || expert >= numExperts || used[expert] >= capacity)
      continue;
    slots[pair] = used[expert]++;
  }
  return slots;
}

/// Checks routing indices [N, k] of type i32/i64 for `tokens` tokens.
Status checkRouting(const KernelArgs &args, const TensorRef &indices,
                    int64_t tokens) {
  LLMC_RETURN_IF_ERROR(expectIndex(args, "indices", indices));
  LLMC_RETURN_IF_ERROR(expectRank(args, "indices", indices, 2));
  if (indices.shape[0] != tokens)
    return args.error("expected indices for " + std::to_string(tokens) +
                      " tokens, got " + std::to_string(indices.shape[0]));
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// moe_topk
//===----------------------------------------------------------------------===//

Status cpuMoeTopK(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 1, 1, 2));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(2, 0));
  const TensorRef &logits = args.inputs[0], &weights = args.outputs[0],
                  &indices = args.outputs[1];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "router logits", logits));
  LLMC_RETURN_IF_ERROR(expectRank(args, "router logits", logits, 2));
  const int64_t tokens = logits.shape[0], experts = logits.shape[1];
  const int64_t k = args.attrs.ints[0], normalize = args.attrs.ints[1];
  if (k < 1 || k > experts)
    return args.error("expected k in [1, " + std::to_string(experts) +
                      "], got " + std::to_string(k));
  if (normalize != 0 && normalize != 1)
    return args.error("expected normalize to be 0 or 1, got " +
                      std::to_string(normalize));
  LLMC_RETURN_IF_ERROR(expectFloat(args, "weights", weights));
  LLMC_RETURN_IF_ERROR(expectShape(args, "weights", weights, {tokens, k}));
  LLMC_RETURN_IF_ERROR(expectIndex(args, "indices", indices));
  LLMC_RETURN_IF_ERROR(expectShape(args, "indices", indices, {tokens, k}));

  args.pool.parallelFor(
      tokens, rowGrain(experts), [&](int64_t begin, int64_t end) {
        std::vector<double> row(experts), probs(experts), top(k);
        std::vector<char> taken(experts);
        for (int64_t n = begin; n < end; ++n) {
          // 1. Softmax over all E experts (Mixtral), max-subtracted, in f64.
          loadRow(logits, n * experts, experts, row.data());
          double max = -std::numeric_limits<double>::infinity();
          for (double v : row)
            max = std::max(max, v);
          double sum = 0.0;
          for (int64_t e = 0; e < experts; ++e) {
            probs[e] = std::exp(row[e] - max);
            sum += probs[e];
          }
          // 2. The k largest logits, largest first. Selection compares the
          //    logits (not the rounded probabilities) with a strict `>`, so a
          //    tie keeps the lower expert id.
          std::fill(taken.begin(), taken.end(), 0);
          double kept = 0.0;
          for (int64_t j = 0; j < k; ++j) {
            int64_t best = -1;
            for (int64_t e = 0; e < experts; ++e)
              if (!taken[e] && (best < 0 || row[e] > row[best]))
                best = e;
            taken[best] = 1;
            top[j] = probs[best] / sum;
            kept += top[j];
            storeInt(indices, n * k + j, best);
          }
          // 3. Under normalize, the k weights sum to one.
          if (normalize)
            for (double &w : top)
              w /= kept;
          storeRow(weights, n * k, k, top.data());
        }
      });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// moe_dispatch
//===----------------------------------------------------------------------===//

Status cpuMoeDispatch(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 2, 2, 1));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 0));
  const TensorRef &input = args.inputs[0], &indices = args.inputs[1],
                  &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "input", input));
  LLMC_RETURN_IF_ERROR(expectRank(args, "input", input, 2));
  LLMC_RETURN_IF_ERROR(checkRouting(args, indices, input.shape[0]));
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", out, input.dtype));
  LLMC_RETURN_IF_ERROR(expectRank(args, "result", out, 3));
  const int64_t tokens = input.shape[0], dim = input.shape[1];
  const int64_t k = indices.shape[1];
  const int64_t experts = out.shape[0], capacity = out.shape[1];
  if (out.shape[2] != dim)
    return args.error("expected result feature size " + std::to_string(dim) +
                      ", got " + std::to_string(out.shape[2]));

  if (out.numElements() == 0)
    return Status::ok();

  // Unused slots stay zero (the zero bit pattern is +0.0 in every float
  // format); each used slot belongs to one pair, so tokens copy in parallel.
  std::memset(out.data, 0, out.bytes());
  const std::vector<int64_t> slots = assignSlots(indices, experts, capacity);
  const size_t rowBytes = static_cast<size_t>(dim) * dtypeSize(input.dtype);
  const char *src = static_cast<const char *>(input.data);
  char *dst = static_cast<char *>(out.data);
  args.pool.parallelFor(
      tokens, rowGrain(k * dim), [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n)
          for (int64_t j = 0; j < k; ++j) {
            int64_t slot = slots[n * k + j];
            if (slot < 0)
              continue;
            int64_t expert = loadInt(indices, n * k + j);
            std::memcpy(dst + (expert * capacity + slot) * rowBytes,
                        src + n * rowBytes, rowBytes);
          }
      });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// moe_combine
//===----------------------------------------------------------------------===//

Status cpuMoeCombine(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 3, 3, 1));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 0));
  const TensorRef &expertOut = args.inputs[0], &weights = args.inputs[1],
                  &indices = args.inputs[2], &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "expert output", expertOut));
  LLMC_RETURN_IF_ERROR(expectRank(args, "expert output", expertOut, 3));
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", out, expertOut.dtype));
  LLMC_RETURN_IF_ERROR(expectRank(args, "result", out, 2));
  const int64_t tokens = out.shape[0], dim = expertOut.shape[2];
  LLMC_RETURN_IF_ERROR(checkRouting(args, indices, tokens));
  LLMC_RETURN_IF_ERROR(expectFloat(args, "weights", weights));
  LLMC_RETURN_IF_ERROR(expectShape(args, "weights", weights, indices.shape));
  if (out.shape[1] != dim)
    return args.error("expected result feature size " + std::to_string(dim) +
                      ", got " + std::to_string(out.shape[1]));
  const int64_t k = indices.shape[1];
  const int64_t experts = expertOut.shape[0], capacity = expertOut.shape[1];

  // The same assignment as dispatch: dropped pairs add nothing.
  const std::vector<int64_t> slots = assignSlots(indices, experts, capacity);
  args.pool.parallelFor(
      tokens, rowGrain(k * dim), [&](int64_t begin, int64_t end) {
        std::vector<double> acc(dim), row(dim);
        for (int64_t n = begin; n < end; ++n) {
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t j = 0; j < k; ++j) {
            int64_t slot = slots[n * k + j];
            if (slot < 0)
              continue;
            int64_t expert = loadInt(indices, n * k + j);
            double weight = loadFloat(weights, n * k + j);
            loadRow(expertOut, (expert * capacity + slot) * dim, dim,
                    row.data());
            for (int64_t d = 0; d < dim; ++d)
              acc[d] += weight * row[d];
          }
          storeRow(out, n * dim, dim, acc.data());
        }
      });
  return Status::ok();
}

} // namespace llmc::rt
