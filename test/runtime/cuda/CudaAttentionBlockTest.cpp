//===- CudaAttentionBlockTest.cpp - ring attention's blocks on the GPU ----===//
//
// Part of `cuda-kernel-tests` (needs a GPU; skips without one). The
// position-masked flash kernels of AttentionBlock and AttentionBlockGrad
// (the tensor-core ones of attention/FlashTc.cuh for bf16 with D 64 and
// 128, the scalar ones of attention/FlashBlock.cuh otherwise), chosen by
// the selection as a program's commands are, against the CPU kernels
// (runtime/cpu/AttentionBlock.cpp):
// f32, bf16 and f16; head dimensions 48 (padded to 64), 64 and 128; grouped
// queries; the zigzag positions of cp = 2 and 4 (whole key tiles skipped,
// tiles that straddle a chunk edge masked inside), positions out of order,
// and rows that see no key (out 0, lse -inf; a backward with a global lse
// that is finite there gives dq 0). The backward reads the CPU's out and
// lse as the ring's merged ones, so both sides see the same operands.
//
// Tolerance as FlashAttentionMatchesTheCpu (CudaKernelsTest.cpp), relative
// to the tensor's largest magnitude: f32 1e-4, bf16 and f16 2e-2 plus one
// ulp of the element (f32 sums on both sides; the CPU's in f64); lse 1e-4
// relative (its inputs are exact in f32 for every type), -inf exactly
// where the CPU has it. Every output starts as 0x7f poison.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"
#include "ZigzagPositions.h"

#include "codegen/cuda/KernelSelection.h"
#include "codegen/cuda/LaunchSelected.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

class CudaAttentionBlockTest : public GpuTest {
protected:
  CudaAttentionBlockTest() : GpuTest("the CUDA kernel tests") {}
};

struct BlockCase {
  DType dtype;
  int64_t batch, heads, kvHeads, seq, kvSeq, headDim;
  std::vector<int32_t> queryPositions, keyPositions;
  std::string what;
  /// Elements past cudaMalloc's alignment where q, k, v, out, dout and the
  /// gradients start: 1 rules out the tensor-core kernels' 16-byte loads,
  /// so bf16 with D 64 or 128 runs the scalar ones.
  int64_t offsetElements = 0;
};

/// Which kernels the launch takes for a block of `c`: the selection's
/// first entry (the tensor-core one where listed) when the operands are
/// aligned and the device has bf16 MMA (sm_80 and later, as every GPU
/// these tests run on), else the scalar one. The launch does not report
/// the entry it ran, so this is the rule AttentionLaunch.cpp applies.
bool expectsTensorCores(const BlockCase &c) {
  TensorRef q{nullptr, c.dtype, {c.batch, c.heads, c.seq, c.headDim}};
  TensorRef kv{nullptr, c.dtype, {c.batch, c.kvHeads, c.kvSeq, c.headDim}};
  KernelChoice choice;
  Status status = selectKernel(
      KernelKind::AttentionBlock, {{}, {0.125}},
      {q, kv, kv, {nullptr, DType::I32, {c.seq}},
       {nullptr, DType::I32, {c.kvSeq}}},
      {q, {nullptr, DType::F32, {c.batch, c.heads, c.seq}}}, choice);
  EXPECT_TRUE(status.isOk()) << status.toString();
  bool listed = !choice.entries.empty() &&
                choice.entries[0].rfind("llmc_flash_block_tc_", 0) == 0;
  EXPECT_EQ(listed, c.dtype == DType::BF16 &&
                        (c.headDim == 64 || c.headDim == 128));
  return listed && c.offsetElements == 0;
}

using llmc::rt::cuda::testing::zigzag; // ZigzagPositions.h

void compare(const std::string &name, const DeviceTensor &got,
             const DeviceTensor &want) {
  double relative = want.dtype == DType::F32 ? 1e-4 : 2e-2;
  CompareResult r = compareToLargest(name, got, want, relative);
  std::printf("  %-64s max error %.2e of %.3g\n", name.c_str(), r.worst,
              r.largest);
}

void compareLse(const std::string &name, const DeviceTensor &got,
                const DeviceTensor &want) {
  const double negInf = -std::numeric_limits<double>::infinity();
  int64_t failures = 0;
  for (int64_t i = 0; i < want.count(); ++i) {
    double g = got.get(i), w = want.get(i);
    bool ok = w == negInf
                  ? g == negInf
                  : std::fabs(g - w) <= 1e-4 * std::max(1.0, std::fabs(w));
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << name << " row " << i << ": gpu " << g << ", cpu " << w;
  }
  EXPECT_EQ(failures, 0) << name;
}

