//===- CudaReduceTest.cpp - GPU reductions against the CPU, and their speed ===//
//
// Part of `cuda-kernel-tests` (needs a GPU; skips without one). Every path
// of planReduceLaunch (ReduceKernels.h) on fresh random data in [-2, 2]
// through CudaKernels::launch, against runCpuKernel on the same input,
// with sizes that are not multiples of a warp or a vector, one row, one
// column, several chunks and one, aligned and unaligned inputs, f32 and
// bf16 in and out, sum, max and mean. Each case also asserts the path it
// is meant to exercise, so a change of the planner cannot silently move a
// case to another kernel.
//
// Tolerance: both sides accumulate in double and round once, in different
// orders (the CPU sequentially, the GPU per lane, warp and chunk), so the
// double sums differ by a few units of 2^-53 of the sum of magnitudes,
// which moves the rounded result only when it lies that close to a
// rounding boundary: 2^-22 relative (2 f32 ulps) for f32 results, 2^-8
// (one bf16 ulp) for bf16, plus 1e-7 absolute for sums that cancel to
// near zero. Max is exact. The printed counts show how many elements are
// not bitwise equal (expected: none or a few).
//
// ReductionTimingGpt2 times the GPT-2 124M shapes (B=16, T=1024) on the
// new paths and on the general kernel they replace (one block per result,
// launched as before), checks both against the CPU, and prints the ms per
// step each shape class saves.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/reduce/ReduceKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

using Path = ReduceLaunch::Path;

const char *pathName(Path path) {
  switch (path) {
  case Path::General:
    return "general";
  case Path::Split:
    return "split";
  case Path::Rows:
    return "rows";
  case Path::Columns:
    return "columns";
  }
  return "?";
}

/// Counts the elements of `got` outside the tolerance against `want` (and
/// those not bitwise equal); reports the first few.
struct Comparison {
  int64_t bad = 0, inexact = 0;
  double worstRelative = 0.0;
};
Comparison compare(const std::string &name, const DeviceTensor &got,
                   const DeviceTensor &want) {
  Comparison result;
  size_t width = dtypeSize(got.dtype);
  for (int64_t i = 0; i < got.count(); ++i) {
    double g = got.get(i), w = want.get(i);
    if (std::memcmp(got.host.data() + i * width, want.host.data() + i * width,
                    width) != 0)
      ++result.inexact;
    double allowed = std::ldexp(std::fabs(w), got.dtype == DType::BF16 ? -8
                                                                       : -22) +
                     1e-7;
    double error = std::fabs(g - w);
    if (!(error <= allowed) && result.bad++ < 5)
      ADD_FAILURE() << name << ": element " << i << ": got " << g << ", want "
                    << w;
    result.worstRelative =
        std::max(result.worstRelative, w != 0.0 ? error / std::fabs(w) : error);
  }
  return result;
}

class CudaReduce : public SharedKernelsTest {
protected:
  CudaReduce() : SharedKernelsTest("the CUDA reduction tests") {}

  struct Case {
    std::string name;
    KernelKind kind;
    DType inType, outType;
    Shape in;
    std::vector<int64_t> dims;
    Shape out;
    Path path;           ///< the path the case is meant to take
    int64_t offset = 0;  ///< input elements past 16-byte alignment
  };

  /// Runs `c` on the GPU (results poisoned first) and the CPU; compares.
  /// `result` receives the GPU's result bytes.
  void run(const Case &c, std::vector<uint8_t> *result = nullptr) {
    SCOPED_TRACE(c.name);
    ReduceLaunch launch = planReduceLaunch(c.in, c.dims, c.inType);
    ASSERT_EQ(pathName(launch.path), std::string(pathName(c.path)));
    DeviceTensor in(c.inType, c.in), got(c.outType, c.out),
        want(c.outType, c.out);
    in.fillUniform(random_, -2.0f, 2.0f);
    KernelAttrs attrs{c.dims, {}};
    ASSERT_OK(runCpuKernel(c.kind, attrs, {in.hostRef()}, {want.hostRef()},
                           pool_));
    ASSERT_OK(in.allocate(c.offset));
    ASSERT_OK(in.upload());
    ASSERT_OK(got.allocate());
    ASSERT_OK(got.poison());
    ASSERT_OK(launchSelected(*kernels_, c.kind, attrs, {in.deviceRef()},
                               {got.deviceRef()}, nullptr));
    ASSERT_OK(got.download());
    Comparison comparison = compare(c.name, got, want);
    std::printf("[reduce] %-44s %-7s chunks %4lld: %8lld results, %lld not "
                "bitwise equal, max relative error %.3g\n",
                c.name.c_str(), pathName(launch.path),
                static_cast<long long>(launch.chunks),
                static_cast<long long>(got.count()),
                static_cast<long long>(comparison.inexact),
                comparison.worstRelative);
    EXPECT_EQ(comparison.bad, 0);
    if (result)
      *result = got.host;
  }

