// Tests of the primitive CPU kernels: every kernel against a naive reference
// computed in double precision from the same (already rounded) inputs, for
// f32, f64, bf16 (f16 where cheap) and the integer types the op allows, plus
// the errors of malformed launches.
//
// Tolerances, and why:
//  - Correctly rounded elementwise ops (neg, abs, add, sub, mul, div, sqrt,
//    max, min) are exact in every float type: the result must equal the
//    double reference rounded to the dtype. For bf16/f16 this holds although
//    the kernel computes in f32, because f32 has more than 2p+2 bits, so
//    rounding twice (to f32, then to 16 bits) equals rounding once.
//  - Transcendental ops (exp, log, tanh, rsqrt): f32 within 1e-6 relative
//    (≈8 ulp, libm's f32 functions are within 1-2 ulp), f64 within 1e-14.
//    bf16/f16 must equal the rounded reference, except when the reference
//    lies within a few f32 ulps of the midpoint between two 16-bit values:
//    there an f32 libm result may round either way.
//  - Reductions accumulate in f64: f32 results within 1 f32 ulp of the
//    reference plus R·eps64·Σ|x| (R reduced elements); bf16 results within
//    1 bf16 ulp (one rounding of a nearly exact sum may land on either
//    neighbour of the reference).
//  - Matmul (sgemm accumulates in f32): |error| <= K·eps32·Σ_k|a·b| for f32
//    results (the standard dot-product bound), K·eps64·Σ|a·b| for f64; bf16
//    results add 1 bf16 ulp for the final rounding.
//  - Data movement (broadcast, transpose, slice, concat, gather, select,
//    iota, cast) and integer arithmetic are exact.
#include "KernelTestUtil.h"

#include <climits>

