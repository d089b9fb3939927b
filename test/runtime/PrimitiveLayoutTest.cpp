// Tests of the primitive CPU kernels that move data (broadcast, transpose,
// slice, concat, gather) and of scatter_add, against naive references that
// compute each result element from its multi-index. Data movement is exact;
// scatter_add's tolerances are stated at its test.
#include "KernelTestUtil.h"

namespace llmc::rt::test {
namespace {

constexpr uint64_t kSeed = 0x5eed1a70;
const std::vector<DType> kMoveDTypes = {DType::F32, DType::F64, DType::BF16,
                                        DType::I32, DType::I1};

TEST(PrimitiveBroadcast, MatchesReference) {
  struct Case {
    Shape in;
    std::vector<int64_t> dims;
    Shape out;
  };
  const Case cases[] = {
      {{64}, {1}, {8, 64}},             // a bias over rows
      {{4, 1}, {0, 1}, {4, 6}},         // a size-1 dimension expands
      {{2, 3}, {0, 2}, {2, 5, 3}},      // a new middle dimension
      {{}, {}, {3, 4}},                 // a scalar
      {{1, 700}, {0, 2}, {30, 5, 700}}, // large enough to be split
      {{5, 1, 3}, {1, 2, 3}, {2, 5, 4, 3}}};
  std::mt19937_64 rng(kSeed);
  for (const Case &c : cases)
    for (DType dtype : kMoveDTypes) {
      SCOPED_TRACE(formatShape(c.in) + " -> " + formatShape(c.out) + " " +
                   dtypeName(dtype));
      Tensor x = randomTensor(rng, dtype, c.in, -50, 50);
      Tensor y(dtype, c.out);
      ASSERT_TRUE(run(KernelKind::Broadcast, {&x}, {&y}, c.dims).isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < y.size(); ++i) {
        std::vector<int64_t> index = unravel(i, c.out), source;
        for (size_t j = 0; j < c.dims.size(); ++j)
          source.push_back(c.in[j] == 1 ? 0 : index[c.dims[j]]);
        want.push_back(x.at(ravel(source, c.in)));
      }
      expectExact(y, want);
    }
}

TEST(PrimitiveTranspose, MatchesReference) {
  struct Case {
    Shape in;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {{{2, 3, 4, 5}, {0, 2, 1, 3}},
                        {{2, 3, 4, 5}, {3, 1, 0, 2}},
                        {{2, 3, 4, 5}, {0, 1, 2, 3}},
                        {{64, 513}, {1, 0}},
                        {{7}, {0}}};
  std::mt19937_64 rng(kSeed);
  for (const Case &c : cases)
    for (DType dtype : kMoveDTypes) {
      SCOPED_TRACE(formatShape(c.in) + " perm " + formatShape(c.perm) + " " +
                   dtypeName(dtype));
      Tensor x = randomTensor(rng, dtype, c.in, -50, 50);
      Shape outShape;
      for (int64_t p : c.perm)
        outShape.push_back(c.in[p]);
      Tensor y(dtype, outShape);
      ASSERT_TRUE(run(KernelKind::Transpose, {&x}, {&y}, c.perm).isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < y.size(); ++i) {
        std::vector<int64_t> index = unravel(i, outShape), source(c.in.size());
        for (size_t d = 0; d < c.perm.size(); ++d)
          source[c.perm[d]] = index[d];
        want.push_back(x.at(ravel(source, c.in)));
      }
      expectExact(y, want);
    }
}

TEST(PrimitiveSlice, MatchesReference) {
  struct Case {
    Shape in;
    std::vector<int64_t> starts, limits, strides;
  };
  const Case cases[] = {{{6, 7, 8}, {1, 0, 2}, {5, 7, 8}, {2, 3, 1}},
                        {{10}, {3}, {3}, {1}}, // empty
                        {{10}, {9}, {10}, {4}},
                        {{50, 600}, {5, 1}, {45, 600}, {1, 2}}};
  std::mt19937_64 rng(kSeed);
  for (const Case &c : cases)
    for (DType dtype : kMoveDTypes) {
      SCOPED_TRACE(formatShape(c.in) + " " + dtypeName(dtype));
      Tensor x = randomTensor(rng, dtype, c.in, -50, 50);
      Shape outShape;
      for (size_t d = 0; d < c.in.size(); ++d)
        outShape.push_back((c.limits[d] - c.starts[d] + c.strides[d] - 1) /
                           c.strides[d]);
      std::vector<int64_t> ints = c.starts;
      ints.insert(ints.end(), c.limits.begin(), c.limits.end());
      ints.insert(ints.end(), c.strides.begin(), c.strides.end());
      Tensor y(dtype, outShape);
      ASSERT_TRUE(run(KernelKind::Slice, {&x}, {&y}, ints).isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < y.size(); ++i) {
        std::vector<int64_t> index = unravel(i, outShape);
        for (size_t d = 0; d < index.size(); ++d)
          index[d] = c.starts[d] + index[d] * c.strides[d];
        want.push_back(x.at(ravel(index, c.in)));
      }
      expectExact(y, want);
    }
}

TEST(PrimitiveConcat, MatchesReference) {
  std::mt19937_64 rng(kSeed);
  for (int64_t dim = 0; dim < 3; ++dim)
    for (DType dtype : kMoveDTypes) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " " + dtypeName(dtype));
      Shape base = {3, 4, 5};
      std::vector<Tensor> parts;
      for (int64_t size : {2, 0, 5}) { // an empty input in the middle
        Shape shape = base;
        shape[dim] = size;
        parts.push_back(randomTensor(rng, dtype, shape, -50, 50));
      }
      Shape outShape = base;
      outShape[dim] = 7;
      Tensor y(dtype, outShape);
      ASSERT_TRUE(run(KernelKind::Concat, {&parts[0], &parts[1], &parts[2]},
                      {&y}, {dim})
                      .isOk());
      std::vector<double> want;
      for (int64_t i = 0; i < y.size(); ++i) {
        std::vector<int64_t> index = unravel(i, outShape);
        const Tensor *part = &parts[0];
        for (const Tensor &p : parts) {
          part = &p;
          if (index[dim] < p.shape[dim])
            break;
          index[dim] -= p.shape[dim];
        }
        want.push_back(part->at(ravel(index, part->shape)));
      }
      expectExact(y, want);
    }
}

TEST(PrimitiveGather, TakesAlongDimWithZerosOutOfRange) {
  struct Case {
    Shape in;
    int64_t dim;
    Shape indices;
    DType indexType;
  };
  const Case cases[] = {{{5, 4, 3}, 1, {2, 3}, DType::I32},
                        {{100, 64}, 0, {8, 16}, DType::I64},
                        {{6, 9}, 1, {}, DType::I32}}; // rank-0 indices
  std::mt19937_64 rng(kSeed);
  for (const Case &c : cases)
    for (DType dtype : kMoveDTypes) {
      SCOPED_TRACE(formatShape(c.in) + " dim " + std::to_string(c.dim) + " " +
                   dtypeName(dtype));
      Tensor x = randomTensor(rng, dtype, c.in, -50, 50);
      int64_t size = c.in[c.dim];
      // About one index in six is out of range on either side.
      Tensor ids = randomTensor(rng, c.indexType, c.indices, -size / 4 - 1,
                                size + size / 4);
      Shape outShape(c.in.begin(), c.in.begin() + c.dim);
      outShape.insert(outShape.end(), c.indices.begin(), c.indices.end());
      outShape.insert(outShape.end(), c.in.begin() + c.dim + 1, c.in.end());
      Tensor y(dtype, outShape);
      std::fill(y.bytes.begin(), y.bytes.end(), 0x11); // zeros must be written
      ASSERT_TRUE(run(KernelKind::Gather, {&x, &ids}, {&y}, {c.dim}).isOk());
      std::vector<double> want;
      int64_t idxRank = static_cast<int64_t>(c.indices.size());
      for (int64_t i = 0; i < y.size(); ++i) {
        std::vector<int64_t> index = unravel(i, outShape);
        std::vector<int64_t> idxPos(index.begin() + c.dim,
                                    index.begin() + c.dim + idxRank);
        int64_t source = ids.intAt(ravel(idxPos, c.indices));
        if (source < 0 || source >= size) {
          want.push_back(0);
          continue;
        }
        std::vector<int64_t> in(index.begin(), index.begin() + c.dim);
        in.push_back(source);
        in.insert(in.end(), index.begin() + c.dim + idxRank, index.end());
        want.push_back(x.at(ravel(in, c.in)));
      }
      expectExact(y, want);
    }
}

// scatter_add accumulates repeated indices in order: f32/f64 results are
// within terms·eps·Σ|terms| of the exact sum (terms = 1 + updates added to
// the element), bf16 (accumulated in f32, rounded once) within 1 bf16 ulp
// plus that f32 bound; integers are exact.
TEST(PrimitiveScatterAdd, AddsAtIndicesAndSkipsOutOfRange) {
  struct Case {
    Shape dest;
    int64_t dim;
    Shape indices;
    DType indexType;
  };
  const Case cases[] = {{{6, 5}, 0, {7}, DType::I32},
                        {{3, 6, 4}, 1, {2, 4}, DType::I64},
                        {{10, 600}, 0, {50}, DType::I32}}; // 3 column blocks
  std::mt19937_64 rng(kSeed);
  for (const Case &c : cases)
    for (DType dtype :
         {DType::F32, DType::F64, DType::BF16, DType::I32, DType::I64})
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(formatShape(c.dest) + " dim " + std::to_string(c.dim) +
                     " " + dtypeName(dtype) + (inPlace ? " in place" : ""));
        Tensor dest = randomTensor(rng, dtype, c.dest, -20, 20);
        int64_t size = c.dest[c.dim];
        Tensor ids = randomTensor(rng, c.indexType, c.indices, -2, size + 1);
        Shape updShape(c.dest.begin(), c.dest.begin() + c.dim);
        updShape.insert(updShape.end(), c.indices.begin(), c.indices.end());
        updShape.insert(updShape.end(), c.dest.begin() + c.dim + 1,
                        c.dest.end());
        Tensor upd = randomTensor(rng, dtype, updShape, -20, 20);

        // The reference: exact sums, with the count and size of the terms.
        std::vector<double> want, sumAbs;
        std::vector<int64_t> terms(dest.size(), 1);
        for (int64_t i = 0; i < dest.size(); ++i) {
          want.push_back(dest.at(i));
          sumAbs.push_back(std::fabs(dest.at(i)));
        }
        int64_t idxRank = static_cast<int64_t>(c.indices.size());
        for (int64_t i = 0; i < upd.size(); ++i) {
          std::vector<int64_t> index = unravel(i, updShape);
          std::vector<int64_t> idxPos(index.begin() + c.dim,
                                      index.begin() + c.dim + idxRank);
          int64_t target = ids.intAt(ravel(idxPos, c.indices));
          if (target < 0 || target >= size)
            continue;
          std::vector<int64_t> d(index.begin(), index.begin() + c.dim);
          d.push_back(target);
          d.insert(d.end(), index.begin() + c.dim + idxRank, index.end());
          int64_t j = ravel(d, c.dest);
          want[j] += upd.at(i);
          sumAbs[j] += std::fabs(upd.at(i));
          ++terms[j];
        }

        Tensor result(dtype, c.dest);
        Tensor *out = inPlace ? &dest : &result;
        ASSERT_TRUE(
            run(KernelKind::ScatterAdd, {&dest, &ids, &upd}, {out}, {c.dim})
                .isOk());
        double eps = dtype == DType::F64 ? kEps64 : kEps32;
        expectNear(*out, want, [&](int64_t i) {
          if (!isFloat(dtype))
            return 0.0;
          double accumulation = terms[i] * eps * sumAbs[i];
          return dtype == DType::BF16 ? ulpOf(dtype, want[i]) + accumulation
                                      : accumulation;
        });
      }
}

} // namespace
} // namespace llmc::rt::test
