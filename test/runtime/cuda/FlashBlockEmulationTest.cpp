//===- FlashBlockEmulationTest.cpp - ring attention's blocks on the CPU ---===//
//
// Runs the position-masked flash kernels of AttentionBlock and
// AttentionBlockGrad (attention/FlashBlock.cuh on the scalar templates of
// attention/Flash.cuh) on the CPU, without a GPU, on the grids and
// operands the launch gives them (flashBlockLaunch, FlashLaunch.h), and
// compares them with the CPU kernels (runCpuKernel): their masking by
// positions, the skipping of whole tiles, the given log-sum-exp of the
// backward and the rows that see no key are checked on every build.
//
// As FlashTensorCoreEmulationTest.cpp: the kernel files are compiled as
// C++, each CUDA thread of a block is a fiber (ucontext) of one OS thread,
// switched at every barrier; __shared__ arrays are function statics (one
// block runs at a time); __shfl_xor_sync is emulated. What it cannot check:
// timing, races between a write and another warp's read without a barrier
// (a thread runs alone from one barrier to the next), the launch itself.
// The same templates without positions are checked against Attention and
// AttentionGrad (the flash unit's scalar kernels are made of them).
// Tolerance: f32 sums on the emulated side against the CPU's f64, as the
// GPU tests: 1e-4 of the largest magnitude (f32 storage), lse 1e-5
// relative and -inf exactly.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuKernels.h"
#include "ZigzagPositions.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/kernels/attention/FlashLaunch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <ucontext.h>

namespace llmc::rt::cuda::emulated {
namespace {

// ---- The CUDA environment of one block ------------------------------------

#include "EmulatedBlock.h"
#define __shared__ static

float laneValues[kThreads / 32][32];

#include "EmulatedBitCasts.h"
long long min(long long a, long long b) { return a < b ? a : b; }
int min(int a, int b) { return a < b ? a : b; }
int max(int a, int b) { return a > b ? a : b; }

float __shfl_xor_sync(unsigned, float value, int mask) {
  laneValues[warpId()][laneId()] = value;
  warpSync();
  float result = laneValues[warpId()][laneId() ^ mask];
  warpSync();
  return result;
}

// The kernels' own files, as units/FlashBlock.cu has them: the templates
// of Flash.cuh without the flash unit's entries, and the block entries.
#include "common/Prelude.cuh"
#define LLMC_FLASH_TEMPLATES_ONLY
#include "attention/FlashBlock.cuh"

/// Runs `kernel` for every block of a grid, one block after the other.
void runGrid(unsigned blocks, const std::function<void()> &kernel) {
  runBlocks(blocks, kernel, 128 * 1024);
}

// ---- The comparison -------------------------------------------------------

using llmc::rt::cuda::testing::zigzag; // ZigzagPositions.h

void compare(const std::string &name, const std::vector<float> &got,
             const std::vector<float> &want) {
  double largest = 0.0, worst = 0.0;
  for (float value : want)
    largest = std::max(largest, std::fabs(double(value)));
  int failures = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double error = std::fabs(double(got[i]) - want[i]);
    worst = std::max(worst, error / std::max(largest, 1e-30));
    if (!(error <= 1e-4 * largest) && ++failures <= 5)
      ADD_FAILURE() << name << " element " << i << ": emulated " << got[i]
                    << ", cpu " << want[i];
  }
  EXPECT_EQ(failures, 0) << name;
  std::printf("  %-56s max error %.2e of %.3g\n", name.c_str(), worst, largest);
}

void compareLse(const std::string &name, const std::vector<float> &got,
                const std::vector<float> &want) {
  int failures = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    bool ok = std::isinf(want[i])
                  ? got[i] == want[i]
                  : std::fabs(got[i] - want[i]) <=
                        1e-5 * std::max(1.0f, std::fabs(want[i]));
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << name << " row " << i << ": emulated " << got[i]
                    << ", cpu " << want[i];
  }
  EXPECT_EQ(failures, 0) << name;
}

struct BlockCase {
  int64_t batch, heads, kvHeads, seq, kvSeq, headDim;
  std::vector<int32_t> queryPositions, keyPositions;
  std::string what;
};

