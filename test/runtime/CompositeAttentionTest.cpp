// Tests of the CPU reference attention kernels (Attention, AttentionGrad;
// runtime/cpu/Composite*.cpp): against naive f64 references written here
// from the op's definition (docs/ir.md), on seeded random inputs, for f32,
// f64, bf16 and f16 with the tolerances of CompositeTestSupport.h; MHA, GQA
// and MQA, causal or not; the log-sum-exp result; determinism over thread
// counts. The other composite kernels are in CompositeKernelsTest.cpp.
#include "CompositeTestSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

namespace {

using namespace llmc::rt;
using namespace llmc::rt::compositetest;

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

/// softmax(q k^T * scale + mask) v with the mask as -inf scores.
std::vector<double> attentionRef(const Buffer &q, const Buffer &k,
                                 const Buffer &v, bool causal, double scale) {
  const int64_t batch = q.ref().shape[0], heads = q.ref().shape[1],
                seq = q.ref().shape[2], dim = q.ref().shape[3];
  const int64_t kvHeads = k.ref().shape[1], kvSeq = k.ref().shape[2];
  std::vector<double> out(q.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvh = h / (heads / kvHeads);
      auto kAt = [&](int64_t s, int64_t d) {
        return k.at(((b * kvHeads + kvh) * kvSeq + s) * dim + d);
      };
      auto vAt = [&](int64_t s, int64_t d) {
        return v.at(((b * kvHeads + kvh) * kvSeq + s) * dim + d);
      };
      for (int64_t t = 0; t < seq; ++t) {
        int64_t row = (b * heads + h) * seq + t;
        std::vector<double> scores(kvSeq);
        for (int64_t s = 0; s < kvSeq; ++s) {
          double dot = 0.0;
          for (int64_t d = 0; d < dim; ++d)
            dot += q.at(row * dim + d) * kAt(s, d);
          scores[s] = causal && s > t ? -INFINITY : dot * scale;
        }
        std::vector<double> p = softmaxRef(scores);
        for (int64_t d = 0; d < dim; ++d)
          for (int64_t s = 0; s < kvSeq; ++s)
            out[row * dim + d] += p[s] * vAt(s, d);
      }
    }
  return out;
}

struct AttentionCase {
  int64_t kvHeads;
  bool causal;
  int64_t kvSeq;
  double scale; // 0: 1/sqrt(D)
};

using AttentionTest = KernelTest;
INSTANTIATE_FOR_FLOATS(AttentionTest);

// MHA (Hkv = Hq = 4), GQA (Hkv = 2) and MQA (Hkv = 1), causal or not, the
// default and another scale, and S != T without causal.
TEST_P(AttentionTest, MatchesReference) {
  const int64_t batch = 2, heads = 4, seq = 7, dim = 8;
  for (AttentionCase c :
       {AttentionCase{4, false, 7, 0.0}, AttentionCase{4, true, 7, 0.0},
        AttentionCase{2, false, 7, 0.0}, AttentionCase{2, true, 7, 0.3},
        AttentionCase{1, false, 7, 0.3}, AttentionCase{1, true, 7, 0.0},
        AttentionCase{2, false, 11, 0.0}}) {
    SCOPED_TRACE("kv heads " + std::to_string(c.kvHeads) +
                 (c.causal ? ", causal" : "") + ", S " +
                 std::to_string(c.kvSeq) + ", scale " +
                 std::to_string(c.scale));
    double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(dim));
    auto q = random(dtype(), {batch, heads, seq, dim}, rng);
    auto k = random(dtype(), {batch, c.kvHeads, c.kvSeq, dim}, rng);
    auto v = random(dtype(), {batch, c.kvHeads, c.kvSeq, dim}, rng);
    Buffer out(dtype(), {batch, heads, seq, dim});
    ASSERT_OK(run(KernelKind::Attention, {{c.causal}, {scale}},
                  {q.get(), k.get(), v.get()}, {&out}));
    EXPECT_TRUE(allClose(out.values(),
                         attentionRef(*q, *k, *v, c.causal, scale), tol()));
  }
}

