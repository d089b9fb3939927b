//===- KernelImpl.h - what every CPU kernel implementation sees -*- C++ -*-===//
//
// Internal to runtime/cpu. One function per KernelKind, declared from
// Kernels.def: cpuAdd, cpuLayerNorm, ... Primitive kernels live in
// Primitive*.cpp, composite ones in Composite*.cpp; CpuKernels.cpp
// dispatches by id.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CPU_KERNELIMPL_H
#define LLMC_RUNTIME_CPU_KERNELIMPL_H

#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cpu/ThreadPool.h"

#include <cmath>
#include <string>
#include <vector>

namespace llmc::rt {

/// The operands of one launch.
struct KernelArgs {
  KernelKind kind;
  const KernelAttrs &attrs;
  const std::vector<TensorRef> &inputs;
  const std::vector<TensorRef> &outputs;
  ThreadPool &pool;

  /// InvalidArgument "<kernel> kernel: <message>".
  Status error(const std::string &message) const {
    return Status::error(StatusCode::InvalidArgument,
                         std::string(kernelName(kind)) + " kernel: " + message);
  }
  /// Checks the operand counts ("expected 2 inputs, got 1").
  Status expectArity(size_t numInputs, size_t numOutputs) const;
  /// Checks attrs.ints / attrs.floats sizes.
  Status expectAttrs(size_t numInts, size_t numFloats) const;
};

#define LLMC_KERNEL(Name, Attributes) Status cpu##Name(const KernelArgs &args);
#include "runtime/Kernels.def"

//===----------------------------------------------------------------------===//
// Element access shared by the kernels: load any float storage as double
// (exact for f32/bf16/f16) and store with rounding to the storage type.
//===----------------------------------------------------------------------===//

inline double loadFloat(const TensorRef &t, int64_t i) {
  switch (t.dtype) {
  case DType::F32:
    return static_cast<const float *>(t.data)[i];
  case DType::F64:
    return static_cast<const double *>(t.data)[i];
  case DType::BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(t.data)[i]);
  case DType::F16:
    return f16ToFloat(static_cast<const uint16_t *>(t.data)[i]);
  case DType::I32:
    return static_cast<const int32_t *>(t.data)[i];
  case DType::I64:
    return static_cast<double>(static_cast<const int64_t *>(t.data)[i]);
  case DType::I1:
    return static_cast<const uint8_t *>(t.data)[i] ? 1.0 : 0.0;
  case DType::F8E4M3FN:
    return f8E4M3FNToFloat(static_cast<const uint8_t *>(t.data)[i]);
  case DType::F8E5M2:
    return f8E5M2ToFloat(static_cast<const uint8_t *>(t.data)[i]);
  }
  return 0.0;
}

/// Stores `v` rounded to the storage type: f32/bf16/f16 round through f32
/// (so bf16 and f16 are "computed in f32, rounded on store"), integers
/// truncate toward zero, i1 is v != 0.
inline void storeFloat(const TensorRef &t, int64_t i, double v) {
  switch (t.dtype) {
  case DType::F32:
    static_cast<float *>(t.data)[i] = static_cast<float>(v);
    return;
  case DType::F64:
    static_cast<double *>(t.data)[i] = v;
    return;
  case DType::BF16:
    static_cast<uint16_t *>(t.data)[i] = floatToBf16(static_cast<float>(v));
    return;
  case DType::F16:
    static_cast<uint16_t *>(t.data)[i] = floatToF16(static_cast<float>(v));
    return;
  case DType::I32:
    static_cast<int32_t *>(t.data)[i] = static_cast<int32_t>(v);
    return;
  case DType::I64:
    static_cast<int64_t *>(t.data)[i] = static_cast<int64_t>(v);
    return;
  case DType::I1:
    static_cast<uint8_t *>(t.data)[i] = v != 0.0;
    return;
  case DType::F8E4M3FN:
    static_cast<uint8_t *>(t.data)[i] = floatToF8E4M3FN(static_cast<float>(v));
    return;
  case DType::F8E5M2:
    static_cast<uint8_t *>(t.data)[i] = floatToF8E5M2(static_cast<float>(v));
    return;
  }
}

/// Integer elements (i32, i64, i1) as int64.
inline int64_t loadInt(const TensorRef &t, int64_t i) {
  switch (t.dtype) {
  case DType::I32:
    return static_cast<const int32_t *>(t.data)[i];
  case DType::I64:
    return static_cast<const int64_t *>(t.data)[i];
  case DType::I1:
    return static_cast<const uint8_t *>(t.data)[i];
  default:
    return static_cast<int64_t>(loadFloat(t, i));
  }
}

inline void storeInt(const TensorRef &t, int64_t i, int64_t v) {
  switch (t.dtype) {
  case DType::I32:
    static_cast<int32_t *>(t.data)[i] = static_cast<int32_t>(v);
    return;
  case DType::I64:
    static_cast<int64_t *>(t.data)[i] = v;
    return;
  case DType::I1:
    static_cast<uint8_t *>(t.data)[i] = v != 0;
    return;
  default:
    storeFloat(t, i, static_cast<double>(v));
  }
}

/// GPT-2's tanh form of gelu, in f64: 0.5 x (1 + tanh(sqrt(2/pi) (x +
/// 0.044715 x^3))). Gelu and MatmulEpilogue's gelu both evaluate it.
inline double geluTanh(double x) {
  const double kSqrt2OverPi = 0.79788456080286535588; // sqrt(2 / pi)
  double inner = kSqrt2OverPi * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(inner));
}

/// Whether arithmetic on this type is done in f64 (f64 only) or f32.
inline bool computesInF64(DType dtype) { return dtype == DType::F64; }

} // namespace llmc::rt

#endif // LLMC_RUNTIME_CPU_KERNELIMPL_H
