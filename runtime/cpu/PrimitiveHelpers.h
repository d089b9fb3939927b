//===- PrimitiveHelpers.h - shared by the primitive CPU kernels -*- C++ -*-===//
//
// Internal to runtime/cpu/Primitive*.cpp, in namespace llmc::rt::primitive
// so that nothing collides with the composite kernels' helpers: operand
// validation that returns messages naming the kernel, per-dtype element
// traits with a visitor that instantiates one typed loop per element type,
// rounding from f64 to the narrow float types, and the grain of parallel
// loops.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CPU_PRIMITIVEHELPERS_H
#define LLMC_RUNTIME_CPU_PRIMITIVEHELPERS_H

#include "runtime/cpu/KernelImpl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace llmc::rt::primitive {

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// A set of dtypes, one bit per DType value.
using DTypeSet = unsigned;
constexpr DTypeSet dtypeBit(DType d) {
  return static_cast<int>(d) < kNumDTypes ? 1u << static_cast<unsigned>(d) : 0;
}
constexpr DTypeSet kFloatTypes = dtypeBit(DType::F32) | dtypeBit(DType::F64) |
                                 dtypeBit(DType::BF16) | dtypeBit(DType::F16);
constexpr DTypeSet kIntTypes = dtypeBit(DType::I32) | dtypeBit(DType::I64);
constexpr DTypeSet kNumericTypes = kFloatTypes | kIntTypes;
constexpr DTypeSet kAllTypes = kNumericTypes | dtypeBit(DType::I1);

/// "f32, f64, bf16 or f16"
std::string formatDTypeSet(DTypeSet set);

/// Arity, attribute counts (no floats) and well-formed operands: no negative
/// dimension, and data present whenever a tensor has elements.
Status checkLaunch(const KernelArgs &args, size_t numInputs, size_t numOutputs,
                   size_t numInts);
/// The well-formedness part of checkLaunch, for kernels of variable arity.
Status checkOperands(const KernelArgs &args);

/// "expected <what> of dtype <set>, got <dtype>"
Status expectDType(const KernelArgs &args, const std::string &what, DType found,
                   DTypeSet allowed);
/// "expected <what> of dtype <expected>, got <found>"
Status expectSameDType(const KernelArgs &args, const std::string &what,
                       DType found, DType expected);
/// "expected <what> of shape [..], got [..]"
Status expectShape(const KernelArgs &args, const std::string &what,
                   const Shape &found, const Shape &expected);
/// "expected <what> in [0, rank), got <dim>"
Status expectDim(const KernelArgs &args, const std::string &what, int64_t dim,
                 int64_t rank);

/// Row-major strides of `shape`, in elements.
Shape rowMajorStrides(const Shape &shape);

//===----------------------------------------------------------------------===//
// Rounding
//===----------------------------------------------------------------------===//

/// `v` rounded to f32 with round-to-odd. Rounding that result to nearest
/// even at 16 bits gives the correctly rounded 16-bit value, which rounding
/// through a round-to-nearest f32 would not always (double rounding).
inline float roundToOddFloat(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) == v || std::isinf(f) || std::isnan(f))
    return f;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 1u) == 0) // the other neighbour of v is the odd one
    f = std::nextafter(f, v > f ? std::numeric_limits<float>::infinity()
                                : -std::numeric_limits<float>::infinity());
  return f;
}

/// `v` rounded to f64 with round-to-odd (exact below 2^53 in magnitude).
inline double roundToOddDouble(int64_t v) {
  double d = static_cast<double>(v);
  if (static_cast<__int128>(d) == static_cast<__int128>(v))
    return d;
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  if ((bits & 1u) == 0)
    d = std::nextafter(d, static_cast<__int128>(d) < v ? INFINITY : -INFINITY);
  return d;
}

/// Float to integer: truncation toward zero, NaN gives 0, values beyond the
/// integer range saturate to its limits.
template <typename Int> Int saturatingTrunc(double v) {
  if (std::isnan(v))
    return 0;
  // 2^63 and 2^31 are exact doubles; every double below them truncates
  // into range.
  constexpr double kLimit =
      static_cast<double>(std::numeric_limits<Int>::max()) + 1.0;
  if (v >= kLimit)
    return std::numeric_limits<Int>::max();
  if (v <= -kLimit)
    return std::numeric_limits<Int>::min();
  return static_cast<Int>(v);
}

//===----------------------------------------------------------------------===//
// Element traits: how a dtype is stored and in which type it is computed
//===----------------------------------------------------------------------===//

