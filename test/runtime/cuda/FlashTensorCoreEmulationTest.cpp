//===- FlashTensorCoreEmulationTest.cpp - tensor-core flash attention on the CPU -===//
//
// Runs the tensor-core flash attention kernels (attention/FlashTc.cuh) on
// the CPU, without a GPU, and compares them with the CPU reference
// (runCpuKernel), so that their indexing, tiling, masking, cp.async double
// buffering and causal skipping are checked on every build. How the
// kernels run on the CPU, and what that cannot check: FlashTcEmulation.h.
//
//===----------------------------------------------------------------------===//
#include "FlashTcEmulation.h"

namespace llmc::rt::cuda::emulated {
namespace {

// The entries, as units/FlashTcD64.cu and FlashTcD128.cu instantiate them.
LLMC_FLASH_TC_KERNELS(64)
LLMC_FLASH_TC_KERNELS(128)

// ---- The comparison -----------------------------------------------------

struct Case {
  int64_t batch, heads, kvHeads, seq, kvSeq, headDim;
  bool causal;
};

/// The elements of a [B, H, T, D] tensor laid out as `layout` (1: bthd,
/// [B, T, H, D]; 2: packed, heads [first, first + H) of a
/// [B, T, all, D] tensor), and back.
struct Placement {
  int64_t layout, batch, heads, seq, headDim, all, first;
  int64_t at(int64_t b, int64_t h, int64_t t) const {
    if (layout == 0)
      return ((b * heads + h) * seq + t) * headDim;
    if (layout == 1)
      return ((b * seq + t) * heads + h) * headDim;
    return ((b * seq + t) * all + first + h) * headDim;
  }
  void place(const std::vector<Bf16> &bhtd, std::vector<Bf16> &laid) const {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < seq; ++t)
          std::memcpy(&laid[at(b, h, t)],
                      &bhtd[((b * heads + h) * seq + t) * headDim],
                      headDim * sizeof(Bf16));
  }
  std::vector<Bf16> gather(const std::vector<Bf16> &laid) const {
    std::vector<Bf16> bhtd(batch * heads * seq * headDim);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < seq; ++t)
          std::memcpy(&bhtd[((b * heads + h) * seq + t) * headDim],
                      &laid[at(b, h, t)], headDim * sizeof(Bf16));
    return bhtd;
  }
};

const char *layoutName(int64_t layout) {
  return layout == 0 ? "bhtd" : layout == 1 ? "bthd" : "packed";
}

/// The CPU reference in the bhtd layout (out, dq, dk, dv), against which
/// every layout is compared.
struct Reference {
  std::vector<Bf16> out, dq, dk, dv;
};

/// A case's operands in one layout: where each lies, the laid-out shapes
/// and data (packed: q, k and v are one tensor, the same bytes three times).
struct LaidOperands {
  Placement qAt, kAt, vAt, oAt;
  Shape q, kv, o;
  std::vector<Bf16> lq, lk, lv, lout, ldout;
};

LaidOperands layOut(const Case &c, int64_t layout, const std::vector<Bf16> &q,
                    const std::vector<Bf16> &k, const std::vector<Bf16> &v,
                    const std::vector<Bf16> &out,
                    const std::vector<Bf16> &dout) {
  const int64_t batch = c.batch, all = c.heads + 2 * c.kvHeads;
  LaidOperands laid{
      {layout, batch, c.heads, c.seq, c.headDim, all, 0},
      {layout, batch, c.kvHeads, c.kvSeq, c.headDim, all, c.heads},
      {layout, batch, c.kvHeads, c.kvSeq, c.headDim, all, c.heads + c.kvHeads},
      {layout == 2 ? 1 : layout, batch, c.heads, c.seq, c.headDim, all, 0},
      {batch, c.heads, c.seq, c.headDim},
      {batch, c.kvHeads, c.kvSeq, c.headDim},
      {batch, c.heads, c.seq, c.headDim},
      {}, {}, {}, {}, {}};
  if (layout != 0) {
    laid.q = {batch, c.seq, c.heads, c.headDim};
    laid.kv = {batch, c.kvSeq, c.kvHeads, c.headDim};
    laid.o = laid.q;
  }
  if (layout == 2)
    laid.q = laid.kv = {batch, c.seq, all, c.headDim};
  int64_t qCount = numElements(laid.o);
  laid.lq.resize(numElements(laid.q));
  laid.lk.resize(numElements(laid.kv));
  laid.lv.resize(numElements(laid.kv));
  laid.lout.resize(qCount);
  laid.ldout.resize(qCount);
  laid.qAt.place(q, laid.lq);
  laid.kAt.place(k, layout == 2 ? laid.lq : laid.lk);
  laid.vAt.place(v, layout == 2 ? laid.lq : laid.lv);
  if (layout == 2)
    laid.lk = laid.lv = laid.lq;
  laid.oAt.place(out, laid.lout);
  laid.oAt.place(dout, laid.ldout);
  return laid;
}

