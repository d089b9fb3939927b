//===- CrossEntropy.cpp - CPU kernels of the loss and its gradient --------===//
//
// cross_entropy and cross_entropy_grad: both read integer targets and report
// a bad one, since a loss over it means nothing (embedding, which defines
// out-of-range ids as zero rows, is MovementIndex.cpp's).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CompositeCommon.h"

#include <cmath>
#include <limits>
#include <vector>

namespace llmc::rt {

using namespace composite;

//===----------------------------------------------------------------------===//
// cross_entropy
//===----------------------------------------------------------------------===//

namespace {

enum class Reduction : int64_t { Mean = 0, Sum = 1, None = 2 };

/// "[1, 5]": the multi-index of flat position `flat` in `shape`.
std::string formatPosition(const Shape &shape, int64_t flat) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return formatShape(index);
}

/// Every target is `ignoreIndex` (when `hasIgnore`) or a class in
/// [0, vocab); the first that is not is reported with its position.
Status checkTargets(const KernelArgs &args, const TensorRef &targets,
                    int64_t vocab, int64_t hasIgnore, int64_t ignoreIndex) {
  for (int64_t n = 0; n < targets.numElements(); ++n) {
    int64_t target = loadInt(targets, n);
    if ((hasIgnore && target == ignoreIndex) || (target >= 0 && target < vocab))
      continue;
    std::string allowed = "[0, " + std::to_string(vocab) + ")";
    if (hasIgnore)
      allowed += " or the ignore_index " + std::to_string(ignoreIndex);
    return args.error("expected targets in " + allowed + ", got " +
                      std::to_string(target) + " at position " +
                      formatPosition(targets.shape, n));
  }
  return Status::ok();
}

/// The reduction and ignore attributes cross_entropy and its gradient share.
Status readLossAttrs(const KernelArgs &args, Reduction &reduction,
                     int64_t &hasIgnore, int64_t &ignoreIndex) {
  LLMC_RETURN_IF_ERROR(args.expectAttrs(3, 0));
  const int64_t reductionAttr = args.attrs.ints[0];
  if (reductionAttr < 0 || reductionAttr > 2)
    return args.error("expected reduction 0 (mean), 1 (sum) or 2 (none), "
                      "got " +
                      std::to_string(reductionAttr));
  reduction = static_cast<Reduction>(reductionAttr);
  hasIgnore = args.attrs.ints[1];
  if (hasIgnore != 0 && hasIgnore != 1)
    return args.error("expected has_ignore to be 0 or 1, got " +
                      std::to_string(hasIgnore));
  ignoreIndex = args.attrs.ints[2];
  return Status::ok();
}

} // namespace

Status cpuCrossEntropy(const KernelArgs &args) {
  // Outputs: the loss, and optionally the log-sum-exp of every position.
  if (args.outputs.size() != 1 && args.outputs.size() != 2)
    return args.error("expected 1 or 2 outputs (the loss and the lse), got " +
                      std::to_string(args.outputs.size()));
  LLMC_RETURN_IF_ERROR(expectOperands(args, 2, 2, args.outputs.size()));
  Reduction reduction;
  int64_t hasIgnore, ignoreIndex;
  LLMC_RETURN_IF_ERROR(readLossAttrs(args, reduction, hasIgnore, ignoreIndex));
  const TensorRef &logits = args.inputs[0], &targets = args.inputs[1],
                  &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "logits", logits));
  if (logits.rank() < 1)
    return args.error("expected logits of rank at least 1, got rank 0");
  LLMC_RETURN_IF_ERROR(expectIndex(args, "targets", targets));
  Shape positions(logits.shape.begin(), logits.shape.end() - 1);
  LLMC_RETURN_IF_ERROR(expectShape(args, "targets", targets, positions));
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", out, DType::F32));
  LLMC_RETURN_IF_ERROR(expectShape(
      args, "result", out, reduction == Reduction::None ? positions : Shape{}));
  const TensorRef *lse = args.outputs.size() == 2 ? &args.outputs[1] : nullptr;
  if (lse) {
    LLMC_RETURN_IF_ERROR(expectDType(args, "lse", *lse, DType::F32));
    LLMC_RETURN_IF_ERROR(expectShape(args, "lse", *lse, positions));
  }

  const int64_t vocab = logits.shape.back();
  const int64_t count = targets.numElements();
  auto ignored = [&](int64_t target) {
    return hasIgnore && target == ignoreIndex;
  };

  // 1. Every target is ignored or names a class; report the first that
  //    does not, before any work.
  LLMC_RETURN_IF_ERROR(checkTargets(args, targets, vocab, hasIgnore,
                                    ignoreIndex));

  // 2. Per-position losses logsumexp(row) - row[target], in f64; ignored
  //    positions are 0. The lse of every position (ignored ones too: it
  //    depends on the logits only), rounded once to f32.
  std::vector<double> losses(count, 0.0), sums(lse ? count : 0);
  args.pool.parallelFor(
      count, rowGrain(vocab), [&](int64_t begin, int64_t end) {
        std::vector<double> row(vocab);
        for (int64_t n = begin; n < end; ++n) {
          int64_t target = loadInt(targets, n);
          if (ignored(target) && !lse)
            continue;
          loadRow(logits, n * vocab, vocab, row.data());
          double max = -std::numeric_limits<double>::infinity();
          for (double v : row)
            max = std::max(max, v);
          double sum = 0.0;
          for (double v : row)
            sum += std::exp(v - max);
          if (lse)
            sums[n] = max + std::log(sum);
          if (!ignored(target))
            losses[n] = max + std::log(sum) - row[target];
        }
      });
  if (lse)
    storeRow(*lse, 0, count, sums.data());

  // 3. Reduce in position order, so the result does not depend on the
  //    number of threads. A mean over no counted position is 0.
  if (reduction == Reduction::None) {
    storeRow(out, 0, count, losses.data());
    return Status::ok();
  }
  double total = 0.0;
  int64_t counted = 0;
  for (int64_t n = 0; n < count; ++n) {
    total += losses[n];
    counted += ignored(loadInt(targets, n)) ? 0 : 1;
  }
  if (reduction == Reduction::Mean)
    total = counted > 0 ? total / static_cast<double>(counted) : 0.0;
  storeRow(out, 0, 1, &total);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// cross_entropy_grad
