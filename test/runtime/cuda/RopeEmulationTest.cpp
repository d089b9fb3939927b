//===- RopeEmulationTest.cpp - the rope kernels on the CPU ----------------===//
//
// Runs rope's CUDA kernels (rope/Rope.cuh, after the prelude of
// common/Prelude.cuh) on the CPU, without a GPU, on the grids of
// planRopeLaunch (RopeLaunch.h), and compares the results bit for bit with
// the CPU reference (runCpuKernel), so that the packed kernel's indexing
// (positions, packs, runs of heads, the pair loop and its remainder) and
// the plan are checked on every build. The CUDA files are compiled as C++
// (the include path has runtime/cuda/kernels/); the kernels use no barrier, shared memory or
// warp instruction, so the threads of a grid run one after another. The
// device's double operations are the host's here (__dmul_rn is a rounded
// product either way), and so are pow, cos and sin: the emulation is
// bitwise the CPU's, where the GPU may differ in the libm's last bits
// (CudaRope.MatchesTheCpu states what that allows).
// Not checked here: the launch's arguments (family::launchRope, RopeLaunch.cpp), the
// 16-byte loads' alignment on the hardware, timing.
//
//===----------------------------------------------------------------------===//
#include "runtime/DType.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/kernels/rope/RopeLaunch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace llmc::rt::cuda::emulated {
namespace {

// ---- The CUDA built-ins the kernels use ------------------------------------

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};
Dim3 threadIdx, blockIdx, blockDim, gridDim;

#define __device__
#define __global__
#define __forceinline__ inline
#define __align__(n) alignas(n)

#include "EmulatedBitCasts.h"
double __shfl_xor_sync(unsigned, double value, int) { return value; }
double __dmul_rn(double a, double b) { return a * b; }
double __dadd_rn(double a, double b) { return a + b; }
double __dsub_rn(double a, double b) { return a - b; }
struct double2 {
  double x, y;
};
long long min(long long a, long long b) { return a < b ? a : b; }
using std::cos;
using std::fmax;
using std::pow;
using std::sin;

// The kernels' own file (runtime/cuda/kernels/rope/Rope.cuh, with the
// prelude it includes), compiled as C++.
#include "rope/Rope.cuh"

/// Runs `kernel` for every thread of a grid of `blocks` x `runs` blocks of
/// `threads`, one thread after another.
template <typename Kernel>
void runGrid(unsigned blocks, unsigned runs, unsigned threads, Kernel kernel) {
  gridDim = {blocks, runs, 1};
  blockDim = {threads, 1, 1};
  for (unsigned y = 0; y < runs; ++y)
    for (unsigned x = 0; x < blocks; ++x)
      for (unsigned t = 0; t < threads; ++t) {
        blockIdx = {x, y, 0};
        threadIdx = {t, 0, 0};
        kernel();
      }
}

/// The positions a case gives rope.
enum class Positions { None, Random, Negated };
/// Theta's frequencies, or per-pair ones (a scaled rope's).
enum class Frequencies { Theta, PerPair };

