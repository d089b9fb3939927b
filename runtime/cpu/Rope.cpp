//===- Rope.cpp - CPU kernel of rope --------------------------------------===//
//
// The reference of the CUDA rope family (runtime/cuda/kernels/rope/): rope
// rotates "rotate half" pairs (x[i], x[i + D/2]) with angles computed in
// f64 (from theta, or the per-pair inverse frequencies of a scaled rope,
// LLaMA 3), and rounds once on store.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CompositeCommon.h"

#include <cmath>
#include <vector>

namespace llmc::rt {

using namespace composite;

Status cpuRope(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 1, 2, 1));
  const TensorRef &x = args.inputs[0], &out = args.outputs[0];
  // floats: theta, then (a scaled rope) one inverse frequency per pair.
  const size_t pairs = x.rank() >= 1 ? static_cast<size_t>(x.shape.back() / 2)
                                     : 0;
  if (!args.attrs.ints.empty() ||
      (args.attrs.floats.size() != 1 && args.attrs.floats.size() != 1 + pairs))
    return args.error("expected no integer attributes and 1 float (theta) or " +
                      std::to_string(1 + pairs) +
                      " (theta and one inverse frequency per pair), got " +
                      std::to_string(args.attrs.ints.size()) + " and " +
                      std::to_string(args.attrs.floats.size()));
  LLMC_RETURN_IF_ERROR(expectFloat(args, "input", x));
  if (x.rank() < 2)
    return args.error("expected an input [..., T, D] of rank at least 2, "
                      "got rank " +
                      std::to_string(x.rank()));
  const int64_t seq = x.shape[x.rank() - 2], headDim = x.shape.back();
  if (headDim % 2 != 0)
    return args.error("expected an even head dimension, got " +
                      std::to_string(headDim));
  const TensorRef *positions =
      args.inputs.size() == 2 ? &args.inputs[1] : nullptr;
  if (positions) {
    LLMC_RETURN_IF_ERROR(expectIndex(args, "positions", *positions));
    LLMC_RETURN_IF_ERROR(expectShape(args, "positions", *positions, {seq}));
  }
  LLMC_RETURN_IF_ERROR(expectSameType(args, "result", out, x));
  const double theta = args.attrs.floats[0];
  if (!(theta > 0.0) || !std::isfinite(theta))
    return args.error("expected a positive finite theta, got " +
                      formatFloat(theta));
  if (x.numElements() == 0)
    return Status::ok();

  // 1. The cos/sin table [T, D/2], in f64: inv_freq = 1 / theta^(2i/D)
  //    (or the op's own per-pair frequencies) and angle = p * inv_freq.
  //    Hugging Face rounds inv_freq and the angle to f32, an error of up to
  //    an f32 ulp of the angle (6e-5 radians at p = 1000); the reference
  //    keeps angles exact and rounds only on store.
  const int64_t half = headDim / 2;
  const double *given =
      args.attrs.floats.size() > 1 ? &args.attrs.floats[1] : nullptr;
  for (int64_t i = 0; given && i < half; ++i)
    if (!(given[i] > 0.0) || !std::isfinite(given[i]))
      return args.error("expected positive finite inverse frequencies, got " +
                        formatFloat(given[i]) + " at pair " +
                        std::to_string(i));
  std::vector<double> cosTable(seq * half), sinTable(seq * half);
  for (int64_t t = 0; t < seq; ++t) {
    double p = positions ? static_cast<double>(loadInt(*positions, t))
                         : static_cast<double>(t);
    for (int64_t i = 0; i < half; ++i) {
      double invFreq =
          given ? given[i]
                : 1.0 / std::pow(theta, static_cast<double>(2 * i) / headDim);
      cosTable[t * half + i] = std::cos(p * invFreq);
      sinTable[t * half + i] = std::sin(p * invFreq);
    }
  }

  // 2. Rotate each row (x[i], x[i + D/2]) by the angle of its position.
  const int64_t rows = x.numElements() / headDim;
  args.pool.parallelFor(
      rows, rowGrain(headDim), [&](int64_t begin, int64_t end) {
        std::vector<double> in(headDim), rotated(headDim);
        for (int64_t r = begin; r < end; ++r) {
          const double *cosRow = &cosTable[(r % seq) * half];
          const double *sinRow = &sinTable[(r % seq) * half];
          loadRow(x, r * headDim, headDim, in.data());
          for (int64_t i = 0; i < half; ++i) {
            rotated[i] = in[i] * cosRow[i] - in[i + half] * sinRow[i];
            rotated[i + half] = in[i + half] * cosRow[i] + in[i] * sinRow[i];
          }
          storeRow(out, r * headDim, headDim, rotated.data());
        }
      });
  return Status::ok();
}

} // namespace llmc::rt
