//===- Optimizer.cpp - CPU kernel of lr_schedule ------------------===//
#include "runtime/cpu/CompositeCommon.h"

#include <algorithm>
#include <cmath>

namespace llmc::rt {

using namespace composite;

namespace {
enum ScheduleKind : int64_t { Cosine = 0, Linear = 1, Constant = 2 };

/// The rate of the 1-based step `t` (docs/ir.md, llmc.lr_schedule).
double rateAt(int64_t kind, double peak, double minimum, int64_t warmup,
              int64_t total, double t) {
  if (warmup > 0 && t <= static_cast<double>(warmup))
    return peak * t / static_cast<double>(warmup);
  double progress = (t - static_cast<double>(warmup)) /
                    static_cast<double>(total - warmup);
  progress = std::clamp(progress, 0.0, 1.0);
  switch (kind) {
  case Cosine:
    return minimum + (peak - minimum) * 0.5 * (1.0 + std::cos(M_PI * progress));
  case Linear:
    return peak - (peak - minimum) * progress;
  default:
    return peak;
  }
}
} // namespace

Status cpuLrSchedule(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(args.expectAttrs(3, 2));
  int64_t kind = args.attrs.ints[0];
  int64_t warmup = args.attrs.ints[1];
  int64_t total = args.attrs.ints[2];
  double peak = args.attrs.floats[0];
  double minimum = args.attrs.floats[1];
  if (kind < Cosine || kind > Constant)
    return args.error("expected kind 0 (cosine), 1 (linear) or 2 (constant), "
                      "got " + std::to_string(kind));
  if (warmup < 0 || total <= warmup)
    return args.error("expected 0 <= warmup < total, got warmup " +
                      std::to_string(warmup) + " and total " +
                      std::to_string(total));
  LLMC_RETURN_IF_ERROR(expectOperands(args, 1, 1, 1));
  const TensorRef &step = args.inputs[0];
  const TensorRef &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "result", out));
  LLMC_RETURN_IF_ERROR(expectRank(args, "step", step, 0));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "step", step, out));
  double t = 0, rate = 0;
  loadRow(step, 0, 1, &t);
  rate = rateAt(kind, peak, minimum, warmup, total, t);
  storeRow(out, 0, 1, &rate);
  return Status::ok();
}

} // namespace llmc::rt
