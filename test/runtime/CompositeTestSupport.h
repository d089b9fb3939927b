//===- CompositeTestSupport.h - harness of composite tests --*- C++ -*-===//
//
// Tensors that own their storage, seeded random fills, a kernel launch by
// kind, the per-dtype tolerances and the fixture that runs a test for every
// float storage type. Used by CompositeKernelsTest.cpp.
//
// Tolerances, |got - want| <= tol * max(1, |want|): the references read the
// same stored (already rounded) inputs, so the only difference is the
// kernel's f64 arithmetic order and the final rounding to the storage type.
// f64 1e-12; f32 1e-5 (the bound the CUDA kernels will be held to; the CPU
// kernels are within an f32 ulp); bf16 1e-2 (8-bit significand, 2^-9
// relative rounding); f16 2e-3 (11-bit significand).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_RUNTIME_COMPOSITETESTSUPPORT_H
#define LLMC_TEST_RUNTIME_COMPOSITETESTSUPPORT_H

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace llmc::rt {
/// Parameterized tests print "f32", not "1-byte object <00>".
inline void PrintTo(DType dtype, std::ostream *os) { *os << dtypeName(dtype); }
} // namespace llmc::rt

namespace llmc::rt::compositetest {

/// Fails the test with the status' message unless it is ok.
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    Status status_ = (expr);                                                   \
    ASSERT_TRUE(status_.isOk()) << status_.toString();                         \
  } while (false)

/// Three threads on a two-core machine: the chunks are uneven and the
/// caller's chunk is not the only one.
inline ThreadPool &testPool() {
  static ThreadPool pool(3);
  return pool;
}

//===----------------------------------------------------------------------===//
// Tensors that own their storage
//===----------------------------------------------------------------------===//

class Buffer {
public:
  Buffer(DType dtype, Shape shape)
      : bytes_(numElements(shape) * dtypeSize(dtype)) {
    ref_.data = bytes_.data();
    ref_.dtype = dtype;
    ref_.shape = std::move(shape);
  }
  Buffer(DType dtype, Shape shape, const std::vector<double> &values)
      : Buffer(dtype, std::move(shape)) {
    EXPECT_EQ(static_cast<int64_t>(values.size()), size());
    for (size_t i = 0; i < values.size(); ++i)
      set(i, values[i]);
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;

  const TensorRef &ref() const { return ref_; }
  int64_t size() const { return ref_.numElements(); }

  /// Element `i` as double (floats exactly, integers by value).
  double at(int64_t i) const {
    const void *p = bytes_.data() + i * dtypeSize(ref_.dtype);
    switch (ref_.dtype) {
    case DType::F32:
      return *static_cast<const float *>(p);
    case DType::F64:
      return *static_cast<const double *>(p);
    case DType::BF16:
      return bf16ToFloat(*static_cast<const uint16_t *>(p));
    case DType::F16:
      return f16ToFloat(*static_cast<const uint16_t *>(p));
    case DType::I32:
      return *static_cast<const int32_t *>(p);
    case DType::I64:
      return static_cast<double>(*static_cast<const int64_t *>(p));
    case DType::I1:
      return *static_cast<const uint8_t *>(p);
    }
    return 0.0;
  }
  /// Stores `v` rounded to nearest even in the storage type.
  void set(int64_t i, double v) {
    void *p = bytes_.data() + i * dtypeSize(ref_.dtype);
    switch (ref_.dtype) {
    case DType::F32:
      *static_cast<float *>(p) = static_cast<float>(v);
      return;
    case DType::F64:
      *static_cast<double *>(p) = v;
      return;
    case DType::BF16:
      *static_cast<uint16_t *>(p) = floatToBf16(static_cast<float>(v));
      return;
    case DType::F16:
      *static_cast<uint16_t *>(p) = floatToF16(static_cast<float>(v));
      return;
    case DType::I32:
      *static_cast<int32_t *>(p) = static_cast<int32_t>(v);
      return;
    case DType::I64:
      *static_cast<int64_t *>(p) = static_cast<int64_t>(v);
      return;
    case DType::I1:
      *static_cast<uint8_t *>(p) = v != 0.0;
      return;
    }
  }
  std::vector<double> values() const {
    std::vector<double> out(size());
    for (int64_t i = 0; i < size(); ++i)
      out[i] = at(i);
    return out;
  }

private:
  std::vector<uint8_t> bytes_;
  TensorRef ref_;
};

/// Uniform in [lo, hi), stored in `dtype`: never all zeros, seeded per test.
inline std::unique_ptr<Buffer> random(DType dtype, Shape shape,
                                      std::mt19937 &rng, double lo = -2.0,
                                      double hi = 2.0) {
  auto buffer = std::make_unique<Buffer>(dtype, std::move(shape));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < buffer->size(); ++i)
    buffer->set(i, dist(rng));
  return buffer;
}

inline Status run(KernelKind kind, KernelAttrs attrs,
                  std::vector<const Buffer *> inputs,
                  std::vector<const Buffer *> outputs,
                  ThreadPool &pool = testPool()) {
  std::vector<TensorRef> in, out;
  for (const Buffer *b : inputs)
    in.push_back(b->ref());
  for (const Buffer *b : outputs)
    out.push_back(b->ref());
  return runCpuKernel(kind, attrs, in, out, pool);
}

inline double tolerance(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return 1e-12;
  case DType::F32:
    return 1e-5;
  case DType::BF16:
    return 1e-2;
  case DType::F16:
    return 2e-3;
  default:
    return 0.0;
  }
}

inline ::testing::AssertionResult allClose(const std::vector<double> &got,
                                           const std::vector<double> &want,
                                           double tol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "got " << got.size() << " values, want " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <=
          tol * std::max(1.0, std::fabs(want[i]))))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", want " << want[i]
             << " (tolerance " << tol << ")";
  return ::testing::AssertionSuccess();
}

/// For every float storage type; named f32, f64, bf16, f16.
class KernelTest : public ::testing::TestWithParam<DType> {
protected:
  DType dtype() const { return GetParam(); }
  double tol() const { return tolerance(GetParam()); }
  std::mt19937 rng{20240611};
};

inline std::string dtypeParamName(const ::testing::TestParamInfo<DType> &info) {
  return dtypeName(info.param);
}

#define INSTANTIATE_FOR_FLOATS(Suite)                                          \
  INSTANTIATE_TEST_SUITE_P(                                                    \
      Floats, Suite,                                                           \
      ::testing::Values(DType::F32, DType::F64, DType::BF16, DType::F16),      \
      dtypeParamName)

/// The softmax of one row, in f64 (a naive reference).
inline std::vector<double> softmaxRef(const std::vector<double> &row) {
  double max = -std::numeric_limits<double>::infinity();
  for (double v : row)
    max = std::max(max, v);
  double sum = 0.0;
  for (double v : row)
    sum += std::exp(v - max);
  std::vector<double> p;
  for (double v : row)
    p.push_back(std::exp(v - max) / sum);
  return p;
}

} // namespace llmc::rt::compositetest

#endif // LLMC_TEST_RUNTIME_COMPOSITETESTSUPPORT_H
