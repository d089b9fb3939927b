//===- CompositeCommon.h - helpers of the composite kernels --*- C++ -*-===//
//
// Internal to runtime/cpu/Composite*.cpp: the operand checks behind their
// "expected ..., got ..." messages, and row loads and stores that convert
// float storage to double once per row. The composites compute in f64 for
// every storage type and round once on store (docs/runtime.md, "Composite
// kernels").
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CPU_COMPOSITECOMMON_H
#define LLMC_RUNTIME_CPU_COMPOSITECOMMON_H

#include "runtime/cpu/KernelImpl.h"

#include <algorithm>
#include <cstdio>
#include <string>

// A namespace of their own, so that these never collide with the primitive
// kernels' helpers (expectShape, ...) in llmc::rt.
namespace llmc::rt::composite {

/// About this many elements per parallelFor chunk: enough work to pay for
/// waking a thread, small enough that both cores get some of a mid-sized
/// tensor.
constexpr int64_t kGrainElements = 4096;

/// The parallelFor grain, in rows, for rows of `rowElements` elements.
inline int64_t rowGrain(int64_t rowElements) {
  return std::max<int64_t>(1,
                           kGrainElements / std::max<int64_t>(1, rowElements));
}

/// `v` for a message: "1e-05", "0", "-inf" (printf's %g).
inline std::string formatFloat(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

//===----------------------------------------------------------------------===//
// Operand checks. Each returns args.error("expected ..., got ...").
//===----------------------------------------------------------------------===//

/// Checks `minInputs`..`maxInputs` inputs and `numOutputs` outputs, that no
/// dimension is negative and that every non-empty tensor has a buffer.
inline Status expectOperands(const KernelArgs &args, size_t minInputs,
                             size_t maxInputs, size_t numOutputs) {
  size_t numInputs = args.inputs.size();
  if (numInputs < minInputs || numInputs > maxInputs ||
      args.outputs.size() != numOutputs) {
    std::string inputs = std::to_string(minInputs);
    if (maxInputs != minInputs)
      inputs += " or " + std::to_string(maxInputs);
    return args.error("expected " + inputs + " inputs and " +
                      std::to_string(numOutputs) + " outputs, got " +
                      std::to_string(numInputs) + " and " +
                      std::to_string(args.outputs.size()));
  }
  auto check = [&](const TensorRef &t, const char *kind,
                   size_t index) -> Status {
    std::string name = std::string(kind) + " #" + std::to_string(index);
    for (int64_t d : t.shape)
      if (d < 0)
        return args.error("expected non-negative dimensions for " + name +
                          ", got " + formatShape(t.shape));
    if (t.numElements() > 0 && !t.data)
      return args.error("expected a buffer for " + name + " of shape " +
                        formatShape(t.shape) + ", got none");
    return Status::ok();
  };
  for (size_t i = 0; i < args.inputs.size(); ++i)
    LLMC_RETURN_IF_ERROR(check(args.inputs[i], "input", i));
  for (size_t i = 0; i < args.outputs.size(); ++i)
    LLMC_RETURN_IF_ERROR(check(args.outputs[i], "output", i));
  return Status::ok();
}

/// `what` is a float tensor (f32, f64, bf16, f16).
inline Status expectFloat(const KernelArgs &args, const std::string &what,
                          const TensorRef &t) {
  if (isFloat(t.dtype))
    return Status::ok();
  return args.error("expected " + what + " of a float type, got " +
                    dtypeName(t.dtype));
}

/// `what` is an index tensor (i32, i64).
inline Status expectIndex(const KernelArgs &args, const std::string &what,
                          const TensorRef &t) {
  if (t.dtype == DType::I32 || t.dtype == DType::I64)
    return Status::ok();
  return args.error("expected " + what + " of type i32 or i64, got " +
                    dtypeName(t.dtype));
}

inline Status expectDType(const KernelArgs &args, const std::string &what,
                          const TensorRef &t, DType expected) {
  if (t.dtype == expected)
    return Status::ok();
  return args.error("expected " + what + " element type " +
                    dtypeName(expected) + ", got " + dtypeName(t.dtype));
}

inline Status expectShape(const KernelArgs &args, const std::string &what,
                          const TensorRef &t, const Shape &expected) {
  if (t.shape == expected)
    return Status::ok();
  return args.error("expected " + what + " of shape " + formatShape(expected) +
                    ", got " + formatShape(t.shape));
}

inline Status expectRank(const KernelArgs &args, const std::string &what,
                         const TensorRef &t, int64_t rank) {
  if (t.rank() == rank)
    return Status::ok();
  return args.error("expected " + what + " of rank " + std::to_string(rank) +
                    ", got rank " + std::to_string(t.rank()));
}

/// `what` has exactly the dtype and shape of `like`.
inline Status expectSameType(const KernelArgs &args, const std::string &what,
                             const TensorRef &t, const TensorRef &like) {
  LLMC_RETURN_IF_ERROR(expectDType(args, what, t, like.dtype));
  return expectShape(args, what, t, like.shape);
}

//===----------------------------------------------------------------------===//
// Rows of float storage as double. `offset` and `stride` count elements.
// One switch per row, not per element, keeps the inner loops plain.
//===----------------------------------------------------------------------===//

inline void loadRow(const TensorRef &t, int64_t offset, int64_t n, double *dst,
                    int64_t stride = 1) {
  switch (t.dtype) {
  case DType::F32: {
    const float *src = static_cast<const float *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = src[i * stride];
    return;
  }
  case DType::F64: {
    const double *src = static_cast<const double *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = src[i * stride];
    return;
  }
  case DType::BF16: {
    const uint16_t *src = static_cast<const uint16_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = bf16ToFloat(src[i * stride]);
    return;
  }
  case DType::F16: {
    const uint16_t *src = static_cast<const uint16_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = f16ToFloat(src[i * stride]);
    return;
  }
  default:
    for (int64_t i = 0; i < n; ++i)
      dst[i] = loadFloat(t, offset + i * stride);
    return;
  }
}

/// Stores with the rounding of storeFloat: f32, bf16 and f16 round through
/// f32 (round to nearest even).
inline void storeRow(const TensorRef &t, int64_t offset, int64_t n,
                     const double *src, int64_t stride = 1) {
  switch (t.dtype) {
  case DType::F32: {
    float *dst = static_cast<float *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i * stride] = static_cast<float>(src[i]);
    return;
  }
  case DType::F64: {
    double *dst = static_cast<double *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i * stride] = src[i];
    return;
  }
  case DType::BF16: {
    uint16_t *dst = static_cast<uint16_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i * stride] = floatToBf16(static_cast<float>(src[i]));
    return;
  }
  case DType::F16: {
    uint16_t *dst = static_cast<uint16_t *>(t.data) + offset;
    for (int64_t i = 0; i < n; ++i)
      dst[i * stride] = floatToF16(static_cast<float>(src[i]));
    return;
  }
  default:
    for (int64_t i = 0; i < n; ++i)
      storeFloat(t, offset + i * stride, src[i]);
    return;
  }
}

} // namespace llmc::rt::composite

#endif // LLMC_RUNTIME_CPU_COMPOSITECOMMON_H
