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
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/CudaModule.h"
#include "runtime/cuda/DeviceKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace llmc::rt::cuda {
namespace {

#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    ::llmc::rt::Status status_ = (expr);                                       \
    ASSERT_TRUE(status_.isOk()) << status_.toString();                         \
  } while (0)

class CudaAttentionLayoutTest : public ::testing::Test {
protected:
  void SetUp() override {
    int count = 0;
    cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      GTEST_SKIP() << "no CUDA device; the CUDA kernel tests need a GPU";
    }
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
};

/// Host values as f32 (bf16 stored rounded), and their bytes in a dtype.
struct HostTensor {
  DType dtype;
  Shape shape;
  std::vector<uint8_t> bytes;
  HostTensor(DType dtype, Shape shape)
      : dtype(dtype), shape(std::move(shape)),
        bytes(static_cast<size_t>(numElements(this->shape)) *
              dtypeSize(dtype)) {}
  int64_t size() const { return numElements(shape); }
  float get(int64_t i) const {
    if (dtype == DType::BF16) {
      uint16_t bits;
      std::memcpy(&bits, &bytes[2 * i], 2);
      uint32_t word = static_cast<uint32_t>(bits) << 16;
      float value;
      std::memcpy(&value, &word, 4);
      return value;
    }
    float value;
    std::memcpy(&value, &bytes[4 * i], 4);
    return value;
  }
  void set(int64_t i, float value) {
    if (dtype == DType::BF16) {
      uint32_t word;
      std::memcpy(&word, &value, 4);
      uint16_t bits =
          static_cast<uint16_t>((word + 0x7fff + ((word >> 16) & 1)) >> 16);
      std::memcpy(&bytes[2 * i], &bits, 2);
      return;
    }
    std::memcpy(&bytes[4 * i], &value, 4);
  }
  void fill(std::mt19937 &rng, float range) {
    std::uniform_real_distribution<float> draw(-range, range);
    for (int64_t i = 0; i < size(); ++i)
      set(i, draw(rng));
  }
  TensorRef ref() { return {bytes.data(), dtype, shape}; }
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
  void copy(HostTensor &bhtd, HostTensor &laid, bool toLaid) const {
    size_t row = static_cast<size_t>(headDim) * dtypeSize(bhtd.dtype);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < seq; ++t) {
          size_t dense = static_cast<size_t>((b * heads + h) * seq + t) * row;
          size_t strided = at(b, h, t) * row / headDim;
          if (toLaid)
            std::memcpy(&laid.bytes[strided], &bhtd.bytes[dense], row);
          else
            std::memcpy(&bhtd.bytes[dense], &laid.bytes[strided], row);
        }
  }
};

void compare(const std::string &name, const HostTensor &got,
             const HostTensor &want) {
  double relative = want.dtype == DType::F32 ? 1e-4 : 2e-2;
  double largest = 0.0, worst = 0.0;
  for (int64_t i = 0; i < want.size(); ++i)
    largest = std::max(largest, std::fabs(double(want.get(i))));
  int64_t failures = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    double expected = want.get(i), actual = got.get(i);
    double bound = relative * largest;
    if (want.dtype == DType::BF16 && expected != 0.0)
      bound += std::ldexp(1.0, std::ilogb(expected) - 7);
    double error = std::fabs(actual - expected);
    worst = std::max(worst, error / std::max(largest, 1e-30));
    if (!(error <= bound) && ++failures <= 5)
      ADD_FAILURE() << name << " element " << i << ": gpu " << actual
                    << ", cpu " << expected << ", bound " << bound;
  }
  EXPECT_EQ(failures, 0) << name;
  std::printf("  %-56s max error %.2e of %.3g\n", name.c_str(), worst,
              largest);
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

/// The device copy of a host tensor, `offset` elements into its allocation.
struct DeviceCopy {
  void *base = nullptr;
  void *at = nullptr;
  ~DeviceCopy() {
    if (base)
      (void)cudaFree(base);
  }
  Status upload(const HostTensor &t, int64_t offset) {
    LLMC_CUDA_CHECK(cudaMalloc(&base, t.bytes.size() + 64), "cudaMalloc");
    at = static_cast<uint8_t *>(base) + offset * dtypeSize(t.dtype);
    LLMC_CUDA_CHECK(cudaMemcpy(at, t.bytes.data(), t.bytes.size(),
                               cudaMemcpyHostToDevice),
                    "cudaMemcpy to device");
    return Status::ok();
  }
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
  HostTensor q(dtype, qShape), k(dtype, kvShape), v(dtype, kvShape),
      dout(dtype, qShape);
  q.fill(rng, 2.0f);
  k.fill(rng, 2.0f);
  v.fill(rng, 1.0f);
  dout.fill(rng, 1.0f);
  KernelAttrs attrs{{c.causal ? 1 : 0},
                    {1.0 / std::sqrt(static_cast<double>(c.headDim))}};

