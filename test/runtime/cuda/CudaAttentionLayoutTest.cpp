//===- CudaAttentionLayoutTest.cpp - flash attention on [B, T, H, D] operands ===//
//
// Part of `cuda-kernel-tests` (needs a GPU; skips without one). The flash
// kernels read q, k, v and write out (forward), read out and dout and write
// dq, dk, dv (backward) through the strides of the bthd and packed layouts
// (runtime/AttentionLayout.h): each case draws bhtd operands, runs the CPU
// reference (runCpuKernel) in bhtd, lays the operands out, runs
// CudaKernels::launch in that layout and compares what it wrote, read back
// through the same layout, with the bhtd reference. The CPU in the layout
// is checked against bhtd bit for bit (only the addressing differs).
//
// Tolerance as FlashAttentionMatchesTheCpu (CudaKernelsTest.cpp), relative
// to the tensor's largest magnitude: f32 1e-4, bf16 2e-2 plus one bf16 ulp
// of the element. Every byte of the outputs starts as 0x7f poison; the
// packed gradient is checked to be written everywhere.
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

class CudaAttentionLayoutTest : public GpuTest {
protected:
  CudaAttentionLayoutTest() : GpuTest("the CUDA kernel tests") {}
};

/// Where row (b, h, t) of a [B, H, T, D] operand lies in `layout`: bhtd,
/// bthd ([B, T, H, D]) or packed (heads [first, first + H) of a
/// [B, T, all, D] tensor).
struct Placement {
  int64_t layout, batch, heads, seq, headDim, all = 0, first = 0;
  int64_t at(int64_t b, int64_t h, int64_t t) const {
    if (layout == 0)
      return ((b * heads + h) * seq + t) * headDim;
    if (layout == 1)
      return ((b * seq + t) * heads + h) * headDim;
    return ((b * seq + t) * all + first + h) * headDim;
  }
  /// Copies the element (b, h, t, d) of `bhtd` to (or from) `laid`.
  void copy(DeviceTensor &bhtd, DeviceTensor &laid, bool toLaid) const {
    size_t row = static_cast<size_t>(headDim) * dtypeSize(bhtd.dtype);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < seq; ++t) {
          size_t dense = static_cast<size_t>((b * heads + h) * seq + t) * row;
          size_t strided = at(b, h, t) * row / headDim;
          if (toLaid)
            std::memcpy(&laid.host[strided], &bhtd.host[dense], row);
          else
            std::memcpy(&bhtd.host[dense], &laid.host[strided], row);
        }
  }
};

/// Tolerance as FlashAttentionMatchesTheCpu (see the file comment).
void compare(const std::string &name, const DeviceTensor &got,
             const DeviceTensor &want) {
  double relative = want.dtype == DType::F32 ? 1e-4 : 2e-2;
  CompareResult r = compareToLargest(name, got, want, relative);
  std::printf("  %-56s max error %.2e of %.3g\n", name.c_str(), r.worst,
              r.largest);
}

struct LayoutCase {
  int64_t layout; ///< 1 bthd, 2 packed
  DType dtype;
  int64_t batch, heads, kvHeads, seq, kvSeq, headDim;
  bool causal;
  /// Elements past cudaMalloc's alignment where every operand starts: 1
  /// misaligns bf16 rows for the tensor-core kernels' 16-byte copies, so
  /// the scalar kernels run with the same strides.
  int64_t offsetElements = 0;
};

