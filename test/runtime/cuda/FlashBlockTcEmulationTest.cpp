//===- FlashBlockTcEmulationTest.cpp - tensor-core ring blocks on the CPU -===//
//
// Runs the position-masked tensor-core kernels of ring attention's blocks
// (LLMC_FLASH_BLOCK_TC_KERNELS, attention/FlashTc.cuh with POSITIONS) on
// the CPU, without a GPU, on the grids and shared memory of the launch
// (flashBlockLaunch), and compares them with the CPU kernels
// AttentionBlock and AttentionBlockGrad (runtime/cpu/AttentionBlock.cpp).
// How the kernels run on the CPU, and what that cannot check:
// FlashTcEmulation.h.
//
//===----------------------------------------------------------------------===//
#include "FlashTcEmulation.h"
#include "ZigzagPositions.h"

#include <algorithm>

namespace llmc::rt::cuda::emulated {
namespace {

// The entries, as units/FlashBlockTcD64.cu and FlashBlockTcD128.cu
// instantiate them.
LLMC_FLASH_BLOCK_TC_KERNELS(64)
LLMC_FLASH_BLOCK_TC_KERNELS(128)

// ---- Ring attention's blocks ---------------------------------------------

using llmc::rt::cuda::testing::zigzag; // ZigzagPositions.h

struct BlockCase {
  int64_t batch, heads, kvHeads, seq, kvSeq, headDim;
  std::vector<int32_t> queryPositions, keyPositions;
  std::string what;
  /// The backward's global lse keeps the block's -inf (rows that see no key
  /// anywhere) instead of a finite value another block would give them.
  bool infiniteGlobalLse = false;
};

// The emulated block kernels' signatures (LLMC_FLASH_BLOCK_TC_KERNELS).
using BlockForward = void (*)(const Bf16 *, const Bf16 *, const Bf16 *,
                              Bf16 *, float *, const int *, const int *, int,
                              int, long long, long long, float, FlashLayout);
using BlockRows = void (*)(const Bf16 *, const Bf16 *, const Bf16 *,
                           const Bf16 *, const Bf16 *, const float *, Bf16 *,
                           float *, float *, const int *, const int *, int,
                           int, long long, long long, float, FlashLayout);
using BlockKeys = void (*)(const Bf16 *, const Bf16 *, const Bf16 *,
                           const Bf16 *, const float *, const float *, Bf16 *,
                           Bf16 *, const int *, const int *, int, int,
                           long long, long long, float, FlashLayout);

/// The tensor-core block kernels on the launch's grids against the CPU's
/// AttentionBlock and AttentionBlockGrad (runtime/cpu/AttentionBlock.cpp):
/// bf16 outputs within 2e-2 of the largest magnitude plus one ulp (as
/// above), lse within 1e-4 of max(1, |lse|) and -inf exactly where the CPU
/// has it. The backward reads the CPU's out and a global lse.
void runBlockCase(const BlockCase &c, ThreadPool &pool) {
  std::string name = c.what + " Hq=" + std::to_string(c.heads) +
                     " Hkv=" + std::to_string(c.kvHeads) +
                     " T=" + std::to_string(c.seq) +
                     " S=" + std::to_string(c.kvSeq) +
                     " D=" + std::to_string(c.headDim);
  SCOPED_TRACE(name);
  Shape qShape = {c.batch, c.heads, c.seq, c.headDim};
  Shape kvShape = {c.batch, c.kvHeads, c.kvSeq, c.headDim};
  Shape rows = {c.batch, c.heads, c.seq};
  std::mt19937 rng(static_cast<unsigned>(c.seq * 131 + c.kvSeq * 7 +
                                         c.headDim + c.what.size()));
  std::vector<Bf16> q = randomBf16(rng, numElements(qShape), 2.0f),
                    k = randomBf16(rng, numElements(kvShape), 2.0f),
                    v = randomBf16(rng, numElements(kvShape), 1.0f),
                    dout = randomBf16(rng, numElements(qShape), 1.0f);
  std::vector<int32_t> qpos = c.queryPositions, kpos = c.keyPositions;
  auto ref = [](std::vector<Bf16> &data, const Shape &shape) {
    return TensorRef{data.data(), DType::BF16, shape};
  };
  TensorRef qposRef{qpos.data(), DType::I32, {c.seq}};
  TensorRef kposRef{kpos.data(), DType::I32, {c.kvSeq}};
  KernelAttrs attrs{{}, {1.0 / std::sqrt(static_cast<double>(c.headDim))}};

  // 1. The CPU.
  std::vector<Bf16> out(q.size()), dq(q.size()), dk(k.size()), dv(v.size());
  std::vector<float> lse(numElements(rows)), globalLse(lse.size());
  std::vector<TensorRef> forwardIn = {ref(q, qShape), ref(k, kvShape),
                                      ref(v, kvShape), qposRef, kposRef};
  std::vector<TensorRef> forwardOut = {
      ref(out, qShape), TensorRef{lse.data(), DType::F32, rows}};
  ASSERT_TRUE(runCpuKernel(KernelKind::AttentionBlock, attrs, forwardIn,
                           forwardOut, pool)
                  .isOk());
  for (size_t i = 0; i < lse.size(); ++i)
    globalLse[i] =
        std::isinf(lse[i]) && !c.infiniteGlobalLse ? 0.75f : lse[i];
  std::vector<TensorRef> gradIn = {
      ref(q, qShape),    ref(k, kvShape),
      ref(v, kvShape),   ref(out, qShape),
      ref(dout, qShape), TensorRef{globalLse.data(), DType::F32, rows},
      qposRef,           kposRef};
  std::vector<TensorRef> gradOut = {ref(dq, qShape), ref(dk, kvShape),
                                    ref(dv, kvShape)};
  ASSERT_TRUE(
      runCpuKernel(KernelKind::AttentionBlockGrad, attrs, gradIn, gradOut, pool)
          .isOk());

  // 2. The emulated tensor-core kernels with the launch's grids and shared
  //    memory, outputs poisoned.
  FlashLaunch forward, backward;
  ASSERT_EQ(flashBlockLaunch(KernelKind::AttentionBlock, forwardIn, forwardOut,
                             attrs, forward),
            "");
  ASSERT_EQ(flashBlockLaunch(KernelKind::AttentionBlockGrad, gradIn, gradOut,
                             attrs, backward),
            "");
  EXPECT_TRUE(forward.tensorCores && backward.tensorCores);
  ASSERT_TRUE(forward.stridesAligned16 && backward.stridesAligned16);
  // The tensor-core grids and shared memory of the default tiles (as
  // flashBlockLaunch fills them where the tensor-core kernels apply).
  flashTensorCoreLaunch(flashTcTileSizes(c.headDim), true, qShape, kvShape,
                        forward);
  flashTensorCoreLaunch(flashTcTileSizes(c.headDim), false, qShape, kvShape,
                        backward);
#ifdef LLMC_FLASH_EMULATION_D64_TILES
  // cuda-flash-emulation-tiles: the D = 64 kernels' other sizes.
  if (c.headDim == 64) {
    FlashTcTileSizes tiles = {
        LLMC_FLASH_TC_D64_FORWARD_ROW_BLOCKS, LLMC_FLASH_TC_D64_FORWARD_KEYS,
        LLMC_FLASH_TC_D64_ROWS_ROW_BLOCKS,    LLMC_FLASH_TC_D64_ROWS_KEYS,
        LLMC_FLASH_TC_D64_KEYS_ROW_BLOCKS,    LLMC_FLASH_TC_D64_KEYS_QUERIES};
    flashTensorCoreLaunch(tiles, true, qShape, kvShape, forward);
    flashTensorCoreLaunch(tiles, false, qShape, kvShape, backward);
  }
#endif
  FlashLayout layout;
  std::memcpy(&layout, &forward.layout, sizeof layout);
  const Bf16 poison{0x7f7f};
  std::vector<Bf16> eOut(out.size(), poison), eDq(dq.size(), poison),
      eDk(dk.size(), poison), eDv(dv.size(), poison);
  std::vector<float> eLse(lse.size(), NAN), scratchLse(lse.size(), NAN),
      delta(lse.size(), NAN);
  bool wide = c.headDim == 128;
  BlockForward forwardKernel = wide ? llmc_flash_block_tc_forward_bf16_d128
                                    : llmc_flash_block_tc_forward_bf16_d64;
  BlockRows rowsKernel = wide ? llmc_flash_block_tc_grad_rows_bf16_d128
                              : llmc_flash_block_tc_grad_rows_bf16_d64;
  BlockKeys keysKernel = wide ? llmc_flash_block_tc_grad_keys_bf16_d128
                              : llmc_flash_block_tc_grad_keys_bf16_d64;
  runGrid(forward.tensorCoreQueryBlocks, forward.tensorCoreForwardShared, [&] {
    forwardKernel(q.data(), k.data(), v.data(), eOut.data(), eLse.data(),
                  qpos.data(), kpos.data(), forward.heads, forward.kvHeads,
                  forward.seq, forward.kvSeq, forward.scale, layout);
  });
  runGrid(backward.tensorCoreQueryBlocks, backward.tensorCoreRowsShared, [&] {
    rowsKernel(q.data(), k.data(), v.data(), out.data(), dout.data(),
               globalLse.data(), eDq.data(), scratchLse.data(), delta.data(),
               qpos.data(), kpos.data(), backward.heads, backward.kvHeads,
               backward.seq, backward.kvSeq, backward.scale, layout);
  });
  runGrid(backward.tensorCoreKeyBlocks, backward.tensorCoreKeysShared, [&] {
    keysKernel(q.data(), k.data(), v.data(), dout.data(), globalLse.data(),
               delta.data(), eDk.data(), eDv.data(), qpos.data(), kpos.data(),
               backward.heads, backward.kvHeads, backward.seq, backward.kvSeq,
               backward.scale, layout);
  });
  compare("attention_block out " + name, eOut, out);
  int lseFailures = 0;
  for (size_t i = 0; i < lse.size(); ++i) {
    bool ok = std::isinf(lse[i])
                  ? eLse[i] == lse[i]
                  : std::fabs(double(eLse[i]) - lse[i]) <=
                        1e-4 * std::max(1.0, std::fabs(double(lse[i])));
    if (!ok && ++lseFailures <= 5)
      ADD_FAILURE() << "lse row " << i << ": emulated " << eLse[i] << ", cpu "
                    << lse[i];
  }
  EXPECT_EQ(lseFailures, 0);
  compare("attention_block_grad dq " + name, eDq, dq);
  compare("attention_block_grad dk " + name, eDk, dk);
  compare("attention_block_grad dv " + name, eDv, dv);
}

// The tensor-core block kernels (POSITIONS): the zigzag blocks of cp = 2
// over 256 tokens (chunks of 64: whole tiles skipped, the other rank's
// block half visible with rows that see no key) and of cp = 4 over 128
// (chunks of 16: tiles masked inside), grouped queries, D = 64 and 128;
// positions out of order with S != T and rows that see nothing (the
// backward's global lse finite there, and once -inf); a fully masked
// block; one where every key is visible (no per-element mask); one where
// a single row sees two keys. About 4 s here.
TEST(FlashTensorCoreEmulation, BlockPositionMasksMatchTheCpu) {
  ThreadPool pool;
  for (int64_t headDim : {64, 128}) {
    runBlockCase({1, 2, 1, 128, 128, headDim, zigzag(256, 2, 0),
                  zigzag(256, 2, 0), "cp2 rank 0, own block"},
                 pool);
    runBlockCase({1, 2, 1, 128, 128, headDim, zigzag(256, 2, 0),
                  zigzag(256, 2, 1), "cp2 rank 0, block of rank 1"},
                 pool);
    runBlockCase({1, 4, 2, 32, 32, headDim, zigzag(128, 4, 1),
                  zigzag(128, 4, 3), "cp4 rank 1, block of rank 3"},
                 pool);
  }
  // Out of order, S != T, rows 0..9 below every key.
  std::vector<int32_t> queries, keys;
  for (int32_t i = 0; i < 100; ++i)
    queries.push_back((i * 37) % 100);
  for (int32_t i = 0; i < 70; ++i)
    keys.push_back(10 + (i * 11) % 70);
  runBlockCase({1, 2, 1, 100, 70, 64, queries, keys, "shuffled positions"},
               pool);
  runBlockCase({1, 2, 1, 100, 70, 128, queries, keys,
                "shuffled positions, -inf global lse", true},
               pool);
  // Every key after every query; every key before every query.
  std::vector<int32_t> early(64), late(64);
  for (int32_t i = 0; i < 64; ++i) {
    early[i] = i;
    late[i] = 100 + i;
  }
  runBlockCase({1, 2, 2, 64, 64, 64, early, late, "fully masked"}, pool);
  runBlockCase({1, 2, 2, 64, 64, 128, early, late, "fully masked, -inf lse",
                true},
               pool);
  runBlockCase({1, 2, 1, 64, 64, 64, late, early, "fully visible"}, pool);
  // Keys 0 and 1 at position 63, the others after it: row 63 alone sees
  // two keys (a softmax over one key would make every gradient 0), a key
  // tile's smallest position equal to a row tile's largest (the skipping
  // tests are strict).
  std::vector<int32_t> touching(64);
  for (int32_t i = 0; i < 64; ++i)
    touching[i] = i < 2 ? 63 : 62 + i;
  for (int64_t headDim : {64, 128})
    runBlockCase({1, 2, 1, 64, 64, headDim, early, touching, "one row sees"},
                 pool);
}

} // namespace
} // namespace llmc::rt::cuda::emulated
