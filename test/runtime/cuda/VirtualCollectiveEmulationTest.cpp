//===- VirtualCollectiveEmulationTest.cpp - virtual ranks' collectives, CPU ===//
//
// The collectives of virtual ranks on one GPU without a GPU: the plan of
// each collective (collective/VirtualCollectivePlan.h, the steps the
// session's backend enqueues) run on host memory, its copies as memcpy and
// its reductions through the CUDA kernels themselves
// (collective/VirtualCollectives.cuh, after the prelude, compiled as C++ and
// run one thread after another on a grid of several blocks), against the
// CPU collectives (runtime/cpu/Collectives.h) on the same inputs: bit for
// bit, for every kind, reduce op, dtype, 2 to 4 members, buffers apart, in
// place as NCCL allows it, and overlapping otherwise (staged). The kernels
// add in the CPU's order and round as it does, so any difference is a bug.
// Not checked here: the CUDA calls (cudaMemcpyAsync, the launch, events),
// which VirtualRankTest checks on a GPU.
//
//===----------------------------------------------------------------------===//
#include "runtime/DType.h"
#include "runtime/cpu/Collectives.h"
#include "runtime/cuda/kernels/collective/VirtualCollectivePlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
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
using std::fmax;

#include "collective/VirtualCollectives.cuh"

static_assert(sizeof(::llmc::rt::cuda::emulated::VirtualReduceArgs) ==
                  sizeof(::llmc::rt::cuda::VirtualReduceArgs),
              "the kernel's parameter and the plan's differ");

using Kernel = void (*)(VirtualReduceArgs);
const std::map<std::string, Kernel> &kernels() {
  static const std::map<std::string, Kernel> table = {
#define ENTRY(name) {"llmc_virtual_reduce_" #name, llmc_virtual_reduce_##name}
      ENTRY(sum_f32), ENTRY(max_f32),   ENTRY(sum_f64), ENTRY(max_f64),
      ENTRY(sum_bf16), ENTRY(max_bf16), ENTRY(sum_f16), ENTRY(max_f16),
      ENTRY(sum_i32), ENTRY(max_i32),   ENTRY(sum_i64), ENTRY(max_i64),
#undef ENTRY
  };
  return table;
}

/// Runs `plan` on host memory: copies as memcpy (never overlapping: the plan
/// staged what would), reductions on a grid of 3 blocks of 4 threads.
void execute(const ::llmc::rt::cuda::VirtualPlan &plan) {
  for (const ::llmc::rt::cuda::VirtualStep &step : plan.steps) {
    if (step.kind == ::llmc::rt::cuda::VirtualStep::Kind::Copy) {
      ASSERT_FALSE(step.dst < step.src + step.bytes &&
                   step.src < step.dst + step.bytes)
          << "a copy onto an overlapping range";
      std::memcpy(step.dst, step.src, step.bytes);
      continue;
    }
    auto kernel = kernels().find(plan.entry);
    ASSERT_NE(kernel, kernels().end()) << plan.entry;
    VirtualReduceArgs args;
    std::memcpy(&args, &step.reduce, sizeof(args));
    gridDim = {3, 1, 1};
    blockDim = {4, 1, 1};
    for (unsigned b = 0; b < 3; ++b)
      for (unsigned t = 0; t < 4; ++t) {
        blockIdx = {b, 0, 0};
        threadIdx = {t, 0, 0};
        kernel->second(args);
      }
  }
}

/// Where a member's output lies against its input, in its own arena.
enum class Layout { Apart, InPlace, Overlapping };

