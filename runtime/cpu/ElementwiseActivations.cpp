//===- ElementwiseActivations.cpp - CPU kernels of gelu, silu, swiglu -------===//
//
// Elementwise activations, evaluated in f64 on blocks of elements and
// rounded to the storage type on store. Operands and the result share one
// type, as the ops' verifiers require.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CompositeCommon.h"

#include <cmath>

namespace llmc::rt {

using namespace composite;

namespace {

/// Elements converted per block: small enough for the stack, large enough
/// that the per-block dtype switch costs nothing.
constexpr int64_t kBlock = 512;

/// Checks that every input is a float tensor of the result's type, then
/// calls fn(inputs..., out, n) on blocks of double values covering the
/// tensor, split over the pool.
template <typename Fn>
Status mapElementwise(const KernelArgs &args, size_t numInputs, Fn fn) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, numInputs, numInputs, 1));
  const TensorRef &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "result", out));
  for (size_t i = 0; i < numInputs; ++i)
    LLMC_RETURN_IF_ERROR(expectSameType(args, "operand #" + std::to_string(i),
                                        args.inputs[i], out));

  const int64_t blocks = (out.numElements() + kBlock - 1) / kBlock;
  args.pool.parallelFor(
      blocks, rowGrain(kBlock), [&](int64_t begin, int64_t end) {
        double a[kBlock], b[kBlock], y[kBlock];
        for (int64_t block = begin; block < end; ++block) {
          int64_t offset = block * kBlock;
          int64_t n = std::min(kBlock, out.numElements() - offset);
          loadRow(args.inputs[0], offset, n, a);
          if (numInputs == 2)
            loadRow(args.inputs[1], offset, n, b);
          fn(a, b, y, n);
          storeRow(out, offset, n, y);
        }
      });
  return Status::ok();
}

/// x * sigmoid(x), as x / (1 + exp(-x)): for x -> -inf, exp(-x) overflows to
/// inf and the result is the correct limit -0.
double silu(double x) { return x / (1.0 + std::exp(-x)); }

} // namespace

Status cpuGelu(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(args.expectAttrs(1, 0));
  const int64_t approximation = args.attrs.ints[0];
  if (approximation == 0) {
    return mapElementwise(
        args, 1, [&](const double *x, const double *, double *y, int64_t n) {
          for (int64_t i = 0; i < n; ++i)
            y[i] = geluTanh(x[i]);
        });
  }
  if (approximation == 1) {
    // Exact: x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), written with erfc,
    // which is the same function but does not cancel to 0 for x << 0.
    return mapElementwise(
        args, 1, [](const double *x, const double *, double *y, int64_t n) {
          for (int64_t i = 0; i < n; ++i)
            y[i] = 0.5 * x[i] * std::erfc(-x[i] / std::sqrt(2.0));
        });
  }
  return args.error("expected approximation 0 (tanh) or 1 (erf), got " +
                    std::to_string(approximation));
}

Status cpuSilu(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 0));
  return mapElementwise(
      args, 1, [](const double *x, const double *, double *y, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          y[i] = silu(x[i]);
      });
}

Status cpuSwiglu(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 0));
  return mapElementwise(
      args, 2, [](const double *gate, const double *up, double *y, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          y[i] = silu(gate[i]) * up[i];
      });
}

} // namespace llmc::rt
