//===- CudaCrossEntropyGradTest.cpp - the loss and its gradient on the GPU ===//
//
// Part of `cuda-kernel-tests` (needs a GPU; skips without one).
// The loss and its gradient on the GPU. llmc.cross_entropy_grad
// (loss/CrossEntropyGrad.cuh) through
// CudaKernels::launch against runCpuKernel on the same fresh random logits
// in [-8, 8]: an odd vocabulary (scalar loads), one shorter than the block
// (most threads idle), a vocabulary of 16-byte rows (the "_vec" entry),
// an unaligned logits pointer (scalar fallback), ignore_index, mean, sum
// and none, f32 and bf16 logits, i32 and i64 targets.
//
// Tolerance of the gradient: the GPU takes exponentials in f32 (expf, a
// few ulp; the row statistics, when the lse is not an operand, as the
// forward: exp2f, 8-term sums in f32, then double); the CPU computes
// everything in double; both round once to the result type. bf16: at most one bf16 ulp (2^-8 relative) plus
// 1e-6 |w| for values near zero; f32: 1e-5 relative plus 1e-7 |w| (expf
// is within 2 ulp, the scale and the products add a rounding each: a few
// ulp expected, the bound leaves room). The printed counts show how many
// elements are not bitwise equal.
//
// ForwardMatchesTheCpu: llmc.cross_entropy (loss/CrossEntropy.cuh, f32
// exponentials) with its lse result against the CPU's double; the stated
// tolerance is on the test. WithLseMatchesTheCpu: the gradient reading the
// forward's lse (the CPU's, so both sides use the same f32 lse), also in
// place. CrossEntropyGradTimingGpt2 times the GPT-2 124M bench shape
// [16384, 50304] bf16 (mean, no ignore): the forward, the gradient with and
// without the lse, and prints ms and GB/s.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

constexpr int64_t kMean = 0, kSum = 1, kNone = 2;

class CudaCrossEntropyGrad : public SharedKernelsTest {
protected:
  CudaCrossEntropyGrad()
      : SharedKernelsTest("the CUDA cross_entropy_grad tests") {}

  struct Case {
    std::string name;
    DType logits, targets;
    int64_t rows, vocab;
    int64_t reduction;
    bool ignore;        ///< every third position is ignore_index -100
    int64_t offset = 0; ///< logits elements past 16-byte alignment
    /// The forward's lse (the CPU's, rounded to f32) as the fourth operand:
    /// the one-pass kernel. Else the kernel computes the row statistics.
    bool lse = false;
    /// dlogits written over the logits (the buffer plan's aliasing).
    bool inPlace = false;
  };

  /// The CPU forward with its lse result: the lse of every row of `logits`.
  void cpuLse(DeviceTensor &logits, DeviceTensor &targets, int64_t reduction,
              bool ignore, DeviceTensor &lse) {
    DeviceTensor loss(DType::F32,
                      reduction == kNone ? Shape{targets.shape} : Shape{});
    ASSERT_OK(runCpuKernel(KernelKind::CrossEntropy,
                           {{reduction, ignore ? 1 : 0, -100}, {}},
                           {logits.hostRef(), targets.hostRef()},
                           {loss.hostRef(), lse.hostRef()}, pool_));
  }

