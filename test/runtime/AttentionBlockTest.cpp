// Tests of the CPU kernels of ring attention's blocks (AttentionBlock,
// AttentionBlockGrad; runtime/cpu/AttentionBlock.cpp): against a dense f64
// reference written here from the ops' definition (the [T, S] mask from the
// positions, every probability materialized), for every float type with the
// tolerances of CompositeTestSupport.h; rows that see no key (out 0, lse
// -inf, dq 0); and the ring's identity: a causal attention cut into key
// blocks with zigzag positions, merged by log-sum-exp, equals Attention,
// and the blocks' gradients summed equal AttentionGrad. Plus the operand
// checks' messages.
#include "CompositeTestSupport.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace llmc::rt;
using namespace llmc::rt::compositetest;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// i32 positions.
std::unique_ptr<Buffer> positions(const std::vector<double> &values) {
  return std::make_unique<Buffer>(
      DType::I32, Shape{static_cast<int64_t>(values.size())}, values);
}

/// The dense reference of one block: out, lse, and given the GLOBAL out,
/// dout and lse, dq, dk, dv (p = exp(s - lse) where kpos <= qpos).
struct BlockRef {
  std::vector<double> out, lse, dq, dk, dv;
};
BlockRef blockRef(const Buffer &q, const Buffer &k, const Buffer &v,
                  const Buffer &qpos, const Buffer &kpos, double scale,
                  const Buffer *out, const Buffer *dout, const Buffer *lse) {
  const int64_t batch = q.ref().shape[0], heads = q.ref().shape[1],
                seq = q.ref().shape[2], dim = q.ref().shape[3];
  const int64_t kvHeads = k.ref().shape[1], kvSeq = k.ref().shape[2];
  BlockRef r{std::vector<double>(q.size()),
             {},
             std::vector<double>(q.size()),
             std::vector<double>(k.size()),
             std::vector<double>(v.size())};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvBase = (b * kvHeads + h / (heads / kvHeads)) * kvSeq * dim;
      for (int64_t t = 0; t < seq; ++t) {
        int64_t rowIndex = (b * heads + h) * seq + t, row = rowIndex * dim;
        std::vector<double> scores(kvSeq, kNegInf);
        double max = kNegInf;
        for (int64_t s = 0; s < kvSeq; ++s) {
          if (kpos.at(s) > qpos.at(t))
            continue;
          double dot = 0.0;
          for (int64_t d = 0; d < dim; ++d)
            dot += q.at(row + d) * k.at(kvBase + s * dim + d);
          scores[s] = dot * scale;
          max = std::max(max, scores[s]);
        }
        double sum = 0.0;
        for (int64_t s = 0; s < kvSeq; ++s)
          if (scores[s] > kNegInf)
            sum += std::exp(scores[s] - max);
        r.lse.push_back(sum > 0.0 ? max + std::log(sum) : kNegInf);
        for (int64_t s = 0; s < kvSeq; ++s)
          if (scores[s] > kNegInf)
            for (int64_t d = 0; d < dim; ++d)
              r.out[row + d] +=
                  std::exp(scores[s] - max) / sum * v.at(kvBase + s * dim + d);
        if (!out)
          continue;
        // The backward with the global statistics.
        double rowLse = lse->at(rowIndex), delta = 0.0;
        for (int64_t d = 0; d < dim; ++d)
          delta += dout->at(row + d) * out->at(row + d);
        for (int64_t s = 0; s < kvSeq; ++s) {
          if (!(scores[s] > kNegInf))
            continue;
          double p = std::exp(scores[s] - rowLse), dp = 0.0;
          for (int64_t d = 0; d < dim; ++d)
            dp += dout->at(row + d) * v.at(kvBase + s * dim + d);
          double ds = p * (dp - delta);
          for (int64_t d = 0; d < dim; ++d) {
            r.dq[row + d] += scale * ds * k.at(kvBase + s * dim + d);
            r.dk[kvBase + s * dim + d] += scale * ds * q.at(row + d);
            r.dv[kvBase + s * dim + d] += p * dout->at(row + d);
          }
        }
      }
    }
  return r;
}