/// Random elements of `dtype`; some NaN (floats) for max.
std::vector<uint8_t> randomElements(DType dtype, int64_t count, bool nans,
                                    std::mt19937 &rng) {
  std::vector<uint8_t> bytes(count * dtypeSize(dtype));
  std::uniform_real_distribution<double> real(-4.0, 4.0);
  std::uniform_int_distribution<int64_t> wide(
      std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  for (int64_t i = 0; i < count; ++i) {
    double v = nans && i % 7 == 3 ? std::nan("") : real(rng);
    uint8_t *at = bytes.data() + i * dtypeSize(dtype);
    switch (dtype) {
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
      break;
    }
    case DType::F64:
      std::memcpy(at, &v, 8);
      break;
    case DType::BF16: {
      uint16_t h = floatToBf16(static_cast<float>(v));
      std::memcpy(at, &h, 2);
      break;
    }
    case DType::F16: {
      uint16_t h = floatToF16(static_cast<float>(v));
      std::memcpy(at, &h, 2);
      break;
    }
    case DType::I32: { // the full range: sums wrap
      int32_t x = static_cast<int32_t>(wide(rng));
      std::memcpy(at, &x, 4);
      break;
    }
    default: {
      int64_t x = wide(rng);
      std::memcpy(at, &x, 8);
    }
    }
  }
  return bytes;
}

/// One collective of `n` members on `count` input elements each through the
/// plan and the emulated kernels, against CpuWorld: equal bytes.
void check(CollectiveKind kind, ReduceOp op, DType dtype, int n,
           Layout layout, uint32_t seed) {
  SCOPED_TRACE(std::string(collectiveKindName(kind)) + " " +
               reduceOpName(op) + " " + dtypeName(dtype) + " n=" +
               std::to_string(n) + " layout=" +
               std::to_string(static_cast<int>(layout)));
  std::mt19937 rng(seed);
  const int64_t count = 5 * n; // divisible by n
  const int64_t outCount = kind == CollectiveKind::AllGather ? count * n
                           : kind == CollectiveKind::ReduceScatter
                               ? count / n
                               : count;
  const size_t width = dtypeSize(dtype);
  const uint64_t inBytes = count * width, outBytes = outCount * width;
  std::vector<std::vector<uint8_t>> inputs(n);
  for (auto &in : inputs)
    in = randomElements(dtype, count, op == ReduceOp::Max, rng);

  // The reference: CpuWorld on separate buffers.
  std::vector<std::vector<uint8_t>> expected(n, std::vector<uint8_t>(outBytes));
  CpuWorld world(n);
  std::vector<int> ranks(n);
  for (int r = 0; r < n; ++r)
    ranks[r] = r;
  DeviceGroup group;
  ASSERT_TRUE(DeviceGroup::create(ranks, group).isOk());
  Status reference = runOnDevices(n, [&](int r) -> Status {
    TensorRef in{inputs[r].data(), dtype, {count}};
    TensorRef out{expected[r].data(), dtype, {outCount}};
    switch (kind) {
    case CollectiveKind::AllReduce:
      return world.allReduce(r, group, op, in, out);
    case CollectiveKind::ReduceScatter:
      return world.reduceScatter(r, group, op, in, out);
    case CollectiveKind::AllGather:
      return world.allGather(r, group, in, out);
    default:
      return world.allToAll(r, group, in, out);
    }
  });
  ASSERT_TRUE(reference.isOk()) << reference.toString();

  // Each member's arena: input and output placed by `layout`.
  std::vector<std::vector<uint8_t>> arenas(n);
  std::vector<::llmc::rt::cuda::VirtualMember> members(n);
  for (int r = 0; r < n; ++r) {
    std::vector<uint8_t> &arena = arenas[r];
    arena.assign(inBytes + outBytes + 64, 0xcd);
    uint64_t in = 0, out = inBytes + 16; // apart
    if (layout == Layout::InPlace) {
      // NCCL's in-place forms.
      if (kind == CollectiveKind::AllGather)
        in = r * inBytes, out = 0;
      else if (kind == CollectiveKind::ReduceScatter)
        out = r * outBytes;
      else
        out = 0;
    } else if (layout == Layout::Overlapping) {
      out = width; // overlapping, one element off: never allowed in place
      if (kind == CollectiveKind::AllGather)
        in = r * inBytes + width, out = 0;
    }
    std::memcpy(arena.data() + in, inputs[r].data(), inBytes);
    members[r].input = arena.data() + in;
    members[r].inputBytes = inBytes;
    members[r].output = arena.data() + out;
    members[r].outputBytes = outBytes;
  }
  uint64_t scratchBytes = ::llmc::rt::cuda::virtualScratchBytes(kind, members);
  if (layout == Layout::Overlapping) {
    EXPECT_GT(scratchBytes, 0u);
  } else if (layout == Layout::InPlace && kind != CollectiveKind::AllToAll) {
    EXPECT_EQ(scratchBytes, 0u);
  }
  std::vector<uint8_t> scratch(scratchBytes);
  ::llmc::rt::cuda::VirtualPlan plan;
  Status planned = ::llmc::rt::cuda::planVirtualCollective(
      kind, op, dtype, members, scratch.data(), scratch.size(), plan);
  ASSERT_TRUE(planned.isOk()) << planned.toString();
  execute(plan);
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(std::memcmp(members[r].output, expected[r].data(), outBytes), 0)
        << "member " << r;
}

