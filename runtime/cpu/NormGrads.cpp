//===- NormGrads.cpp - CPU kernels of layer_norm_grad, rms_norm_grad
//
// The reference of the norms' derivatives (llmc.layer_norm_grad,
// llmc.rms_norm_grad; docs/autodiff.md, "Norms"). Each row is loaded as
// double, its statistics recomputed as the forward kernels do (two passes:
// the mean, then the biased variance about it), and dx stored rounded once
// to x's type. dgamma and dbeta are sums over the rows: each fixed chunk of
// kChunkRows (32) rows sums into its own double partials, and the partials are
// added in chunk order, so the result is the same for any thread count.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CompositeCommon.h"

#include <cmath>
#include <vector>

namespace llmc::rt {

using namespace composite;

namespace {

/// Rows per partial sum of dgamma/dbeta: the chunks are what the threads
/// share out, and their order fixes the order of the column sums. The CUDA
/// kernel's chunks are the same (NormGradLaunch::kChunkRows).
constexpr int64_t kChunkRows = 32;

/// x [..., D] and dy of one float type, gamma [D] of a float type, dx of
/// x's type, dgamma (dbeta) of gamma's, a positive epsilon in floats[0].
Status checkNormGrad(const KernelArgs &args, bool centered) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 3, 3, centered ? 3 : 2));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 1));
  const TensorRef &x = args.inputs[0], &gamma = args.inputs[1],
                  &dy = args.inputs[2];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "input", x));
  if (x.rank() < 1)
    return args.error("expected an input of rank at least 1, got rank 0");
  LLMC_RETURN_IF_ERROR(expectFloat(args, "gamma", gamma));
  LLMC_RETURN_IF_ERROR(expectShape(args, "gamma", gamma, {x.shape.back()}));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dresult", dy, x));
  LLMC_RETURN_IF_ERROR(expectSameType(args, "dinput", args.outputs[0], x));
  LLMC_RETURN_IF_ERROR(
      expectSameType(args, "dgamma", args.outputs[1], gamma));
  if (centered)
    LLMC_RETURN_IF_ERROR(
        expectSameType(args, "dbeta", args.outputs[2], gamma));
  double epsilon = args.attrs.floats[0];
  if (!(epsilon > 0.0))
    return args.error("expected a positive epsilon, got " +
                      formatFloat(epsilon));
  return Status::ok();
}

/// Both kernels: `centered` is layer_norm (mean subtracted, dbeta), else
/// rms_norm. With r = 1 / sqrt(var + epsilon), xhat = (x - mean) r and
/// g = dy gamma: dx = r (g - mean(g) - xhat mean(g xhat)) (rms_norm: no
/// mean(g) term), dgamma = sum of dy xhat, dbeta = sum of dy.
Status normGrad(const KernelArgs &args, bool centered) {
  LLMC_RETURN_IF_ERROR(checkNormGrad(args, centered));
  const TensorRef &x = args.inputs[0], &dy = args.inputs[2];
  const TensorRef &dx = args.outputs[0];
  const int64_t dim = x.shape.back();
  const int64_t rows = dim == 0 ? 0 : x.numElements() / dim;
  const double epsilon = args.attrs.floats[0];
  const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;

  std::vector<double> gamma(dim);
  if (dim > 0)
    loadRow(args.inputs[1], 0, dim, gamma.data());
  // Per chunk: dgamma's partials, then dbeta's.
  std::vector<double> partials(static_cast<size_t>(chunks) * 2 * dim, 0.0);

  args.pool.parallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> xRow(dim), gRow(dim), dyRow(dim);
    for (int64_t c = begin; c < end; ++c) {
      double *dGamma = partials.data() + c * 2 * dim;
      double *dBeta = dGamma + dim;
      int64_t last = std::min(rows, (c + 1) * kChunkRows);
      for (int64_t r = c * kChunkRows; r < last; ++r) {
        loadRow(x, r * dim, dim, xRow.data());
        loadRow(dy, r * dim, dim, dyRow.data());
        // 1. The forward's statistics: mean (layer_norm), then the biased
        //    variance about it.
        double mean = 0.0;
        if (centered) {
          for (double v : xRow)
            mean += v;
          mean /= static_cast<double>(dim);
        }
        double variance = 0.0;
        for (double v : xRow)
          variance += (v - mean) * (v - mean);
        variance /= static_cast<double>(dim);
        double rstd = 1.0 / std::sqrt(variance + epsilon);
        // 2. xhat (in place of x), g, and the row means of g and g xhat.
        double gSum = 0.0, gxSum = 0.0;
        for (int64_t i = 0; i < dim; ++i) {
          xRow[i] = (xRow[i] - mean) * rstd;
          gRow[i] = dyRow[i] * gamma[i];
          gSum += gRow[i];
          gxSum += gRow[i] * xRow[i];
        }
        double gMean = centered ? gSum / static_cast<double>(dim) : 0.0;
        double gxMean = gxSum / static_cast<double>(dim);
        // 3. The column partials, then dx (in place of g).
        for (int64_t i = 0; i < dim; ++i) {
          dGamma[i] += dyRow[i] * xRow[i];
          dBeta[i] += dyRow[i];
          gRow[i] = rstd * (gRow[i] - gMean - xRow[i] * gxMean);
        }
        storeRow(dx, r * dim, dim, gRow.data());
      }
    }
  });

  // 4. dgamma and dbeta: the chunks' partials in chunk order.
  std::vector<double> dGamma(dim, 0.0), dBeta(dim, 0.0);
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t i = 0; i < dim; ++i) {
      dGamma[i] += partials[(c * 2) * dim + i];
      dBeta[i] += partials[(c * 2 + 1) * dim + i];
    }
  if (dim > 0) {
    storeRow(args.outputs[1], 0, dim, dGamma.data());
    if (centered)
      storeRow(args.outputs[2], 0, dim, dBeta.data());
  }
  return Status::ok();
}

} // namespace

Status cpuLayerNormGrad(const KernelArgs &args) {
  return normGrad(args, /*centered=*/true);
}

Status cpuRmsNormGrad(const KernelArgs &args) {
  return normGrad(args, /*centered=*/false);
}

} // namespace llmc::rt
