//===- Fp8.cpp - CPU reference kernels of FP8 training ---------------------===//
//
// Amax, ScaledCast, ScaledCastTranspose and ScaledMatmul (Kernels.def;
// docs/precision.md, "FP8").
// They are the reference the CUDA kernels are tested against, so each says
// how it rounds:
// - Amax is exact (a maximum); a NaN anywhere gives NaN.
// - ScaledCast forms x * scale in f32 (as the CUDA kernel and torchao do)
//   and rounds it with floatToF8E4M3FN / floatToF8E5M2 (DType.h): nearest
//   even, saturating.
// - ScaledCastTranspose stores ScaledCast's codes of a matrix twice, as
//   they are and transposed.
// - ScaledMatmul widens both 8-bit operands to f64 (exact), multiplies with
//   dgemm (each product of two 8-bit floats is exact; the f64 sum is exact
//   to 2^-53 relative of the sum of magnitudes), applies both inverse
//   scales in f64 and rounds once to the result type (round to odd to f32,
//   then to bf16: correctly rounded). cuBLASLt accumulates in f32, so the
//   GPU's result is within one rounding of the result type plus K·2^-24 of
//   Σ|a·b|·scales of this one (test/runtime/cuda/CudaFp8Test.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/PrimitiveHelpers.h"

#include <cblas.h>

namespace llmc::rt {

using namespace primitive;

namespace {

constexpr DTypeSet kFp8Types =
    dtypeBit(DType::F8E4M3FN) | dtypeBit(DType::F8E5M2);

Status expectScalarF32(const KernelArgs &args, const std::string &what,
                       const TensorRef &t) {
  LLMC_RETURN_IF_ERROR(expectSameDType(args, what, t.dtype, DType::F32));
  return expectShape(args, what, t.shape, {});
}

float scalarOf(const TensorRef &t) { return static_cast<const float *>(t.data)[0]; }

} // namespace

Status cpuAmax(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 1, 1, 0));
  const TensorRef &x = args.inputs[0];
  LLMC_RETURN_IF_ERROR(expectDType(args, "input", x.dtype, kFloatTypes));
  LLMC_RETURN_IF_ERROR(expectScalarF32(args, "result", args.outputs[0]));
  double amax = 0.0;
  for (int64_t i = 0, n = x.numElements(); i < n; ++i) {
    double v = std::fabs(loadFloat(x, i));
    if (std::isnan(v)) {
      amax = v;
      break;
    }
    amax = std::max(amax, v);
  }
  // Exact for f32, bf16 and f16 inputs; an f64 input's amax rounds to f32.
  static_cast<float *>(args.outputs[0].data)[0] = static_cast<float>(amax);
  return Status::ok();
}

Status cpuScaledCast(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 2, 1, 0));
  const TensorRef &x = args.inputs[0], &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectDType(args, "input", x.dtype, kFloatTypes));
  LLMC_RETURN_IF_ERROR(expectScalarF32(args, "scale", args.inputs[1]));
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", out.dtype, kFp8Types));
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, x.shape));
  float scale = scalarOf(args.inputs[1]);
  auto *y = static_cast<uint8_t *>(out.data);
  bool e4m3 = out.dtype == DType::F8E4M3FN;
  forEachElement(args.pool, x.numElements(), [&](int64_t i) {
    float product = static_cast<float>(loadFloat(x, i)) * scale;
    y[i] = e4m3 ? floatToF8E4M3FN(product) : floatToF8E5M2(product);
  });
  return Status::ok();
}

Status cpuScaledCastTranspose(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 2, 2, 0));
  const TensorRef &x = args.inputs[0];
  const TensorRef &out = args.outputs[0], &transposed = args.outputs[1];
  LLMC_RETURN_IF_ERROR(expectDType(args, "input", x.dtype, kFloatTypes));
  LLMC_RETURN_IF_ERROR(expectScalarF32(args, "scale", args.inputs[1]));
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", out.dtype, kFp8Types));
  LLMC_RETURN_IF_ERROR(
      expectSameDType(args, "transposed", transposed.dtype, out.dtype));
  if (x.rank() != 2)
    return args.error("expected a matrix input, got " + formatShape(x.shape));
  int64_t rows = x.shape[0], cols = x.shape[1];
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, x.shape));
  LLMC_RETURN_IF_ERROR(
      expectShape(args, "transposed", transposed.shape, {cols, rows}));
  float scale = scalarOf(args.inputs[1]);
  auto *y = static_cast<uint8_t *>(out.data);
  auto *yt = static_cast<uint8_t *>(transposed.data);
  bool e4m3 = out.dtype == DType::F8E4M3FN;
  // The codes as ScaledCast rounds them, then each stored at [c, r] too.
  forEachElement(args.pool, rows * cols, [&](int64_t i) {
    float product = static_cast<float>(loadFloat(x, i)) * scale;
    uint8_t code = e4m3 ? floatToF8E4M3FN(product) : floatToF8E5M2(product);
    y[i] = code;
    yt[(i % cols) * rows + i / cols] = code;
  });
  return Status::ok();
}

Status cpuScaledMatmul(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 4, 1, 0));
  const TensorRef &lhs = args.inputs[0], &rhs = args.inputs[1];
  const TensorRef &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectDType(args, "lhs", lhs.dtype, kFp8Types));
  LLMC_RETURN_IF_ERROR(expectDType(args, "rhs", rhs.dtype, kFp8Types));
  LLMC_RETURN_IF_ERROR(expectScalarF32(args, "lhs_scale_inv", args.inputs[2]));
  LLMC_RETURN_IF_ERROR(expectScalarF32(args, "rhs_scale_inv", args.inputs[3]));
  LLMC_RETURN_IF_ERROR(expectDType(
      args, "result", out.dtype, dtypeBit(DType::BF16) | dtypeBit(DType::F32)));
  if (lhs.rank() != 2 || rhs.rank() != 2 || lhs.shape[1] != rhs.shape[1])
    return args.error("expected lhs [M, K] and rhs [N, K], got " +
                      formatShape(lhs.shape) + " and " +
                      formatShape(rhs.shape));
  int64_t m = lhs.shape[0], n = rhs.shape[0], k = lhs.shape[1];
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, {m, n}));
  if (m * n == 0)
    return Status::ok();
  std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(n * k));
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  forEachElement(args.pool, m * k, [&](int64_t i) { a[i] = loadFloat(lhs, i); });
  forEachElement(args.pool, n * k, [&](int64_t i) { b[i] = loadFloat(rhs, i); });
  if (k > 0)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0,
                a.data(), k, b.data(), k, 0.0, c.data(), n);
  double descale = static_cast<double>(scalarOf(args.inputs[2])) *
                   static_cast<double>(scalarOf(args.inputs[3]));
  bool bf16 = out.dtype == DType::BF16;
  forEachElement(args.pool, m * n, [&](int64_t i) {
    double v = c[i] * descale;
    if (bf16)
      static_cast<uint16_t *>(out.data)[i] = floatToBf16(roundToOddFloat(v));
    else
      static_cast<float *>(out.data)[i] = static_cast<float>(v);
  });
  return Status::ok();
}

} // namespace llmc::rt