namespace llmc::rt::test {
namespace {

constexpr uint64_t kSeed = 0x11c0ffee;
const std::vector<DType> kFloatDTypes = {DType::F32, DType::F64, DType::BF16,
                                         DType::F16};

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Expects a float elementwise result to match the exact reference `want`
/// (see the file comment for the rules).
void checkFloatElementwise(const Tensor &got, const std::vector<double> &want,
                           bool correctlyRounded) {
  DType dtype = got.dtype;
  std::vector<double> rounded;
  for (double w : want)
    rounded.push_back(roundTo(dtype, w));
  if (correctlyRounded)
    return expectExact(got, rounded);
  if (dtype == DType::F32 || dtype == DType::F64) {
    double rel = dtype == DType::F32 ? 1e-6 : 1e-14;
    return expectNear(got, want,
                      [&](int64_t i) { return rel * std::fabs(want[i]); });
  }
  expectNear(got, rounded, [&](int64_t i) {
    double midpoint = (got.at(i) + rounded[i]) / 2;
    bool nearTie =
        std::fabs(want[i] - midpoint) <= 4 * ulpOf(DType::F32, want[i]);
    return nearTie ? ulpOf(dtype, want[i]) : 0.0;
  });
}

struct UnaryCase {
  KernelKind kind;
  double (*ref)(double);
  double lo, hi;
  bool correctlyRounded;
  bool allowsInts;
};

TEST(PrimitiveElementwise, UnaryMatchesReference) {
  const UnaryCase cases[] = {
      {KernelKind::Neg, [](double x) { return -x; }, -3, 3, true, true},
      {KernelKind::Abs, [](double x) { return std::fabs(x); }, -3, 3, true,
       true},
      {KernelKind::Exp, [](double x) { return std::exp(x); }, -4, 4, false,
       false},
      {KernelKind::Log, [](double x) { return std::log(x); }, 0.01, 8, false,
       false},
      {KernelKind::Tanh, [](double x) { return std::tanh(x); }, -3, 3, false,
       false},
      {KernelKind::Sqrt, [](double x) { return std::sqrt(x); }, 0, 9, true,
       false},
      {KernelKind::Rsqrt, [](double x) { return 1 / std::sqrt(x); }, 0.01, 9,
       false, false},
  };
  std::mt19937_64 rng(kSeed);
  for (const UnaryCase &c : cases) {
    std::vector<DType> dtypes = kFloatDTypes;
    if (c.allowsInts)
      dtypes.insert(dtypes.end(), {DType::I32, DType::I64});
    for (DType dtype : dtypes) {
      SCOPED_TRACE(std::string(kernelName(c.kind)) + " " + dtypeName(dtype));
      // Large enough to be split over the pool.
      Tensor x = isFloat(dtype)
                     ? randomTensor(rng, dtype, {37, 1001}, c.lo, c.hi)
                     : randomTensor(rng, dtype, {37, 1001}, -1000, 1000);
      Tensor y(dtype, x.shape);
      ASSERT_TRUE(run(c.kind, {&x}, {&y}).isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < x.size(); ++i)
        want.push_back(c.ref(x.at(i)));
      if (isFloat(dtype))
        checkFloatElementwise(y, want, c.correctlyRounded);
      else
        expectExact(y, want);
    }
  }
}

struct BinaryCase {
  KernelKind kind;
  double (*ref)(double, double);
  bool correctlyRounded;
};

TEST(PrimitiveElementwise, BinaryMatchesReference) {
  const BinaryCase cases[] = {
      {KernelKind::Add, [](double a, double b) { return a + b; }, true},
      {KernelKind::Sub, [](double a, double b) { return a - b; }, true},
      {KernelKind::Mul, [](double a, double b) { return a * b; }, true},
      {KernelKind::Div, [](double a, double b) { return a / b; }, true},
      {KernelKind::Max, [](double a, double b) { return std::max(a, b); },
       true},
      {KernelKind::Min, [](double a, double b) { return std::min(a, b); },
       true},
  };
  std::mt19937_64 rng(kSeed);
  for (const BinaryCase &c : cases) {
    std::vector<DType> dtypes = kFloatDTypes;
    dtypes.insert(dtypes.end(), {DType::I32, DType::I64});
    for (DType dtype : dtypes) {
      SCOPED_TRACE(std::string(kernelName(c.kind)) + " " + dtypeName(dtype));
      bool fp = isFloat(dtype);
      Tensor a = fp ? randomTensor(rng, dtype, {23, 997}, -3, 3)
                    : randomTensor(rng, dtype, {23, 997}, -1000, 1000);
      Tensor b = fp ? randomTensor(rng, dtype, {23, 997}, -3, 3)
                    : randomTensor(rng, dtype, {23, 997}, -30, 30);
      Tensor y(dtype, a.shape);
      ASSERT_TRUE(run(c.kind, {&a, &b}, {&y}).isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < a.size(); ++i) {
        double x = a.at(i), z = b.at(i);
        if (!fp && c.kind == KernelKind::Div) // truncation; x/0 is 0
          want.push_back(z == 0 ? 0 : std::trunc(x / z));
        else
          want.push_back(c.ref(x, z));
      }
      if (fp)
        checkFloatElementwise(y, want, c.correctlyRounded);
      else
        expectExact(y, want);
    }
  }
}

TEST(PrimitiveElementwise, MaxMinPropagateNan) {
  for (DType dtype : kFloatDTypes) {
    SCOPED_TRACE(dtypeName(dtype));
    Tensor a(dtype, {4}), b(dtype, {4});
    const double as[] = {NAN, 1, NAN, -2}, bs[] = {1, NAN, NAN, 3};
    for (int i = 0; i < 4; ++i) {
      a.set(i, as[i]);
      b.set(i, bs[i]);
    }
    Tensor mx(dtype, {4}), mn(dtype, {4});
    ASSERT_TRUE(run(KernelKind::Max, {&a, &b}, {&mx}).isOk());
    ASSERT_TRUE(run(KernelKind::Min, {&a, &b}, {&mn}).isOk());
    expectExact(mx, {NAN, NAN, NAN, 3});
    expectExact(mn, {NAN, NAN, NAN, -2});
  }
}

TEST(PrimitiveElementwise, LogFollowsIeeeOutsideItsDomain) {
  Tensor x(DType::F32, {3}), y(DType::F32, {3});
  x.set(0, 0.0);
  x.set(1, -1.0);
  x.set(2, 1.0);
  ASSERT_TRUE(run(KernelKind::Log, {&x}, {&y}).isOk());
  expectExact(y, {-INFINITY, NAN, 0.0});
}

TEST(PrimitiveElementwise, IntegerEdgeCasesWrapAndDivideByZeroGivesZero) {
  Tensor a(DType::I32, {5}), b(DType::I32, {5});
  const int64_t as[] = {INT32_MIN, 7, -7, INT32_MAX, 5};
  const int64_t bs[] = {-1, 2, 2, 1, 0};
  for (int i = 0; i < 5; ++i) {
    a.set(i, static_cast<double>(as[i]));
    b.set(i, static_cast<double>(bs[i]));
  }
  Tensor q(DType::I32, {5}), sum(DType::I32, {5}), neg(DType::I32, {5});
  ASSERT_TRUE(run(KernelKind::Div, {&a, &b}, {&q}).isOk());
  ASSERT_TRUE(run(KernelKind::Add, {&a, &b}, {&sum}).isOk());
  ASSERT_TRUE(run(KernelKind::Neg, {&a}, {&neg}).isOk());
  // MIN / -1 wraps to MIN; 7/2 = 3 and -7/2 = -3 (toward zero); 5/0 = 0.
  expectExact(q, {INT32_MIN, 3, -3, INT32_MAX, 0});
  expectExact(sum, {INT32_MAX, 9, -5, INT32_MIN, 5});
  expectExact(neg, {INT32_MIN, -7, 7, -INT32_MAX, -5});
}

TEST(PrimitiveElementwise, RunsInPlace) {
  std::mt19937_64 rng(kSeed);
  Tensor a = randomTensor(rng, DType::F32, {1000});
  Tensor b = randomTensor(rng, DType::F32, {1000});
  std::vector<double> want;
  for (int64_t i = 0; i < a.size(); ++i)
    want.push_back(static_cast<float>(a.at(i) * b.at(i)));
  ASSERT_TRUE(run(KernelKind::Mul, {&a, &b}, {&a}).isOk());
  expectExact(a, want);
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

TEST(PrimitiveCast, FloatToFloatRoundsToNearestEven) {
  std::mt19937_64 rng(kSeed);
  std::uniform_real_distribution<double> dist(-300, 300);
  for (DType from : kFloatDTypes)
    for (DType to : kFloatDTypes) {
      SCOPED_TRACE(std::string(dtypeName(from)) + " -> " + dtypeName(to));
      Tensor x(from, {4099});
      for (int64_t i = 0; i < x.size(); ++i)
        x.set(i, roundTo(from, dist(rng))); // full-precision f64 values
      Tensor y(to, x.shape);
      ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&y}).isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < x.size(); ++i)
        want.push_back(roundTo(to, x.at(i)));
      expectExact(y, want);
    }
}

