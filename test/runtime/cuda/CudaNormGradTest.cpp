//===- CudaNormGradTest.cpp - GPU norm gradients against the CPU ----------===//
//
// Part of `cuda-kernel-tests` (needs a GPU; skips without one).
// layer_norm_grad and rms_norm_grad (norms/NormGrad.cuh) through
// CudaKernels::launch on fresh random data, against runCpuKernel on the
// same inputs: f32 and bf16 x/dy with f32 or bf16 gamma, an odd row length
// (not a multiple of a warp), one row, several 32-row chunks of the column
// sums with a partial last one, GPT-2's [16*1024, 768] (512 chunks, 16 per
// run of the finish) and an rms case of 1024 rows of 2048. Rows of whole
// 16-byte packs (768, 1000 for bf16 and f32, 2048) take the rows-in-
// registers entries, 37 the general kernel. Results are poisoned before the
// launch. With the residual addend (the session's folded add: GPT-2's
// shape, f32 [130, 1000], bf16 rms [100, 2048]) a second launch's dx + r
// must equal bit for bit the CPU's Add of the first launch's dx and r.
//
// Tolerance: both sides compute in double from the same stored inputs and
// round once to the result type, in different orders (the CPU sequentially,
// the GPU per lane and shuffle tree), so the double values differ by a few
// 2^-53 relative to the row's magnitudes; dx = r (g - mean(g) - xhat
// mean(g xhat)) cancels, so the bound is relative to the tensor's largest
// |value|: 2^-22 (2 f32 ulps) for f32 results and one ulp of the element
// for bf16 (the two double values may round to neighbouring bf16 values),
// plus 2^-22 of the largest |value|. The printed counts show how many
// elements are not bitwise equal (expected: none or a few).
//
// NormGradTimingGpt2 prints the time of one GPT-2 124M layer_norm_grad
// (bf16 x and dy [16*1024, 768], f32 gamma), median of 20 after 3 warm-ups,
// then the same with the residual addend (the session's case), and asserts
// that two runs give the same bits (no atomics).
// RmsNormTimingLlama prints the time of LLaMA-1B's forward rms_norm (bf16 x
// [8 * 1024, 2048], f32 gamma: the 8-pack rows entry) per launch.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

/// Prints what compareToLargest found (see the file comment: 2^-22 of the
/// largest |value|, plus one ulp of the element for bf16).
void compare(const std::string &name, const DeviceTensor &got,
             const DeviceTensor &want) {
  CompareResult r = compareToLargest(name, got, want, 0x1p-22);
  std::printf("  %-48s %lld of %lld not bitwise equal, max error %.2e of "
              "the largest |value| %.3g\n",
              name.c_str(), static_cast<long long>(r.inexact),
              static_cast<long long>(got.count()), r.worst, r.largest);
}

/// Whether dx is stored plus a residual addend (CudaKernels::launch).
enum class Addend { None, Residual };

class CudaNormGrad : public GpuTest {
protected:
  CudaNormGrad() : GpuTest("the CUDA norm gradient tests") {}
  void SetUp() override {
    GpuTest::SetUp();
    if (stopped())
      return;
    ASSERT_OK(createHandWrittenKernels(kernels));
  }