template <DType D> struct Elem;
template <> struct Elem<DType::F32> {
  using Storage = float;
  using Compute = float;
  static float load(float s) { return s; }
  static float store(float c) { return c; }
  static float fromDouble(double v) { return static_cast<float>(v); }
};
template <> struct Elem<DType::F64> {
  using Storage = double;
  using Compute = double;
  static double load(double s) { return s; }
  static double store(double c) { return c; }
  static double fromDouble(double v) { return v; }
};
template <> struct Elem<DType::BF16> {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t s) { return bf16ToFloat(s); }
  static uint16_t store(float c) { return floatToBf16(c); }
  static uint16_t fromDouble(double v) {
    return floatToBf16(roundToOddFloat(v));
  }
};
template <> struct Elem<DType::F16> {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t s) { return f16ToFloat(s); }
  static uint16_t store(float c) { return floatToF16(c); }
  static uint16_t fromDouble(double v) {
    return floatToF16(roundToOddFloat(v));
  }
};
template <> struct Elem<DType::I32> {
  using Storage = int32_t;
  using Compute = int32_t;
  static int32_t load(int32_t s) { return s; }
  static int32_t store(int32_t c) { return c; }
  static int32_t fromDouble(double v) { return saturatingTrunc<int32_t>(v); }
};
template <> struct Elem<DType::I64> {
  using Storage = int64_t;
  using Compute = int64_t;
  static int64_t load(int64_t s) { return s; }
  static int64_t store(int64_t c) { return c; }
  static int64_t fromDouble(double v) { return saturatingTrunc<int64_t>(v); }
};
template <> struct Elem<DType::I1> {
  using Storage = uint8_t;
  using Compute = uint8_t;
  static uint8_t load(uint8_t s) { return s != 0; }
  static uint8_t store(uint8_t c) { return c != 0; }
  static uint8_t fromDouble(double v) { return v != 0.0; }
};

template <typename E> constexpr bool isFloatElem() {
  return std::is_floating_point_v<typename E::Compute>;
}

/// Calls fn(Elem<D>{}) for the runtime dtype `d`, instantiating `fn` only for
/// the dtypes in `Set` (the caller has checked that `d` is one of them).
template <DTypeSet Set, typename Fn> void visitDType(DType d, Fn &&fn) {
  switch (d) {
#define LLMC_VISIT(D)                                                          \
  case DType::D:                                                               \
    if constexpr ((Set & dtypeBit(DType::D)) != 0)                             \
      fn(Elem<DType::D>{});                                                    \
    return;
    LLMC_VISIT(F32)
    LLMC_VISIT(F64)
    LLMC_VISIT(BF16)
    LLMC_VISIT(F16)
    LLMC_VISIT(I32)
    LLMC_VISIT(I64)
    LLMC_VISIT(I1)
#undef LLMC_VISIT
  case DType::F8E4M3FN: // only the FP8 kernels (Fp8.cpp) read these
  case DType::F8E5M2:
    return;
  }
}

template <typename E> typename E::Storage *dataOf(const TensorRef &t) {
  return static_cast<typename E::Storage *>(t.data);
}

//===----------------------------------------------------------------------===//
// Arithmetic rules shared by elementwise ops and reductions
//===----------------------------------------------------------------------===//

/// Integer arithmetic wraps around (two's complement) instead of being
/// undefined on overflow.
template <typename T> T wrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T> T wrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T> T wrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

/// max/min that return NaN when either operand is NaN.
template <typename T> bool isNan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}
template <typename T> T maxPropagatingNan(T a, T b) {
  return (isNan(a) || a >= b) ? a : b;
}
template <typename T> T minPropagatingNan(T a, T b) {
  return (isNan(a) || a <= b) ? a : b;
}

//===----------------------------------------------------------------------===//
// Threading
//===----------------------------------------------------------------------===//

/// Elements (or multiply-adds) per parallel chunk: below this, handing work
/// to another thread costs more than it saves.
constexpr int64_t kGrain = 16384;

/// The grain, in items, of a loop whose items cost `workPerItem` each.
inline int64_t grainFor(int64_t workPerItem) {
  return std::max<int64_t>(1, kGrain / std::max<int64_t>(1, workPerItem));
}

/// Calls fn(i) for every i in [0, n), split over the pool.
template <typename Fn>
void forEachElement(ThreadPool &pool, int64_t n, const Fn &fn) {
  pool.parallelFor(n, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      fn(i);
  });
}

} // namespace llmc::rt::primitive

#endif // LLMC_RUNTIME_CPU_PRIMITIVEHELPERS_H