/// lse values, -inf where the reference is -inf (allClose cannot compare
/// them), within `tol` elsewhere.
::testing::AssertionResult lseClose(const std::vector<double> &got,
                                    const std::vector<double> &want,
                                    double tol) {
  for (size_t i = 0; i < want.size(); ++i)
    if ((want[i] == kNegInf) != (got[i] == kNegInf))
      return ::testing::AssertionFailure()
             << "lse " << i << ": got " << got[i] << ", want " << want[i];
  std::vector<double> a, b;
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i] != kNegInf) {
      a.push_back(got[i]);
      b.push_back(want[i]);
    }
  return allClose(a, b, tol);
}

using AttentionBlockTest = KernelTest;
INSTANTIATE_FOR_FLOATS(AttentionBlockTest);

// GQA, T != S, positions out of order; query positions 0 and 1 lie below
// every key position (2..): those rows see no key.
TEST_P(AttentionBlockTest, MatchesDenseReference) {
  const int64_t batch = 2, heads = 4, kvHeads = 2, seq = 6, kvSeq = 5, dim = 8;
  const double scale = 0.3;
  auto q = random(dtype(), {batch, heads, seq, dim}, rng);
  auto k = random(dtype(), {batch, kvHeads, kvSeq, dim}, rng);
  auto v = random(dtype(), {batch, kvHeads, kvSeq, dim}, rng);
  auto dout = random(dtype(), {batch, heads, seq, dim}, rng);
  auto qpos = positions({9, 0, 4, 12, 1, 7});
  auto kpos = positions({2, 8, 5, 11, 3});
  Buffer out(dtype(), {batch, heads, seq, dim}),
      lse(DType::F32, {batch, heads, seq});
  ASSERT_OK(run(KernelKind::AttentionBlock, {{}, {scale}},
                {q.get(), k.get(), v.get(), qpos.get(), kpos.get()},
                {&out, &lse}));
  BlockRef want =
      blockRef(*q, *k, *v, *qpos, *kpos, scale, nullptr, nullptr, nullptr);
  EXPECT_TRUE(allClose(out.values(), want.out, tol()));
  EXPECT_TRUE(lseClose(lse.values(), want.lse, 1e-6));
  // Rows 1 and 4 (positions 0 and 1) see nothing: zero rows, lse -inf.
  for (int64_t row : {1, 4})
    for (int64_t d = 0; d < dim; ++d)
      EXPECT_EQ(out.at(row * dim + d), 0.0);
  EXPECT_EQ(lse.at(1), kNegInf);

  // The backward against the reference, with this block's own out and lse
  // as the global ones except in the rows that see nothing (there the
  // global lse is finite: another block's keys), which must give dq 0.
  Buffer globalLse(DType::F32, {batch, heads, seq});
  for (int64_t i = 0; i < globalLse.size(); ++i)
    globalLse.set(i, lse.at(i) == kNegInf ? 0.5 : lse.at(i));
  Buffer dq(dtype(), {batch, heads, seq, dim}),
      dk(dtype(), {batch, kvHeads, kvSeq, dim}),
      dv(dtype(), {batch, kvHeads, kvSeq, dim});
  ASSERT_OK(run(KernelKind::AttentionBlockGrad, {{}, {scale}},
                {q.get(), k.get(), v.get(), &out, dout.get(), &globalLse,
                 qpos.get(), kpos.get()},
                {&dq, &dk, &dv}));
  BlockRef grad =
      blockRef(*q, *k, *v, *qpos, *kpos, scale, &out, dout.get(), &globalLse);
  EXPECT_TRUE(allClose(dq.values(), grad.dq, tol()));
  EXPECT_TRUE(allClose(dk.values(), grad.dk, tol()));
  EXPECT_TRUE(allClose(dv.values(), grad.dv, tol()));
  for (int64_t d = 0; d < dim; ++d)
    EXPECT_EQ(dq.at(1 * dim + d), 0.0);
}

