//===- CudaKernelCaseTest.cpp - each CUDA kernel family vs the CPU --------===//
//
// Needs a GPU (label `cuda`, in cuda-session-tests); without one every test
// skips. Per kernel (kernels/<family>/*Launch.cpp): fresh random data
// through CudaKernels::launch against runCpuKernel. Tolerances:
//   data movement, gather, embedding, iota, compare: exact (bitwise);
//   reductions, norms, softmax, rope, lr
//   schedule: both sides accumulate in double and round once to f32, so
//   they differ by the order of double additions and the device's f64
//   libm: 2^-22 relative (2 f32 ulps) plus 1e-7 absolute for results
//   near zero after cancellation (a centred layer-norm value, a
//   rotated pair);
//   cross-entropy (f32 exponentials, loss/CrossEntropy.cuh): the
//   Float32 tolerance, 1e-5 relative plus 1e-6 absolute (a few 1e-7 of
//   error in log(sum), CudaCrossEntropyGrad.ForwardMatchesTheCpu);
//   scatter_add: f32 atomics in no fixed order against the CPU's f32
//   sum in index order: 1e-5 relative to the sum of the magnitudes;
//   attention (flash, f32 sums over 9 keys and 16 columns against the
//   CPU's f64): 1e-5 relative plus 1e-6 absolute.
// bf16 and f16 variants: one ulp of the type (2^-8, 2^-10 relative); f16
// attention runs cuDNN's SDPA in HALF or llmc's scalar flash kernels, with
// bf16's bound. Attention in bf16 runs cuDNN's SDPA or
// llmc's tensor-core kernels, which round the probabilities to bf16
// before p·v (as FlashAttention-2): 2e-2 of the result's largest
// magnitude plus one bf16 ulp of the element, as in CudaKernelsTest.
// The whole training steps are in CudaSessionTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

// ---- 1. Per kernel ----------------------------------------------------------

enum class Tolerance { Exact, Double, Atomic, Float32, Flash };

class CudaKernelCase : public SharedKernelsTest {
protected:
  CudaKernelCase() : SharedKernelsTest("the CUDA session tests") {}

  void fillFloat(DeviceTensor &t, float low = -2.0f, float high = 2.0f) {
    t.fillUniform(random_, low, high);
  }
  /// Integers of i32 or i64 tensors (small: exact through set's double).
  void fillInt(DeviceTensor &t, int64_t low, int64_t high) {
    std::uniform_int_distribution<int64_t> draw(low, high);
    for (int64_t i = 0; i < t.count(); ++i)
      t.set(i, static_cast<double>(draw(random_)));
  }