// GQA is MHA on key/value heads repeated Hq/Hkv times each (Hugging Face's
// repeat_kv: query heads 0,1 read kv head 0 and 2,3 read kv head 1).
TEST_P(AttentionTest, GroupedQueriesEqualRepeatedKeyValueHeads) {
  auto q = random(dtype(), {1, 4, 5, 6}, rng);
  auto k = random(dtype(), {1, 2, 5, 6}, rng);
  auto v = random(dtype(), {1, 2, 5, 6}, rng);
  Buffer kRepeated(dtype(), {1, 4, 5, 6}), vRepeated(dtype(), {1, 4, 5, 6});
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 30; ++i) {
      kRepeated.set(h * 30 + i, k->at((h / 2) * 30 + i));
      vRepeated.set(h * 30 + i, v->at((h / 2) * 30 + i));
    }
  Buffer grouped(dtype(), {1, 4, 5, 6}), repeated(dtype(), {1, 4, 5, 6});
  ASSERT_OK(run(KernelKind::Attention, {{1}, {0.4}},
                {q.get(), k.get(), v.get()}, {&grouped}));
  ASSERT_OK(run(KernelKind::Attention, {{1}, {0.4}},
                {q.get(), &kRepeated, &vRepeated}, {&repeated}));
  EXPECT_EQ(grouped.values(), repeated.values());
}

// Under causal masking the first query sees only the first key: its output
// is exactly the first value row.
TEST_P(AttentionTest, CausalFirstQueryReturnsFirstValue) {
  auto q = random(dtype(), {2, 2, 4, 8}, rng);
  auto k = random(dtype(), {2, 1, 4, 8}, rng);
  auto v = random(dtype(), {2, 1, 4, 8}, rng);
  Buffer out(dtype(), {2, 2, 4, 8});
  ASSERT_OK(run(KernelKind::Attention, {{1}, {0.35}},
                {q.get(), k.get(), v.get()}, {&out}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t d = 0; d < 8; ++d)
        EXPECT_EQ(out.at(((b * 2 + h) * 4) * 8 + d), v->at(b * 32 + d));
}

// The optional log-sum-exp result (f32 [B, Hq, T]): log of the sum of
// exp(scaled, masked scores) per row, from the definition in f64 (1e-6
// relative: the kernel sums in f64 too and rounds once to f32); the
// attention result is the same as without it.
TEST_P(AttentionTest, LogSumExpResult) {
  const int64_t batch = 2, heads = 4, kvHeads = 2, seq = 6, dim = 8;
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    auto q = random(dtype(), {batch, heads, seq, dim}, rng);
    auto k = random(dtype(), {batch, kvHeads, seq, dim}, rng);
    auto v = random(dtype(), {batch, kvHeads, seq, dim}, rng);
    const double scale = 0.4;
    Buffer out(dtype(), {batch, heads, seq, dim}),
        alone(dtype(), {batch, heads, seq, dim}),
        lse(DType::F32, {batch, heads, seq});
    ASSERT_OK(run(KernelKind::Attention, {{causal}, {scale}},
                  {q.get(), k.get(), v.get()}, {&out, &lse}));
    ASSERT_OK(run(KernelKind::Attention, {{causal}, {scale}},
                  {q.get(), k.get(), v.get()}, {&alone}));
    EXPECT_EQ(out.values(), alone.values());
    std::vector<double> want;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < seq; ++t) {
          int64_t row = (b * heads + h) * seq + t;
          int64_t kvBase = (b * kvHeads + h / (heads / kvHeads)) * seq;
          double sum = 0.0;
          for (int64_t s = 0; s < (causal ? t + 1 : seq); ++s) {
            double dot = 0.0;
            for (int64_t d = 0; d < dim; ++d)
              dot += q->at(row * dim + d) * k->at((kvBase + s) * dim + d);
            sum += std::exp(dot * scale);
          }
          want.push_back(std::log(sum));
        }
    EXPECT_TRUE(allClose(lse.values(), want, 1e-6));
  }
}