// The ring's identity in one process: causal attention over T = 8 with the
// zigzag split of cp = 2 (rank 0 holds positions 0-1 and 6-7, rank 1 2-5).
// Rank 0's queries against both key blocks, merged by log-sum-exp, give
// Attention's rows of rank 0; the blocks' gradients with the merged out and
// lse, summed over the ranks' queries, give AttentionGrad's.
TEST(AttentionBlockRing, MergedBlocksEqualCausalAttention) {
  const int64_t heads = 2, kvHeads = 1, seq = 8, dim = 4, local = 4;
  const double scale = 0.45;
  std::mt19937 rng(7);
  auto q = random(DType::F64, {1, heads, seq, dim}, rng);
  auto k = random(DType::F64, {1, kvHeads, seq, dim}, rng);
  auto v = random(DType::F64, {1, kvHeads, seq, dim}, rng);
  auto dout = random(DType::F64, {1, heads, seq, dim}, rng);
  Buffer full(DType::F64, {1, heads, seq, dim}),
      fullLse(DType::F32, {1, heads, seq});
  ASSERT_OK(run(KernelKind::Attention, {{1}, {scale}},
                {q.get(), k.get(), v.get()}, {&full, &fullLse}));
  Buffer dqWant(DType::F64, {1, heads, seq, dim}),
      dkWant(DType::F64, {1, kvHeads, seq, dim}),
      dvWant(DType::F64, {1, kvHeads, seq, dim});
  ASSERT_OK(run(KernelKind::AttentionGrad, {{1}, {scale}},
                {q.get(), k.get(), v.get(), &full, dout.get()},
                {&dqWant, &dkWant, &dvWant}));

  const std::vector<std::vector<int64_t>> rows = {{0, 1, 6, 7}, {2, 3, 4, 5}};
  // A rank's rows of x ([1, H, T, D] or [1, H, T] when dim is 1).
  auto slice = [&](const Buffer &x, int64_t rank, int64_t h, int64_t width) {
    auto part = std::make_unique<Buffer>(
        x.ref().dtype,
        width == 1 ? Shape{1, h, local} : Shape{1, h, local, width});
    for (int64_t hh = 0; hh < h; ++hh)
      for (int64_t i = 0; i < local; ++i)
        for (int64_t d = 0; d < width; ++d)
          part->set((hh * local + i) * width + d,
                    x.at((hh * seq + rows[rank][i]) * width + d));
    return part;
  };
  std::vector<double> dk(k->size()), dv(v->size());
  for (int64_t rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    auto lq = slice(*q, rank, heads, dim);
    auto ldout = slice(*dout, rank, heads, dim);
    auto qpos = positions({double(rows[rank][0]), double(rows[rank][1]),
                           double(rows[rank][2]), double(rows[rank][3])});
    // 1. The forward: the rank's own block, then the other's, merged.
    std::vector<double> out(lq->size()), lse;
    for (int64_t step = 0; step < 2; ++step) {
      int64_t owner = (rank + 2 - step) % 2;
      auto lk = slice(*k, owner, kvHeads, dim),
           lv = slice(*v, owner, kvHeads, dim);
      auto kpos = positions({double(rows[owner][0]), double(rows[owner][1]),
                             double(rows[owner][2]), double(rows[owner][3])});
      Buffer o(DType::F64, {1, heads, local, dim}),
          l(DType::F32, {1, heads, local});
      ASSERT_OK(run(KernelKind::AttentionBlock, {{}, {scale}},
                    {lq.get(), lk.get(), lv.get(), qpos.get(), kpos.get()},
                    {&o, &l}));
      for (int64_t r = 0; r < heads * local; ++r) {
        if (step == 0) {
          lse.push_back(l.at(r));
          for (int64_t d = 0; d < dim; ++d)
            out[r * dim + d] = o.at(r * dim + d);
          continue;
        }
        double m = std::max(lse[r], l.at(r));
        double a = std::exp(lse[r] - m), c = std::exp(l.at(r) - m);
        lse[r] = m + std::log(a + c);
        for (int64_t d = 0; d < dim; ++d)
          out[r * dim + d] =
              (out[r * dim + d] * a + o.at(r * dim + d) * c) / (a + c);
      }
    }
    auto want = slice(full, rank, heads, dim);
    auto wantLse = slice(fullLse, rank, heads, 1);
    // The blocks' lse are f32 (rounded once each: 6e-8 relative), and the
    // merge weighs by them: 1e-6 relative on out, f64 elsewhere.
    EXPECT_TRUE(allClose(out, want->values(), 1e-6));
    // lse is f32 on both sides (rounded once each).
    EXPECT_TRUE(allClose(lse, wantLse->values(), 1e-6));

    // 2. The backward with the merged statistics (the single device's out
    //    and lse: what the merge gave, to 1e-6). dq sums over the blocks.
    std::vector<double> dq(lq->size());
    for (int64_t owner = 0; owner < 2; ++owner) {
      auto lk = slice(*k, owner, kvHeads, dim),
           lv = slice(*v, owner, kvHeads, dim);
      auto kpos = positions({double(rows[owner][0]), double(rows[owner][1]),
                             double(rows[owner][2]), double(rows[owner][3])});
      Buffer dqb(DType::F64, {1, heads, local, dim}),
          dkb(DType::F64, {1, kvHeads, local, dim}),
          dvb(DType::F64, {1, kvHeads, local, dim});
      ASSERT_OK(run(KernelKind::AttentionBlockGrad, {{}, {scale}},
                    {lq.get(), lk.get(), lv.get(), want.get(), ldout.get(),
                     wantLse.get(), qpos.get(), kpos.get()},
                    {&dqb, &dkb, &dvb}));
      for (int64_t i = 0; i < local; ++i)
        for (int64_t d = 0; d < dim; ++d) {
          int64_t at = rows[owner][i] * dim + d;
          dk[at] += dkb.at(i * dim + d);
          dv[at] += dvb.at(i * dim + d);
        }
      for (int64_t i = 0; i < lq->size(); ++i)
        dq[i] += dqb.at(i);
    }
    EXPECT_TRUE(allClose(dq, slice(dqWant, rank, heads, dim)->values(), 1e-5));
  }
  // lse is f32: 1e-5 relative on the gradients.
  EXPECT_TRUE(allClose(dk, dkWant.values(), 1e-5));
  EXPECT_TRUE(allClose(dv, dvWant.values(), 1e-5));
}