void runBlockCase(CudaKernels &kernels, const BlockCase &c, std::mt19937 &rng,
                  ThreadPool &pool) {
  std::string name =
      std::string(dtypeName(c.dtype)) + " Hq=" + std::to_string(c.heads) +
      " Hkv=" + std::to_string(c.kvHeads) + " T=" + std::to_string(c.seq) +
      " S=" + std::to_string(c.kvSeq) + " D=" + std::to_string(c.headDim) +
      " " + c.what + (expectsTensorCores(c) ? " (tensor cores)" : " (scalar)");
  SCOPED_TRACE(name);
  const DType dtype = c.dtype;
  Shape qShape = {c.batch, c.heads, c.seq, c.headDim};
  Shape kvShape = {c.batch, c.kvHeads, c.kvSeq, c.headDim};
  Shape rows = {c.batch, c.heads, c.seq};
  DeviceTensor q(dtype, qShape), k(dtype, kvShape), v(dtype, kvShape),
      dout(dtype, qShape), qpos(DType::I32, {c.seq}),
      kpos(DType::I32, {c.kvSeq});
  q.fillUniform(rng, -2.0f, 2.0f);
  k.fillUniform(rng, -2.0f, 2.0f);
  v.fillUniform(rng, -1.0f, 1.0f);
  dout.fillUniform(rng, -1.0f, 1.0f);
  for (int64_t i = 0; i < c.seq; ++i)
    qpos.set(i, c.queryPositions[i]);
  for (int64_t i = 0; i < c.kvSeq; ++i)
    kpos.set(i, c.keyPositions[i]);
  KernelAttrs attrs{{}, {1.0 / std::sqrt(static_cast<double>(c.headDim))}};

  // 1. The CPU: the block's out and lse; the backward with a global lse
  //    that is finite in the rows this block leaves empty (as another
  //    block of the ring would make it).
  DeviceTensor out(dtype, qShape), lse(DType::F32, rows),
      globalLse(DType::F32, rows), dq(dtype, qShape), dk(dtype, kvShape),
      dv(dtype, kvShape);
  ASSERT_OK(runCpuKernel(
      KernelKind::AttentionBlock, attrs,
      {q.hostRef(), k.hostRef(), v.hostRef(), qpos.hostRef(), kpos.hostRef()},
      {out.hostRef(), lse.hostRef()}, pool));
  for (int64_t i = 0; i < lse.count(); ++i)
    globalLse.set(i, std::isfinite(lse.get(i)) ? lse.get(i) : 0.75);
  ASSERT_OK(runCpuKernel(KernelKind::AttentionBlockGrad, attrs,
                         {q.hostRef(), k.hostRef(), v.hostRef(), out.hostRef(),
                          dout.hostRef(), globalLse.hostRef(), qpos.hostRef(),
                          kpos.hostRef()},
                         {dq.hostRef(), dk.hostRef(), dv.hostRef()}, pool));

  // 2. The GPU, outputs poisoned.
  DeviceTensor gOut(dtype, qShape), gLse(DType::F32, rows), gDq(dtype, qShape),
      gDk(dtype, kvShape), gDv(dtype, kvShape);
  for (DeviceTensor *t : {&q, &k, &v, &dout, &out})
    ASSERT_OK(t->allocate(c.offsetElements));
  for (DeviceTensor *t : {&q, &k, &v, &dout, &qpos, &kpos, &out, &globalLse})
    ASSERT_OK(t->upload());
  for (DeviceTensor *t : {&gOut, &gLse, &gDq, &gDk, &gDv}) {
    ASSERT_OK(t->allocate(t == &gLse ? 0 : c.offsetElements));
    ASSERT_OK(t->poison());
  }
  ASSERT_OK(launchSelected(kernels, KernelKind::AttentionBlock, attrs,
                           {q.deviceRef(), k.deviceRef(), v.deviceRef(),
                            qpos.deviceRef(), kpos.deviceRef()},
                           {gOut.deviceRef(), gLse.deviceRef()}, nullptr));
  ASSERT_OK(launchSelected(
      kernels, KernelKind::AttentionBlockGrad, attrs,
      {q.deviceRef(), k.deviceRef(), v.deviceRef(), out.deviceRef(),
       dout.deviceRef(), globalLse.deviceRef(), qpos.deviceRef(),
       kpos.deviceRef()},
      {gDq.deviceRef(), gDk.deviceRef(), gDv.deviceRef()}, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (DeviceTensor *t : {&gOut, &gLse, &gDq, &gDk, &gDv})
    ASSERT_OK(t->download());
  compare("attention_block out " + name, gOut, out);
  compareLse("attention_block lse " + name, gLse, lse);
  compare("attention_block_grad dq " + name, gDq, dq);
  compare("attention_block_grad dk " + name, gDk, dk);
  compare("attention_block_grad dv " + name, gDv, dv);
}

// The ring's blocks: rank 0 of cp = 2 and rank 1 of cp = 4 against their
// own block and others' (T = 256 per rank: whole 32-key tiles skipped),
// in every type and head dimension; positions out of order with rows that
// see nothing; a block that is fully masked.
TEST_F(CudaAttentionBlockTest, PositionMasksMatchTheCpu) {
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  std::mt19937 rng(std::random_device{}());
  ThreadPool pool;
  for (DType dtype : {DType::F32, DType::BF16, DType::F16})
    for (int64_t headDim : {48, 64, 128}) {
      runBlockCase(*kernels,
                   {dtype, 2, 4, 2, 256, 256, headDim, zigzag(512, 2, 0),
                    zigzag(512, 2, 0), "cp2 rank 0, own block"},
                   rng, pool);
      runBlockCase(*kernels,
                   {dtype, 2, 4, 2, 256, 256, headDim, zigzag(512, 2, 0),
                    zigzag(512, 2, 1), "cp2 rank 0, block of rank 1"},
                   rng, pool);
      runBlockCase(*kernels,
                   {dtype, 1, 8, 2, 128, 128, headDim, zigzag(512, 4, 1),
                    zigzag(512, 4, 3), "cp4 rank 1, block of rank 3"},
                   rng, pool);
    }
  // Out of order, S != T, rows 0..9 below every key (they see nothing).
  std::vector<int32_t> queries, keys;
  for (int32_t i = 0; i < 100; ++i)
    queries.push_back((i * 37) % 100);
  for (int32_t i = 0; i < 70; ++i)
    keys.push_back(10 + (i * 11) % 70);
  for (DType dtype : {DType::F32, DType::BF16})
    runBlockCase(
        *kernels,
        {dtype, 2, 4, 1, 100, 70, 64, queries, keys, "shuffled positions"}, rng,
        pool);
  // Every key after every query: the block adds nothing.
  std::vector<int32_t> early(64), late(64);
  for (int32_t i = 0; i < 64; ++i) {
    early[i] = i;
    late[i] = 100 + i;
  }
  runBlockCase(*kernels,
               {DType::F32, 1, 2, 2, 64, 64, 32, early, late, "fully masked"},
               rng, pool);
}

/// LLMC_RING_TENSOR_CORES=1 while it lives: the tensor-core block kernels
/// are opt-in until this file has passed on a GPU (AttentionLaunch.cpp).
struct RingTensorCores {
  RingTensorCores() { ::setenv("LLMC_RING_TENSOR_CORES", "1", 1); }
  ~RingTensorCores() { ::unsetenv("LLMC_RING_TENSOR_CORES"); }
};

// The tensor-core block kernels (bf16, D 64 and 128, asked for with
// LLMC_RING_TENSOR_CORES=1) beside the cases above, which run them too for
// bf16 D 64 and 128 when the variable is set in the environment: T != S with grouped
// queries and a partial last tile, the cp2 block of the other rank at
// T = 1000 (many tiles; its first quarter of rows sees no key), a fully
// masked block, a fully visible one (no per-element mask), and the same
// operands off 16-byte alignment, which take the scalar kernels.
TEST_F(CudaAttentionBlockTest, TensorCoresMatchTheCpu) {
  RingTensorCores asked;
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  std::mt19937 rng(std::random_device{}());
  ThreadPool pool;
  std::vector<int32_t> early(130), late(130);
  for (int32_t i = 0; i < 130; ++i) {
    early[i] = i;
    late[i] = 1000 + i;
  }
  for (int64_t headDim : {64, 128}) {
    std::vector<int32_t> queries(200), keys(130);
    for (int32_t i = 0; i < 200; ++i)
      queries[i] = 2 * i;
    for (int32_t i = 0; i < 130; ++i)
      keys[i] = 3 * i + 1;
    runBlockCase(*kernels,
                 {DType::BF16, 2, 8, 2, 200, 130, headDim, queries, keys,
                  "T != S, GQA"},
                 rng, pool);
    runBlockCase(*kernels,
                 {DType::BF16, 1, 4, 1, 1000, 1000, headDim,
                  zigzag(2000, 2, 0), zigzag(2000, 2, 1),
                  "cp2 rank 0, block of rank 1, long"},
                 rng, pool);
    runBlockCase(*kernels,
                 {DType::BF16, 1, 4, 2, 130, 130, headDim, early, late,
                  "fully masked"},
                 rng, pool);
    runBlockCase(*kernels,
                 {DType::BF16, 1, 4, 2, 130, 130, headDim, late, early,
                  "fully visible"},
                 rng, pool);
    runBlockCase(*kernels,
                 {DType::BF16, 2, 4, 2, 256, 256, headDim, zigzag(512, 2, 0),
                  zigzag(512, 2, 1), "cp2 rank 0, block of rank 1, unaligned",
                  1},
                 rng, pool);
  }
}

// The tensor-core block kernels against the scalar ones, timed (printed,
// no assertion): B 4, H 12, T = S = 512, D 64, bf16; a half-visible block
// (cp2 rank 0 against rank 1's keys) and a fully visible one; the scalar
// kernels forced by operands one element off 16-byte alignment.
TEST_F(CudaAttentionBlockTest, TimingTensorCoresAgainstScalar) {
  RingTensorCores asked;
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  std::mt19937 rng(5);
  const int64_t batch = 4, heads = 12, seq = 512, headDim = 64;
  Shape shape = {batch, heads, seq, headDim};
  Shape rows = {batch, heads, seq};
  KernelAttrs attrs{{}, {1.0 / std::sqrt(static_cast<double>(headDim))}};
  std::vector<int32_t> last(seq, 1023);
  struct Block {
    const char *what;
    std::vector<int32_t> queries, keys;
  };
  std::vector<Block> blocks = {
      {"half visible", zigzag(1024, 2, 0), zigzag(1024, 2, 1)},
      {"fully visible", last, zigzag(1024, 2, 1)}};
  for (int64_t offset : {0, 1}) {
    DeviceTensor q(DType::BF16, shape), k(DType::BF16, shape),
        v(DType::BF16, shape), out(DType::BF16, shape),
        dout(DType::BF16, shape), lse(DType::F32, rows),
        dq(DType::BF16, shape), dk(DType::BF16, shape), dv(DType::BF16, shape);
    for (DeviceTensor *t : {&q, &k, &v, &dout})
      t->fillUniform(rng, -1.0f, 1.0f);
    for (DeviceTensor *t : {&q, &k, &v, &out, &dout, &dq, &dk, &dv})
      ASSERT_OK(t->allocate(offset));
    ASSERT_OK(lse.allocate());
    for (DeviceTensor *t : {&q, &k, &v, &dout})
      ASSERT_OK(t->upload());
    for (const Block &block : blocks) {
      DeviceTensor qpos(DType::I32, {seq}), kpos(DType::I32, {seq});
      for (int64_t i = 0; i < seq; ++i) {
        qpos.set(i, block.queries[i]);
        kpos.set(i, block.keys[i]);
      }
      ASSERT_OK(qpos.upload());
      ASSERT_OK(kpos.upload());
      double forward = 0.0, backward = 0.0;
      msPerLaunch(*kernels, KernelKind::AttentionBlock, attrs,
                  {q.deviceRef(), k.deviceRef(), v.deviceRef(),
                   qpos.deviceRef(), kpos.deviceRef()},
                  {out.deviceRef(), lse.deviceRef()}, forward);
      msPerLaunch(*kernels, KernelKind::AttentionBlockGrad, attrs,
                  {q.deviceRef(), k.deviceRef(), v.deviceRef(),
                   out.deviceRef(), dout.deviceRef(), lse.deviceRef(),
                   qpos.deviceRef(), kpos.deviceRef()},
                  {dq.deviceRef(), dk.deviceRef(), dv.deviceRef()}, backward);
      std::printf("[timing] attention_block B=4 H=12 T=S=512 D=64 %-13s %-12s "
                  "forward %.3f ms, backward %.3f ms\n",
                  block.what, offset ? "scalar" : "tensor cores", forward,
                  backward);
    }
  }
}

// The tile skipping, timed: a cp2 rank's blocks of LLaMA-like heads (bf16,
// Hq 16 over Hkv 4, D 128, 2048 tokens per rank of a 4096 sequence): its
// own block (causal-like), the other rank's (half visible, the masked
// quarters skipped tile by tile), and a block that sees every key. The
// half-visible block must take clearly less than the full one (under 0.75
// of its time; about 0.5 when skipping works), forward and backward.
TEST_F(CudaAttentionBlockTest, TimingMaskedTilesAreSkipped) {
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  std::mt19937 rng(3);
  const int64_t batch = 2, heads = 16, kvHeads = 4, seq = 2048, headDim = 128;
  Shape qShape = {batch, heads, seq, headDim};
  Shape kvShape = {batch, kvHeads, seq, headDim};
  Shape rows = {batch, heads, seq};
  DeviceTensor q(DType::BF16, qShape), k(DType::BF16, kvShape),
      v(DType::BF16, kvShape), out(DType::BF16, qShape),
      dout(DType::BF16, qShape), lse(DType::F32, rows), dq(DType::BF16, qShape),
      dk(DType::BF16, kvShape), dv(DType::BF16, kvShape);
  for (DeviceTensor *t : {&q, &k, &v, &dout})
    t->fillUniform(rng, -1.0f, 1.0f);
  for (DeviceTensor *t : {&q, &k, &v, &dout})
    ASSERT_OK(t->upload());
  for (DeviceTensor *t : {&out, &lse, &dq, &dk, &dv})
    ASSERT_OK(t->allocate());
  KernelAttrs attrs{{}, {1.0 / std::sqrt(static_cast<double>(headDim))}};
  std::vector<int32_t> last(seq, 4095);
  struct Block {
    const char *what;
    std::vector<int32_t> queries, keys;
  };
  std::vector<Block> blocks = {
      {"own block", zigzag(4096, 2, 0), zigzag(4096, 2, 0)},
      {"the other rank's block", zigzag(4096, 2, 0), zigzag(4096, 2, 1)},
      {"every key visible", last, zigzag(4096, 2, 1)}};
  std::vector<double> forwardMs, backwardMs;
  for (const Block &block : blocks) {
    DeviceTensor qpos(DType::I32, {seq}), kpos(DType::I32, {seq});
    for (int64_t i = 0; i < seq; ++i) {
      qpos.set(i, block.queries[i]);
      kpos.set(i, block.keys[i]);
    }
    ASSERT_OK(qpos.upload());
    ASSERT_OK(kpos.upload());
    double forward = 0.0, backward = 0.0;
    msPerLaunch(*kernels, KernelKind::AttentionBlock, attrs,
                {q.deviceRef(), k.deviceRef(), v.deviceRef(), qpos.deviceRef(),
                 kpos.deviceRef()},
                {out.deviceRef(), lse.deviceRef()}, forward);
    msPerLaunch(*kernels, KernelKind::AttentionBlockGrad, attrs,
                {q.deviceRef(), k.deviceRef(), v.deviceRef(), out.deviceRef(),
                 dout.deviceRef(), lse.deviceRef(), qpos.deviceRef(),
                 kpos.deviceRef()},
                {dq.deviceRef(), dk.deviceRef(), dv.deviceRef()}, backward);
    std::printf("[timing] attention_block %-24s forward %.3f ms, backward "
                "%.3f ms\n",
                block.what, forward, backward);
    forwardMs.push_back(forward);
    backwardMs.push_back(backward);
  }
  EXPECT_LT(forwardMs[1], 0.75 * forwardMs[2]);
  EXPECT_LT(backwardMs[1], 0.75 * backwardMs[2]);
}

// Positions of another type are refused by the selection with why, never
// run by a kernel that ignores them.
TEST(CudaAttentionBlockSelection, RefusesOtherPositionTypes) {
  std::vector<TensorRef> inputs = {{nullptr, DType::F32, {1, 2, 8, 64}},
                                   {nullptr, DType::F32, {1, 2, 8, 64}},
                                   {nullptr, DType::F32, {1, 2, 8, 64}},
                                   {nullptr, DType::I64, {8}},
                                   {nullptr, DType::I32, {8}}};
  std::vector<TensorRef> outputs = {{nullptr, DType::F32, {1, 2, 8, 64}},
                                    {nullptr, DType::F32, {1, 2, 8}}};
  KernelChoice choice;
  Status status = selectKernel(KernelKind::AttentionBlock, {{}, {0.125}},
                               inputs, outputs, choice);
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("query positions are i32 [8]"),
            std::string::npos)
      << status.message();
}

} // namespace
} // namespace llmc::rt::cuda