// An lse output of the wrong shape is refused.
TEST(AttentionEdges, LogSumExpShapeIsChecked) {
  std::mt19937 rng(5);
  auto q = random(DType::F32, {1, 2, 3, 4}, rng);
  Buffer out(DType::F32, {1, 2, 3, 4}), lse(DType::F32, {1, 2, 4});
  Status status = run(KernelKind::Attention, {{0}, {0.5}},
                      {q.get(), q.get(), q.get()}, {&out, &lse});
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("expected lse of shape [1, 2, 3]"),
            std::string::npos)
      << status.message();
}

// With no keys (S = 0, not causal) there is nothing to average: every row
// is defined as zero.
TEST(AttentionEdges, NoKeysGiveZeroRows) {
  std::mt19937 rng(3);
  auto q = random(DType::F32, {1, 2, 3, 4}, rng);
  Buffer k(DType::F32, {1, 1, 0, 4}), v(DType::F32, {1, 1, 0, 4});
  Buffer out(DType::F32, {1, 2, 3, 4}, std::vector<double>(24, 9.0));
  ASSERT_OK(
      run(KernelKind::Attention, {{0}, {0.5}}, {q.get(), &k, &v}, {&out}));
  EXPECT_EQ(out.values(), std::vector<double>(24, 0.0));
}

//===----------------------------------------------------------------------===//
// attention_grad
//===----------------------------------------------------------------------===//

/// dq, dk, dv of attention from the definition, with the probabilities of
/// every row materialized: p = softmax(scores), delta = dout . out,
/// ds = p (dout . v - delta), dq = scale ds k, dk = scale ds^T q, dv = p^T
/// dout, summed over each key/value head's group. `out` is the forward
/// result the kernel is given (as rounded to its type).
struct AttentionGradRef {
  std::vector<double> dq, dk, dv;
};
AttentionGradRef attentionGradRef(const Buffer &q, const Buffer &k,
                                  const Buffer &v, const Buffer &out,
                                  const Buffer &dout, bool causal,
                                  double scale) {
  const int64_t batch = q.ref().shape[0], heads = q.ref().shape[1],
                seq = q.ref().shape[2], dim = q.ref().shape[3];
  const int64_t kvHeads = k.ref().shape[1], kvSeq = k.ref().shape[2];
  AttentionGradRef r{std::vector<double>(q.size()),
                     std::vector<double>(k.size()),
                     std::vector<double>(v.size())};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvBase = (b * kvHeads + h / (heads / kvHeads)) * kvSeq * dim;
      for (int64_t t = 0; t < seq; ++t) {
        int64_t row = ((b * heads + h) * seq + t) * dim;
        std::vector<double> scores(kvSeq);
        for (int64_t s = 0; s < kvSeq; ++s) {
          double dot = 0.0;
          for (int64_t d = 0; d < dim; ++d)
            dot += q.at(row + d) * k.at(kvBase + s * dim + d);
          scores[s] = causal && s > t ? -INFINITY : dot * scale;
        }
        std::vector<double> p = softmaxRef(scores);
        double delta = 0.0;
        for (int64_t d = 0; d < dim; ++d)
          delta += dout.at(row + d) * out.at(row + d);
        for (int64_t s = 0; s < kvSeq; ++s) {
          double dp = 0.0;
          for (int64_t d = 0; d < dim; ++d)
            dp += dout.at(row + d) * v.at(kvBase + s * dim + d);
          double ds = p[s] * (dp - delta);
          for (int64_t d = 0; d < dim; ++d) {
            r.dq[row + d] += scale * ds * k.at(kvBase + s * dim + d);
            r.dk[kvBase + s * dim + d] += scale * ds * q.at(row + d);
            r.dv[kvBase + s * dim + d] += p[s] * dout.at(row + d);
          }
        }
      }
    }
  return r;
}

