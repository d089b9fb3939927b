// The CPU kernel of MatmulEpilogue (Kernels.def) against the commands it
// replaces (Matmul, then Broadcast + Add [+ Gelu | + Add residual]).
// Tolerances:
//  - f32 operands: bitwise equal. The kernel computes the same f32 product
//    (one sgemm of batch·M rows, as Matmul does), the same f32 adds, and
//    gelu in f64 from the same f32 sum.
//  - bf16 operands: the unfused commands round the product to bf16 and the
//    bias sum again before gelu or the residual add; the kernel rounds once.
//    Both are then within 1 bf16 ulp of each other plus the error the
//    first rounding carries through the next op: for the sum, a bf16 ulp of
//    the product; through gelu (slope at most 1.13), 1.13 of it; for the
//    residual add, the ulps of the product and the sum. So: |fused -
//    unfused| <= ulp(result) + 1.2·(ulp(product) + ulp(sum)).
#include "KernelTestUtil.h"

namespace llmc::rt::test {
namespace {

constexpr uint64_t kSeed = 0xe9170605;

#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    Status status_ = (expr);                                                   \
    ASSERT_TRUE(status_.isOk()) << status_.message();                          \
  } while (0)

using Kind = MatmulEpilogueKind;

/// The unfused commands of one region on the same operands.
void runUnfused(Kind kind, bool transA, bool transB, const Tensor &a,
                const Tensor &b, const Tensor &bias, const Tensor *residual,
                Tensor &result, Tensor &pre, Tensor &product) {
  ASSERT_OK(run(KernelKind::Matmul, {&a, &b}, {&product},
                {transA ? 1 : 0, transB ? 1 : 0}));
  Tensor broadcast(bias.dtype, product.shape);
  ASSERT_OK(run(KernelKind::Broadcast, {&bias}, {&broadcast},
                {static_cast<int64_t>(product.shape.size()) - 1}));
  Tensor &sum = kind == Kind::Bias ? result : pre;
  ASSERT_OK(run(KernelKind::Add, {&product, &broadcast}, {&sum}));
  if (kind == Kind::BiasGelu || kind == Kind::BiasGeluAux)
    ASSERT_OK(run(KernelKind::Gelu, {&sum}, {&result}, {0}));
  if (kind == Kind::BiasResidual)
    ASSERT_OK(run(KernelKind::Add, {residual, &sum}, {&result}));
}

TEST(PrimitiveMatmulEpilogue, MatchesTheUnfusedCommands) {
  struct Case {
    Shape lhsBatch; ///< leading dims of a row-major lhs
    int64_t m, k, n;
    bool transA, transB;
  };
  // GPT-2's forms: [B, T, C] x [C, N] (the forward), and a transposed rhs;
  // a rank-2 transposed lhs; N not a multiple of 8.
  const Case cases[] = {{{2, 3}, 5, 16, 24, false, false},
                        {{4}, 7, 33, 40, false, true},
                        {{}, 12, 20, 9, true, false},
                        {{}, 17, 64, 48, true, true}};
  std::mt19937_64 rng(kSeed);
  for (const Case &c : cases)
    for (DType dtype : {DType::F32, DType::BF16})
      for (int64_t code = 0;
           code < static_cast<int64_t>(Kind::BiasGradient); ++code) {
        auto kind = static_cast<Kind>(code);
        SCOPED_TRACE("m" + std::to_string(c.m) + " k" + std::to_string(c.k) +
                     " n" + std::to_string(c.n) + (c.transA ? " transA" : "") +
                     (c.transB ? " transB" : "") + " " + dtypeName(dtype) +
                     " epilogue " + std::to_string(code));
        Shape aShape = c.lhsBatch;
        aShape.insert(aShape.end(),
                      {c.transA ? c.k : c.m, c.transA ? c.m : c.k});
        Shape bShape = {c.transB ? c.n : c.k, c.transB ? c.k : c.n};
        Shape outShape = c.lhsBatch;
        outShape.insert(outShape.end(), {c.m, c.n});
        Tensor a = randomTensor(rng, dtype, aShape, -2, 2);
        Tensor b = randomTensor(rng, dtype, bShape, -2, 2);
        Tensor bias = randomTensor(rng, dtype, {c.n}, -3, 3);
        Tensor residual = randomTensor(rng, dtype, outShape, -4, 4);
        bool hasResidual = kind == Kind::BiasResidual;
        bool hasPre = kind == Kind::BiasGeluAux;

        Tensor want(dtype, outShape), wantPre(dtype, outShape),
            product(dtype, outShape);
        runUnfused(kind, c.transA, c.transB, a, b, bias,
                   hasResidual ? &residual : nullptr, want, wantPre, product);
        Tensor got(dtype, outShape), gotPre(dtype, outShape);
        std::fill(got.bytes.begin(), got.bytes.end(), 0x7f); // poisoned
        std::fill(gotPre.bytes.begin(), gotPre.bytes.end(), 0x7f);
        std::vector<const Tensor *> inputs = {&a, &b, &bias};
        if (hasResidual)
          inputs.push_back(&residual);
        std::vector<Tensor *> outputs = {&got};
        if (hasPre)
          outputs.push_back(&gotPre);
        ASSERT_OK(run(KernelKind::MatmulEpilogue, inputs, outputs,
                      {c.transA ? 1 : 0, c.transB ? 1 : 0, code}));

        if (dtype == DType::F32) {
          EXPECT_EQ(got.bytes, want.bytes);
          if (hasPre) {
            EXPECT_EQ(gotPre.bytes, wantPre.bytes);
          }
          continue;
        }
        std::vector<double> wantValues, wantPreValues;
        for (int64_t i = 0; i < want.size(); ++i) {
          wantValues.push_back(want.at(i));
          wantPreValues.push_back(wantPre.at(i));
        }
        expectNear(got, wantValues, [&](int64_t i) {
          double sum = product.at(i) + bias.at(i % c.n);
          return ulpOf(dtype, want.at(i)) +
                 1.2 * (ulpOf(dtype, product.at(i)) + ulpOf(dtype, sum));
        });
        if (hasPre)
          expectNear(gotPre, wantPreValues, [&](int64_t i) {
            return ulpOf(dtype, wantPre.at(i)) + ulpOf(dtype, product.at(i));
          });
      }
}

// BiasGradient is Matmul and ReduceSum (of the rhs over K) in one command,
// with their bits in every type.
TEST(PrimitiveMatmulEpilogue, BiasGradientIsMatmulAndReduceSum) {
  std::mt19937_64 rng(kSeed + 1);
  for (DType dtype : {DType::F32, DType::BF16})
    for (bool transB : {false, true}) {
      SCOPED_TRACE(std::string(dtypeName(dtype)) + (transB ? " transB" : ""));
      const int64_t m = 24, k = 100, n = 40;
      Tensor x = randomTensor(rng, dtype, {k, m}, -2, 2); // transposed lhs
      Tensor dy = randomTensor(rng, dtype, transB ? Shape{n, k} : Shape{k, n},
                               -2, 2);
      Tensor want(dtype, {m, n}), wantGrad(dtype, {n});
      ASSERT_OK(run(KernelKind::Matmul, {&x, &dy}, {&want},
                    {1, transB ? 1 : 0}));
      ASSERT_OK(run(KernelKind::ReduceSum, {&dy}, {&wantGrad},
                    {transB ? 1 : 0}));
      // The gradient may have the keep_dims shape [1, N].
      Tensor got(dtype, {m, n}), gotGrad(dtype, {1, n});
      ASSERT_OK(run(KernelKind::MatmulEpilogue, {&x, &dy}, {&got, &gotGrad},
                    {1, transB ? 1 : 0,
                     static_cast<int64_t>(Kind::BiasGradient)}));
      EXPECT_EQ(got.bytes, want.bytes);
      EXPECT_EQ(gotGrad.bytes, wantGrad.bytes);
      EXPECT_TRUE(std::any_of(gotGrad.bytes.begin(), gotGrad.bytes.end(),
                              [](uint8_t b) { return b != 0; }));
    }
}

TEST(PrimitiveMatmulEpilogue, RefusesWrongOperands) {
  Tensor a(DType::F32, {4, 8}), b(DType::F32, {8, 6}), y(DType::F32, {4, 6});
  Tensor bias(DType::F32, {6}), shortBias(DType::F32, {5});
  Tensor bf16Bias(DType::BF16, {6});
  EXPECT_EQ(run(KernelKind::MatmulEpilogue, {&a, &b, &bias}, {&y}, {0, 0, 7})
                .message(),
            "MatmulEpilogue kernel: expected an epilogue in [0, 5), got 7");
  EXPECT_EQ(
      run(KernelKind::MatmulEpilogue, {&a, &b, &shortBias}, {&y}, {0, 0, 0})
          .message(),
      "MatmulEpilogue kernel: expected bias of shape [6], got [5]");
  EXPECT_EQ(
      run(KernelKind::MatmulEpilogue, {&a, &b, &bf16Bias}, {&y}, {0, 0, 0})
          .message(),
      "MatmulEpilogue kernel: expected bias of dtype f32, got bf16");
  // BiasResidual needs the residual as a fourth input.
  EXPECT_EQ(run(KernelKind::MatmulEpilogue, {&a, &b, &bias}, {&y}, {0, 0, 3})
                .message(),
            "MatmulEpilogue kernel: expected 4 inputs and 1 outputs, got 3 "
            "and 1");
}

} // namespace
} // namespace llmc::rt::test
