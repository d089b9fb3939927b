//===- Norms.cpp - CPU kernels of layer_norm and rms_norm -----------------===//
//
// Row kernels: each row (the last dimension) is loaded as double, reduced in
// f64, and stored rounded to the result type. Rows are independent, so they
// are split over the pool. The reference of the CUDA norms family
// (runtime/cuda/kernels/norms/); the gradients are NormGrads.cpp's.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CompositeCommon.h"

#include <cmath>
#include <vector>

namespace llmc::rt {

using namespace composite;

namespace {

/// The operands of both norms: x [..., D] of a float type, gamma (and beta)
/// [D] of one float type (it may differ from x's), a result of x's type and
/// a positive epsilon in floats[0].
Status checkNorm(const KernelArgs &args, const TensorRef *beta) {
  const TensorRef &x = args.inputs[0], &gamma = args.inputs[1];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "input", x));
  if (x.rank() < 1)
    return args.error("expected an input of rank at least 1, got rank 0");
  Shape feature{x.shape.back()};
  LLMC_RETURN_IF_ERROR(expectFloat(args, "gamma", gamma));
  LLMC_RETURN_IF_ERROR(expectShape(args, "gamma", gamma, feature));
  if (beta) {
    LLMC_RETURN_IF_ERROR(expectDType(args, "beta", *beta, gamma.dtype));
    LLMC_RETURN_IF_ERROR(expectShape(args, "beta", *beta, feature));
  }
  LLMC_RETURN_IF_ERROR(expectSameType(args, "result", args.outputs[0], x));
  double epsilon = args.attrs.floats[0];
  if (!(epsilon > 0.0))
    return args.error("expected a positive epsilon, got " +
                      formatFloat(epsilon));
  return Status::ok();
}

} // namespace

Status cpuLayerNorm(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 2, 3, 1));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 1));
  const TensorRef *beta = args.inputs.size() == 3 ? &args.inputs[2] : nullptr;
  LLMC_RETURN_IF_ERROR(checkNorm(args, beta));
  const TensorRef &x = args.inputs[0], &y = args.outputs[0];
  const int64_t dim = x.shape.back();
  if (dim == 0 || x.numElements() == 0)
    return Status::ok();
  const int64_t rows = x.numElements() / dim;
  const double epsilon = args.attrs.floats[0];

  std::vector<double> gamma(dim), shift(dim, 0.0);
  loadRow(args.inputs[1], 0, dim, gamma.data());
  if (beta)
    loadRow(*beta, 0, dim, shift.data());

  args.pool.parallelFor(rows, rowGrain(dim), [&](int64_t begin, int64_t end) {
    std::vector<double> row(dim);
    for (int64_t r = begin; r < end; ++r) {
      loadRow(x, r * dim, dim, row.data());
      // Two passes (mean, then the biased variance about it) rather than
      // E[x^2] - E[x]^2, which cancels badly when |mean| >> std.
      double mean = 0.0;
      for (double v : row)
        mean += v;
      mean /= static_cast<double>(dim);
      double variance = 0.0;
      for (double v : row)
        variance += (v - mean) * (v - mean);
      variance /= static_cast<double>(dim);
      double rstd = 1.0 / std::sqrt(variance + epsilon);
      for (int64_t i = 0; i < dim; ++i)
        row[i] = (row[i] - mean) * rstd * gamma[i] + shift[i];
      storeRow(y, r * dim, dim, row.data());
    }
  });
  return Status::ok();
}

Status cpuRmsNorm(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 2, 2, 1));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 1));
  LLMC_RETURN_IF_ERROR(checkNorm(args, nullptr));
  const TensorRef &x = args.inputs[0], &y = args.outputs[0];
  const int64_t dim = x.shape.back();
  if (dim == 0 || x.numElements() == 0)
    return Status::ok();
  const int64_t rows = x.numElements() / dim;
  const double epsilon = args.attrs.floats[0];

  std::vector<double> gamma(dim);
  loadRow(args.inputs[1], 0, dim, gamma.data());

  args.pool.parallelFor(rows, rowGrain(dim), [&](int64_t begin, int64_t end) {
    std::vector<double> row(dim);
    for (int64_t r = begin; r < end; ++r) {
      loadRow(x, r * dim, dim, row.data());
      double meanSquare = 0.0;
      for (double v : row)
        meanSquare += v * v;
      meanSquare /= static_cast<double>(dim);
      double rstd = 1.0 / std::sqrt(meanSquare + epsilon);
      for (int64_t i = 0; i < dim; ++i)
        row[i] = row[i] * rstd * gamma[i];
      storeRow(y, r * dim, dim, row.data());
    }
  });
  return Status::ok();
}

} // namespace llmc::rt