void runCase(const BlockCase &c, std::mt19937 &rng, ThreadPool &pool) {
  SCOPED_TRACE(c.what);
  Shape qShape = {c.batch, c.heads, c.seq, c.headDim};
  Shape kvShape = {c.batch, c.kvHeads, c.kvSeq, c.headDim};
  Shape rows = {c.batch, c.heads, c.seq};
  std::uniform_real_distribution<float> draw(-2.0f, 2.0f);
  auto fresh = [&](const Shape &shape) {
    std::vector<float> values(numElements(shape));
    for (float &value : values)
      value = draw(rng);
    return values;
  };
  std::vector<float> q = fresh(qShape), k = fresh(kvShape), v = fresh(kvShape),
                     dout = fresh(qShape);
  std::vector<int32_t> qpos = c.queryPositions, kpos = c.keyPositions;
  auto f32 = [](std::vector<float> &data, const Shape &shape) {
    return TensorRef{data.data(), DType::F32, shape};
  };
  TensorRef qposRef{qpos.data(), DType::I32, {c.seq}};
  TensorRef kposRef{kpos.data(), DType::I32, {c.kvSeq}};
  KernelAttrs attrs{{}, {1.0 / std::sqrt(static_cast<double>(c.headDim))}};

  // 1. The CPU: out and lse; the backward with a global lse that is finite
  //    in the rows this block leaves empty.
  std::vector<float> out(q.size()), lse(numElements(rows)),
      globalLse(lse.size()), dq(q.size()), dk(k.size()), dv(v.size());
  std::vector<TensorRef> forwardIn = {f32(q, qShape), f32(k, kvShape),
                                      f32(v, kvShape), qposRef, kposRef};
  std::vector<TensorRef> forwardOut = {f32(out, qShape), f32(lse, rows)};
  ASSERT_TRUE(runCpuKernel(KernelKind::AttentionBlock, attrs, forwardIn,
                           forwardOut, pool)
                  .isOk());
  for (size_t i = 0; i < lse.size(); ++i)
    globalLse[i] = std::isinf(lse[i]) ? 0.75f : lse[i];
  std::vector<TensorRef> gradIn = {f32(q, qShape),    f32(k, kvShape),
                                   f32(v, kvShape),   f32(out, qShape),
                                   f32(dout, qShape), f32(globalLse, rows),
                                   qposRef,           kposRef};
  std::vector<TensorRef> gradOut = {f32(dq, qShape), f32(dk, kvShape),
                                    f32(dv, kvShape)};
  ASSERT_TRUE(
      runCpuKernel(KernelKind::AttentionBlockGrad, attrs, gradIn, gradOut, pool)
          .isOk());

  // 2. The emulated kernels on the launch's grids, outputs poisoned.
  FlashLaunch forward, backward;
  ASSERT_EQ(flashBlockLaunch(KernelKind::AttentionBlock, forwardIn, forwardOut,
                             attrs, forward),
            "");
  ASSERT_EQ(flashBlockLaunch(KernelKind::AttentionBlockGrad, gradIn, gradOut,
                             attrs, backward),
            "");
  const float poison = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> eOut(out.size(), poison), eLse(lse.size(), poison),
      eDq(dq.size(), poison), eDk(dk.size(), poison), eDv(dv.size(), poison),
      rowLse(lse.size(), poison), rowDelta(lse.size(), poison);
  FlashLayout layout;
  std::memcpy(&layout, &forward.layout, sizeof layout);
  using ForwardEntry =
      void (*)(const float *, const float *, const float *, float *, float *,
               const int *, const int *, int, int, long long, long long, int,
               float, FlashLayout);
  using RowsEntry = void (*)(
      const float *, const float *, const float *, const float *, const float *,
      const float *, float *, float *, float *, const int *, const int *, int,
      int, long long, long long, int, float, FlashLayout);
  using KeysEntry = void (*)(
      const float *, const float *, const float *, const float *, const float *,
      const float *, float *, float *, const int *, const int *, int, int,
      long long, long long, int, float, FlashLayout);
  ForwardEntry forwardEntry = llmc_flash_block_forward_f32_d64;
  RowsEntry rowsEntry = llmc_flash_block_grad_rows_f32_d64;
  KeysEntry keysEntry = llmc_flash_block_grad_keys_f32_d64;
  if (forward.suffix == "f32_d16") {
    forwardEntry = llmc_flash_block_forward_f32_d16;
    rowsEntry = llmc_flash_block_grad_rows_f32_d16;
    keysEntry = llmc_flash_block_grad_keys_f32_d16;
  } else if (forward.suffix == "f32_d32") {
    forwardEntry = llmc_flash_block_forward_f32_d32;
    rowsEntry = llmc_flash_block_grad_rows_f32_d32;
    keysEntry = llmc_flash_block_grad_keys_f32_d32;
  } else if (forward.suffix == "f32_d128") {
    forwardEntry = llmc_flash_block_forward_f32_d128;
    rowsEntry = llmc_flash_block_grad_rows_f32_d128;
    keysEntry = llmc_flash_block_grad_keys_f32_d128;
  } else {
    ASSERT_EQ(forward.suffix, "f32_d64");
  }
  runGrid(forward.queryBlocks, [&] {
    forwardEntry(q.data(), k.data(), v.data(), eOut.data(), eLse.data(),
                 qpos.data(), kpos.data(), forward.heads, forward.kvHeads,
                 forward.seq, forward.kvSeq, forward.headDim, forward.scale,
                 layout);
  });
  runGrid(backward.queryBlocks, [&] {
    rowsEntry(q.data(), k.data(), v.data(), out.data(), dout.data(),
              globalLse.data(), eDq.data(), rowLse.data(), rowDelta.data(),
              qpos.data(), kpos.data(), backward.heads, backward.kvHeads,
              backward.seq, backward.kvSeq, backward.headDim, backward.scale,
              layout);
  });
  runGrid(backward.keyBlocks, [&] {
    keysEntry(q.data(), k.data(), v.data(), dout.data(), rowLse.data(),
              rowDelta.data(), eDk.data(), eDv.data(), qpos.data(), kpos.data(),
              backward.heads, backward.kvHeads, backward.seq, backward.kvSeq,
              backward.headDim, backward.scale, layout);
  });
  compare("out " + c.what, eOut, out);
  compareLse("lse " + c.what, eLse, lse);
  compare("dq " + c.what, eDq, dq);
  compare("dk " + c.what, eDk, dk);
  compare("dv " + c.what, eDv, dv);
}