  /// One launch of `kind` on x, dy of `type` [rows, dim] and gamma of
  /// `params`, against the CPU. With Addend::Residual, a second launch
  /// stores dx plus a random r (the session's folded residual add), which
  /// must equal bit for bit the CPU's Add of the first launch's dx and r.
  void run(KernelKind kind, DType type, DType params, int64_t rows,
           int64_t dim, Addend addend = Addend::None) {
    bool layer = kind == KernelKind::LayerNormGrad;
    bool residual = addend == Addend::Residual;
    std::string name =
        std::string(layer ? "layer_norm_grad " : "rms_norm_grad ") +
        dtypeName(type) + "/" + dtypeName(params) + " [" +
        std::to_string(rows) + ", " + std::to_string(dim) + "]" +
        (residual ? " + r" : "");
    SCOPED_TRACE(name);
    std::mt19937_64 random(std::random_device{}());
    DeviceTensor x(type, {rows, dim}), gamma(params, {dim}),
        dy(type, {rows, dim});
    x.fillUniform(random, -1.0f, 3.0f); // a mean of 1: centering matters
    gamma.fillUniform(random, 0.5f, 1.5f);
    dy.fillUniform(random, -1.0f, 1.0f);
    DeviceTensor r(type, {rows, dim});
    r.fillUniform(random, -0.5f, 0.5f);
    DeviceTensor cpuDx(type, {rows, dim}), cpuDgamma(params, {dim}),
        cpuDbeta(params, {dim});
    DeviceTensor dx(type, {rows, dim}), dgamma(params, {dim}),
        dbeta(params, {dim});
    KernelAttrs attrs{{}, {1e-5}};
    std::vector<TensorRef> cpuOut{cpuDx.hostRef(), cpuDgamma.hostRef()};
    if (layer)
      cpuOut.push_back(cpuDbeta.hostRef());
    ThreadPool pool;
    ASSERT_OK(runCpuKernel(kind, attrs,
                           {x.hostRef(), gamma.hostRef(), dy.hostRef()},
                           cpuOut, pool));
    for (DeviceTensor *t : {&x, &gamma, &dy, &r, &dx, &dgamma, &dbeta})
      ASSERT_OK(t->upload());
    for (DeviceTensor *t : {&dx, &dgamma, &dbeta})
      ASSERT_OK(t->poison());
    std::vector<TensorRef> out{dx.deviceRef(), dgamma.deviceRef()};
    if (layer)
      out.push_back(dbeta.deviceRef());
    std::vector<TensorRef> in{x.deviceRef(), gamma.deviceRef(),
                              dy.deviceRef()};
    ASSERT_OK(prepareSelected(*kernels, kind, attrs, in, out));
    ASSERT_OK(launchSelected(*kernels, kind, attrs, in, out, nullptr));
    for (DeviceTensor *t : {&dx, &dgamma, &dbeta})
      ASSERT_OK(t->download());
    compare(name + " dx", dx, cpuDx);
    compare(name + " dgamma", dgamma, cpuDgamma);
    if (layer)
      compare(name + " dbeta", dbeta, cpuDbeta);
    if (!residual)
      return;
    // The folded add: exactly the Add of the stored dx and r.
    DeviceTensor sum(type, {rows, dim});
    ASSERT_OK(runCpuKernel(KernelKind::Add, {}, {dx.hostRef(), r.hostRef()},
                           {sum.hostRef()}, pool));
    ASSERT_OK(dx.poison());
    ASSERT_OK(launchSelected(*kernels, kind, attrs, in, out, nullptr, r.device));
    ASSERT_OK(dx.download());
    int64_t differ = 0;
    for (int64_t i = 0; i < dx.count(); ++i)
      differ += std::memcmp(dx.host.data() + i * dtypeSize(type),
                            sum.host.data() + i * dtypeSize(type),
                            dtypeSize(type)) != 0;
    std::printf("  %-48s %lld of %lld not bitwise equal to dx + r\n",
                (name + " dx + r").c_str(), static_cast<long long>(differ),
                static_cast<long long>(dx.count()));
    EXPECT_EQ(differ, 0);
  }

  std::unique_ptr<CudaKernels> kernels;
};

TEST_F(CudaNormGrad, MatchesTheCpu) {
  for (KernelKind kind : {KernelKind::LayerNormGrad, KernelKind::RmsNormGrad})
    for (DType type : {DType::F32, DType::BF16})
      for (DType params : {DType::F32, DType::BF16}) {
        run(kind, type, params, 1, 768);    // one row: one partial chunk
        run(kind, type, params, 200, 37);   // odd length, 7 chunks of 32
        run(kind, type, params, 130, 1000); // 5 chunks, the last of 2 rows
      }
  run(KernelKind::LayerNormGrad, DType::BF16, DType::F32, 16 * 1024, 768);
  run(KernelKind::LayerNormGrad, DType::BF16, DType::F32, 16 * 1024, 768,
      Addend::Residual);
  run(KernelKind::LayerNormGrad, DType::F32, DType::F32, 130, 1000,
      Addend::Residual); // f32, the 8-pack rows entry
  run(KernelKind::RmsNormGrad, DType::BF16, DType::F32, 4 * 256, 2048);
  run(KernelKind::RmsNormGrad, DType::BF16, DType::BF16, 100, 2048,
      Addend::Residual);
  // fp16's: f16 x and dy with f32 gamma, the residual folded in too.
  run(KernelKind::LayerNormGrad, DType::F16, DType::F32, 16 * 1024, 768,
      Addend::Residual);
  run(KernelKind::LayerNormGrad, DType::F16, DType::F32, 200, 37,
      Addend::Residual);
  run(KernelKind::RmsNormGrad, DType::F16, DType::F32, 100, 2048,
      Addend::Residual);
}