//===----------------------------------------------------------------------===//

Status cpuCrossEntropyGrad(const KernelArgs &args) {
  // Inputs: logits, targets, dloss, and optionally the forward's lse.
  LLMC_RETURN_IF_ERROR(expectOperands(args, 3, 4, 1));
  Reduction reduction;
  int64_t hasIgnore, ignoreIndex;
  LLMC_RETURN_IF_ERROR(readLossAttrs(args, reduction, hasIgnore, ignoreIndex));
  const TensorRef &logits = args.inputs[0], &targets = args.inputs[1],
                  &dloss = args.inputs[2], &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "logits", logits));
  if (logits.rank() < 1)
    return args.error("expected logits of rank at least 1, got rank 0");
  LLMC_RETURN_IF_ERROR(expectIndex(args, "targets", targets));
  Shape positions(logits.shape.begin(), logits.shape.end() - 1);
  LLMC_RETURN_IF_ERROR(expectShape(args, "targets", targets, positions));
  LLMC_RETURN_IF_ERROR(expectFloat(args, "dloss", dloss));
  LLMC_RETURN_IF_ERROR(expectShape(
      args, "dloss", dloss, reduction == Reduction::None ? positions : Shape{}));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dlogits", out, logits));
  const TensorRef *lse = args.inputs.size() == 4 ? &args.inputs[3] : nullptr;
  if (lse) {
    LLMC_RETURN_IF_ERROR(expectDType(args, "lse", *lse, DType::F32));
    LLMC_RETURN_IF_ERROR(expectShape(args, "lse", *lse, positions));
  }

  const int64_t vocab = logits.shape.back();
  const int64_t count = targets.numElements();
  auto ignored = [&](int64_t target) {
    return hasIgnore && target == ignoreIndex;
  };
  LLMC_RETURN_IF_ERROR(
      checkTargets(args, targets, vocab, hasIgnore, ignoreIndex));

  // 1. The weight of every position, in f64: dloss (sum), dloss over the
  //    counted positions (mean; any divisor when none is counted, as the
  //    forward's mean is then 0), dloss[n] (none); 0 where ignored.
  std::vector<double> weights(count);
  loadRow(dloss, 0, reduction == Reduction::None ? count : 1,
          weights.data());
  if (reduction != Reduction::None) {
    double scale = count > 0 ? weights[0] : 0.0;
    if (reduction == Reduction::Mean) {
      int64_t counted = 0;
      for (int64_t n = 0; n < count; ++n)
        counted += ignored(loadInt(targets, n)) ? 0 : 1;
      scale /= static_cast<double>(std::max<int64_t>(counted, 1));
    }
    std::fill(weights.begin(), weights.end(), scale);
  }

  // 2. Per row: the log-sum-exp (the operand's, else from the max and the
  //    sum of exponentials), then (exp(x - lse) - onehot) * weight,
  //    rounded once to the logits' type.
  args.pool.parallelFor(
      count, rowGrain(vocab), [&](int64_t begin, int64_t end) {
        std::vector<double> row(vocab);
        for (int64_t n = begin; n < end; ++n) {
          int64_t target = loadInt(targets, n);
          if (ignored(target)) {
            std::fill(row.begin(), row.end(), 0.0);
            storeRow(out, n * vocab, vocab, row.data());
            continue;
          }
          loadRow(logits, n * vocab, vocab, row.data());
          double shift;
          if (lse) {
            loadRow(*lse, n, 1, &shift);
          } else {
            double max = -std::numeric_limits<double>::infinity();
            for (double v : row)
              max = std::max(max, v);
            double sum = 0.0;
            for (double v : row)
              sum += std::exp(v - max);
            shift = max + std::log(sum);
          }
          for (int64_t v = 0; v < vocab; ++v)
            row[v] = (std::exp(row[v] - shift) - (v == target ? 1.0 : 0.0)) *
                     weights[n];
          storeRow(out, n * vocab, vocab, row.data());
        }
      });
  return Status::ok();
}

} // namespace llmc::rt