  void run(const Case &c) {
    SCOPED_TRACE(c.name);
    DeviceTensor logits(c.logits, {c.rows, c.vocab});
    DeviceTensor targets(c.targets, {c.rows});
    Shape dlossShape = c.reduction == kNone ? Shape{c.rows} : Shape{};
    DeviceTensor dloss(DType::F32, dlossShape);
    DeviceTensor got(c.logits, {c.rows, c.vocab}),
        want(c.logits, {c.rows, c.vocab});
    std::uniform_real_distribution<double> value(-8.0, 8.0), g(0.5, 2.0);
    std::uniform_int_distribution<int64_t> cls(0, c.vocab - 1);
    for (int64_t i = 0; i < logits.count(); ++i)
      logits.set(i, value(random_));
    for (int64_t n = 0; n < c.rows; ++n)
      targets.set(n, c.ignore && n % 3 == 1 ? -100 : cls(random_));
    for (int64_t i = 0; i < dloss.count(); ++i)
      dloss.set(i, g(random_));
    KernelAttrs attrs{{c.reduction, c.ignore ? 1 : 0, -100}, {}};
    DeviceTensor lse(DType::F32, {c.rows});
    std::vector<TensorRef> hostIn = {logits.hostRef(), targets.hostRef(),
                                     dloss.hostRef()};
    if (c.lse) {
      cpuLse(logits, targets, c.reduction, c.ignore, lse);
      hostIn.push_back(lse.hostRef());
    }
    ASSERT_OK(runCpuKernel(KernelKind::CrossEntropyGrad, attrs, hostIn,
                           {want.hostRef()}, pool_));
    ASSERT_OK(logits.allocate(c.offset));
    ASSERT_OK(targets.allocate());
    ASSERT_OK(dloss.allocate());
    ASSERT_OK(lse.allocate());
    ASSERT_OK(logits.upload());
    ASSERT_OK(targets.upload());
    ASSERT_OK(dloss.upload());
    ASSERT_OK(lse.upload());
    TensorRef result;
    if (c.inPlace) {
      result = logits.deviceRef();
    } else {
      ASSERT_OK(got.allocate());
      ASSERT_OK(got.poison());
      result = got.deviceRef();
    }
    std::vector<TensorRef> deviceIn = {logits.deviceRef(), targets.deviceRef(),
                                       dloss.deviceRef()};
    if (c.lse)
      deviceIn.push_back(lse.deviceRef());
    ASSERT_OK(launchSelected(*kernels_, KernelKind::CrossEntropyGrad, attrs, deviceIn,
                               {result}, nullptr));
    if (c.inPlace) {
      ASSERT_OK(logits.download());
      got.host = logits.host;
    } else {
      ASSERT_OK(got.download());
    }
    // The largest weight bounds |w| in the absolute term.
    double weight = 0.0;
    for (int64_t i = 0; i < dloss.count(); ++i)
      weight = std::max(weight, std::fabs(dloss.get(i)));
    bool bf16 = c.logits == DType::BF16;
    int64_t bad = 0, inexact = 0;
    double worst = 0.0;
    size_t width = dtypeSize(c.logits);
    for (int64_t i = 0; i < got.count(); ++i) {
      double gv = got.get(i), wv = want.get(i);
      if (std::memcmp(got.host.data() + i * width,
                      want.host.data() + i * width, width) != 0)
        ++inexact;
      double allowed = bf16 ? std::ldexp(std::fabs(wv), -8) + 1e-6 * weight
                            : 1e-5 * std::fabs(wv) + 1e-7 * weight;
      double error = std::fabs(gv - wv);
      worst = std::max(worst, error / std::max(std::fabs(wv), 1e-30));
      if (!(error <= allowed) && bad++ < 5)
        ADD_FAILURE() << "element " << i << " (row " << i / c.vocab
                      << "): got " << gv << ", want " << wv;
    }
    std::printf("[ce_grad] %-46s %9lld values, %lld not bitwise equal, max "
                "relative error %.3g\n",
                c.name.c_str(), static_cast<long long>(got.count()),
                static_cast<long long>(inexact), worst);
    EXPECT_EQ(bad, 0);
  }

  /// The forward, llmc.cross_entropy with its lse result, on logits in
  /// [-range, range] (every 7th logit of every 4th row -inf when `masked`).
  struct ForwardCase {
    std::string name;
    DType logits, targets;
    int64_t rows, vocab;
    int64_t reduction;
    bool ignore;        ///< every third position is ignore_index -100
    int64_t offset = 0; ///< logits elements past 16-byte alignment
    double range = 8.0;
    bool masked = false;
  };