  std::mt19937_64 random_{20261129};
  ThreadPool pool_{1};
};

constexpr KernelKind kSum = KernelKind::ReduceSum;
constexpr KernelKind kMax = KernelKind::ReduceMax;
constexpr KernelKind kMean = KernelKind::ReduceMean;
constexpr DType kF32 = DType::F32;
constexpr DType kBf16 = DType::BF16;

// Rows: the reduced elements of each result contiguous. (f32 -> bf16 is
// not a CPU reduction: the CPU widens to f32 only.)
TEST_F(CudaReduce, Rows) {
  std::vector<Case> cases = {
      {"sum f32 [5, 37] dim 1 (scalar: 37 % 4)", kSum, kF32, kF32, {5, 37},
       {1}, {5}, Path::Rows},
      {"sum f32 [3, 1, 64] dim 2 keep (vector)", kSum, kF32, kF32, {3, 1, 64},
       {2}, {3, 1, 1}, Path::Rows},
      {"sum f32 [1, 768] dim 1 (one row)", kSum, kF32, kF32, {1, 768}, {1},
       {1}, Path::Rows},
      {"sum f32 [768] dim 0 (a bias's square sum)", kSum, kF32, kF32, {768},
       {0}, {}, Path::Rows},
      {"sum f32 [500, 1] dim 0 (one column: a row)", kSum, kF32, kF32,
       {500, 1}, {0}, {1}, Path::Rows},
      {"sum f32 [17000, 36] dim 1 (grid-stride)", kSum, kF32, kF32,
       {17000, 36}, {1}, {17000}, Path::Rows},
      {"sum f32 [4, 3, 33] dims 1,2", kSum, kF32, kF32, {4, 3, 33}, {1, 2},
       {4}, Path::Rows},
      {"sum f32 [3, 64] dim 1 unaligned (scalar)", kSum, kF32, kF32, {3, 64},
       {1}, {3}, Path::Rows, 1},
      {"sum bf16->f32 [7, 104] dim 1 (vector)", kSum, kBf16, kF32, {7, 104},
       {1}, {7}, Path::Rows},
      {"sum bf16 [7, 100] dim 1 (scalar: 100 % 8)", kSum, kBf16, kBf16,
       {7, 100}, {1}, {7}, Path::Rows},
      {"sum bf16 [6, 4000] dim 1 unaligned", kSum, kBf16, kBf16, {6, 4000},
       {1}, {6}, Path::Rows, 3},
      {"max f32 [9, 200] dim 1", kMax, kF32, kF32, {9, 200}, {1}, {9},
       Path::Rows},
      {"max bf16 [9, 200] dim 1", kMax, kBf16, kBf16, {9, 200}, {1}, {9},
       Path::Rows},
      {"mean f32 [33, 129] dim 1", kMean, kF32, kF32, {33, 129}, {1}, {33},
       Path::Rows},
      {"mean bf16->f32 [600, 1000] dim 1", kMean, kBf16, kF32, {600, 1000},
       {1}, {600}, Path::Rows},
      {"mean bf16 [2, 3, 96] dim 2", kMean, kBf16, kBf16, {2, 3, 96}, {2},
       {2, 3}, Path::Rows},
  };
  for (const Case &c : cases)
    run(c);
}