TEST(PrimitiveCast, F64ToBf16RoundsOnce) {
  // 1 + 2^-8 + 2^-30 is just above the midpoint of the bf16 values 1 and
  // 1 + 2^-7; rounding to f32 first would land on the midpoint and then
  // round to even (1).
  Tensor x(DType::F64, {2}), y(DType::BF16, {2}), h(DType::F16, {2});
  x.set(0, 1 + 0x1p-8 + 0x1p-30);
  x.set(1, -(1 + 0x1p-8 + 0x1p-30));
  ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&y}).isOk());
  expectExact(y, {1 + 0x1p-7, -(1 + 0x1p-7)});
  x.set(0, 1 + 0x1p-11 + 0x1p-30); // the same for f16 (ulp 2^-10)
  x.set(1, 1 + 0x1p-11);           // an exact tie: to even
  ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&h}).isOk());
  expectExact(h, {1 + 0x1p-10, 1});
}

TEST(PrimitiveCast, FloatToIntTruncatesAndSaturates) {
  const double values[] = {2.7,      -2.7,      0.5, -0.0,         1e10, -1e10,
                           INFINITY, -INFINITY, NAN, 2147483647.0, 1e300};
  const int n = sizeof(values) / sizeof(values[0]);
  for (DType from : {DType::F32, DType::F64}) {
    Tensor x(from, {n});
    for (int i = 0; i < n; ++i)
      x.set(i, values[i]);
    Tensor i32(DType::I32, {n}), i64(DType::I64, {n}), i1(DType::I1, {n});
    ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&i32}).isOk());
    ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&i64}).isOk());
    ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&i1}).isOk());
    std::vector<int64_t> want32 = {2,         -2,        0,         0,
                                   INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN,
                                   0,         INT32_MAX, INT32_MAX};
    std::vector<int64_t> want64 = {
        2,         -2,        0, 0,          10000000000LL, -10000000000LL,
        INT64_MAX, INT64_MIN, 0, 2147483647, INT64_MAX};
    if (from == DType::F32) { // 2147483647 is 2^31 in f32; 1e300 is inf
      want64[9] = 2147483648LL;
    }
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(i32.intAt(i), want32[i]) << dtypeName(from) << " " << values[i];
      EXPECT_EQ(i64.intAt(i), want64[i]) << dtypeName(from) << " " << values[i];
      // to i1 is x != 0, so NaN is true.
      EXPECT_EQ(i1.intAt(i), values[i] != 0.0) << values[i];
    }
  }
}