  void runForward(const ForwardCase &c) {
    SCOPED_TRACE(c.name);
    DeviceTensor logits(c.logits, {c.rows, c.vocab});
    DeviceTensor targets(c.targets, {c.rows});
    Shape lossShape = c.reduction == kNone ? Shape{c.rows} : Shape{};
    DeviceTensor want(DType::F32, lossShape), wantLse(DType::F32, {c.rows});
    DeviceTensor got(DType::F32, lossShape), gotLse(DType::F32, {c.rows});
    DeviceTensor alone(DType::F32, lossShape);
    std::uniform_real_distribution<double> value(-c.range, c.range);
    std::uniform_int_distribution<int64_t> cls(0, c.vocab - 1);
    for (int64_t i = 0; i < logits.count(); ++i) {
      int64_t row = i / c.vocab, column = i % c.vocab;
      bool hidden = c.masked && row % 4 == 0 && column % 7 == 3;
      logits.set(i, hidden ? -INFINITY : value(random_));
    }
    for (int64_t n = 0; n < c.rows; ++n) {
      int64_t target = cls(random_);
      if (c.masked && n % 4 == 0 && target % 7 == 3)
        target = (target + 1) % c.vocab; // a class that is not masked
      targets.set(n, c.ignore && n % 3 == 1 ? -100 : target);
    }
    KernelAttrs attrs{{c.reduction, c.ignore ? 1 : 0, -100}, {}};
    ASSERT_OK(runCpuKernel(KernelKind::CrossEntropy, attrs,
                           {logits.hostRef(), targets.hostRef()},
                           {want.hostRef(), wantLse.hostRef()}, pool_));
    ASSERT_OK(logits.allocate(c.offset));
    ASSERT_OK(targets.allocate());
    for (DeviceTensor *b : {&got, &gotLse, &alone})
      ASSERT_OK(b->allocate());
    ASSERT_OK(logits.upload());
    ASSERT_OK(targets.upload());
    for (DeviceTensor *b : {&got, &gotLse, &alone})
      ASSERT_OK(b->poison());
    ASSERT_OK(launchSelected(*kernels_, KernelKind::CrossEntropy, attrs,
                               {logits.deviceRef(), targets.deviceRef()},
                               {got.deviceRef(), gotLse.deviceRef()}, nullptr));
    // Without the lse result: the same loss, bit for bit.
    ASSERT_OK(launchSelected(*kernels_, KernelKind::CrossEntropy, attrs,
                               {logits.deviceRef(), targets.deviceRef()},
                               {alone.deviceRef()}, nullptr));
    for (DeviceTensor *b : {&got, &gotLse, &alone})
      ASSERT_OK(b->download());
    EXPECT_EQ(got.host, alone.host) << "the loss depends on the lse result";
    int64_t bad = 0;
    double worstLoss = 0.0, worstLse = 0.0;
    auto compare = [&](const DeviceTensor &g, const DeviceTensor &w,
                       const char *what, double &worst) {
      for (int64_t i = 0; i < g.count(); ++i) {
        double gv = g.get(i), wv = w.get(i);
        double error = std::fabs(gv - wv);
        worst = std::max(worst, error / std::max(std::fabs(wv), 1e-30));
        if (!(error <= 1e-5 * std::fabs(wv) + 1e-6) && bad++ < 5)
          ADD_FAILURE() << what << " " << i << ": got " << gv << ", want "
                        << wv;
      }
    };
    compare(got, want, "loss", worstLoss);
    compare(gotLse, wantLse, "lse of row", worstLse);
    std::printf("[ce] %-50s loss max relative error %.3g, lse %.3g\n",
                c.name.c_str(), worstLoss, worstLse);
    EXPECT_EQ(bad, 0);
  }

  std::mt19937_64 random_{20261129};
  ThreadPool pool_{1};
};

constexpr DType kF32 = DType::F32, kBf16 = DType::BF16, kI32 = DType::I32,
                kI64 = DType::I64;