  /// Runs `kind` on the CPU and the GPU and compares the one result;
  /// `scale` (for Atomic): per-element sums of magnitudes.
  void check(const std::string &name, KernelKind kind, KernelAttrs attrs,
             std::vector<DeviceTensor *> inputs, DeviceTensor &result,
             Tolerance tolerance, const std::vector<double> *scale = nullptr) {
    SCOPED_TRACE(name);
    std::vector<TensorRef> hostIn, deviceIn;
    for (DeviceTensor *input : inputs) {
      ASSERT_OK(input->allocate(0, 1));
      ASSERT_OK(input->upload());
      hostIn.push_back(input->hostRef());
      deviceIn.push_back(input->deviceRef());
    }
    DeviceTensor reference(result.dtype, result.shape);
    ASSERT_OK(runCpuKernel(kind, attrs, hostIn, {reference.hostRef()}, pool_));
    ASSERT_OK(result.allocate(0, 1));
    // Poisoned: a result element the kernel never writes shows.
    ASSERT_OK(result.poison());
    ASSERT_OK(
        launchSelected(*kernels_, kind, attrs, deviceIn, {result.deviceRef()}, nullptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_OK(result.download());
    double worst = 0.0, largest = 0.0;
    int64_t bad = 0;
    for (int64_t i = 0; i < result.count(); ++i)
      largest = std::max(largest, std::fabs(reference.get(i)));
    for (int64_t i = 0; i < result.count(); ++i) {
      double want = reference.get(i);
      double got = result.get(i);
      double error = std::fabs(got - want);
      double allowed = 0.0;
      // One ulp of a 16-bit result, relative: bf16 2^-8, f16 2^-10.
      bool half = result.dtype == DType::BF16 || result.dtype == DType::F16;
      int ulp = result.dtype == DType::BF16 ? -8 : -10;
      if (tolerance == Tolerance::Double)
        allowed = half ? std::ldexp(std::fabs(want), ulp) + 1e-7
                       : std::ldexp(std::fabs(want), -22) + 1e-7;
      else if (tolerance == Tolerance::Atomic)
        allowed = 1e-5 * (*scale)[i] + 1e-7 +
                  (half ? std::ldexp(std::fabs(want), ulp) : 0.0);
      else if (tolerance == Tolerance::Flash && half)
        allowed = 2e-2 * largest + std::ldexp(std::fabs(want), ulp);
      else if (tolerance == Tolerance::Float32 || tolerance == Tolerance::Flash)
        allowed = half ? std::ldexp(std::fabs(want), ulp + 1) + 1e-6
                       : 1e-5 * std::fabs(want) + 1e-6;
      bool same =
          tolerance == Tolerance::Exact
              ? std::memcmp(result.host.data() + i * dtypeSize(result.dtype),
                            reference.host.data() + i * dtypeSize(result.dtype),
                            dtypeSize(result.dtype)) == 0
              : error <= allowed;
      if (!same && bad++ < 5)
        ADD_FAILURE() << name << ": element " << i << ": got " << got
                      << ", want " << want;
      if (want != 0.0)
        worst = std::max(worst, error / std::fabs(want));
      else
        worst = std::max(worst, error);
    }
    std::printf("[kernel] %-36s %8lld elements, max relative error %.3g\n",
                name.c_str(), static_cast<long long>(result.count()), worst);
    EXPECT_EQ(bad, 0) << name;
  }

  std::mt19937_64 random_{20261129};
  ThreadPool pool_{1};
};

TEST_F(CudaKernelCase, Movement) {
  {
    DeviceTensor in(DType::F32, {3, 1, 5}), out(DType::F32, {2, 3, 4, 5});
    fillFloat(in);
    check("broadcast f32", KernelKind::Broadcast, {{1, 2, 3}, {}}, {&in}, out,
          Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::I32, {}), out(DType::I32, {7, 3});
    fillInt(in, -100, 100);
    check("broadcast i32 scalar", KernelKind::Broadcast, {{}, {}}, {&in}, out,
          Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::F32, {2, 3, 4, 5}), out(DType::F32, {2, 4, 3, 5});
    fillFloat(in);
    check("transpose f32 0213", KernelKind::Transpose, {{0, 2, 1, 3}, {}},
          {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::BF16, {6, 7}), out(DType::BF16, {7, 6});
    fillFloat(in);
    check("transpose bf16 10", KernelKind::Transpose, {{1, 0}, {}}, {&in}, out,
          Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::F32, {4, 6, 8}), out(DType::F32, {3, 3, 2});
    fillFloat(in);
    check("slice f32 strided", KernelKind::Slice,
          {{1, 0, 2, 4, 6, 8, 1, 2, 3}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor a(DType::F32, {2, 3, 4}), b(DType::F32, {2, 5, 4}),
        c(DType::F32, {2, 1, 4}), out(DType::F32, {2, 9, 4});
    fillFloat(a);
    fillFloat(b);
    fillFloat(c);
    check("concat f32 dim 1", KernelKind::Concat, {{1}, {}}, {&a, &b, &c}, out,
          Tolerance::Exact);
  }
  // The launch merges contiguous dimensions and moves 16, 8 or 4 bytes at
  // once where sizes and offsets allow (movement/MovementLaunch.cpp, simplifyMove):
  // the attention's head transposes, the q/k/v slices, bias broadcasts and
  // the concat of the q/k/v gradients, and shapes that allow none of it.
  {
    DeviceTensor in(DType::BF16, {2, 5, 3, 64}),
        out(DType::BF16, {2, 3, 5, 64});
    fillFloat(in);
    check("transpose bf16 0213 (16-byte rows)", KernelKind::Transpose,
          {{0, 2, 1, 3}, {}}, {&in}, out, Tolerance::Exact);
  }
  // The tiled transpose (movement/Movement.cuh, tiledTranspose): whole and
  // partial 32 x 32 tiles, a batch, a rank-3 transpose that merges to a
  // matrix's, and every element size the linear layers transpose.
  {
    DeviceTensor in(DType::BF16, {70, 45}), out(DType::BF16, {45, 70});
    fillFloat(in);
    check("transpose bf16 10 (tiles, partial)", KernelKind::Transpose,
          {{1, 0}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::F32, {64, 96}), out(DType::F32, {96, 64});
    fillFloat(in);
    check("transpose f32 10 (whole tiles)", KernelKind::Transpose,
          {{1, 0}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::F8E4M3FN, {3, 100, 33}),
        out(DType::F8E4M3FN, {3, 33, 100});
    fillFloat(in);
    check("transpose f8E4M3FN 021 (batch of 3)", KernelKind::Transpose,
          {{0, 2, 1}, {}}, {&in}, out, Tolerance::Exact);
  }
  // The byte transpose (tiledTransposeBytes: 64 x 64 tiles as 4-byte
  // words) where rows and columns are multiples of 4: whole and partial
  // tiles in both dimensions, a batch; [3, 100, 33] above is the 1-byte
  // kernel's fallback.
  {
    DeviceTensor in(DType::F8E4M3FN, {2, 132, 200}),
        out(DType::F8E4M3FN, {2, 200, 132});
    fillFloat(in);
    check("transpose f8E4M3FN 021 (words, partial tiles, batch of 2)",
          KernelKind::Transpose, {{0, 2, 1}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::F8E5M2, {128, 256}), out(DType::F8E5M2, {256, 128});
    fillFloat(in);
    check("transpose f8E5M2 10 (words, whole tiles)", KernelKind::Transpose,
          {{1, 0}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::F8E5M2, {4, 16, 40}), out(DType::F8E5M2, {40, 4, 16});
    fillFloat(in);
    check("transpose f8E5M2 201 (merges to [64, 40])", KernelKind::Transpose,
          {{2, 0, 1}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::BF16, {4, 6, 24}), out(DType::BF16, {4, 6, 8});
    fillFloat(in);
    check("slice bf16 columns 8..16 (16 bytes)", KernelKind::Slice,
          {{0, 0, 8, 4, 6, 16, 1, 1, 1}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::BF16, {4, 6, 24}), out(DType::BF16, {4, 6, 5});
    fillFloat(in);
    check("slice bf16 columns 3..8 (2 bytes)", KernelKind::Slice,
          {{0, 0, 3, 4, 6, 8, 1, 1, 1}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::BF16, {24}), out(DType::BF16, {5, 7, 24});
    fillFloat(in);
    check("broadcast bf16 bias (16 bytes)", KernelKind::Broadcast,
          {{2}, {}}, {&in}, out, Tolerance::Exact);
  }
  {
    DeviceTensor in(DType::F32, {6}), out(DType::F32, {5, 6, 3});
    fillFloat(in);
    check("broadcast f32 middle dim", KernelKind::Broadcast, {{1}, {}}, {&in},
          out, Tolerance::Exact);
  }
  {
    DeviceTensor a(DType::BF16, {3, 4, 8}), b(DType::BF16, {3, 4, 16}),
        out(DType::BF16, {3, 4, 24});
    fillFloat(a);
    fillFloat(b);
    check("concat bf16 dim 2 (16 bytes)", KernelKind::Concat, {{2}, {}},
          {&a, &b}, out, Tolerance::Exact);
  }
  {
    DeviceTensor a(DType::BF16, {3, 4, 3}), b(DType::BF16, {3, 4, 5}),
        out(DType::BF16, {3, 4, 8});
    fillFloat(a);
    fillFloat(b);
    check("concat bf16 dim 2 (odd columns)", KernelKind::Concat, {{2}, {}},
          {&a, &b}, out, Tolerance::Exact);
  }
}

TEST_F(CudaKernelCase, Reductions) {
  struct Case {
    const char *name;
    KernelKind kind;
    Shape in;
    std::vector<int64_t> dims;
    Shape out;
    DType inType, outType;
  };
  std::vector<Case> cases = {
      {"reduce_sum f32 dims 0,1",
       KernelKind::ReduceSum,
       {3, 5, 70},
       {0, 1},
       {70},
       DType::F32,
       DType::F32},
      {"reduce_sum f32 dim 2",
       KernelKind::ReduceSum,
       {3, 5, 700},
       {2},
       {3, 5, 1},
       DType::F32,
       DType::F32},
      {"reduce_sum f32 all",
       KernelKind::ReduceSum,
       {40, 1000},
       {0, 1},
       {},
       DType::F32,
       DType::F32},
      {"reduce_max f32 dim 1",
       KernelKind::ReduceMax,
       {4, 33, 6},
       {1},
       {4, 6},
       DType::F32,
       DType::F32},
      {"reduce_mean f32 dims 0,2",
       KernelKind::ReduceMean,
       {8, 3, 9},
       {0, 2},
       {3},
       DType::F32,
       DType::F32},
      {"reduce_sum bf16->f32 dim 1",
       KernelKind::ReduceSum,
       {5, 300},
       {1},
       {5},
       DType::BF16,
       DType::F32},
      {"reduce_mean bf16 dim 0",
       KernelKind::ReduceMean,
       {50, 7},
       {0},
       {7},
       DType::BF16,
       DType::BF16},
  };
  for (const Case &c : cases) {
    DeviceTensor in(c.inType, c.in), out(c.outType, c.out);
    fillFloat(in);
    check(c.name, c.kind, {c.dims, {}}, {&in}, out, Tolerance::Double);
  }
  // The gradient norm's terms (a chunk is 4096 elements): squares rounded
  // to f32 and summed in double on both sides.
  for (int64_t n : {1, 768, 4096, 4097, 3 * 4096 + 5, (1 << 21) + 3}) {
    DeviceTensor in(DType::F32, {n}), out(DType::F32, {});
    fillFloat(in);
    check("sum_squares f32[" + std::to_string(n) + "]", KernelKind::SumSquares,
          {{}, {}}, {&in}, out, Tolerance::Double);
  }
}

TEST_F(CudaKernelCase, Indexing) {
  {
    DeviceTensor in(DType::F32, {3, 10, 4}), ids(DType::I32, {2, 6}),
        out(DType::F32, {3, 2, 6, 4});
    fillFloat(in);
    fillInt(ids, -1, 10); // -1 and 10 are out of range: zeros
    check("gather f32 dim 1 i32", KernelKind::Gather, {{1}, {}}, {&in, &ids},
          out, Tolerance::Exact);
  }
  {
    DeviceTensor table(DType::F32, {50, 16}), ids(DType::I32, {2, 7}),
        out(DType::F32, {2, 7, 16});
    fillFloat(table);
    fillInt(ids, 0, 49);
    check("embedding f32 i32", KernelKind::Embedding, {}, {&table, &ids}, out,
          Tolerance::Exact);
  }
  {
    DeviceTensor table(DType::BF16, {30, 8}), ids(DType::I64, {9}),
        out(DType::BF16, {9, 8});
    fillFloat(table);
    fillInt(ids, 0, 29);
    check("embedding bf16 i64", KernelKind::Embedding, {}, {&table, &ids}, out,
          Tolerance::Exact);
  }
  {
    // Many updates into few rows: colliding atomics.
    DeviceTensor dest(DType::F32, {10, 8}), ids(DType::I32, {200}),
        updates(DType::F32, {200, 8}), out(DType::F32, {10, 8});
    fillFloat(dest);
    fillInt(ids, 0, 9);
    fillFloat(updates);
    std::vector<double> scale(80, 0.0);
    for (int64_t e = 0; e < 80; ++e)
      scale[e] = std::fabs(dest.get(e));
    for (int64_t j = 0; j < 200; ++j) {
      int32_t row;
      std::memcpy(&row, ids.host.data() + 4 * j, 4);
      for (int64_t c = 0; c < 8; ++c)
        scale[row * 8 + c] += std::fabs(updates.get(j * 8 + c));
    }
    check("scatter_add f32 dim 0", KernelKind::ScatterAdd, {{0}, {}},
          {&dest, &ids, &updates}, out, Tolerance::Atomic, &scale);
  }
  {
    DeviceTensor out(DType::F32, {3, 4, 5});
    check("iota f32 dim 1", KernelKind::Iota, {{1}, {}}, {}, out,
          Tolerance::Exact);
    DeviceTensor outInt(DType::I32, {6, 7});
    check("iota i32 dim 1", KernelKind::Iota, {{1}, {}}, {}, outInt,
          Tolerance::Exact);
  }
  for (int64_t direction = 0; direction < 6; ++direction) {
    DeviceTensor a(DType::I32, {300}), b(DType::I32, {300}),
        out(DType::I1, {300});
    fillInt(a, 0, 5);
    fillInt(b, 0, 5);
    check("compare i32 direction " + std::to_string(direction),
          KernelKind::Compare, {{direction}, {}}, {&a, &b}, out,
          Tolerance::Exact);
  }
}

TEST_F(CudaKernelCase, Composites) {
  for (DType type : {DType::F32, DType::BF16, DType::F16}) {
    std::string suffix = std::string(" ") + dtypeName(type);
    {
      DeviceTensor x(type, {6, 70}), gamma(type, {70}), beta(type, {70}),
          out(type, {6, 70});
      fillFloat(x, -3, 5);
      fillFloat(gamma);
      fillFloat(beta);
      check("layer_norm" + suffix, KernelKind::LayerNorm, {{}, {1e-5}},
            {&x, &gamma, &beta}, out, Tolerance::Double);
      DeviceTensor out2(type, {6, 70});
      check("layer_norm no beta" + suffix, KernelKind::LayerNorm, {{}, {1e-5}},
            {&x, &gamma}, out2, Tolerance::Double);
      DeviceTensor out3(type, {6, 70});
      check("rms_norm" + suffix, KernelKind::RmsNorm, {{}, {1e-6}},
            {&x, &gamma}, out3, Tolerance::Double);
    }
    {
      DeviceTensor x(type, {3, 7, 5}), out(type, {3, 7, 5});
      fillFloat(x, -8, 8);
      check("softmax dim 1" + suffix, KernelKind::Softmax, {{1}, {}}, {&x}, out,
            Tolerance::Double);
      DeviceTensor out2(type, {3, 7, 5});
      check("softmax dim 2" + suffix, KernelKind::Softmax, {{2}, {}}, {&x},
            out2, Tolerance::Double);
    }
    for (int64_t causal : {0, 1}) {
      DeviceTensor q(type, {2, 4, 9, 16}), k(type, {2, 2, 9, 16}),
          v(type, {2, 2, 9, 16}), out(type, {2, 4, 9, 16});
      fillFloat(q);
      fillFloat(k);
      fillFloat(v);
      check("attention gqa causal=" + std::to_string(causal) + suffix,
            KernelKind::Attention, {{causal}, {0.25}}, {&q, &k, &v}, out,
            Tolerance::Flash);
    }
    {
      DeviceTensor x(type, {2, 3, 8, 16}), positions(DType::I32, {8}),
          out(type, {2, 3, 8, 16});
      fillFloat(x);
      fillInt(positions, 0, 1000);
      check("rope positions" + suffix, KernelKind::Rope, {{}, {10000.0}},
            {&x, &positions}, out, Tolerance::Double);
      DeviceTensor out2(type, {2, 3, 8, 16});
      check("rope" + suffix, KernelKind::Rope, {{}, {500000.0}}, {&x}, out2,
            Tolerance::Double);
    }
    // Rows of 1024 and more take a block per row with one online pass
    // (softmax/SoftmaxLong.cuh): with 16-byte loads (lengths 2048, 4096)
    // and without (1027, not a multiple of 4 or 8). Same tolerance as the
    // warp kernels: double accumulation, one rounding.
    if (type != DType::F32)
      for (int64_t length : {70, 1027, 4096}) {
        // The widened form (bf16 or f16 in, f32 out) llmc-fuse folds a cast
        // into.
        DeviceTensor x(type, {3, length}), out(DType::F32, {3, length});
        fillFloat(x, -30, 30);
        check("softmax" + suffix + " -> f32 " + std::to_string(length),
              KernelKind::Softmax, {{1}, {}}, {&x}, out, Tolerance::Double);
      }
    for (int64_t length : {1027, 2048, 4096}) {
      DeviceTensor x(type, {3, length}), out(type, {3, length});
      fillFloat(x, -30, 30);
      check("softmax long rows " + std::to_string(length) + suffix,
            KernelKind::Softmax, {{1}, {}}, {&x}, out, Tolerance::Double);
      DeviceTensor logits(type, {2, 3, length}), targets(DType::I32, {2, 3});
      fillFloat(logits, -20, 20);
      fillInt(targets, 0, length - 1);
      std::memcpy(targets.host.data(), "\xff\xff\xff\xff", 4); // ignored
      DeviceTensor loss(DType::F32, {});
      check("cross_entropy long rows " + std::to_string(length) + suffix,
            KernelKind::CrossEntropy, {{0, 1, -1}, {}}, {&logits, &targets},
            loss, Tolerance::Float32);
    }
    for (int64_t reduction : {0, 1, 2}) {
      DeviceTensor logits(type, {4, 6, 30}), targets(DType::I32, {4, 6});
      fillFloat(logits, -5, 5);
      fillInt(targets, 0, 29);
      std::memcpy(targets.host.data(), "\xff\xff\xff\xff", 4); // ignored: -1
      DeviceTensor out(DType::F32, reduction == 2 ? Shape{4, 6} : Shape{});
      check("cross_entropy reduction " + std::to_string(reduction) + suffix,
            KernelKind::CrossEntropy, {{reduction, 1, -1}, {}},
            {&logits, &targets}, out, Tolerance::Float32);
    }
  }
  for (int64_t kind : {0, 1, 2})
    for (float t : {0.0f, 3.0f, 10.0f, 55.0f, 200.0f}) {
      DeviceTensor step(DType::F32, {}), out(DType::F32, {});
      std::memcpy(step.host.data(), &t, 4);
      check("lr_schedule kind " + std::to_string(kind) + " t " +
                std::to_string(static_cast<int>(t)),
            KernelKind::LrSchedule, {{kind, 10, 100}, {6e-4, 6e-5}}, {&step},
            out, Tolerance::Double);
    }
}

// The norms' "rows" entries (norms/NormRows.cuh: the row held in
// registers, 16-byte loads, at most 4 packs per lane): GPT-2's 768 bf16
// (3 packs), the largest row (1024 bf16, 512 f32: 4 packs), rows shorter
// than a warp's packs (64 bf16, 36 f32); the "rows8" entries (5 to 8
// packs): LLaMA-1B's 2048 bf16 and 1024 f32 (8), 1600 bf16 and 800 f32
// (6.25); 2056 bf16 (8.03: the warp kernel); an odd number of rows, every
// (x, gamma) type pair. The formula and the double arithmetic are the warp
// kernel's, only the order of the double additions differs: the Double
// tolerance.
TEST_F(CudaKernelCase, NormRowsInRegisters) {
  for (DType type : {DType::F32, DType::BF16, DType::F16})
    for (DType params : {DType::F32, DType::BF16, DType::F16}) {
      // f16 x takes f32 or f16 gamma, f16 gamma only f16 x (NormsSelect).
      if ((type == DType::F16 && params == DType::BF16) ||
          (params == DType::F16 && type != DType::F16))
        continue;
      // Up to 4 packs of 16 bytes per lane ("rows"), 5 to 8 ("rows8":
      // LLaMA-1B's 2048 bf16), more (2056 bf16: the warp kernel).
      for (int64_t dim : type != DType::F32
                             ? std::vector<int64_t>{768, 1024, 64, 2048, 1600,
                                                    2056}
                             : std::vector<int64_t>{256, 512, 36, 1024, 800}) {
        std::string suffix = std::string(" ") + dtypeName(type) + " x, " +
                             dtypeName(params) + " gamma, dim " +
                             std::to_string(dim);
        DeviceTensor x(type, {37, dim}), gamma(params, {dim}),
            beta(params, {dim}), out(type, {37, dim});
        fillFloat(x, -3, 5);
        fillFloat(gamma);
        fillFloat(beta);
        check("layer_norm rows" + suffix, KernelKind::LayerNorm, {{}, {1e-5}},
              {&x, &gamma, &beta}, out, Tolerance::Double);
        DeviceTensor out2(type, {37, dim});
        check("layer_norm rows no beta" + suffix, KernelKind::LayerNorm,
              {{}, {1e-5}}, {&x, &gamma}, out2, Tolerance::Double);
        DeviceTensor out3(type, {37, dim});
        check("rms_norm rows" + suffix, KernelKind::RmsNorm, {{}, {1e-6}},
              {&x, &gamma}, out3, Tolerance::Double);
      }
    }
}

// The mixed-precision combinations of bf16 training steps (docs/precision.md:
// f32 norm weights under bf16 activations, f32 sums of bf16 values, the
// bf16 table gradient). Tolerances as above: Double (both sides in double,
// one rounding: 2^-22 relative for f32, 2^-8, one bf16 ulp, for bf16) and
// Atomic (f32 atomics, plus one bf16 ulp of the rounding of the f32 sum).
TEST_F(CudaKernelCase, MixedPrecision) {
  // (x, gamma): bf16 with f32, f32 with bf16, and fp16's f16 with f32.
  for (auto [type, params] : {std::pair{DType::BF16, DType::F32},
                              std::pair{DType::F32, DType::BF16},
                              std::pair{DType::F16, DType::F32}}) {
    std::string suffix = std::string(" ") + dtypeName(type) + " x, " +
                         dtypeName(params) + " gamma";
    DeviceTensor x(type, {6, 770}), gamma(params, {770}), beta(params, {770}),
        out(type, {6, 770});
    fillFloat(x, -3, 5);
    fillFloat(gamma);
    fillFloat(beta);
    check("layer_norm" + suffix, KernelKind::LayerNorm, {{}, {1e-5}},
          {&x, &gamma, &beta}, out, Tolerance::Double);
    DeviceTensor out2(type, {6, 770});
    check("layer_norm no beta" + suffix, KernelKind::LayerNorm, {{}, {1e-5}},
          {&x, &gamma}, out2, Tolerance::Double);
    DeviceTensor out3(type, {6, 770});
    check("rms_norm" + suffix, KernelKind::RmsNorm, {{}, {1e-6}},
          {&x, &gamma}, out3, Tolerance::Double);
  }
  {
    // Few outputs, long reductions: the split (two-pass) reduction.
    DeviceTensor in(DType::F32, {3, 700000}), out(DType::F32, {3});
    fillFloat(in);
    check("reduce_sum f32 split dim 1", KernelKind::ReduceSum, {{1}, {}},
          {&in}, out, Tolerance::Double);
    DeviceTensor all(DType::F32, {});
    check("reduce_sum f32 split all", KernelKind::ReduceSum, {{0, 1}, {}},
          {&in}, all, Tolerance::Double);
    DeviceTensor wide(DType::BF16, {2, 300000}), max(DType::BF16, {2}),
        mean(DType::F32, {2});
    fillFloat(wide);
    check("reduce_max bf16 split dim 1", KernelKind::ReduceMax, {{1}, {}},
          {&wide}, max, Tolerance::Double);
    check("reduce_mean bf16->f32 split dim 1", KernelKind::ReduceMean,
          {{1}, {}}, {&wide}, mean, Tolerance::Double);
    // fp16's reductions: f16 -> f32 (the widening the verifier allows) and
    // f16 -> f16 (bias gradients), rows, columns and the split.
    DeviceTensor half(DType::F16, {2, 300000}), halfSum(DType::F16, {2}),
        halfMean(DType::F32, {2});
    fillFloat(half);
    check("reduce_sum f16 split dim 1", KernelKind::ReduceSum, {{1}, {}},
          {&half}, halfSum, Tolerance::Double);
    check("reduce_mean f16->f32 split dim 1", KernelKind::ReduceMean,
          {{1}, {}}, {&half}, halfMean, Tolerance::Double);
    DeviceTensor rows(DType::F16, {64, 96}), rowSums(DType::F32, {64}),
        columnSums(DType::F16, {96});
    fillFloat(rows);
    check("reduce_sum f16->f32 rows", KernelKind::ReduceSum, {{1}, {}},
          {&rows}, rowSums, Tolerance::Double);
    check("reduce_sum f16 columns", KernelKind::ReduceSum, {{0}, {}}, {&rows},
          columnSums, Tolerance::Double);
  }
  for (DType index : {DType::I32, DType::I64})
  for (DType type : {DType::BF16, DType::F16}) {
    // Many bf16 (f16) updates into few rows of a bf16 (f16) table: f32
    // accumulation (atomics), one rounding at the end, as the CPU.
    DeviceTensor dest(type, {10, 8}), ids(index, {200}),
        updates(type, {200, 8}), out(type, {10, 8});
    fillFloat(dest);
    fillInt(ids, -1, 10); // -1 and 10 are out of range: skipped
    fillFloat(updates);
    std::vector<double> scale(80, 0.0);
    for (int64_t e = 0; e < 80; ++e)
      scale[e] = std::fabs(dest.get(e));
    for (int64_t j = 0; j < 200; ++j) {
      int64_t row = index == DType::I32 ? static_cast<int64_t>(ids.get(j)) : 0;
      if (index == DType::I64)
        std::memcpy(&row, ids.host.data() + 8 * j, 8);
      if (row < 0 || row >= 10)
        continue;
      for (int64_t c = 0; c < 8; ++c)
        scale[row * 8 + c] += std::fabs(updates.get(j * 8 + c));
    }
    check(std::string("scatter_add ") + dtypeName(type) + " dim 0 " +
              dtypeName(index),
          KernelKind::ScatterAdd, {{0}, {}}, {&dest, &ids, &updates}, out,
          Tolerance::Atomic, &scale);
  }
}

// Mixture-of-experts routing against the CPU (runtime/cpu/Moe.cpp):
// dispatch and combine share the slot assignment, with capacities that keep
// every pair and that drop some; top-k's indices exactly, its weights in
// double. Written without a GPU at hand (2026-11-29); first run pending.
TEST_F(CudaKernelCase, Moe) {
  for (DType type : {DType::F32, DType::BF16, DType::F16}) {
    std::string suffix = std::string(" ") + dtypeName(type);
    const int64_t tokens = 37, experts = 8, k = 2, dim = 24;
    DeviceTensor indices(DType::I32, {tokens, k});
    fillInt(indices, 0, experts - 1);
    for (int64_t capacity : {int64_t{10}, int64_t{3}}) {
      std::string name = " capacity " + std::to_string(capacity) + suffix;
      DeviceTensor input(type, {tokens, dim}),
          out(type, {experts, capacity, dim});
      fillFloat(input);
      check("moe_dispatch" + name, KernelKind::MoeDispatch, {{}, {}},
            {&input, &indices}, out, Tolerance::Exact);
      DeviceTensor expertOut(type, {experts, capacity, dim}),
          weights(type, {tokens, k}), combined(type, {tokens, dim});
      fillFloat(expertOut);
      fillFloat(weights);
      check("moe_combine" + name, KernelKind::MoeCombine, {{}, {}},
            {&expertOut, &weights, &indices}, combined, Tolerance::Double);
    }
  }
}

} // namespace
} // namespace llmc::rt::cuda
