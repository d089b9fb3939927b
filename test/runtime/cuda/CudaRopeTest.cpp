//===- CudaRopeTest.cpp - GPU rope against the CPU, and its time ----------===//
//
// Part of `cuda-kernel-tests` (needs a GPU; skips without one).
// llmc.rope (rope/Rope.cuh, RopeLaunch.cpp) through
// CudaKernels::launch on fresh random data, against runCpuKernel on the
// same inputs: LLaMA-like bf16 [2, 4, 64, 128] without positions, with
// random i32 and i64 positions and with the backward's negated positions
// (rope's VJP is rope of -positions, ir/VjpComposites.cpp); f32 of that
// shape (packs of 4); head dimensions whose half is no whole pack (bf16
// D = 20, f32 D = 6: the general kernel); a rank-2 x (one head); 15 heads
// (runs of heads of unequal length). Every case runs twice: x and the
// result 16-byte aligned (the packed kernel where D/2 allows), and both one
// element off (the general kernel). Results are poisoned before each
// launch.
//
// Tolerance: the two kernels read the same table and round the same
// operations, so the two runs must agree bit for bit. Against the CPU:
// bf16 bit for bit; f32 within the Double tolerance of CudaSessionTest
// (2^-22 relative plus 1e-7 absolute). The table is the CPU's formula in
// double, but the device's pow, cos and sin may differ from glibc's in
// the last bit of a double (CUDA documents 2 ulps for pow, 1-2 for sin and
// cos), which moves a rotated value by about |x| * p * 2^-52 (2^-40 at
// the positions here, up to 4095): after the rounding to bf16 (half an ulp
// 2^-9 relative) that flips a result with probability about 2^-31 per
// element (about one run of these cases in 3000), after f32 (2^-24) about
// 2^-16, so an f32 case of 65536 elements may see one. The printed counts
// show it.
//
// TimingLlama prints the time of LLaMA-1B's ropes (bf16 [8, 16, 1024, 128]
// queries and [8, 8, 1024, 128] keys, forward and backward) per launch
// (table and rotation; msPerLaunch), and checks that two runs give the same
// bits.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
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

/// The positions a case gives rope.
enum class Positions { None, Random, Negated };

class CudaRope : public GpuTest {
protected:
  CudaRope() : GpuTest("the CUDA rope tests") {}
  void SetUp() override {
    GpuTest::SetUp();
    if (stopped())
      return;
    ASSERT_OK(createHandWrittenKernels(kernels));
  }

  /// Rope of a random x of `type` and `shape` (theta `theta`) on the GPU,
  /// aligned and one element off, against the CPU (see the file comment).
  void run(DType type, Shape shape, Positions positions,
           DType index = DType::I32, double theta = 10000.0) {
    int64_t seq = shape[shape.size() - 2];
    std::string name = std::string("rope ") + dtypeName(type) + " [";
    for (size_t d = 0; d < shape.size(); ++d)
      name += (d ? ", " : "") + std::to_string(shape[d]);
    name += "]";
    if (positions != Positions::None)
      name +=
          std::string(positions == Positions::Negated ? " -t " : " random ") +
          dtypeName(index) + " positions";
    SCOPED_TRACE(name);
    std::mt19937_64 random(std::random_device{}());
    DeviceTensor x(type, shape), p(index, {seq});
    x.fillUniform(random, -2.0f, 2.0f);
    std::uniform_int_distribution<int64_t> draw(0, 4095);
    for (int64_t t = 0; t < seq; ++t)
      p.set(t, positions == Positions::Negated
                   ? -static_cast<double>(t)
                   : static_cast<double>(draw(random)));
    KernelAttrs attrs{{}, {theta}};
    std::vector<TensorRef> cpuIn{x.hostRef()};
    if (positions != Positions::None)
      cpuIn.push_back(p.hostRef());
    DeviceTensor want(type, shape);
    ThreadPool pool;
    ASSERT_OK(
        runCpuKernel(KernelKind::Rope, attrs, cpuIn, {want.hostRef()}, pool));

    // offset 0: 16-byte aligned (cudaMalloc's 256); 1: one element off.
    std::vector<uint8_t> aligned;
    for (int64_t offset : {0, 1}) {
      DeviceTensor got(type, shape);
      ASSERT_OK(x.allocate(offset));
      ASSERT_OK(x.upload());
      ASSERT_OK(p.upload());
      ASSERT_OK(got.allocate(offset));
      ASSERT_OK(got.poison());
      std::vector<TensorRef> in{x.deviceRef()};
      if (positions != Positions::None)
        in.push_back(p.deviceRef());
      ASSERT_OK(launchSelected(*kernels, KernelKind::Rope, attrs, in, {got.deviceRef()},
                                nullptr));
      ASSERT_OK(got.download());
      std::string what = name + (offset ? " unaligned" : " aligned");
      if (offset == 0)
        aligned = got.host;
      else
        EXPECT_TRUE(got.host == aligned)
            << what << ": the general kernel's bits differ from the packed's";
      compareToCpu(what, got, want);
    }
  }