/// Rope of a random x of `type` and `shape` through the emulated kernels,
/// on the plan for `multiprocessors` SMs with x and the result `offset`
/// elements past 16-byte aligned storage, against the CPU bit for bit.
/// Returns whether the plan was packed.
bool run(DType type, const Shape &shape, Positions positions,
         unsigned multiprocessors, int64_t offset,
         Frequencies frequencies = Frequencies::Theta) {
  int64_t seq = shape[shape.size() - 2], headDim = shape.back();
  int64_t count = numElements(shape);
  size_t width = dtypeSize(type);
  std::string name = std::string(dtypeName(type)) + " [";
  for (size_t d = 0; d < shape.size(); ++d)
    name += (d ? ", " : "") + std::to_string(shape[d]);
  name += "] on " + std::to_string(multiprocessors) + " SMs, offset " +
          std::to_string(offset);
  SCOPED_TRACE(name);

  // x and the result in 16-byte aligned storage (doubles), `offset`
  // elements in; the result poisoned.
  std::mt19937_64 random(std::random_device{}());
  std::vector<double> xStorage((count + offset) * width / 8 + 2);
  std::vector<double> outStorage(xStorage.size());
  uint8_t *x = reinterpret_cast<uint8_t *>(xStorage.data()) + offset * width;
  uint8_t *out =
      reinterpret_cast<uint8_t *>(outStorage.data()) + offset * width;
  std::memset(outStorage.data(), 0x7f, outStorage.size() * 8);
  std::uniform_real_distribution<float> draw(-2.0f, 2.0f);
  for (int64_t i = 0; i < count; ++i) {
    float value = draw(random);
    if (type == DType::BF16) {
      uint16_t bits = floatToBf16(value);
      std::memcpy(x + 2 * i, &bits, 2);
    } else {
      std::memcpy(x + 4 * i, &value, 4);
    }
  }
  std::vector<int32_t> p(seq);
  std::uniform_int_distribution<int32_t> drawPosition(0, 4095);
  for (int64_t t = 0; t < seq; ++t)
    p[t] = positions == Positions::Negated ? -static_cast<int32_t>(t)
                                           : drawPosition(random);

  std::vector<uint8_t> want(count * width);
  std::vector<TensorRef> in{{x, type, shape}};
  if (positions != Positions::None)
    in.push_back({p.data(), DType::I32, {seq}});
  KernelAttrs attrs{{}, {10000.0}};
  // Per pair: theta's frequency times a factor in [1/8, 2], as LLaMA 3's
  // scaling divides the low frequencies.
  RopeFrequencies perPair{}; // the emulated (CUDA source) struct: count 0
  if (frequencies == Frequencies::PerPair) {
    std::uniform_real_distribution<double> factor(0.125, 2.0);
    perPair.count = headDim / 2;
    for (int64_t i = 0; i < headDim / 2; ++i) {
      perPair.inverse[i] =
          factor(random) / std::pow(10000.0, 2.0 * i / headDim);
      attrs.floats.push_back(perPair.inverse[i]);
    }
  }
  ThreadPool pool;
  Status status = runCpuKernel(KernelKind::Rope, attrs, in,
                               {{want.data(), type, shape}}, pool);
  EXPECT_TRUE(status.isOk()) << status.toString();

  RopeLaunch plan = planRopeLaunch(shape, type, x, out, multiprocessors);
  std::vector<double> table(plan.scratchBytes() / 8);
  double *cosTable = table.data();
  double *sinTable = cosTable + seq * (headDim / 2);
  const int *indices = positions == Positions::None ? nullptr : p.data();
  runGrid(plan.tableBlocks, 1, RopeLaunch::kThreads, [&] {
    llmc_rope_table_i32(indices, cosTable, sinTable, seq, headDim, 10000.0,
                        perPair);
  });
  auto rotate = [&](auto *typed) {
    using T = std::remove_pointer_t<decltype(typed)>;
    const T *source = reinterpret_cast<const T *>(x);
    T *result = reinterpret_cast<T *>(out);
    if (plan.packed)
      runGrid(plan.rotateBlocks, plan.runs, RopeLaunch::kPackedThreads, [&] {
        ropeRotatePacks(source, cosTable, sinTable, result, plan.heads, seq,
                        headDim, plan.headsPerThread);
      });
    else
      runGrid(plan.rotateBlocks, 1, RopeLaunch::kThreads, [&] {
        ropeRotate(source, cosTable, sinTable, result, plan.rows, seq, headDim);
      });
  };
  if (type == DType::BF16)
    rotate(static_cast<Bf16 *>(nullptr));
  else
    rotate(static_cast<float *>(nullptr));

  int64_t differ = 0;
  for (int64_t i = 0; i < count; ++i)
    if (std::memcmp(out + i * width, want.data() + i * width, width) != 0 &&
        ++differ <= 5)
      ADD_FAILURE() << "element " << i << " differs from the CPU's";
  EXPECT_EQ(differ, 0);
  return plan.packed;
}

