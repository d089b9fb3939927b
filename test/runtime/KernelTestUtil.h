//===- KernelTestUtil.h - what the kernel tests share -----------*- C++ -*-===//
//
// What the CPU kernel tests share: a tensor that owns its bytes, seeded
// random fills that are never all zeros, launching a kernel by kind, exact
// rounding of a double to each float type (an implementation independent of
// the runtime's), and element comparisons that report the first few
// mismatches with their index.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_RUNTIME_KERNELTESTUTIL_H
#define LLMC_TEST_RUNTIME_KERNELTESTUTIL_H

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/KernelImpl.h"
#include "runtime/cpu/ThreadPool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace llmc::rt::test {

/// f32 and f64 machine epsilons (the ulp of 1).
constexpr double kEps32 = 0x1p-23;
constexpr double kEps64 = 0x1p-52;

/// A dense host tensor that owns its storage.
struct Tensor {
  DType dtype;
  Shape shape;
  std::vector<uint8_t> bytes;

  Tensor(DType dtype, Shape shape)
      : dtype(dtype), shape(std::move(shape)),
        bytes(static_cast<size_t>(numElements(this->shape)) *
              dtypeSize(dtype)) {}

  int64_t size() const { return numElements(shape); }
  TensorRef ref() const {
    return {const_cast<uint8_t *>(bytes.data()), dtype, shape};
  }
  /// Element i as a double (exact for every dtype but i64 beyond 2^53).
  double at(int64_t i) const { return loadFloat(element(), i); }
  int64_t intAt(int64_t i) const { return loadInt(element(), i); }
  /// Stores v, which must be representable (tests store exact values).
  void set(int64_t i, double v) {
    if (isFloat(dtype))
      storeFloat(element(), i, v);
    else
      storeInt(element(), i, static_cast<int64_t>(v));
  }

private:
  /// What loadFloat/storeFloat read: data and dtype (no shape copy).
  TensorRef element() const {
    return {const_cast<uint8_t *>(bytes.data()), dtype, {}};
  }
};

/// Uniform values in [lo, hi] rounded to the dtype (integers: uniform
/// integers; i1: fair coins). Never all zeros: a zero fill would hide a
/// kernel that writes nothing.
inline Tensor randomTensor(std::mt19937_64 &rng, DType dtype, Shape shape,
                           double lo = -2.0, double hi = 2.0) {
  Tensor t(dtype, std::move(shape));
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(lo),
                                                 static_cast<int64_t>(hi));
  bool anyNonZero = false;
  for (int64_t i = 0; i < t.size(); ++i) {
    if (dtype == DType::I1)
      t.set(i, rng() & 1);
    else if (isFloat(dtype))
      t.set(i, real(rng));
    else
      t.set(i, static_cast<double>(integer(rng)));
    anyNonZero |= t.at(i) != 0.0;
  }
  if (t.size() > 0 && !anyNonZero)
    t.set(0, 1.0);
  return t;
}

inline ThreadPool &testPool() {
  // Three threads on any machine, so that loops really are split in chunks.
  static ThreadPool pool(3);
  return pool;
}

/// Runs `kind` on the tensors (outputs are written in place).
inline Status run(KernelKind kind, std::vector<const Tensor *> inputs,
                  std::vector<Tensor *> outputs, std::vector<int64_t> ints = {},
                  std::vector<double> floats = {}) {
  std::vector<TensorRef> in, out;
  for (const Tensor *t : inputs)
    in.push_back(t->ref());
  for (Tensor *t : outputs)
    out.push_back(t->ref());
  KernelAttrs attrs{std::move(ints), std::move(floats)};
  return runCpuKernel(kind, attrs, in, out, testPool());
}

/// `x` rounded to nearest even with `bits` significant bits and normal
/// exponents down to `minExp` (frexp's convention: x = m·2^e, m in [0.5, 1)).
inline double roundSignificand(double x, int bits, int minExp) {
  if (x == 0.0 || !std::isfinite(x))
    return x;
  int e;
  std::frexp(x, &e);
  double quantum = std::ldexp(1.0, std::max(e, minExp) - bits);
  return std::nearbyint(x / quantum) * quantum; // default mode: to even
}

/// The exact value `x` correctly rounded to a float dtype (normal range,
/// with f16 overflow to infinity).
inline double roundTo(DType dtype, double x) {
  switch (dtype) {
  case DType::F64:
    return x;
  case DType::F32:
    return static_cast<float>(x);
  case DType::BF16:
    return roundSignificand(x, 8, -125);
  case DType::F16: {
    double r = roundSignificand(x, 11, -13);
    return std::fabs(r) > 65504.0 ? std::copysign(INFINITY, r) : r;
  }
  default:
    return std::trunc(x);
  }
}

/// The distance between adjacent values of `dtype` around |x|.
inline double ulpOf(DType dtype, double x) {
  int e = 0;
  if (x != 0.0)
    std::frexp(x, &e);
  switch (dtype) {
  case DType::F64:
    return std::ldexp(1.0, std::max(e, -1021) - 53);
  case DType::F32:
    return std::ldexp(1.0, std::max(e, -125) - 24);
  case DType::BF16:
    return std::ldexp(1.0, std::max(e, -125) - 8);
  case DType::F16:
    return std::ldexp(1.0, std::max(e, -13) - 11);
  default:
    return 1.0;
  }
}

/// Expects |got[i] - want[i]| <= tolerance(i) for every element (NaN
/// matches NaN), reporting at most five mismatches.
inline void expectNear(const Tensor &got, const std::vector<double> &want,
                       const std::function<double(int64_t)> &tolerance) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  int failures = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = got.at(i), w = want[i];
    bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
              std::fabs(g - w) <= tolerance(i);
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << "element " << i << ": got " << g << ", want " << w
                    << " (tolerance " << tolerance(i) << ", "
                    << dtypeName(got.dtype) << ")";
  }
  EXPECT_EQ(failures, 0) << "mismatching elements";
}

/// Expects every element to equal `want` exactly.
inline void expectExact(const Tensor &got, const std::vector<double> &want) {
  expectNear(got, want, [](int64_t) { return 0.0; });
}

/// Expects `status` to be InvalidArgument with `fragment` in its message.
inline void expectInvalid(const Status &status, const std::string &fragment) {
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument) << status.toString();
  EXPECT_NE(status.message().find(fragment), std::string::npos)
      << "message: " << status.message()
      << "\nexpected to contain: " << fragment;
}

/// expectInvalid, reporting the line of the call.
#define EXPECT_INVALID(status, fragment)                                       \
  do {                                                                         \
    SCOPED_TRACE(#status);                                                     \
    ::llmc::rt::test::expectInvalid(status, fragment);                         \
  } while (false)

/// The row-major multi-index of element `linear` of `shape`.
inline std::vector<int64_t> unravel(int64_t linear, const Shape &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

inline int64_t ravel(const std::vector<int64_t> &index, const Shape &shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

} // namespace llmc::rt::test

#endif // LLMC_TEST_RUNTIME_KERNELTESTUTIL_H