// The operand checks name what was expected and what was found.
TEST(AttentionBlockEdges, PositionsAreChecked) {
  std::mt19937 rng(5);
  auto q = random(DType::F32, {1, 2, 3, 4}, rng);
  Buffer out(DType::F32, {1, 2, 3, 4}), lse(DType::F32, {1, 2, 3});
  auto good = positions({0, 1, 2});
  auto shortOne = positions({0, 1});
  Buffer wide(DType::I64, {3}, {0, 1, 2});
  Status status =
      run(KernelKind::AttentionBlock, {{}, {0.5}},
          {q.get(), q.get(), q.get(), &wide, good.get()}, {&out, &lse});
  EXPECT_NE(status.message().find(
                "expected query positions element type i32, got i64"),
            std::string::npos)
      << status.message();
  status = run(KernelKind::AttentionBlock, {{}, {0.5}},
               {q.get(), q.get(), q.get(), good.get(), shortOne.get()},
               {&out, &lse});
  EXPECT_NE(status.message().find("expected key positions of shape [3], got "
                                  "[2]"),
            std::string::npos)
      << status.message();
  Buffer badLse(DType::F32, {1, 2, 4});
  status =
      run(KernelKind::AttentionBlock, {{}, {0.5}},
          {q.get(), q.get(), q.get(), good.get(), good.get()}, {&out, &badLse});
  EXPECT_NE(status.message().find("expected lse of shape [1, 2, 3]"),
            std::string::npos)
      << status.message();
}

} // namespace