TEST_F(CudaNormGrad, TimingGpt2) {
  const int64_t rows = 16 * 1024, dim = 768;
  std::mt19937_64 random(42);
  DeviceTensor x(DType::BF16, {rows, dim}), gamma(DType::F32, {dim}),
      dy(DType::BF16, {rows, dim}), dx(DType::BF16, {rows, dim}),
      dgamma(DType::F32, {dim}), dbeta(DType::F32, {dim});
  x.fillUniform(random, -1.0f, 3.0f);
  gamma.fillUniform(random, 0.5f, 1.5f);
  dy.fillUniform(random, -1.0f, 1.0f);
  for (DeviceTensor *t : {&x, &gamma, &dy, &dx, &dgamma, &dbeta})
    ASSERT_OK(t->upload());
  KernelAttrs attrs{{}, {1e-5}};
  std::vector<TensorRef> in{x.deviceRef(), gamma.deviceRef(), dy.deviceRef()};
  std::vector<TensorRef> out{dx.deviceRef(), dgamma.deviceRef(),
                             dbeta.deviceRef()};
  ASSERT_OK(prepareSelected(*kernels, KernelKind::LayerNormGrad, attrs, in, out));
  // The median of 20 launches after 3 warm-ups, dx stored plus `addend`
  // when not null.
  auto medianMs = [&](const void *addend, double &ms) {
    ASSERT_OK(medianLaunchMs(
        [&] {
          return launchSelected(*kernels, KernelKind::LayerNormGrad, attrs, in, out,
                                 nullptr, addend);
        },
        23, 3, ms));
  };
  double ms = 0.0;
  medianMs(nullptr, ms);
  if (HasFatalFailure())
    return;
  // Determinism: the last timed run's results, then one more run's.
  for (DeviceTensor *t : {&dx, &dgamma, &dbeta})
    ASSERT_OK(t->download());
  std::vector<std::vector<uint8_t>> first{dx.host, dgamma.host, dbeta.host};
  ASSERT_EQ(cudaMemset(dgamma.device, 0, dgamma.bytes()), cudaSuccess);
  ASSERT_OK(launchSelected(*kernels, KernelKind::LayerNormGrad, attrs, in, out,
                            nullptr));
  int index = 0;
  for (DeviceTensor *t : {&dx, &dgamma, &dbeta}) {
    ASSERT_OK(t->download());
    EXPECT_TRUE(t->host == first[index]) << "result " << index
                                         << " differs between two runs";
    ++index;
  }
  // The session's case: the residual add folded in (24 of GPT-2's 25).
  DeviceTensor r(DType::BF16, {rows, dim});
  r.fillUniform(random, -0.5f, 0.5f);
  ASSERT_OK(r.upload());
  double foldedMs = 0.0;
  medianMs(r.device, foldedMs);
  if (HasFatalFailure())
    return;
  // Bytes the kernels must move at least: x and dy read, dx written (bf16).
  double bytes = 3.0 * rows * dim * 2;
  std::printf("layer_norm_grad bf16 [16*1024, 768], f32 gamma: %.3f ms "
              "(%.0f GB/s of the 3 x 25.2 MB the op must move; 25 per "
              "GPT-2 124M step: %.2f ms)\n",
              ms, bytes / ms * 1e-6, 25 * ms);
  std::printf("layer_norm_grad bf16 [16*1024, 768], f32 gamma, + r: %.3f ms "
              "(%.0f GB/s of the 4 x 25.2 MB it must move)\n",
              foldedMs, 4.0 * rows * dim * 2 / foldedMs * 1e-6);
}

TEST_F(CudaNormGrad, RmsNormTimingLlama) {
  const int64_t rows = 8 * 1024, dim = 2048;
  std::mt19937_64 random(42);
  DeviceTensor x(DType::BF16, {rows, dim}), gamma(DType::F32, {dim}),
      y(DType::BF16, {rows, dim});
  x.fillUniform(random, -1.0f, 3.0f);
  gamma.fillUniform(random, 0.5f, 1.5f);
  for (DeviceTensor *t : {&x, &gamma, &y})
    ASSERT_OK(t->upload());
  double ms = 0.0;
  msPerLaunch(*kernels, KernelKind::RmsNorm, {{}, {1e-5}},
              {x.deviceRef(), gamma.deviceRef()}, {y.deviceRef()}, ms);
  if (HasFatalFailure())
    return;
  double bytes = 2.0 * static_cast<double>(x.bytes());
  std::printf("rms_norm bf16 [8*1024, 2048], f32 gamma: %.4f ms (%.0f GB/s "
              "of the 2 x %.1f MB it must move; 37 per LLaMA-1B step: "
              "%.2f ms)\n",
              ms, bytes / ms * 1e-6, x.bytes() * 1e-6, 37 * ms);
}

} // namespace
} // namespace llmc::rt::cuda