TEST(PrimitiveCast, IntConversions) {
  // i64 -> narrow floats round once: 2^60 + 2^52 + 1 is above the bf16
  // midpoint 2^60·(1 + 2^-8); through a round-to-nearest f64 it would be
  // exactly on it.
  Tensor x(DType::I64, {5});
  const int64_t values[] = {(int64_t(1) << 60) + (int64_t(1) << 52) + 1,
                            (int64_t(1) << 32) + 5, -1, 0, 16777217};
  for (int i = 0; i < 5; ++i)
    static_cast<int64_t *>(x.ref().data)[i] = values[i];
  Tensor bf(DType::BF16, {5}), f32(DType::F32, {5}), i32(DType::I32, {5}),
      i1(DType::I1, {5});
  ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&bf}).isOk());
  ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&f32}).isOk());
  ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&i32}).isOk());
  ASSERT_TRUE(run(KernelKind::Cast, {&x}, {&i1}).isOk());
  expectExact(bf, {0x1p60 * (1 + 0x1p-7), 0x1p32, -1, 0, 16777216});
  expectExact(f32, {0x1p60 * (1 + 0x1p-8), 0x1p32, -1, 0, 16777216});
  expectExact(i32, {1, 5, -1, 0, 16777217}); // i64 -> i32 wraps
  expectExact(i1, {1, 1, 1, 0, 1});

  Tensor b(DType::I1, {3}), bAsF(DType::BF16, {3}), bAsI(DType::I64, {3});
  b.set(0, 1);
  b.set(2, 1);
  ASSERT_TRUE(run(KernelKind::Cast, {&b}, {&bAsF}).isOk());
  ASSERT_TRUE(run(KernelKind::Cast, {&b}, {&bAsI}).isOk());
  expectExact(bAsF, {1, 0, 1});
  expectExact(bAsI, {1, 0, 1});
}

//===----------------------------------------------------------------------===//
// Compare, select, iota
//===----------------------------------------------------------------------===//

TEST(PrimitiveCompare, AllDirectionsMatchReference) {
  std::mt19937_64 rng(kSeed);
  for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16,
                      DType::I32, DType::I64}) {
    // Few distinct values, so that equality happens often; NaNs for floats.
    Tensor a = randomTensor(rng, dtype, {40, 500}, -3, 3);
    Tensor b = randomTensor(rng, dtype, {40, 500}, -3, 3);
    if (isFloat(dtype)) {
      for (int64_t i = 0; i < a.size(); ++i)
        if (i % 5 == 0)
          a.set(i, std::round(a.at(i)));
        else if (i % 5 == 1)
          b.set(i, std::round(b.at(i)));
      a.set(7, NAN);
      b.set(8, NAN);
      b.set(7, NAN);
    }
    for (int64_t direction = 0; direction < 6; ++direction) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " direction " +
                   std::to_string(direction));
      Tensor y(DType::I1, a.shape);
      ASSERT_TRUE(run(KernelKind::Compare, {&a, &b}, {&y}, {direction}).isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < a.size(); ++i) {
        double x = a.at(i), z = b.at(i);
        const bool results[] = {x == z, x != z, x<z, x <= z, x> z, x >= z};
        want.push_back(results[direction]);
      }
      expectExact(y, want);
    }
  }
}

TEST(PrimitiveSelect, PicksPerElement) {
  std::mt19937_64 rng(kSeed);
  for (DType dtype :
       {DType::F32, DType::F64, DType::BF16, DType::I64, DType::I1}) {
    SCOPED_TRACE(dtypeName(dtype));
    Tensor cond = randomTensor(rng, DType::I1, {33, 777});
    Tensor t = randomTensor(rng, dtype, {33, 777}, -9, 9);
    Tensor f = randomTensor(rng, dtype, {33, 777}, -9, 9);
    Tensor y(dtype, cond.shape);
    ASSERT_TRUE(run(KernelKind::Select, {&cond, &t, &f}, {&y}).isOk());
    std::vector<double> want;
    for (int64_t i = 0; i < y.size(); ++i)
      want.push_back(cond.at(i) != 0 ? t.at(i) : f.at(i));
    expectExact(y, want);
  }
}

TEST(PrimitiveIota, IndexAlongDim) {
  for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16,
                      DType::I32, DType::I64})
    for (int64_t dim = 0; dim < 3; ++dim) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + " dim " +
                   std::to_string(dim));
      Shape shape = {3, 300, 5}; // 300: bf16 rounds 257 to 256, 259 to 260
      Tensor y(dtype, shape);
      std::fill(y.bytes.begin(), y.bytes.end(), 0xAB); // not zeros
      ASSERT_TRUE(run(KernelKind::Iota, {}, {&y}, {dim}).isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < y.size(); ++i)
        want.push_back(
            roundTo(dtype, static_cast<double>(unravel(i, shape)[dim])));
      expectExact(y, want);
    }
}

} // namespace
} // namespace llmc::rt::test