// Columns: [outer, length, inner] over the middle.
TEST_F(CudaReduce, Columns) {
  std::vector<Case> cases = {
      {"sum f32 [1000, 70] dim 0 (scalar, 32 chunks)", kSum, kF32, kF32,
       {1000, 70}, {0}, {70}, Path::Columns},
      {"sum f32 [333, 768] dim 0 (vector, 11 chunks)", kSum, kF32, kF32,
       {333, 768}, {0}, {768}, Path::Columns},
      {"sum f32 [100, 32] dim 0 (one tile)", kSum, kF32, kF32, {100, 32}, {0},
       {32}, Path::Columns},
      {"sum f32 [4, 50000] dim 0 (one chunk)", kSum, kF32, kF32, {4, 50000},
       {0}, {50000}, Path::Columns},
      {"sum f32 [1, 7, 130] dims 0,1 keep", kSum, kF32, kF32, {1, 7, 130},
       {0, 1}, {1, 1, 130}, Path::Columns},
      {"sum f32 [100, 64] dim 0 unaligned (scalar)", kSum, kF32, kF32,
       {100, 64}, {0}, {64}, Path::Columns, 1},
      {"sum bf16 [16, 64, 96] dims 0,1", kSum, kBf16, kBf16, {16, 64, 96},
       {0, 1}, {96}, Path::Columns},
      {"sum bf16->f32 [3, 50, 40] dim 1 (outer 3)", kSum, kBf16, kF32,
       {3, 50, 40}, {1}, {3, 40}, Path::Columns},
      {"sum bf16 [5, 300000] dim 0 (one chunk)", kSum, kBf16, kBf16,
       {5, 300000}, {0}, {300000}, Path::Columns},
      {"sum bf16 [2000, 200] dim 0 unaligned", kSum, kBf16, kBf16, {2000, 200},
       {0}, {200}, Path::Columns, 5},
      {"max f32 [200, 33] dim 0", kMax, kF32, kF32, {200, 33}, {0}, {33},
       Path::Columns},
      {"max bf16 [3, 300, 72] dim 1", kMax, kBf16, kBf16, {3, 300, 72}, {1},
       {3, 72}, Path::Columns},
      {"mean bf16 [2, 3, 100, 64] dims 1,2", kMean, kBf16, kBf16,
       {2, 3, 100, 64}, {1, 2}, {2, 64}, Path::Columns},
      {"mean f32 [5000, 45] dim 0", kMean, kF32, kF32, {5000, 45}, {0}, {45},
       Path::Columns},
      {"mean bf16->f32 [40, 1, 300] dim 0", kMean, kBf16, kF32, {40, 1, 300},
       {0}, {1, 300}, Path::Columns},
  };
  for (const Case &c : cases)
    run(c);
}

// What stays on the general and split kernels.
TEST_F(CudaReduce, GeneralAndSplit) {
  std::vector<Case> cases = {
      {"sum f32 [100, 5] dim 0 (narrow columns)", kSum, kF32, kF32, {100, 5},
       {0}, {5}, Path::General},
      {"sum f32 [1, 100] dim 0 (one row: nothing reduced)", kSum, kF32, kF32,
       {1, 100}, {0}, {100}, Path::General},
      {"sum f32 [8, 3, 9] dims 0,2", kSum, kF32, kF32, {8, 3, 9}, {0, 2}, {3},
       Path::General},
      {"mean bf16 [0, 40] dim 0 (empty: NaN)", kMean, kBf16, kBf16, {0, 40},
       {0}, {40}, Path::General},
      {"sum f32 [0, 40] dim 0 (empty: 0)", kSum, kF32, kF32, {0, 40}, {0},
       {40}, Path::General},
      {"sum f32 [20000, 3] dim 0 (split)", kSum, kF32, kF32, {20000, 3}, {0},
       {3}, Path::Split},
      {"sum f32 [3, 70000] dim 1 (split)", kSum, kF32, kF32, {3, 70000}, {1},
       {3}, Path::Split},
  };
  for (const Case &c : cases) {
    if (c.in[0] == 0) {
      // NaN never compares equal: the empty mean is checked by its bits.
      SCOPED_TRACE(c.name);
      DeviceTensor in(c.inType, c.in), got(c.outType, c.out);
      ASSERT_OK(in.allocate());
      ASSERT_OK(got.allocate());
      ASSERT_OK(launchSelected(*kernels_, c.kind, {c.dims, {}}, {in.deviceRef()},
                                 {got.deviceRef()}, nullptr));
      ASSERT_OK(got.download());
      for (int64_t i = 0; i < got.count(); ++i) {
        if (c.kind == kMean)
          EXPECT_TRUE(std::isnan(got.get(i))) << i;
        else
          EXPECT_EQ(got.get(i), 0.0) << i;
      }
      continue;
    }
    run(c);
  }
}