TEST_F(CudaCrossEntropyGrad, MatchesTheCpu) {
  std::vector<Case> cases = {
      {"bf16 i32 [37, 50257] mean ignore (odd V)", kBf16, kI32, 37, 50257,
       kMean, true},
      {"bf16 i32 [64, 50304] mean (vec)", kBf16, kI32, 64, 50304, kMean,
       false},
      {"bf16 i64 [20, 50304] sum ignore (vec)", kBf16, kI64, 20, 50304, kSum,
       true},
      {"bf16 i32 [9, 4096] none ignore unaligned", kBf16, kI32, 9, 4096,
       kNone, true, 3},
      {"bf16 i32 [50, 100] mean (V < block)", kBf16, kI32, 50, 100, kMean,
       false},
      {"f32 i32 [33, 1001] mean ignore (odd V)", kF32, kI32, 33, 1001, kMean,
       true},
      {"f32 i64 [16, 50304] none (vec)", kF32, kI64, 16, 50304, kNone, false},
      {"f32 i32 [7, 3] sum (V < block, tiny)", kF32, kI32, 7, 3, kSum, false},
      {"f32 i32 [12, 8192] mean unaligned", kF32, kI32, 12, 8192, kMean,
       false, 1},
  };
  for (const Case &c : cases)
    run(c);
}

// With the forward's lse as an operand: one pass over each row, also
// written over the logits (as the buffer plan places dlogits).
TEST_F(CudaCrossEntropyGrad, WithLseMatchesTheCpu) {
  std::vector<Case> cases = {
      {"lse bf16 i32 [37, 50257] mean ignore (odd V)", kBf16, kI32, 37, 50257,
       kMean, true, 0, true},
      {"lse bf16 i32 [64, 50304] mean (vec) in place", kBf16, kI32, 64, 50304,
       kMean, false, 0, true, true},
      {"lse bf16 i64 [20, 50304] sum ignore (vec)", kBf16, kI64, 20, 50304,
       kSum, true, 0, true},
      {"lse bf16 i32 [9, 4096] none ignore unaligned", kBf16, kI32, 9, 4096,
       kNone, true, 3, true},
      {"lse bf16 i32 [50, 128] mean (GPT-2 tiny V) in place", kBf16, kI32, 50,
       128, kMean, false, 0, true, true},
      {"lse f32 i32 [33, 1001] mean ignore (odd V)", kF32, kI32, 33, 1001,
       kMean, true, 0, true},
      {"lse f32 i64 [16, 50304] none (vec) in place", kF32, kI64, 16, 50304,
       kNone, false, 0, true, true},
      {"lse f32 i32 [7, 3] sum (tiny)", kF32, kI32, 7, 3, kSum, false, 0,
       true},
      {"lse f32 i32 [12, 8194] mean unaligned", kF32, kI32, 12, 8194, kMean,
       false, 1, true},
  };
  for (const Case &c : cases)
    run(c);
}

// The forward in f32 (loss/CrossEntropy.cuh) against the CPU's double.
// Tolerance for the loss and the lse: 1e-5 relative plus 1e-6 absolute.
// The GPU's exponentials are f32 (exp2f, 2 ulp, and its argument rounded
// twice: about |x - max| 2^-23 relative for each term, largest for the
// smallest terms), an 8-term pack summed in f32, the rest in double; the
// relative error of the row's sum is a few 1e-7, an absolute error of the
// same size in log(sum), hence in the loss and the lse (of order 1-30
// here, whose own f32 rounding is up to 1e-6).
TEST_F(CudaCrossEntropyGrad, ForwardMatchesTheCpu) {
  std::vector<ForwardCase> cases = {
      {"bf16 i32 [37, 50257] mean ignore (odd V)", kBf16, kI32, 37, 50257,
       kMean, true},
      {"bf16 i32 [64, 50304] mean (vec)", kBf16, kI32, 64, 50304, kMean,
       false},
      {"bf16 i64 [20, 50304] sum ignore (vec)", kBf16, kI64, 20, 50304, kSum,
       true},
      {"bf16 i32 [9, 4096] none ignore unaligned", kBf16, kI32, 9, 4096,
       kNone, true, 3},
      {"bf16 i32 [64, 128] mean (GPT-2 tiny V, a warp)", kBf16, kI32, 64, 128,
       kMean, false},
      {"bf16 i32 [24, 2048] none, -inf logits, [-30, 30]", kBf16, kI32, 24,
       2048, kNone, false, 0, 30.0, true},
      {"f32 i32 [33, 1001] mean ignore (odd V)", kF32, kI32, 33, 1001, kMean,
       true},
      {"f32 i64 [16, 50304] none (vec)", kF32, kI64, 16, 50304, kNone, false},
      {"f32 i32 [7, 3] sum (tiny)", kF32, kI32, 7, 3, kSum, false},
      {"f32 i32 [12, 8194] mean unaligned, [-30, 30]", kF32, kI32, 12, 8194,
       kMean, false, 1, 30.0},
      {"f32 i64 [30, 30] none ignore", kF32, kI64, 30, 30, kNone, true},
  };
  for (const ForwardCase &c : cases)
    runForward(c);
}