  /// Counts the elements not bitwise equal to the CPU's; bf16 must have
  /// none, f32 stay within 2^-22 relative plus 1e-7.
  static void compareToCpu(const std::string &name, const DeviceTensor &got,
                           const DeviceTensor &want) {
    size_t width = dtypeSize(got.dtype);
    int64_t inexact = 0, beyond = 0;
    for (int64_t i = 0; i < got.count(); ++i) {
      if (std::memcmp(got.host.data() + i * width, want.host.data() + i * width,
                      width) == 0)
        continue;
      ++inexact;
      double error = std::fabs(got.get(i) - want.get(i));
      double bound = std::ldexp(std::fabs(want.get(i)), -22) + 1e-7;
      if ((got.dtype == DType::BF16 || !(error <= bound)) && ++beyond <= 5)
        ADD_FAILURE() << name << " element " << i << ": gpu " << got.get(i)
                      << ", cpu " << want.get(i);
    }
    std::printf("  %-58s %lld of %lld not bitwise equal to the CPU\n",
                name.c_str(), static_cast<long long>(inexact),
                static_cast<long long>(got.count()));
    EXPECT_EQ(beyond, 0) << name;
  }

  std::unique_ptr<CudaKernels> kernels;
};

TEST_F(CudaRope, MatchesTheCpu) {
  const Shape llama = {2, 4, 64, 128};
  run(DType::BF16, llama, Positions::None);
  run(DType::BF16, llama, Positions::Random);
  run(DType::BF16, llama, Positions::Random, DType::I64, 500000.0);
  run(DType::BF16, llama, Positions::Negated); // the backward
  run(DType::F32, llama, Positions::None);
  run(DType::F32, llama, Positions::Negated);
  run(DType::BF16, {2, 3, 40, 20}, Positions::Random); // D/2 = 10
  run(DType::F32, {2, 3, 40, 6}, Positions::Random);   // D/2 = 3
  run(DType::BF16, {100, 64}, Positions::None);        // one head
  run(DType::BF16, {3, 5, 33, 128}, Positions::Random, DType::I64);
}

TEST_F(CudaRope, TimingLlama) {
  struct Case {
    const char *name;
    Shape shape;
    bool positions;
  };
  const Case cases[] = {
      {"queries, forward", {8, 16, 1024, 128}, false},
      {"queries, backward (-t)", {8, 16, 1024, 128}, true},
      {"keys, forward", {8, 8, 1024, 128}, false},
      {"keys, backward (-t)", {8, 8, 1024, 128}, true},
  };
  std::mt19937_64 random(42);
  for (const Case &c : cases) {
    DeviceTensor x(DType::BF16, c.shape), out(DType::BF16, c.shape),
        p(DType::I32, {1024});
    x.fillUniform(random, -2.0f, 2.0f);
    for (int64_t t = 0; t < 1024; ++t)
      p.set(t, -static_cast<double>(t));
    for (DeviceTensor *t : {&x, &out, &p})
      ASSERT_OK(t->upload());
    KernelAttrs attrs{{}, {500000.0}};
    std::vector<TensorRef> in{x.deviceRef()};
    if (c.positions)
      in.push_back(p.deviceRef());
    std::vector<TensorRef> result{out.deviceRef()};
    double ms = 0.0;
    msPerLaunch(*kernels, KernelKind::Rope, attrs, in, result, ms);
    if (HasFatalFailure())
      return;
    // Determinism: the last timed run's bits, then one more run's.
    ASSERT_OK(out.download());
    std::vector<uint8_t> first = out.host;
    ASSERT_OK(out.poison());
    ASSERT_OK(launchSelected(*kernels, KernelKind::Rope, attrs, in, result, nullptr));
    ASSERT_OK(out.download());
    EXPECT_TRUE(out.host == first) << c.name << ": two runs differ";
    // Bytes the op must move: x read and the result written.
    double bytes = 2.0 * static_cast<double>(x.bytes());
    std::printf("rope bf16 [%lld, %lld, 1024, 128] %-24s %.4f ms (%.0f GB/s "
                "of the 2 x %.1f MB it must move)\n",
                static_cast<long long>(c.shape[0]),
                static_cast<long long>(c.shape[1]), c.name, ms,
                bytes / ms * 1e-6, x.bytes() * 1e-6);
  }
}

} // namespace
} // namespace llmc::rt::cuda
