// Tests of the reduction and matmul CPU kernels against double-precision
// references. Tolerances:
//  - reduce_sum / reduce_mean accumulate in f64: an f32 result is within
//    1 f32 ulp of the reference plus R·eps64·Σ|x| (R: elements per result);
//    f64 within R·eps64·Σ|x|; a bf16 result within 1 bf16 ulp (a nearly
//    exact sum rounded once may land on either neighbour). reduce_max is
//    exact. Integer sums are exact.
//  - matmul: sgemm/dgemm accumulate in the working precision, so the bound
//    is the classic K·eps·Σ_k|a·b| per element (eps of f32 for f32, bf16 and
//    f16 operands, of f64 for f64); a bf16 result adds 1 bf16 ulp for its
//    final rounding. Integer matmuls are exact.
#include "KernelTestUtil.h"

namespace llmc::rt::test {
namespace {

constexpr uint64_t kSeed = 0xbada55;

struct DTypePair {
  DType in, out;
};
std::string describe(DTypePair p) {
  return std::string(dtypeName(p.in)) + "->" + dtypeName(p.out);
}

double resultTolerance(DType out, double want, int64_t terms, double sumAbs) {
  switch (out) {
  case DType::F64:
    return terms * kEps64 * sumAbs;
  case DType::F32:
    return kEps32 * std::fabs(want) + terms * kEps64 * sumAbs;
  default:
    return ulpOf(out, want) + terms * kEps64 * sumAbs;
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class Reduce { Sum, Max, Mean };

TEST(PrimitiveReduce, MatchesReferenceOverAnyDims) {
  struct Case {
    Shape in;
    std::vector<int64_t> dims;
  };
  const Case cases[] = {{{3, 4, 5, 6}, {0}},
                        {{3, 4, 5, 6}, {1, 2}},
                        {{3, 4, 5, 6}, {3}},
                        {{3, 4, 5, 6}, {0, 2}},
                        {{3, 4, 5, 6}, {0, 1, 2, 3}},
                        {{3, 1, 5}, {1}}, // a size-1 dim
                        {{7, 1100}, {0}}, // results in several blocks of 512
                        {{40, 700}, {1}},
                        {{9, 2, 33, 4}, {1, 3}}};
  const DTypePair floatPairs[] = {{DType::F32, DType::F32},
                                  {DType::F64, DType::F64},
                                  {DType::BF16, DType::BF16},
                                  {DType::BF16, DType::F32},
                                  {DType::F16, DType::F32}};
  const DTypePair intPairs[] = {{DType::I32, DType::I32},
                                {DType::I64, DType::I64}};
  std::mt19937_64 rng(kSeed);
  for (Reduce kind : {Reduce::Sum, Reduce::Max, Reduce::Mean}) {
    std::vector<DTypePair> pairs(std::begin(floatPairs), std::end(floatPairs));
    if (kind != Reduce::Mean)
      pairs.insert(pairs.end(), std::begin(intPairs), std::end(intPairs));
    for (const Case &c : cases)
      for (DTypePair p : pairs) {
        if (kind == Reduce::Max && p.in != p.out)
          continue; // max never widens
        for (bool keepDims : {false, true}) {
          SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) + " " +
                       formatShape(c.in) + " dims " + formatShape(c.dims) +
                       " " + describe(p) + (keepDims ? " keep_dims" : ""));
          Tensor x = isFloat(p.in) ? randomTensor(rng, p.in, c.in, -3, 3)
                                   : randomTensor(rng, p.in, c.in, -1000, 1000);
          // The reference, accumulated per result element.
          Shape outShape;
          for (size_t d = 0; d < c.in.size(); ++d) {
            bool reduced = std::count(c.dims.begin(), c.dims.end(), d) > 0;
            if (!reduced)
              outShape.push_back(c.in[d]);
            else if (keepDims)
              outShape.push_back(1);
          }
          int64_t outCount = numElements(outShape);
          int64_t terms = x.size() / outCount;
          std::vector<double> want(outCount,
                                   kind == Reduce::Max ? -INFINITY : 0);
          std::vector<double> sumAbs(outCount, 0);
          for (int64_t i = 0; i < x.size(); ++i) {
            std::vector<int64_t> index = unravel(i, c.in), outIndex;
            for (size_t d = 0; d < c.in.size(); ++d) {
              bool reduced = std::count(c.dims.begin(), c.dims.end(), d) > 0;
              if (!reduced)
                outIndex.push_back(index[d]);
              else if (keepDims)
                outIndex.push_back(0);
            }
            int64_t o = ravel(outIndex, outShape);
            double v = x.at(i);
            want[o] = kind == Reduce::Max ? std::max(want[o], v) : want[o] + v;
            sumAbs[o] += std::fabs(v);
          }
          if (kind == Reduce::Mean)
            for (int64_t o = 0; o < outCount; ++o) {
              want[o] /= terms;
              sumAbs[o] /= terms;
            }

          Tensor y(p.out, outShape);
          KernelKind kernel = kind == Reduce::Sum   ? KernelKind::ReduceSum
                              : kind == Reduce::Max ? KernelKind::ReduceMax
                                                    : KernelKind::ReduceMean;
          ASSERT_TRUE(run(kernel, {&x}, {&y}, c.dims).isOk());
          if (kind == Reduce::Max || !isFloat(p.in))
            expectExact(y, want);
          else
            expectNear(y, want, [&](int64_t o) {
              return resultTolerance(p.out, want[o], terms, sumAbs[o]);
            });
        }
      }
  }
}

TEST(PrimitiveReduce, EmptyAndNanInputs) {
  // Reducing an empty dimension: sum 0, mean NaN (0/0), max -inf.
  Tensor empty(DType::F32, {3, 0});
  Tensor sum(DType::F32, {3}), mean(DType::F32, {3}), max(DType::F32, {3});
  ASSERT_TRUE(run(KernelKind::ReduceSum, {&empty}, {&sum}, {1}).isOk());
  ASSERT_TRUE(run(KernelKind::ReduceMean, {&empty}, {&mean}, {1}).isOk());
  ASSERT_TRUE(run(KernelKind::ReduceMax, {&empty}, {&max}, {1}).isOk());
  expectExact(sum, {0, 0, 0});
  expectExact(mean, {NAN, NAN, NAN});
  expectExact(max, {-INFINITY, -INFINITY, -INFINITY});

  // max propagates NaN wherever it sits in the row.
  Tensor x(DType::BF16, {3, 4}), m(DType::BF16, {3});
  for (int64_t i = 0; i < 12; ++i)
    x.set(i, static_cast<double>(i));
  x.set(0, NAN);
  x.set(7, NAN);
  ASSERT_TRUE(run(KernelKind::ReduceMax, {&x}, {&m}, {1}).isOk());
  expectExact(m, {NAN, NAN, 11});
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

TEST(PrimitiveMatmul, MatchesReference) {
  struct Case {
    Shape batch;
    int64_t m, k, n;
    bool sharedRhs;
  };
  const Case cases[] = {{{2, 3}, 5, 7, 4, false}, {{2}, 5, 7, 4, true},
                        {{}, 33, 65, 17, true},   {{3}, 4, 0, 5, true},
                        {{}, 64, 128, 96, true},  {{4}, 1, 9, 1, false}};
  const DTypePair pairs[] = {
      {DType::F32, DType::F32},   {DType::F64, DType::F64},
      {DType::BF16, DType::BF16}, {DType::BF16, DType::F32},
      {DType::F16, DType::F32},   {DType::I32, DType::I32},
      {DType::I64, DType::I64}};
  std::mt19937_64 rng(kSeed);
  for (const Case &c : cases)
    for (DTypePair p : pairs)
      for (int flags = 0; flags < 4; ++flags) {
        bool transA = flags & 1, transB = flags & 2;
        SCOPED_TRACE("batch " + formatShape(c.batch) + " m" +
                     std::to_string(c.m) + " k" + std::to_string(c.k) + " n" +
                     std::to_string(c.n) + (c.sharedRhs ? " shared" : "") +
                     (transA ? " transA" : "") + (transB ? " transB" : "") +
                     " " + describe(p));
        Shape aShape = c.batch, bShape = c.sharedRhs ? Shape{} : c.batch;
        aShape.insert(aShape.end(), {transA ? c.k : c.m, transA ? c.m : c.k});
        bShape.insert(bShape.end(), {transB ? c.n : c.k, transB ? c.k : c.n});
        Shape outShape = c.batch;
        outShape.insert(outShape.end(), {c.m, c.n});
        bool fp = isFloat(p.in);
        Tensor a = fp ? randomTensor(rng, p.in, aShape, -2, 2)
                      : randomTensor(rng, p.in, aShape, -20, 20);
        Tensor b = fp ? randomTensor(rng, p.in, bShape, -2, 2)
                      : randomTensor(rng, p.in, bShape, -20, 20);
        Tensor y(p.out, outShape);
        std::fill(y.bytes.begin(), y.bytes.end(), 0x3c); // not zeros (K = 0)
        ASSERT_TRUE(run(KernelKind::Matmul, {&a, &b}, {&y},
                        {transA ? 1 : 0, transB ? 1 : 0})
                        .isOk());

        int64_t batches = numElements(c.batch);
        std::vector<double> want, sumAbs;
        for (int64_t bi = 0; bi < batches; ++bi)
          for (int64_t i = 0; i < c.m; ++i)
            for (int64_t j = 0; j < c.n; ++j) {
              double sum = 0, abs = 0;
              for (int64_t kk = 0; kk < c.k; ++kk) {
                int64_t ai =
                    bi * c.m * c.k + (transA ? kk * c.m + i : i * c.k + kk);
                int64_t bj = (c.sharedRhs ? 0 : bi * c.k * c.n) +
                             (transB ? j * c.k + kk : kk * c.n + j);
                sum += a.at(ai) * b.at(bj);
                abs += std::fabs(a.at(ai) * b.at(bj));
              }
              want.push_back(sum);
              sumAbs.push_back(abs);
            }
        double eps = p.in == DType::F64 ? kEps64 : kEps32;
        expectNear(y, want, [&](int64_t o) {
          if (!fp)
            return 0.0;
          double accumulation = c.k * eps * sumAbs[o];
          return p.out == DType::BF16 ? ulpOf(p.out, want[o]) + accumulation
                                      : accumulation;
        });
      }
}

} // namespace
} // namespace llmc::rt::test