/// The CPU kernels in `layout` (attrs carry it) compute the same bits as in
/// bhtd: only the addressing differs.
void expectCpuLayoutMatches(LaidOperands &laid, const KernelAttrs &attrs,
                            const Reference &want, int64_t layout,
                            ThreadPool &pool) {
  auto ref = [](std::vector<Bf16> &data, const Shape &shape) {
    return TensorRef{data.data(), DType::BF16, shape};
  };
  std::vector<Bf16> cpuOut(numElements(laid.o)), cpuDq(numElements(laid.q)),
      cpuDk(numElements(laid.kv)), cpuDv(numElements(laid.kv));
  ASSERT_TRUE(runCpuKernel(KernelKind::Attention, attrs,
                           {ref(laid.lq, laid.q), ref(laid.lk, laid.kv),
                            ref(laid.lv, laid.kv)},
                           {ref(cpuOut, laid.o)}, pool)
                  .isOk());
  std::vector<TensorRef> grads = {ref(cpuDq, laid.q), ref(cpuDk, laid.kv),
                                  ref(cpuDv, laid.kv)};
  if (layout == 2)
    grads.resize(1);
  ASSERT_TRUE(runCpuKernel(KernelKind::AttentionGrad, attrs,
                           {ref(laid.lq, laid.q), ref(laid.lk, laid.kv),
                            ref(laid.lv, laid.kv), ref(laid.lout, laid.o),
                            ref(laid.ldout, laid.o)},
                           grads, pool)
                  .isOk());
  auto same = [&](const char *what, const std::vector<Bf16> &got,
                  const std::vector<Bf16> &expected) {
    EXPECT_EQ(0, std::memcmp(got.data(), expected.data(),
                             expected.size() * sizeof(Bf16)))
        << "the CPU's " << what << " in " << layoutName(layout)
        << " differs from bhtd";
  };
  same("out", laid.oAt.gather(cpuOut), want.out);
  same("dq", laid.qAt.gather(cpuDq), want.dq);
  same("dk", laid.kAt.gather(layout == 2 ? cpuDq : cpuDk), want.dk);
  same("dv", laid.vAt.gather(layout == 2 ? cpuDq : cpuDv), want.dv);
}

// The emulated kernels' signatures (FlashTc.cuh's entries).
using Forward = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, Bf16 *,
                         float *, int, int, long long, long long, int, float,
                         FlashLayout);
using Rows = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, const Bf16 *,
                      const Bf16 *, const float *, Bf16 *, float *, float *,
                      int, int, long long, long long, int, float,
                      FlashLayout);
using Keys = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, const Bf16 *,
                      const float *, const float *, Bf16 *, Bf16 *, int, int,
                      long long, long long, int, float, FlashLayout);

/// The emulated forward's log-sum-exp against the CPU's.
void expectLseClose(const std::vector<float> &gpuLse,
                    const std::vector<float> &cpuLse) {
  const int64_t rowCount = static_cast<int64_t>(cpuLse.size());
  // The log-sum-exp ([B, Hq, T] in every layout): f32 sums of bf16
  // products against f64 ones, within 1e-4 of max(1, |lse|) (scores here
  // are at most a few units).
  int lseFailures = 0;
  for (int64_t i = 0; i < rowCount; ++i) {
    double bound = 1e-4 * std::max(1.0, std::fabs(double(cpuLse[i])));
    if (!(std::fabs(double(gpuLse[i]) - cpuLse[i]) <= bound) &&
        ++lseFailures <= 5)
      ADD_FAILURE() << "lse row " << i << ": emulated " << gpuLse[i]
                    << ", cpu " << cpuLse[i];
  }
  EXPECT_EQ(lseFailures, 0);
}