// The column path sums in an order fixed by the shape: two runs, and the
// aligned (vector) and unaligned (scalar) kernels, give the same bits.
TEST_F(CudaReduce, ColumnsAreDeterministic) {
  Case aligned{"sum bf16 [4000, 200] dim 0", kSum, kBf16, kF32, {4000, 200},
               {0}, {200}, Path::Columns};
  std::vector<uint8_t> first, second, unaligned;
  random_.seed(7);
  run(aligned, &first);
  random_.seed(7);
  run(aligned, &second);
  Case offset = aligned;
  offset.name += " unaligned";
  offset.offset = 1;
  random_.seed(7);
  run(offset, &unaligned);
  EXPECT_TRUE(first == second) << "two runs differ";
  EXPECT_TRUE(first == unaligned) << "the scalar kernel sums differently";
}

// ---- Timing: GPT-2 124M's reductions, new path against the general one ----

// Host mirror of reduce/Reduce.cuh's ReducePlan.
struct GeneralPlan {
  int keptRank;
  long long keptSizes[8];
  long long keptStrides[8];
  int reducedRank;
  long long reducedSizes[8];
  long long reducedStrides[8];
  long long reduceCount;
  long long outputCount;
};

TEST_F(CudaReduce, ReductionTimingGpt2) {
  // The general kernel as it was launched before the row and column paths:
  // one 256-thread block per result, at most 64 blocks per multiprocessor.
  int device = 0, major = 0, minor = 0, multiprocessors = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                   device),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                   device),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&multiprocessors,
                                   cudaDevAttrMultiProcessorCount, device),
            cudaSuccess);
  NvrtcOptions options;
  options.arch = "sm_" + std::to_string(major) + std::to_string(minor);
  CompiledCuda compiled;
  ASSERT_OK(compileCuda(deviceKernelUnit(), "llmc_device_kernels.cu", options,
                        compiled));
  std::unique_ptr<CudaLibrary> library;
  ASSERT_OK(CudaLibrary::load(compiled.cubin, library));

  struct Shape3 {
    const char *name;
    DType type;
    Shape in;
    std::vector<int64_t> dims;
    Shape out;
    int perStep; ///< launches per GPT-2 124M step (LLMC_PROFILE=shapes)
  };
  std::vector<Shape3> shapes = {
      {"rows f32 [16,1024,768] -> [16,1024,1]", kF32, {16, 1024, 768}, {2},
       {16, 1024, 1}, 96},
      {"cols bf16 [16,1024,3072] -> [3072]", kBf16, {16, 1024, 3072}, {0, 1},
       {1, 1, 3072}, 12},
      {"cols bf16 [16,1024,2304] -> [2304]", kBf16, {16, 1024, 2304}, {0, 1},
       {1, 1, 2304}, 12},
      {"cols bf16 [16,1024,768] -> [768]", kBf16, {16, 1024, 768}, {0, 1},
       {1, 1, 768}, 24},
      {"cols f32 [16,1024,768] -> [768]", kF32, {16, 1024, 768}, {0, 1},
       {1, 1, 768}, 48},
      {"wpe bf16 [16,1024,768] -> [1,1024,768]", kBf16, {16, 1024, 768}, {0},
       {1, 1024, 768}, 1},
  };
  // The median of 20 launches after 3 warm-ups.
  auto medianMs = [&](const std::function<Status()> &launch, double &ms) {
    ASSERT_OK(medianLaunchMs(launch, 23, 3, ms));
  };

  double savedTotal = 0.0, beforeTotal = 0.0, afterTotal = 0.0;
  std::printf("reduction shape (GPT-2 124M, B=16, T=1024)   path     general "
              "ms   new ms  GB/s new  x/step  saved ms/step\n");
  for (const Shape3 &s : shapes) {
    SCOPED_TRACE(s.name);
    DeviceTensor in(s.type, s.in), want(s.type, s.out), general(s.type, s.out),
        fast(s.type, s.out);
    in.fillUniform(random_, -2.0f, 2.0f);
    KernelAttrs attrs{s.dims, {}};
    ASSERT_OK(runCpuKernel(kSum, attrs, {in.hostRef()}, {want.hostRef()},
                           pool_));
    ASSERT_OK(in.allocate());
    ASSERT_OK(in.upload());
    ASSERT_OK(general.allocate());
    ASSERT_OK(fast.allocate());

    // The general kernel, launched as reduce/ReduceLaunch.cpp does.
    GeneralPlan plan{};
    plan.reduceCount = 1;
    plan.outputCount = 1;
    std::vector<long long> strides(s.in.size(), 1);
    for (size_t d = s.in.size(); d-- > 1;)
      strides[d - 1] = strides[d] * s.in[d];
    for (size_t d = 0; d < s.in.size(); ++d) {
      bool reduced =
          std::find(s.dims.begin(), s.dims.end(), static_cast<int64_t>(d)) !=
          s.dims.end();
      if (reduced) {
        plan.reducedSizes[plan.reducedRank] = s.in[d];
        plan.reducedStrides[plan.reducedRank++] = strides[d];
        plan.reduceCount *= s.in[d];
      } else {
        plan.keptSizes[plan.keptRank] = s.in[d];
        plan.keptStrides[plan.keptRank++] = strides[d];
        plan.outputCount *= s.in[d];
      }
    }
    cudaKernel_t generalKernel;
    std::string suffix = s.type == kF32 ? "f32_f32" : "bf16_bf16";
    ASSERT_OK(library->kernel("llmc_reduce_" + suffix, generalKernel));
    const void *source = in.device;
    void *result = general.device;
    int kind = 0;
    std::vector<void *> args = {&source, &result, &plan, &kind};
    unsigned blocks = static_cast<unsigned>(std::min<long long>(
        plan.outputCount, static_cast<long long>(multiprocessors) * 64));
    auto runGeneral = [&]() -> Status {
      LLMC_CUDA_CHECK(cudaLaunchKernel(
                          reinterpret_cast<const void *>(generalKernel),
                          dim3(blocks), dim3(256), args.data(), 0, nullptr),
                      "launching the general reduction");
      return Status::ok();
    };
    auto runFast = [&]() -> Status {
      return launchSelected(*kernels_, kSum, attrs, {in.deviceRef()},
                              {fast.deviceRef()}, nullptr);
    };
    double generalMs = 0.0, fastMs = 0.0;
    medianMs(runGeneral, generalMs);
    medianMs(runFast, fastMs);
    ASSERT_OK(general.download());
    ASSERT_OK(fast.download());
    Comparison generalError = compare(std::string(s.name) + " general",
                                      general, want);
    Comparison fastError = compare(std::string(s.name) + " new", fast, want);
    EXPECT_EQ(generalError.bad, 0);
    EXPECT_EQ(fastError.bad, 0);
    double saved = s.perStep * (generalMs - fastMs);
    savedTotal += saved;
    beforeTotal += s.perStep * generalMs;
    afterTotal += s.perStep * fastMs;
    ReduceLaunch launch = planReduceLaunch(s.in, s.dims, s.type);
    std::printf("%-44s %-7s %10.4f %8.4f %9.0f %7d %14.2f   (%lld of %lld "
                "not bitwise equal to the CPU)\n",
                s.name, pathName(launch.path), generalMs, fastMs,
                static_cast<double>(in.host.size()) / (fastMs * 1e6),
                s.perStep, saved, static_cast<long long>(fastError.inexact),
                static_cast<long long>(fast.count()));
  }
  std::printf("these reductions per step: general %.2f ms, new %.2f ms, "
              "saved %.2f ms\n",
              beforeTotal, afterTotal, savedTotal);
}

} // namespace
} // namespace llmc::rt::cuda