// The zigzag blocks of cp = 2 over a sequence of 128 (chunks of 32: one
// forward tile each, so the masked quarter's tiles are skipped whole) and
// of cp = 4 over 128 (chunks of 16: half tiles, masked inside a tile),
// grouped queries, D = 16, 64 (zero-padded 48) and 128 (the backward's
// 16-row tiles); shuffled positions with rows that see no key and S != T;
// a block no query sees.
TEST(FlashBlockEmulation, PositionMasksMatchTheCpu) {
  std::mt19937 rng(1234);
  ThreadPool pool;
  for (int64_t headDim : {16, 48, 128}) {
    std::string d = " D=" + std::to_string(headDim);
    runCase({1, 2, 1, 64, 64, headDim, zigzag(128, 2, 0), zigzag(128, 2, 0),
             "cp2 rank 0, own block" + d},
            rng, pool);
    runCase({1, 2, 1, 64, 64, headDim, zigzag(128, 2, 0), zigzag(128, 2, 1),
             "cp2 rank 0, block of rank 1" + d},
            rng, pool);
    runCase({1, 2, 1, 64, 64, headDim, zigzag(128, 2, 1), zigzag(128, 2, 0),
             "cp2 rank 1, block of rank 0" + d},
            rng, pool);
  }
  runCase({1, 4, 2, 32, 32, 64, zigzag(128, 4, 1), zigzag(128, 4, 2),
           "cp4 rank 1, block of rank 2"},
          rng, pool);
  std::vector<int32_t> queries, keys;
  for (int32_t i = 0; i < 50; ++i)
    queries.push_back((i * 37) % 50);
  for (int32_t i = 0; i < 40; ++i)
    keys.push_back(8 + (i * 11) % 40);
  runCase({2, 2, 1, 50, 40, 32, queries, keys, "shuffled positions"}, rng,
          pool);
  std::vector<int32_t> early(40), late(40);
  for (int32_t i = 0; i < 40; ++i) {
    early[i] = i;
    late[i] = 100 + i;
  }
  runCase({1, 2, 2, 40, 40, 16, early, late, "fully masked"}, rng, pool);
}