/// Every element of a packed gradient written: no `poison` left.
void expectNoPoison(const std::vector<Bf16> &gradient, Bf16 poison) {
  for (size_t i = 0; i < gradient.size(); ++i)
    if (gradient[i].bits == poison.bits) {
      ADD_FAILURE() << "packed gradient element " << i << " not written";
      break;
    }
}

void runCase(const Case &c, int64_t layout, ThreadPool &pool) {
  std::string name = std::string(layoutName(layout)) +
                     " B=" + std::to_string(c.batch) +
                     " Hq=" + std::to_string(c.heads) +
                     " Hkv=" + std::to_string(c.kvHeads) +
                     " T=" + std::to_string(c.seq) +
                     " S=" + std::to_string(c.kvSeq) +
                     " D=" + std::to_string(c.headDim) +
                     (c.causal ? " causal" : "");
  SCOPED_TRACE(name);
  const int64_t batch = c.batch;
  Shape qShape = {batch, c.heads, c.seq, c.headDim};
  Shape kvShape = {batch, c.kvHeads, c.kvSeq, c.headDim};
  int64_t qCount = batch * c.heads * c.seq * c.headDim;
  int64_t kvCount = batch * c.kvHeads * c.kvSeq * c.headDim;
  std::mt19937 rng(static_cast<unsigned>(c.seq * 131 + c.kvSeq * 7 +
                                         c.headDim + c.causal));
  std::vector<Bf16> q = randomBf16(rng, qCount, 2.0f),
                    k = randomBf16(rng, kvCount, 2.0f),
                    v = randomBf16(rng, kvCount, 1.0f),
                    dout = randomBf16(rng, qCount, 1.0f);
  KernelAttrs attrs;
  attrs.ints = {c.causal ? 1 : 0};
  attrs.floats = {1.0 / std::sqrt(static_cast<double>(c.headDim))};
  auto ref = [](std::vector<Bf16> &data, const Shape &shape) {
    return TensorRef{data.data(), DType::BF16, shape};
  };

  // The CPU in the bhtd layout: out and the rows' log-sum-exp, then dq,
  // dk, dv from that out.
  Shape rowShape = {batch, c.heads, c.seq};
  int64_t rowCount = batch * c.heads * c.seq;
  std::vector<float> cpuLse(rowCount);
  Reference want{std::vector<Bf16>(qCount), std::vector<Bf16>(qCount),
                 std::vector<Bf16>(kvCount), std::vector<Bf16>(kvCount)};
  ASSERT_TRUE(runCpuKernel(KernelKind::Attention, attrs,
                           {ref(q, qShape), ref(k, kvShape), ref(v, kvShape)},
                           {ref(want.out, qShape),
                            TensorRef{cpuLse.data(), DType::F32, rowShape}},
                           pool)
                  .isOk());
  ASSERT_TRUE(runCpuKernel(KernelKind::AttentionGrad, attrs,
                           {ref(q, qShape), ref(k, kvShape), ref(v, kvShape),
                            ref(want.out, qShape), ref(dout, qShape)},
                           {ref(want.dq, qShape), ref(want.dk, kvShape),
                            ref(want.dv, kvShape)},
                           pool)
                  .isOk());

  // The operands in `layout`; the CPU computes the same bits there.
  LaidOperands laid = layOut(c, layout, q, k, v, want.out, dout);
  attrs.ints.push_back(layout);
  if (layout != 0)
    expectCpuLayoutMatches(laid, attrs, want, layout, pool);
  const Placement &qAt = laid.qAt, &kAt = laid.kAt, &vAt = laid.vAt,
                  &oAt = laid.oAt;
  const Shape &laidQ = laid.q, &laidKv = laid.kv, &laidO = laid.o;
  std::vector<Bf16> &lq = laid.lq, &lk = laid.lk, &lv = laid.lv,
                    &lout = laid.lout, &ldout = laid.ldout;

  // The emulated kernels with the launch's grids, shared memory and
  // strides.
  FlashLaunch forward, backward;
  TensorRef qRef{nullptr, DType::BF16, laidQ},
      kvRef{nullptr, DType::BF16, laidKv}, oRef{nullptr, DType::BF16, laidO};
  ASSERT_EQ(flashLaunch({qRef, kvRef, kvRef}, attrs, forward, &oRef), "");
  ASSERT_EQ(flashLaunch({qRef, kvRef, kvRef, oRef, oRef}, attrs, backward),
            "");
  ASSERT_TRUE(forward.tensorCores && backward.tensorCores);
  ASSERT_TRUE(forward.stridesAligned16 && backward.stridesAligned16);
#ifdef LLMC_FLASH_EMULATION_D64_TILES
  // cuda-flash-emulation-tiles: the kernels compiled with the D = 64 sizes
  // of this target's LLMC_FLASH_TC_D64_* definitions, launched with them.
  if (c.headDim == 64) {
    FlashTcTileSizes tiles = {
        LLMC_FLASH_TC_D64_FORWARD_ROW_BLOCKS, LLMC_FLASH_TC_D64_FORWARD_KEYS,
        LLMC_FLASH_TC_D64_ROWS_ROW_BLOCKS,    LLMC_FLASH_TC_D64_ROWS_KEYS,
        LLMC_FLASH_TC_D64_KEYS_ROW_BLOCKS,    LLMC_FLASH_TC_D64_KEYS_QUERIES};
    flashTensorCoreLaunch(tiles, true, qShape, kvShape, forward);
    flashTensorCoreLaunch(tiles, false, qShape, kvShape, backward);
  }
#endif
  FlashLayout forwardLayout, backwardLayout;
  static_assert(sizeof(FlashLayout) == sizeof(FlashOperands));
  std::memcpy(&forwardLayout, &forward.layout, sizeof forwardLayout);
  std::memcpy(&backwardLayout, &backward.layout, sizeof backwardLayout);
  const Bf16 poison{0x7f7f};
  std::vector<Bf16> gpuOut(qCount, poison), gpuDq(lq.size(), poison),
      gpuDk(lk.size(), poison), gpuDv(lv.size(), poison);
  // Packed: one gradient buffer for dq, dk and dv.
  Bf16 *dkData = layout == 2 ? gpuDq.data() : gpuDk.data();
  Bf16 *dvData = layout == 2 ? gpuDq.data() : gpuDv.data();
  std::vector<float> gpuLse(rowCount, NAN), lse(rowCount, NAN),
      delta(rowCount, NAN);
  int heads = static_cast<int>(c.heads), kvHeads = static_cast<int>(c.kvHeads);
  long long seq = c.seq, kvSeq = c.kvSeq;
  int causal = c.causal ? 1 : 0;
  float scale = static_cast<float>(attrs.floats[0]);
  bool wide = c.headDim == 128;
  Forward forwardKernel = wide ? llmc_flash_attention_tc_forward_bf16_d128
                               : llmc_flash_attention_tc_forward_bf16_d64;
  Rows rowsKernel = wide ? llmc_flash_attention_tc_grad_rows_bf16_d128
                         : llmc_flash_attention_tc_grad_rows_bf16_d64;
  Keys keysKernel = wide ? llmc_flash_attention_tc_grad_keys_bf16_d128
                         : llmc_flash_attention_tc_grad_keys_bf16_d64;
  runGrid(forward.tensorCoreQueryBlocks, forward.tensorCoreForwardShared, [&] {
    forwardKernel(lq.data(), lk.data(), lv.data(), gpuOut.data(),
                  gpuLse.data(), heads, kvHeads, seq, kvSeq, causal, scale,
                  forwardLayout);
  });
  compare("attention " + name, oAt.gather(gpuOut), want.out);
  expectLseClose(gpuLse, cpuLse);

  // The backward twice: recomputing the statistics (forwardLse null), and
  // reading the forward's log-sum-exp as the autodiff pass arranges.
  for (const float *forwardLse : {(const float *)nullptr,
                                  (const float *)gpuLse.data()}) {
    std::string how = forwardLse ? " (forward lse) " : " ";
    std::fill(gpuDq.begin(), gpuDq.end(), poison);
    std::fill(gpuDk.begin(), gpuDk.end(), poison);
    std::fill(gpuDv.begin(), gpuDv.end(), poison);
    std::fill(lse.begin(), lse.end(), NAN);
    runGrid(backward.tensorCoreQueryBlocks, backward.tensorCoreRowsShared, [&] {
      rowsKernel(lq.data(), lk.data(), lv.data(), lout.data(), ldout.data(),
                 forwardLse, gpuDq.data(), lse.data(), delta.data(), heads,
                 kvHeads, seq, kvSeq, causal, scale, backwardLayout);
    });
    const float *keysLse = forwardLse ? forwardLse : lse.data();
    runGrid(backward.tensorCoreKeyBlocks, backward.tensorCoreKeysShared, [&] {
      keysKernel(lq.data(), lk.data(), lv.data(), ldout.data(), keysLse,
                 delta.data(), dkData, dvData, heads, kvHeads, seq, kvSeq,
                 causal, scale, backwardLayout);
    });
    compare("attention_grad dq" + how + name, qAt.gather(gpuDq), want.dq);
    compare("attention_grad dk" + how + name,
            kAt.gather(layout == 2 ? gpuDq : gpuDk), want.dk);
    compare("attention_grad dv" + how + name,
            vAt.gather(layout == 2 ? gpuDq : gpuDv), want.dv);
    // Packed: every element of the gradient written (no poison left).
    if (layout == 2)
      expectNoPoison(gpuDq, poison);
  }
}