void runLayoutCase(CudaKernels &kernels, const LayoutCase &c,
                   std::mt19937 &rng, ThreadPool &pool) {
  std::string name = std::string(c.layout == 1 ? "bthd " : "packed ") +
                     dtypeName(c.dtype) + " B=" + std::to_string(c.batch) +
                     " Hq=" + std::to_string(c.heads) +
                     " Hkv=" + std::to_string(c.kvHeads) +
                     " T=" + std::to_string(c.seq) +
                     " S=" + std::to_string(c.kvSeq) +
                     " D=" + std::to_string(c.headDim) +
                     (c.causal ? " causal" : "") +
                     (c.offsetElements ? " unaligned" : "");
  SCOPED_TRACE(name);
  const DType dtype = c.dtype;
  Shape qShape = {c.batch, c.heads, c.seq, c.headDim};
  Shape kvShape = {c.batch, c.kvHeads, c.kvSeq, c.headDim};
  DeviceTensor q(dtype, qShape), k(dtype, kvShape), v(dtype, kvShape),
      dout(dtype, qShape);
  q.fillUniform(rng, -2.0f, 2.0f);
  k.fillUniform(rng, -2.0f, 2.0f);
  v.fillUniform(rng, -1.0f, 1.0f);
  dout.fillUniform(rng, -1.0f, 1.0f);
  KernelAttrs attrs{{c.causal ? 1 : 0},
                    {1.0 / std::sqrt(static_cast<double>(c.headDim))}};

  // 1. The CPU reference in bhtd.
  DeviceTensor out(dtype, qShape), dq(dtype, qShape), dk(dtype, kvShape),
      dv(dtype, kvShape);
  ASSERT_OK(runCpuKernel(KernelKind::Attention, attrs,
                         {q.hostRef(), k.hostRef(), v.hostRef()},
                         {out.hostRef()}, pool));
  ASSERT_OK(runCpuKernel(
      KernelKind::AttentionGrad, attrs,
      {q.hostRef(), k.hostRef(), v.hostRef(), out.hostRef(), dout.hostRef()},
      {dq.hostRef(), dk.hostRef(), dv.hostRef()}, pool));

  // 2. The operands in the layout (packed: q, k, v one tensor).
  const bool packed = c.layout == 2;
  const int64_t all = c.heads + 2 * c.kvHeads;
  Placement qAt{c.layout, c.batch, c.heads, c.seq, c.headDim, all, 0};
  Placement kAt{c.layout, c.batch, c.kvHeads, c.kvSeq, c.headDim, all,
                c.heads};
  Placement vAt{c.layout, c.batch, c.kvHeads, c.kvSeq, c.headDim, all,
                c.heads + c.kvHeads};
  Placement oAt{1, c.batch, c.heads, c.seq, c.headDim};
  Shape laidQ = {c.batch, c.seq, packed ? all : c.heads, c.headDim};
  Shape laidKv = packed ? laidQ : Shape{c.batch, c.kvSeq, c.kvHeads, c.headDim};
  Shape laidO = {c.batch, c.seq, c.heads, c.headDim};
  DeviceTensor lq(dtype, laidQ), lk(dtype, laidKv), lv(dtype, laidKv),
      lout(dtype, laidO), ldout(dtype, laidO);
  qAt.copy(q, lq, true);
  kAt.copy(k, packed ? lq : lk, true);
  vAt.copy(v, packed ? lq : lv, true);
  if (packed)
    lk.host = lv.host = lq.host; // laidKv is laidQ
  oAt.copy(out, lout, true);
  oAt.copy(dout, ldout, true);
  attrs.ints.push_back(c.layout);

  // 3. The CPU in the layout: the bits of bhtd.
  {
    DeviceTensor cOut(dtype, laidO), cDq(dtype, laidQ), cDk(dtype, laidKv),
        cDv(dtype, laidKv);
    ASSERT_OK(runCpuKernel(KernelKind::Attention, attrs,
                           {lq.hostRef(), lk.hostRef(), lv.hostRef()},
                           {cOut.hostRef()}, pool));
    std::vector<TensorRef> grads = {cDq.hostRef(), cDk.hostRef(),
                                    cDv.hostRef()};
    if (packed)
      grads.resize(1);
    ASSERT_OK(runCpuKernel(KernelKind::AttentionGrad, attrs,
                           {lq.hostRef(), lk.hostRef(), lv.hostRef(),
                            lout.hostRef(), ldout.hostRef()},
                           grads, pool));
    DeviceTensor back(dtype, qShape), kvBack(dtype, kvShape);
    oAt.copy(back, cOut, false);
    EXPECT_EQ(back.host, out.host) << "the CPU's out in this layout";
    qAt.copy(back, cDq, false);
    EXPECT_EQ(back.host, dq.host) << "the CPU's dq in this layout";
    kAt.copy(kvBack, packed ? cDq : cDk, false);
    EXPECT_EQ(kvBack.host, dk.host) << "the CPU's dk in this layout";
    vAt.copy(kvBack, packed ? cDq : cDv, false);
    EXPECT_EQ(kvBack.host, dv.host) << "the CPU's dv in this layout";
  }

  // 4. The GPU in the layout: the forward into gOut, the backward from the
  //    CPU's out (both backward passes see the same operands).
  DeviceTensor gOut(dtype, laidO), gDq(dtype, laidQ), gDk(dtype, laidKv),
      gDv(dtype, laidKv);
  const int64_t off = c.offsetElements;
  for (DeviceTensor *t : {&lq, &lk, &lv, &lout, &ldout}) {
    ASSERT_OK(t->allocate(off));
    ASSERT_OK(t->upload());
  }
  for (DeviceTensor *t : {&gOut, &gDq, &gDk, &gDv}) {
    std::fill(t->host.begin(), t->host.end(), 0x7f);
    ASSERT_OK(t->allocate(off));
    ASSERT_OK(t->upload());
  }
  ASSERT_OK(launchSelected(kernels, KernelKind::Attention, attrs,
                           {lq.deviceRef(), lk.deviceRef(), lv.deviceRef()},
                           {gOut.deviceRef()}, nullptr));
  std::vector<TensorRef> gradOutputs = {gDq.deviceRef(), gDk.deviceRef(),
                                        gDv.deviceRef()};
  if (packed)
    gradOutputs.resize(1);
  ASSERT_OK(launchSelected(kernels, KernelKind::AttentionGrad, attrs,
                           {lq.deviceRef(), lk.deviceRef(), lv.deviceRef(),
                            lout.deviceRef(), ldout.deviceRef()},
                           gradOutputs, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (DeviceTensor *t : {&gOut, &gDq, &gDk, &gDv})
    ASSERT_OK(t->download());

  DeviceTensor got(dtype, qShape), kvGot(dtype, kvShape);
  oAt.copy(got, gOut, false);
  compare("attention " + name, got, out);
  qAt.copy(got, gDq, false);
  compare("attention_grad dq " + name, got, dq);
  kAt.copy(kvGot, packed ? gDq : gDk, false);
  compare("attention_grad dk " + name, kvGot, dk);
  vAt.copy(kvGot, packed ? gDq : gDv, false);
  compare("attention_grad dv " + name, kvGot, dv);
  if (packed) {
    std::vector<uint8_t> poison(dtypeSize(dtype), 0x7f);
    for (int64_t i = 0; i < gDq.count(); ++i)
      if (std::memcmp(&gDq.host[i * poison.size()], poison.data(),
                      poison.size()) == 0) {
        ADD_FAILURE() << "packed gradient element " << i << " not written";
        break;
      }
  }
}

// bf16 D = 64 and 128 (the tensor-core kernels), causal and not, grouped
// queries, partial and several tiles, in bthd and packed; f32 and an
// unaligned bf16 case (the scalar kernels with the same strides); cross
// attention in bthd (packed is self-attention only).
TEST_F(CudaAttentionLayoutTest, StridedLayoutsMatchTheCpu) {
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  std::mt19937 rng(std::random_device{}());
  ThreadPool pool;
  for (int64_t layout : {1, 2})
    for (bool causal : {false, true})
      for (int64_t headDim : {64, 128}) {
        runLayoutCase(*kernels, {layout, DType::BF16, 2, 4, 2, 130, 130,
                                 headDim, causal},
                      rng, pool);
        runLayoutCase(*kernels, {layout, DType::BF16, 2, 12, 12, 1024, 1024,
                                 headDim, causal},
                      rng, pool);
        runLayoutCase(*kernels, {layout, DType::F32, 2, 4, 2, 100, 100,
                                 headDim, causal},
                      rng, pool);
      }
  for (int64_t layout : {1, 2})
    runLayoutCase(*kernels, {layout, DType::BF16, 2, 4, 2, 100, 100, 64, true,
                             1},
                  rng, pool);
  runLayoutCase(*kernels, {1, DType::BF16, 2, 4, 2, 20, 100, 64, false}, rng,
                pool);
  runLayoutCase(*kernels, {1, DType::F32, 2, 4, 2, 100, 20, 48, false}, rng,
                pool);
}

} // namespace
} // namespace llmc::rt::cuda