TEST(RopeEmulation, MatchesTheCpuBitForBit) {
  const Shape llama = {2, 4, 64, 128};
  // 132 SMs: a run of one head per thread here; 2 SMs: runs of 3 heads
  // (the pair loop and its remainder).
  for (unsigned sms : {132u, 2u})
    for (Positions positions :
         {Positions::None, Positions::Random, Positions::Negated}) {
      EXPECT_TRUE(run(DType::BF16, llama, positions, sms, 0));
      EXPECT_TRUE(run(DType::F32, llama, positions, sms, 0));
      EXPECT_FALSE(run(DType::BF16, llama, positions, sms, 1));
      EXPECT_FALSE(run(DType::F32, llama, positions, sms, 1));
      EXPECT_FALSE(run(DType::BF16, {2, 3, 40, 20}, positions, sms, 0));
      EXPECT_FALSE(run(DType::F32, {2, 3, 40, 6}, positions, sms, 0));
      EXPECT_TRUE(run(DType::F32, {2, 3, 40, 8}, positions, sms, 0));
      EXPECT_TRUE(run(DType::BF16, {100, 64}, positions, sms, 0));
      EXPECT_TRUE(run(DType::BF16, {3, 5, 33, 128}, positions, sms, 0));
      EXPECT_TRUE(run(DType::F32, llama, positions, sms, 0,
                      Frequencies::PerPair));
      EXPECT_FALSE(run(DType::BF16, {2, 3, 40, 20}, positions, sms, 0,
                       Frequencies::PerPair));
    }
}

/// The plan of LLaMA-1B's queries and keys on an H200 (132 SMs): at most
/// 6 blocks per SM, every head covered once.
TEST(RopeEmulation, PlanForLlama) {
  for (int64_t heads : {8 * 16, 8 * 8}) {
    RopeLaunch plan = planRopeLaunch({8, heads / 8, 1024, 128}, DType::BF16,
                                     reinterpret_cast<void *>(256),
                                     reinterpret_cast<void *>(512), 132);
    ASSERT_TRUE(plan.packed);
    EXPECT_EQ(plan.rotateBlocks, 1024u * 8 / 128);
    EXPECT_LE(static_cast<int64_t>(plan.rotateBlocks) * plan.runs, 132 * 6);
    EXPECT_GE(plan.runs * plan.headsPerThread, heads);
    EXPECT_LT((plan.runs - 1) * plan.headsPerThread, heads);
    EXPECT_EQ(plan.scratchBytes(), 1024u * 128 * 8);
    std::printf("heads %lld: %u x %u blocks of %u, %lld heads per thread\n",
                static_cast<long long>(heads), plan.rotateBlocks, plan.runs,
                RopeLaunch::kPackedThreads,
                static_cast<long long>(plan.headsPerThread));
  }
}

} // namespace
} // namespace llmc::rt::cuda::emulated

namespace llmc::rt::cuda::emulated {
namespace {

// The prelude's f16 conversions (common/Prelude.cuh: F16's loadValue and
// storeFloat, which every hand-written f16 kernel uses) against the host's
// f16ToFloat and floatToF16 (runtime/DType.cpp), bit for bit: every f16
// pattern widened, and narrowing on every 4096th f32 pattern (both signs,
// NaNs, infinities, subnormals, the overflow boundary 65520) plus each
// f16 value and the midpoints between neighbours (the ties to even).
TEST(PreludeF16, ConversionsMatchTheHostBitForBit) {
  int64_t mismatches = 0;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float device = f16BitsToFloat(static_cast<unsigned short>(bits));
    float host = f16ToFloat(static_cast<uint16_t>(bits));
    if (std::memcmp(&device, &host, 4) != 0 && mismatches++ < 5)
      ADD_FAILURE() << "widening 0x" << std::hex << bits;
  }
  auto narrow = [&](float value) {
    unsigned short device = floatToF16Bits(value);
    uint16_t host = floatToF16(value);
    if (device != host && mismatches++ < 5)
      ADD_FAILURE() << "narrowing " << value << ": device 0x" << std::hex
                    << device << ", host 0x" << host;
  };
  for (uint64_t word = 0; word <= 0xffffffffull; word += 4096) {
    uint32_t w = static_cast<uint32_t>(word);
    float value;
    std::memcpy(&value, &w, 4);
    narrow(value);
  }
  for (uint32_t bits = 0; bits < 0x7c00; ++bits) {
    float here = f16ToFloat(static_cast<uint16_t>(bits));
    float next = f16ToFloat(static_cast<uint16_t>(bits + 1));
    for (float value : {here, 0.5f * (here + next), -0.5f * (here + next)})
      narrow(value);
  }
  narrow(65519.0f);
  narrow(65520.0f);
  EXPECT_EQ(mismatches, 0);
}

} // namespace
} // namespace llmc::rt::cuda::emulated
