//===- Fp8KernelsTest.cpp - the FP8 conversions and CPU kernels -----------===//
//
// The 8-bit float conversions of runtime/DType.h against known bit patterns
// (the values torch.float8_e4m3fn / float8_e5m2 and CUDA's __NV_SATFINITE
// conversions give) and against a brute-force nearest-value search over all
// 256 codes, then the Amax, ScaledCast and ScaledMatmul kernels against
// naive f64 references.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <cstring>
#include <limits>

namespace llmc::rt::test {
namespace {

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

TEST(Fp8Conversion, E4M3FNKnownPatterns) {
  EXPECT_EQ(floatToF8E4M3FN(448.0f), 0x7e);          // largest finite
  EXPECT_EQ(floatToF8E4M3FN(-448.0f), 0xfe);
  EXPECT_EQ(floatToF8E4M3FN(1.0f), 0x38);            // exponent 7 = bias
  EXPECT_EQ(floatToF8E4M3FN(0.001953125f), 0x01);    // 2^-9, smallest subnormal
  EXPECT_EQ(floatToF8E4M3FN(0.015625f), 0x08);       // 2^-6, smallest normal
  EXPECT_EQ(floatToF8E4M3FN(0.013671875f), 0x07);    // 7 * 2^-9, largest subnormal
  EXPECT_EQ(floatToF8E4M3FN(0.0f), 0x00);
  EXPECT_EQ(floatToF8E4M3FN(-0.0f), 0x80);
  // Ties to even: 1.0625 lies halfway between 1.0 (0x38, even) and 1.125
  // (0x39); 1.1875 between 1.125 and 1.25 (0x3a, even).
  EXPECT_EQ(floatToF8E4M3FN(1.0625f), 0x38);
  EXPECT_EQ(floatToF8E4M3FN(1.1875f), 0x3a);
  // Subnormal ties: 2^-10 between 0 and 2^-9 goes to 0; 3 * 2^-10 between
  // 2^-9 (0x01) and 2^-8 (0x02) goes to 0x02.
  EXPECT_EQ(floatToF8E4M3FN(0.0009765625f), 0x00);
  EXPECT_EQ(floatToF8E4M3FN(0.0029296875f), 0x02);
  // Just above the tie rounds up.
  EXPECT_EQ(floatToF8E4M3FN(std::nextafter(1.0625f, 2.0f)), 0x39);
  // Saturation: 464 (the tie above 448) and anything larger, infinity too.
  EXPECT_EQ(floatToF8E4M3FN(464.0f), 0x7e);
  EXPECT_EQ(floatToF8E4M3FN(480.0f), 0x7e);
  EXPECT_EQ(floatToF8E4M3FN(1e30f), 0x7e);
  EXPECT_EQ(floatToF8E4M3FN(std::numeric_limits<float>::infinity()), 0x7e);
  EXPECT_EQ(floatToF8E4M3FN(-std::numeric_limits<float>::infinity()), 0xfe);
  EXPECT_EQ(floatToF8E4M3FN(std::nanf("")), 0x7f);
  EXPECT_EQ(floatToF8E4M3FN(-std::nanf("")), 0xff);
  // f32 subnormals round to zero.
  EXPECT_EQ(floatToF8E4M3FN(bitsToFloat(0x00000001u)), 0x00);

  EXPECT_EQ(f8E4M3FNToFloat(0x7e), 448.0f);
  EXPECT_EQ(f8E4M3FNToFloat(0x01), 0.001953125f);
  EXPECT_EQ(f8E4M3FNToFloat(0x78), 256.0f); // exponent 15 is a normal binade
  EXPECT_EQ(f8E4M3FNToFloat(0xb8), -1.0f);
  EXPECT_TRUE(std::isnan(f8E4M3FNToFloat(0x7f)));
  EXPECT_TRUE(std::isnan(f8E4M3FNToFloat(0xff)));
}

TEST(Fp8Conversion, E5M2KnownPatterns) {
  EXPECT_EQ(floatToF8E5M2(57344.0f), 0x7b); // largest finite
  EXPECT_EQ(floatToF8E5M2(1.0f), 0x3c);
  EXPECT_EQ(floatToF8E5M2(0x1p-16f), 0x01); // smallest subnormal
  EXPECT_EQ(floatToF8E5M2(0x1p-14f), 0x04); // smallest normal
  EXPECT_EQ(floatToF8E5M2(1.125f), 0x3c);   // tie between 1.0 and 1.25: even
  EXPECT_EQ(floatToF8E5M2(1.375f), 0x3e);   // tie between 1.25 and 1.5: even
  // 61440 is the tie between 57344 and 65536 (infinity's code): saturates.
  EXPECT_EQ(floatToF8E5M2(61440.0f), 0x7b);
  EXPECT_EQ(floatToF8E5M2(std::numeric_limits<float>::infinity()), 0x7b);
  EXPECT_EQ(floatToF8E5M2(-1e30f), 0xfb);
  EXPECT_EQ(floatToF8E5M2(std::nanf("")), 0x7f);

  EXPECT_EQ(f8E5M2ToFloat(0x7b), 57344.0f);
  EXPECT_EQ(f8E5M2ToFloat(0x7c), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f8E5M2ToFloat(0xfc), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f8E5M2ToFloat(0x7d)));
  EXPECT_EQ(f8E5M2ToFloat(0x01), 0x1p-16f);
}

/// The code a correct saturating round-to-nearest-even gives, by search:
/// the finite code nearest |x|, the even code (last bit 0) on a tie.
uint8_t nearestCode(float x, float (*decode)(uint8_t), float maxFinite) {
  if (std::isnan(x))
    return std::signbit(x) ? 0xff : 0x7f;
  double a = std::min<double>(std::fabs(x), maxFinite);
  int best = 0;
  double bestDistance = std::numeric_limits<double>::infinity();
  for (int code = 0; code < 0x80; ++code) {
    double v = decode(static_cast<uint8_t>(code));
    if (!std::isfinite(v))
      continue;
    double d = std::fabs(v - a);
    if (d < bestDistance || (d == bestDistance && (code & 1) == 0)) {
      best = code;
      bestDistance = d;
    }
  }
  return static_cast<uint8_t>((std::signbit(x) ? 0x80 : 0) | best);
}

TEST(Fp8Conversion, EncodingIsTheNearestCodeForEveryHighHalf) {
  // Every f32 whose low 16 bits are one of a few patterns (the boundary
  // cases: 0, the tie bit, all ones), over all 2^16 high halves.
  for (uint32_t high = 0; high < 0x10000u; ++high)
    for (uint32_t low : {0x0000u, 0x8000u, 0x0001u, 0xffffu, 0x7fffu}) {
      float x = bitsToFloat(high << 16 | low);
      ASSERT_EQ(floatToF8E4M3FN(x), nearestCode(x, f8E4M3FNToFloat, 448.0f))
          << "x = " << x;
      ASSERT_EQ(floatToF8E5M2(x), nearestCode(x, f8E5M2ToFloat, 57344.0f))
          << "x = " << x;
    }
}

TEST(Fp8Conversion, DecodeThenEncodeIsTheIdentityOnFiniteCodes) {
  for (int code = 0; code < 256; ++code) {
    auto c = static_cast<uint8_t>(code);
    if ((c & 0x7f) != 0x7f)
      EXPECT_EQ(floatToF8E4M3FN(f8E4M3FNToFloat(c)), c) << code;
    if ((c & 0x7c) != 0x7c)
      EXPECT_EQ(floatToF8E5M2(f8E5M2ToFloat(c)), c) << code;
  }
}

Tensor scalar(float v) {
  Tensor t(DType::F32, {});
  t.set(0, v);
  return t;
}

TEST(Fp8Kernels, AmaxIsTheLargestMagnitude) {
  std::mt19937_64 rng(11);
  Tensor x = randomTensor(rng, DType::BF16, {37, 53});
  x.set(1234, -7.5);
  Tensor out(DType::F32, {});
  ASSERT_TRUE(run(KernelKind::Amax, {&x}, {&out}).isOk());
  EXPECT_EQ(out.at(0), 7.5);
  x.set(5, std::nan(""));
  ASSERT_TRUE(run(KernelKind::Amax, {&x}, {&out}).isOk());
  EXPECT_TRUE(std::isnan(out.at(0)));
}

TEST(Fp8Kernels, ScaledCastRoundsTheF32Product) {
  std::mt19937_64 rng(12);
  Tensor x = randomTensor(rng, DType::BF16, {64, 48});
  float scale = 448.0f / 2.0f * 1.37f; // some products saturate
  Tensor s = scalar(scale);
  for (DType f8 : {DType::F8E4M3FN, DType::F8E5M2}) {
    Tensor y(f8, {64, 48});
    ASSERT_TRUE(run(KernelKind::ScaledCast, {&x, &s}, {&y}).isOk());
    for (int64_t i = 0; i < x.size(); ++i) {
      float product = static_cast<float>(x.at(i)) * scale;
      uint8_t want = f8 == DType::F8E4M3FN ? floatToF8E4M3FN(product)
                                           : floatToF8E5M2(product);
      ASSERT_EQ(y.bytes[i], want) << "element " << i;
    }
  }
}

TEST(Fp8Kernels, ScaledCastTransposeIsTheCastInBothLayouts) {
  std::mt19937_64 rng(14);
  const int64_t rows = 37, cols = 20;
  Tensor x = randomTensor(rng, DType::BF16, {rows, cols});
  Tensor s = scalar(448.0f / 2.0f * 1.37f);
  for (DType f8 : {DType::F8E4M3FN, DType::F8E5M2}) {
    Tensor cast(f8, {rows, cols});
    ASSERT_TRUE(run(KernelKind::ScaledCast, {&x, &s}, {&cast}).isOk());
    Tensor y(f8, {rows, cols}), yt(f8, {cols, rows});
    ASSERT_TRUE(
        run(KernelKind::ScaledCastTranspose, {&x, &s}, {&y, &yt}).isOk());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        ASSERT_EQ(y.bytes[r * cols + c], cast.bytes[r * cols + c])
            << "[" << r << ", " << c << "]";
        ASSERT_EQ(yt.bytes[c * rows + r], cast.bytes[r * cols + c])
            << "transposed [" << c << ", " << r << "]";
      }
  }
  Tensor wrong(DType::F8E4M3FN, {rows, cols}), same(DType::F8E4M3FN, {rows, cols});
  expectInvalid(
      run(KernelKind::ScaledCastTranspose, {&x, &s}, {&same, &wrong}),
      "transposed");
}