// Every position ignored: zeros for mean and sum (the mean's divisor is 1).
TEST_F(CudaCrossEntropyGrad, AllIgnoredGivesZeros) {
  DeviceTensor logits(kBf16, {4, 2048}), targets(kI32, {4}), dloss(kF32, {}),
      got(kBf16, {4, 2048});
  for (int64_t i = 0; i < logits.count(); ++i)
    logits.set(i, 0.25 * static_cast<double>(i % 7));
  for (int64_t n = 0; n < 4; ++n)
    targets.set(n, -100);
  dloss.set(0, 1.0);
  for (DeviceTensor *b : {&logits, &targets, &dloss, &got})
    ASSERT_OK(b->allocate());
  for (DeviceTensor *b : {&logits, &targets, &dloss})
    ASSERT_OK(b->upload());
  for (int64_t reduction : {kMean, kSum}) {
    ASSERT_OK(got.poison());
    ASSERT_OK(launchSelected(*kernels_, 
        KernelKind::CrossEntropyGrad, {{reduction, 1, -100}, {}},
        {logits.deviceRef(), targets.deviceRef(), dloss.deviceRef()},
        {got.deviceRef()}, nullptr));
    ASSERT_OK(got.download());
    for (int64_t i = 0; i < got.count(); ++i)
      ASSERT_EQ(got.get(i), 0.0) << "reduction " << reduction << ", " << i;
  }
}