// The templates the block kernels share with llmc.attention's scalar
// kernels, without positions (null, as the flash unit's entries pass
// them): causal and not, T = S = 70 (a partial tile), against the CPU's
// Attention and AttentionGrad, so the position mask leaves them as they
// were.
TEST(FlashBlockEmulation, TemplatesWithoutPositionsMatchAttention) {
  std::mt19937 rng(99);
  ThreadPool pool;
  const int64_t batch = 1, heads = 2, kvHeads = 1, seq = 70, headDim = 64;
  Shape qShape = {batch, heads, seq, headDim};
  Shape kvShape = {batch, kvHeads, seq, headDim};
  std::uniform_real_distribution<float> draw(-2.0f, 2.0f);
  auto fresh = [&](const Shape &shape) {
    std::vector<float> values(numElements(shape));
    for (float &value : values)
      value = draw(rng);
    return values;
  };
  auto f32 = [](std::vector<float> &data, const Shape &shape) {
    return TensorRef{data.data(), DType::F32, shape};
  };
  for (int causal : {0, 1}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    std::vector<float> q = fresh(qShape), k = fresh(kvShape),
                       v = fresh(kvShape), dout = fresh(qShape);
    std::vector<float> out(q.size()), dq(q.size()), dk(k.size()), dv(v.size());
    KernelAttrs attrs{{causal, 0}, {0.125}};
    std::vector<TensorRef> in = {f32(q, qShape), f32(k, kvShape),
                                 f32(v, kvShape)};
    ASSERT_TRUE(
        runCpuKernel(KernelKind::Attention, attrs, in, {f32(out, qShape)}, pool)
            .isOk());
    std::vector<TensorRef> gradIn = {in[0], in[1], in[2], f32(out, qShape),
                                     f32(dout, qShape)};
    ASSERT_TRUE(runCpuKernel(
                    KernelKind::AttentionGrad, attrs, gradIn,
                    {f32(dq, qShape), f32(dk, kvShape), f32(dv, kvShape)}, pool)
                    .isOk());
    FlashLaunch forward, backward;
    TensorRef outRef = f32(out, qShape);
    ASSERT_EQ(flashLaunch(in, attrs, forward, &outRef), "");
    ASSERT_EQ(flashLaunch(gradIn, attrs, backward), "");
    FlashLayout layout;
    std::memcpy(&layout, &forward.layout, sizeof layout);
    const float poison = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> eOut(out.size(), poison), eDq(dq.size(), poison),
        eDk(dk.size(), poison), eDv(dv.size(), poison),
        rowLse(numElements({batch, heads, seq}), poison),
        rowDelta(rowLse.size(), poison);
    runGrid(forward.queryBlocks, [&] {
      flashForward<float, 64>(q.data(), k.data(), v.data(), eOut.data(),
                              nullptr, heads, kvHeads, seq, seq, headDim,
                              causal, 0.125f, layout, nullptr, nullptr);
    });
    runGrid(backward.queryBlocks, [&] {
      flashGradRows<float, 64>(
          q.data(), k.data(), v.data(), out.data(), dout.data(), eDq.data(),
          rowLse.data(), rowDelta.data(), heads, kvHeads, seq, seq, headDim,
          causal, 0.125f, layout, nullptr, nullptr, nullptr);
    });
    runGrid(backward.keyBlocks, [&] {
      flashGradKeys<float, 64>(q.data(), k.data(), v.data(), dout.data(),
                               rowLse.data(), rowDelta.data(), eDk.data(),
                               eDv.data(), heads, kvHeads, seq, seq, headDim,
                               causal, 0.125f, layout, nullptr, nullptr);
    });
    std::string what = causal ? " causal" : "";
    compare("attention out" + what, eOut, out);
    compare("attention_grad dq" + what, eDq, dq);
    compare("attention_grad dk" + what, eDk, dk);
    compare("attention_grad dv" + what, eDv, dv);
  }
}

} // namespace
} // namespace llmc::rt::cuda::emulated