TEST(Fp8Kernels, ScaledMatmulIsTheDescaledProductRoundedOnce) {
  std::mt19937_64 rng(13);
  const int64_t m = 32, n = 48, k = 80;
  Tensor a(DType::F8E4M3FN, {m, k}), b(DType::F8E5M2, {n, k});
  std::uniform_int_distribution<int> code(0, 255);
  auto fill = [&](Tensor &t, float (*decode)(uint8_t)) {
    for (auto &byte : t.bytes) {
      do
        byte = static_cast<uint8_t>(code(rng));
      while (!std::isfinite(decode(byte)));
    }
  };
  fill(a, f8E4M3FNToFloat);
  fill(b, f8E5M2ToFloat);
  Tensor sa = scalar(0.0123f), sb = scalar(3.5e-4f);
  for (DType outType : {DType::BF16, DType::F32}) {
    Tensor c(outType, {m, n});
    ASSERT_TRUE(run(KernelKind::ScaledMatmul, {&a, &b, &sa, &sb}, {&c}).isOk());
    std::vector<double> want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        long double sum = 0; // each product is exact; the sum nearly so
        for (int64_t p = 0; p < k; ++p)
          sum += static_cast<long double>(a.at(i * k + p)) * b.at(j * k + p);
        double v = static_cast<double>(sum) * (sa.at(0) * sb.at(0));
        want[i * n + j] = roundTo(outType, v);
      }
    // Correctly rounded on both sides but for the f64 sum's last bits: an
    // error of one unit of the result type at most, and none in practice.
    expectNear(c, want, [&](int64_t i) { return ulpOf(outType, want[i]); });
  }
}

TEST(Fp8Kernels, ScaledMatmulRefusesABatchOrAWrongScale) {
  Tensor a(DType::F8E4M3FN, {2, 4, 16}), b(DType::F8E4M3FN, {8, 16});
  Tensor s = scalar(1.0f), c(DType::BF16, {2, 4, 8});
  expectInvalid(run(KernelKind::ScaledMatmul, {&a, &b, &s, &s}, {&c}),
                "expected lhs [M, K] and rhs [N, K], got [2, 4, 16] and [8, 16]");
  Tensor a2(DType::F8E4M3FN, {4, 16}), c2(DType::BF16, {4, 8});
  Tensor wide(DType::F64, {});
  expectInvalid(run(KernelKind::ScaledMatmul, {&a2, &b, &wide, &s}, {&c2}),
                "lhs_scale_inv");
}

} // namespace
} // namespace llmc::rt::test