TEST(VirtualCollectiveEmulation, MatchesTheCpuCollectivesBitForBit) {
  uint32_t seed = 1;
  for (int n : {2, 3, 4})
    for (Layout layout : {Layout::Apart, Layout::InPlace, Layout::Overlapping})
      for (DType dtype : {DType::F32, DType::BF16, DType::F16, DType::F64,
                          DType::I32, DType::I64}) {
        for (CollectiveKind kind :
             {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter})
          for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max})
            check(kind, op, dtype, n, layout, seed++);
        for (CollectiveKind kind :
             {CollectiveKind::AllGather, CollectiveKind::AllToAll})
          check(kind, ReduceOp::Sum, dtype, n, layout, seed++);
      }
}

TEST(VirtualCollectiveEmulation, SendIsOneCopy) {
  std::vector<float> from = {1, 2, 3}, to(3, 0);
  std::vector<::llmc::rt::cuda::VirtualMember> pair(2);
  pair[0].input = reinterpret_cast<const uint8_t *>(from.data());
  pair[0].inputBytes = 12;
  pair[1].output = reinterpret_cast<uint8_t *>(to.data());
  pair[1].outputBytes = 12;
  ::llmc::rt::cuda::VirtualPlan plan;
  ASSERT_TRUE(::llmc::rt::cuda::planVirtualCollective(
                  CollectiveKind::Send, ReduceOp::Sum, DType::F32, pair,
                  nullptr, 0, plan)
                  .isOk());
  ASSERT_EQ(plan.steps.size(), 1u);
  execute(plan);
  EXPECT_EQ(to, from);
}

TEST(VirtualCollectiveEmulation, RefusalsNameTheProblem) {
  ::llmc::rt::cuda::VirtualPlan plan;
  std::vector<::llmc::rt::cuda::VirtualMember> many(65);
  EXPECT_EQ(::llmc::rt::cuda::planVirtualCollective(
                CollectiveKind::AllReduce, ReduceOp::Sum, DType::F32, many,
                nullptr, 0, plan)
                .message(),
            "virtual all_reduce: has 65 members; virtual ranks run 1 to 64 per "
            "collective");
  uint8_t bytes[8] = {};
  std::vector<::llmc::rt::cuda::VirtualMember> two(2);
  for (auto &m : two)
    m = {bytes, 4, bytes + 4, 4};
  EXPECT_EQ(::llmc::rt::cuda::planVirtualCollective(
                CollectiveKind::AllReduce, ReduceOp::Sum, DType::I1, two,
                nullptr, 0, plan)
                .message(),
            "virtual all_reduce: cannot reduce i1");
  // Staging needs scratch: without it, a clear refusal.
  for (auto &m : two)
    m = {bytes, 4, bytes + 2, 4};
  EXPECT_EQ(::llmc::rt::cuda::planVirtualCollective(
                CollectiveKind::AllReduce, ReduceOp::Sum, DType::F32, two,
                nullptr, 0, plan)
                .message(),
            "virtual all_reduce: needs 512 bytes of scratch to stage, got 0");
}

} // namespace
} // namespace llmc::rt::cuda::emulated