// GPT-2 124M's loss, [B*T, V] = [16384, 50304] bf16, mean: the forward
// with its lse (one read of the 1.65 GB), the gradient reading that lse
// (one read, one write) and, for scale, the gradient without it (two reads,
// one write). Prints ms and GB/s; spot-checks three rows against the CPU
// (the whole tensor would take minutes there).
TEST_F(CudaCrossEntropyGrad, CrossEntropyGradTimingGpt2) {
  const int64_t rows = 16384, vocab = 50304;
  DeviceTensor logits(kBf16, {rows, vocab}), targets(kI32, {rows}),
      dloss(kF32, {}), dlogits(kBf16, {rows, vocab}), loss(kF32, {}),
      lse(kF32, {rows});
  std::uniform_real_distribution<double> value(-8.0, 8.0);
  std::uniform_int_distribution<int64_t> cls(0, vocab - 1);
  for (int64_t i = 0; i < logits.count(); ++i)
    logits.set(i, value(random_));
  for (int64_t n = 0; n < rows; ++n)
    targets.set(n, cls(random_));
  dloss.set(0, 1.0);
  for (DeviceTensor *b : {&logits, &targets, &dloss, &dlogits, &loss, &lse})
    ASSERT_OK(b->allocate());
  for (DeviceTensor *b : {&logits, &targets, &dloss})
    ASSERT_OK(b->upload());
  const KernelAttrs attrs{{kMean, 0, 0}, {}};
  auto forward = [&] {
    return launchSelected(*kernels_, KernelKind::CrossEntropy, attrs,
                            {logits.deviceRef(), targets.deviceRef()},
                            {loss.deviceRef(), lse.deviceRef()}, nullptr);
  };
  auto gradWithLse = [&] {
    return launchSelected(*kernels_, KernelKind::CrossEntropyGrad, attrs,
                            {logits.deviceRef(), targets.deviceRef(),
                             dloss.deviceRef(), lse.deviceRef()},
                            {dlogits.deviceRef()}, nullptr);
  };
  auto grad = [&] {
    return launchSelected(*kernels_, 
        KernelKind::CrossEntropyGrad, attrs,
        {logits.deviceRef(), targets.deviceRef(), dloss.deviceRef()},
        {dlogits.deviceRef()}, nullptr);
  };
  auto time = [&](const std::function<Status()> &launch, double &ms) {
    ASSERT_OK(launch()); // warm-up (and the first compile)
    ASSERT_OK(launchMs(launch, 10, ms));
  };
  double forwardMs = 0.0, withLseMs = 0.0, gradMs = 0.0;
  time(forward, forwardMs);
  time(gradWithLse, withLseMs);
  const double bytes = static_cast<double>(rows * vocab) * 2.0;
  auto rate = [](double moved, double ms) { return moved / (ms * 1e-3) / 1e9; };
  std::printf("[ce] GPT-2 [16384, 50304] bf16 mean: cross_entropy with lse "
              "%.3f ms (%.0f GB/s over 1 read); cross_entropy_grad with lse "
              "%.3f ms (%.0f GB/s over 1 read + 1 write)\n",
              forwardMs, rate(bytes, forwardMs), withLseMs,
              rate(2 * bytes, withLseMs));
  // The spot check reads the one-pass gradient; the two-pass one is timed
  // after it.
  ASSERT_OK(dlogits.download());
  ASSERT_OK(lse.download());
  ASSERT_OK(loss.download());
  EXPECT_TRUE(std::isfinite(loss.get(0)));
  time(grad, gradMs);
  std::printf("[ce] cross_entropy_grad without lse %.3f ms (%.0f GB/s over 2 "
              "reads + 1 write)\n",
              gradMs, rate(3 * bytes, gradMs));
  ASSERT_EQ(cudaMemcpy(logits.host.data(), logits.device, logits.host.size(),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int64_t row : {int64_t{0}, int64_t{8191}, rows - 1}) {
    SCOPED_TRACE("row " + std::to_string(row));
    DeviceTensor one(kBf16, {1, vocab}), oneTarget(kI32, {1}),
        oneWant(kBf16, {1, vocab}), oneLoss(kF32, {1}), oneLse(kF32, {1});
    std::memcpy(one.host.data(), logits.host.data() + row * vocab * 2,
                vocab * 2);
    oneTarget.set(0, targets.get(row));
    // The forward's lse against the CPU's (tolerance of ForwardMatchesTheCpu).
    ASSERT_OK(runCpuKernel(KernelKind::CrossEntropy, {{kNone, 0, 0}, {}},
                           {one.hostRef(), oneTarget.hostRef()},
                           {oneLoss.hostRef(), oneLse.hostRef()}, pool_));
    EXPECT_LE(std::fabs(lse.get(row) - oneLse.get(0)),
              1e-5 * std::fabs(oneLse.get(0)) + 1e-6);
    // The gradient from the GPU's lse: the mean's weight 1 / rows as a
    // `none` weight of one row.
    DeviceTensor oneWeight(kF32, {1}), gpuLse(kF32, {1});
    oneWeight.set(0, 1.0 / static_cast<double>(rows));
    gpuLse.set(0, lse.get(row));
    ASSERT_OK(runCpuKernel(KernelKind::CrossEntropyGrad, {{kNone, 0, 0}, {}},
                           {one.hostRef(), oneTarget.hostRef(),
                            oneWeight.hostRef(), gpuLse.hostRef()},
                           {oneWant.hostRef()}, pool_));
    for (int64_t v = 0; v < vocab; ++v) {
      double gv = dlogits.get(row * vocab + v), wv = oneWant.get(v);
      ASSERT_LE(std::fabs(gv - wv),
                std::ldexp(std::fabs(wv), -8) + 1e-6 / rows)
          << "column " << v;
    }
  }
}

} // namespace
} // namespace llmc::rt::cuda