using AttentionGradTest = KernelTest;
INSTANTIATE_FOR_FLOATS(AttentionGradTest);

// The cases of AttentionTest.MatchesReference: MHA, GQA and MQA, causal or
// not, two scales, S != T.
TEST_P(AttentionGradTest, MatchesReference) {
  const int64_t batch = 2, heads = 4, seq = 7, dim = 8;
  for (AttentionCase c :
       {AttentionCase{4, false, 7, 0.0}, AttentionCase{4, true, 7, 0.0},
        AttentionCase{2, false, 7, 0.0}, AttentionCase{2, true, 7, 0.3},
        AttentionCase{1, false, 7, 0.3}, AttentionCase{1, true, 7, 0.0},
        AttentionCase{2, false, 11, 0.0}}) {
    SCOPED_TRACE("kv heads " + std::to_string(c.kvHeads) +
                 (c.causal ? ", causal" : "") + ", S " +
                 std::to_string(c.kvSeq) + ", scale " +
                 std::to_string(c.scale));
    double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(double(dim));
    auto q = random(dtype(), {batch, heads, seq, dim}, rng);
    auto k = random(dtype(), {batch, c.kvHeads, c.kvSeq, dim}, rng);
    auto v = random(dtype(), {batch, c.kvHeads, c.kvSeq, dim}, rng);
    auto dout = random(dtype(), {batch, heads, seq, dim}, rng);
    Buffer out(dtype(), {batch, heads, seq, dim});
    ASSERT_OK(run(KernelKind::Attention, {{c.causal}, {scale}},
                  {q.get(), k.get(), v.get()}, {&out}));
    Buffer dq(dtype(), {batch, heads, seq, dim}),
        dk(dtype(), {batch, c.kvHeads, c.kvSeq, dim}),
        dv(dtype(), {batch, c.kvHeads, c.kvSeq, dim});
    ASSERT_OK(run(KernelKind::AttentionGrad, {{c.causal}, {scale}},
                  {q.get(), k.get(), v.get(), &out, dout.get()},
                  {&dq, &dk, &dv}));
    AttentionGradRef want =
        attentionGradRef(*q, *k, *v, out, *dout, c.causal, scale);
    EXPECT_TRUE(allClose(dq.values(), want.dq, tol()));
    EXPECT_TRUE(allClose(dk.values(), want.dk, tol()));
    EXPECT_TRUE(allClose(dv.values(), want.dv, tol()));
  }
}

// Each key/value head's task sums its rows in one order: the same bits for
// any number of threads.
TEST(AttentionGradDeterminism, SameResultForAnyThreadCount) {
  std::mt19937 rng(11);
  auto q = random(DType::F32, {2, 4, 9, 8}, rng);
  auto k = random(DType::F32, {2, 2, 9, 8}, rng);
  auto v = random(DType::F32, {2, 2, 9, 8}, rng);
  auto dout = random(DType::F32, {2, 4, 9, 8}, rng);
  auto out = random(DType::F32, {2, 4, 9, 8}, rng);
  std::vector<std::vector<double>> results;
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    Buffer dq(DType::F32, {2, 4, 9, 8}), dk(DType::F32, {2, 2, 9, 8}),
        dv(DType::F32, {2, 2, 9, 8});
    ASSERT_OK(run(KernelKind::AttentionGrad, {{1}, {0.4}},
                  {q.get(), k.get(), v.get(), out.get(), dout.get()},
                  {&dq, &dk, &dv}, pool));
    std::vector<double> all = dq.values();
    for (const Buffer *b : {&dk, &dv})
      for (double x : b->values())
        all.push_back(x);
    results.push_back(all);
  }
  EXPECT_EQ(results[0], results[1]);
}

} // namespace