  // 1. The CPU reference in bhtd.
  HostTensor out(dtype, qShape), dq(dtype, qShape), dk(dtype, kvShape),
      dv(dtype, kvShape);
  ASSERT_OK(runCpuKernel(KernelKind::Attention, attrs,
                         {q.ref(), k.ref(), v.ref()}, {out.ref()}, pool));
  ASSERT_OK(runCpuKernel(KernelKind::AttentionGrad, attrs,
                         {q.ref(), k.ref(), v.ref(), out.ref(), dout.ref()},
                         {dq.ref(), dk.ref(), dv.ref()}, pool));

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
  HostTensor lq(dtype, laidQ), lk(dtype, laidKv), lv(dtype, laidKv),
      lout(dtype, laidO), ldout(dtype, laidO);
  qAt.copy(q, lq, true);
  kAt.copy(k, packed ? lq : lk, true);
  vAt.copy(v, packed ? lq : lv, true);
  if (packed)
    lk = lv = lq;
  oAt.copy(out, lout, true);
  oAt.copy(dout, ldout, true);
  attrs.ints.push_back(c.layout);

  // 3. The CPU in the layout: the bits of bhtd.
  {
    HostTensor cOut(dtype, laidO), cDq(dtype, laidQ), cDk(dtype, laidKv),
        cDv(dtype, laidKv);
    ASSERT_OK(runCpuKernel(KernelKind::Attention, attrs,
                           {lq.ref(), lk.ref(), lv.ref()}, {cOut.ref()},
                           pool));
    std::vector<TensorRef> grads = {cDq.ref(), cDk.ref(), cDv.ref()};
    if (packed)
      grads.resize(1);
    ASSERT_OK(runCpuKernel(
        KernelKind::AttentionGrad, attrs,
        {lq.ref(), lk.ref(), lv.ref(), lout.ref(), ldout.ref()}, grads, pool));
    HostTensor back(dtype, qShape), kvBack(dtype, kvShape);
    oAt.copy(back, cOut, false);
    EXPECT_EQ(back.bytes, out.bytes) << "the CPU's out in this layout";
    qAt.copy(back, cDq, false);
    EXPECT_EQ(back.bytes, dq.bytes) << "the CPU's dq in this layout";
    kAt.copy(kvBack, packed ? cDq : cDk, false);
    EXPECT_EQ(kvBack.bytes, dk.bytes) << "the CPU's dk in this layout";
    vAt.copy(kvBack, packed ? cDq : cDv, false);
    EXPECT_EQ(kvBack.bytes, dv.bytes) << "the CPU's dv in this layout";
  }

  // 4. The GPU in the layout: the forward into gOut, the backward from the
  //    CPU's out (both backward passes see the same operands).
  HostTensor gOut(dtype, laidO), gDq(dtype, laidQ), gDk(dtype, laidKv),
      gDv(dtype, laidKv);
  DeviceCopy dQ, dK, dV, dOut, dDout, dGOut, dGDq, dGDk, dGDv;
  const int64_t off = c.offsetElements;
  ASSERT_OK(dQ.upload(lq, off));
  ASSERT_OK(dK.upload(lk, off));
  ASSERT_OK(dV.upload(lv, off));
  ASSERT_OK(dOut.upload(lout, off));
  ASSERT_OK(dDout.upload(ldout, off));
  for (auto [copy, host] : {std::pair{&dGOut, &gOut}, std::pair{&dGDq, &gDq},
                            std::pair{&dGDk, &gDk}, std::pair{&dGDv, &gDv}}) {
    std::fill(host->bytes.begin(), host->bytes.end(), 0x7f);
    ASSERT_OK(copy->upload(*host, off));
  }
  auto device = [](DeviceCopy &d, const HostTensor &t) {
    return TensorRef{d.at, t.dtype, t.shape};
  };
  ASSERT_OK(kernels.launch(KernelKind::Attention, attrs,
                           {device(dQ, lq), device(dK, lk), device(dV, lv)},
                           {device(dGOut, gOut)}, nullptr));
  std::vector<TensorRef> gradOutputs = {device(dGDq, gDq), device(dGDk, gDk),
                                        device(dGDv, gDv)};
  if (packed)
    gradOutputs.resize(1);
  ASSERT_OK(kernels.launch(KernelKind::AttentionGrad, attrs,
                           {device(dQ, lq), device(dK, lk), device(dV, lv),
                            device(dOut, lout), device(dDout, ldout)},
                           gradOutputs, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (auto [copy, host] : {std::pair{&dGOut, &gOut}, std::pair{&dGDq, &gDq},
                            std::pair{&dGDk, &gDk}, std::pair{&dGDv, &gDv}})
    ASSERT_EQ(cudaMemcpy(host->bytes.data(), copy->at, host->bytes.size(),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);

  HostTensor got(dtype, qShape), kvGot(dtype, kvShape);
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
    for (int64_t i = 0; i < gDq.size(); ++i)
      if (std::memcmp(&gDq.bytes[i * poison.size()], poison.data(),
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
  ASSERT_OK(CudaKernels::create(kernels));
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