// D = 64 and 128, causal and not, grouped heads (B = 1, Hq = 2, Hkv = 1):
// one partial tile (T = 13 < 16), exact tiles (64), partial last tiles past
// one and two tiles of every kernel (T = 130: 128- and 64-row tiles; 16-,
// 32- and 64-key or -query tiles, so both cp.async buffers alternate), and
// cross attention; then B = 2 with 2 and 8 query heads over 2 key/value
// heads. About 20 s on the 2-core build machine (a fiber switch per thread
// and barrier).
TEST(FlashTensorCoreEmulation, MatchesTheCpu) {
  ThreadPool pool;
#ifdef LLMC_FLASH_EMULATION_D64_TILES
  // Only D = 64 has other sizes here.
  for (bool causal : {false, true})
    for (int64_t seq : {13, 64, 130, 200})
      runCase({1, 2, 1, seq, seq, 64, causal}, 0, pool);
  runCase({1, 2, 1, 20, 100, 64, false}, 0, pool);
  runCase({1, 2, 1, 130, 70, 64, false}, 0, pool);
  runCase({2, 2, 2, 100, 100, 64, true}, 0, pool);
  return;
#endif
  for (int64_t headDim : {64, 128})
    for (bool causal : {false, true})
      for (int64_t seq : {13, 64, 130})
        runCase({1, 2, 1, seq, seq, headDim, causal}, 0, pool);
  for (int64_t headDim : {64, 128}) {
    runCase({1, 2, 1, 20, 100, headDim, false}, 0, pool);
    runCase({1, 2, 1, 130, 70, headDim, false}, 0, pool);
  }
  runCase({2, 2, 2, 100, 100, 64, true}, 0, pool);
  runCase({2, 8, 2, 70, 70, 128, true}, 0, pool);
}

// The [B, T, H, D] layouts (docs/cuda.md, "Attention on [B, T, H, D]"):
// bthd and packed (q, k, v one [B, T, Hq + 2 Hkv, D] tensor, one packed
// gradient), D = 64 and 128, causal and not, grouped heads, batches of 2
// (the batch stride), partial tiles; cross attention in bthd (packed is
// self-attention only). The CPU in each layout gives the bits of bhtd; the
// kernels compare with the tolerance above. About 40 s here.
TEST(FlashTensorCoreEmulation, StridedLayoutsMatchTheCpu) {
  ThreadPool pool;
  for (int64_t layout : {1, 2})
    for (int64_t headDim : {64, 128})
      runCase({2, 4, 2, 70, 70, headDim, true}, layout, pool);
  runCase({1, 2, 1, 70, 70, 64, false}, 2, pool);
  runCase({1, 2, 1, 20, 100, 64, false}, 1, pool);
}

} // namespace
} // namespace llmc::rt::cuda::emulated
