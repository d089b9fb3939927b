//===- CudaKernelsTest.cpp - CUDA kernels against the CPU references ------===//
//
// Needs a GPU (ctest label `cuda`); every test skips, saying so, when
// cudaGetDeviceCount finds none. Each generated elementwise kernel and the
// cuBLASLt matmul run on fresh random data and are compared with
// runCpuKernel on the same inputs.
//
// Tolerances, and why:
//  - f32 neg, abs, add, sub, mul, div, sqrt, rsqrt, max, min, cast, compare,
//    select: 1e-6 relative (each is one or two IEEE correctly rounded steps
//    on both sides, so they are expected bitwise equal; the printed maximum
//    ulp difference shows it).
//  - bf16 and f16 of those: exact equality (computed in f32 and rounded
//    the same way, round-to-nearest-even by the same bit manipulation as
//    floatToBf16 / floatToF16, subnormal f16 and overflow included).
//  - f32 exp, log, tanh: 4 ulps (CUDA's expf/tanhf are within 2 ulps,
//    logf 1, glibc's within 1).
//  - f32 gelu, silu, swiglu: 1e-5 relative (the GPU computes in f32, the
//    CPU reference in f64; errors of the argument are amplified by exp/erfc
//    up to a few 1e-6 on the tested range [-4, 4]).
//  - bf16 and f16 exp, log, tanh, gelu, silu, swiglu: 1 ulp of the type
//    (the f32 values
//    differ by a few f32 ulps, which changes the bf16 rounding only when
//    the value lies that close to a bf16 midpoint).
//  - matmul: |gpu - cpu| <= 2 K 2^-24 sum_k |a_ik b_kj| per element (both
//    accumulate in f32, in different orders), plus 1 bf16 ulp of the
//    reference for a bf16 or f16 result (the two f32 sums may round to
//    neighbouring 16-bit values).
//  - flash attention forward and backward (through CudaKernels): see
//    FlashAttentionMatchesTheCpu.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/libs/CublasLt.h"
#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "codegen/cuda/elementwise/ElementwiseKernels.h"
#include "runtime/cuda/libs/Nvrtc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

class CudaTest : public GpuTest {
protected:
  CudaTest() : GpuTest("the CUDA kernel tests") {}
};

/// Element `i` of a random operand drawn as `value`: integers spread over
/// most of their range (products overflow and must wrap), other dtypes
/// stored as DeviceTensor::set does.
void storeOperand(DeviceTensor &t, int64_t i, float value) {
  if (t.dtype == DType::I32)
    t.set(i, value * 5.0e8f);
  else if (t.dtype == DType::I64)
    t.set(i, static_cast<double>(value) * 2.0e18);
  else
    t.set(i, value);
}

/// Distance in units in the last place of `dtype` (f32, bf16 or f16)
/// between two values of it; 0 for two NaNs, huge for one.
int64_t ulpDistance(float a, float b, DType dtype) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto ordered = [&](float v) {
    if (dtype == DType::F16) { // f16 bits are sign-magnitude too
      uint16_t half = floatToF16(v);
      int64_t magnitude = half & 0x7fff;
      return (half & 0x8000) ? -magnitude : magnitude;
    }
    int32_t bits;
    std::memcpy(&bits, &v, 4);
    if (dtype == DType::BF16)
      bits >>= 16;
    int32_t magnitude = bits & (dtype == DType::BF16 ? 0x7fff : 0x7fffffff);
    return bits < 0 ? -static_cast<int64_t>(magnitude)
                    : static_cast<int64_t>(magnitude);
  };
  return std::llabs(ordered(a) - ordered(b));
}

enum class Check { Relative1e6, Exact, Ulps4, Relative1e5, Bf16Ulp };

Check checkFor(const ElementwiseSignature &sig) {
  // 16-bit results (bf16, f16) or compares of 16-bit values.
  auto half = [](DType d) { return d == DType::BF16 || d == DType::F16; };
  bool bf16 = half(sig.result) ||
              (half(sig.inputs.back()) && sig.result == DType::I1);
  switch (sig.kind) {
  case KernelKind::Exp:
  case KernelKind::Log:
  case KernelKind::Tanh:
    return bf16 ? Check::Bf16Ulp : Check::Ulps4;
  case KernelKind::Gelu:
  case KernelKind::Silu:
  case KernelKind::Swiglu:
    return bf16 ? Check::Bf16Ulp : Check::Relative1e5;
  default:
    return bf16 || sig.result == DType::I1 ? Check::Exact : Check::Relative1e6;
  }
}

/// Fresh random operands suited to the kernel: positive for log, sqrt and
/// rsqrt, divisors away from 0, equal pairs and NaNs mixed in where the
/// kernel has a rule for them.
void fillInputs(const ElementwiseSignature &sig,
                std::vector<std::unique_ptr<DeviceTensor>> &inputs,
                std::mt19937 &rng) {
  std::uniform_real_distribution<float> general(-4.0f, 4.0f);
  std::uniform_real_distribution<float> positive(0.01f, 10.0f);
  std::bernoulli_distribution coin(0.5);
  bool positiveOnly = sig.kind == KernelKind::Log ||
                      sig.kind == KernelKind::Sqrt ||
                      sig.kind == KernelKind::Rsqrt;
  bool withNan = sig.kind == KernelKind::Max || sig.kind == KernelKind::Min ||
                 sig.kind == KernelKind::Compare;
  for (size_t k = 0; k < inputs.size(); ++k) {
    DeviceTensor &t = *inputs[k];
    for (int64_t i = 0; i < t.count(); ++i) {
      float value;
      if (t.dtype == DType::I1)
        value = coin(rng);
      else if (positiveOnly)
        value = positive(rng);
      else if (sig.kind == KernelKind::Div && k == 1)
        value = (coin(rng) ? 1.0f : -1.0f) * positive(rng);
      else
        value = general(rng);
      if (withNan && i % 101 == 7 + static_cast<int64_t>(k))
        value = NAN;
      storeOperand(t, i, value);
    }
  }
  // Equal pairs (every 5th element) so eq/le/ge and max/min ties happen.
  if (sig.kind == KernelKind::Compare || sig.kind == KernelKind::Max ||
      sig.kind == KernelKind::Min)
    for (int64_t i = 0; i < inputs[0]->count(); i += 5)
      std::memcpy(inputs[1]->host.data() + i * dtypeSize(inputs[1]->dtype),
                  inputs[0]->host.data() + i * dtypeSize(inputs[0]->dtype),
                  dtypeSize(inputs[0]->dtype));
}

/// Runs `sig` on n elements (offset by `offsetElements` from an aligned
/// allocation, which forces the scalar entry when nonzero) and compares.
void runElementwise(const ElementwiseSignature &sig, int64_t n,
                    int64_t offsetElements, Vectorize vectorize,
                    std::mt19937 &rng, ThreadPool &pool) {
  SCOPED_TRACE(describe(sig) + ", n=" + std::to_string(n) + ", offset " +
               std::to_string(offsetElements) +
               (vectorize == Vectorize::Never ? ", scalar" : ""));
  ElementwiseSource source;
  ASSERT_OK(generateElementwiseKernel(sig, source));
  CompiledCuda compiled;
  NvrtcOptions options; // sm_90, the default cache
  ASSERT_OK(
      compileCuda(source.source, source.entry + ".cu", options, compiled));
  std::unique_ptr<CudaLibrary> library;
  ASSERT_OK(CudaLibrary::load(compiled.cubin, library));

  std::vector<std::unique_ptr<DeviceTensor>> inputs;
  for (DType dtype : sig.inputs)
    inputs.push_back(std::make_unique<DeviceTensor>(dtype, Shape{n}));
  fillInputs(sig, inputs, rng);
  DeviceTensor result(sig.result, {n}), expected(sig.result, {n});
  std::vector<const void *> devicePointers;
  std::vector<TensorRef> cpuInputs;
  for (auto &input : inputs) {
    ASSERT_OK(input->allocate(offsetElements));
    ASSERT_OK(input->upload());
    devicePointers.push_back(input->device);
    cpuInputs.push_back(input->hostRef());
  }
  ASSERT_OK(result.allocate(offsetElements));
  ASSERT_OK(result.upload());
  // Poison the whole allocation so an unwritten element shows.
  ASSERT_EQ(cudaMemset(result.allocation, 0xA5, result.allocatedBytes),
            cudaSuccess);

  ASSERT_OK(launchElementwise(source, *library, devicePointers, result.device,
                              n, nullptr, vectorize));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_OK(result.download());

  KernelAttrs attrs;
  attrs.ints = sig.ints;
  ASSERT_OK(
      runCpuKernel(sig.kind, attrs, cpuInputs, {expected.hostRef()}, pool));

  Check check = checkFor(sig);
  int64_t maxUlps = 0, failures = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (sig.result == DType::I32 || sig.result == DType::I64) {
      // Integer arithmetic (wrapping): bitwise equal.
      size_t size = dtypeSize(sig.result);
      if (std::memcmp(result.host.data() + i * size,
                      expected.host.data() + i * size, size) != 0 &&
          ++failures <= 5)
        ADD_FAILURE() << "element " << i << " differs";
      continue;
    }
    float got = static_cast<float>(result.get(i));
    float want = static_cast<float>(expected.get(i));
    DType ulpType = sig.result == DType::BF16  ? DType::BF16
                    : sig.result == DType::F16 ? DType::F16
                                               : DType::F32;
    int64_t ulps = sig.result == DType::I1 ? (got != want) * INT64_MAX
                                           : ulpDistance(got, want, ulpType);
    maxUlps = std::max(maxUlps, ulps);
    bool ok = false;
    switch (check) {
    case Check::Exact:
      ok = ulps == 0;
      break;
    case Check::Relative1e6:
      ok = ulps == 0 || std::fabs(got - want) <= 1e-6 * std::fabs(want);
      break;
    case Check::Relative1e5:
      ok = ulps == 0 || std::fabs(got - want) <= 1e-5 * std::fabs(want);
      break;
    case Check::Ulps4:
      ok = ulps <= 4;
      break;
    case Check::Bf16Ulp:
      ok = ulps <= 1;
      break;
    }
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << "element " << i << ": gpu " << got << ", cpu " << want
                    << " (" << ulps << " ulps)";
  }
  EXPECT_EQ(failures, 0);
  std::printf("  %-36s n=%-7lld %s max %lld ulps\n", describe(sig).c_str(),
              static_cast<long long>(n),
              vectorize == Vectorize::Never || offsetElements ? "scalar"
                                                              : "vector",
              static_cast<long long>(maxUlps == INT64_MAX ? -1 : maxUlps));
}

TEST_F(CudaTest, ElementwiseKernelsMatchTheCpu) {
  std::mt19937 rng(std::random_device{}());
  ThreadPool pool;
  for (const ElementwiseSignature &sig : allElementwiseSignatures()) {
    // An odd count: the vector entry's tail runs too.
    runElementwise(sig, 100003, 0, Vectorize::IfAligned, rng, pool);
    runElementwise(sig, 4099, 0, Vectorize::Never, rng, pool);
    // One element off alignment: the launcher must take the scalar entry.
    runElementwise(sig, 4099, 1, Vectorize::IfAligned, rng, pool);
  }
}

TEST_F(CudaTest, VectorizeNeedsAlignment) {
  ElementwiseSource source;
  ASSERT_OK(generateElementwiseKernel(
      {KernelKind::Add, {DType::F32, DType::F32}, DType::F32, {}}, source));
  alignas(16) static float data[16];
  std::vector<const void *> aligned = {data, data, data};
  std::vector<const void *> shifted = {data, data + 1, data};
  EXPECT_TRUE(canVectorize(source, aligned, 8));
  EXPECT_FALSE(canVectorize(source, shifted, 8));
  EXPECT_FALSE(canVectorize(source, aligned, 3)); // shorter than one vector
}

/// The CPU's Matmul on the same operands, and the comparison bound.
void runMatmul(CublasLtMatmul &matmul, DType operands, DType resultType,
               int64_t batch, int64_t m, int64_t n, int64_t k, bool transA,
               bool transB, bool sharedRhs, std::mt19937 &rng,
               ThreadPool &pool) {
  SCOPED_TRACE(std::string(dtypeName(operands)) + "->" + dtypeName(resultType) +
               " batch " + std::to_string(batch) + " M=" + std::to_string(m) +
               " N=" + std::to_string(n) + " K=" + std::to_string(k) +
               " transA=" + std::to_string(transA) +
               " transB=" + std::to_string(transB) +
               " sharedRhs=" + std::to_string(sharedRhs));
  int64_t rhsBatch = sharedRhs ? 1 : batch;
  DeviceTensor lhs(operands, {batch * m * k}),
      rhs(operands, {rhsBatch * k * n});
  DeviceTensor result(resultType, {batch * m * n}),
      expected(resultType, {batch * m * n});
  lhs.fillUniform(rng, -1.0f, 1.0f);
  rhs.fillUniform(rng, -1.0f, 1.0f);
  for (DeviceTensor *t : {&lhs, &rhs, &result}) {
    ASSERT_OK(t->allocate());
    ASSERT_OK(t->upload());
  }
  ASSERT_OK(result.poison(0xA5));

  MatmulProblem problem;
  problem.operands = operands;
  problem.result = resultType;
  problem.batch = batch;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.transA = transA;
  problem.transB = transB;
  problem.sharedRhs = sharedRhs;
  ASSERT_OK(
      matmul.run(problem, lhs.device, rhs.device, result.device, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_OK(result.download());

  Shape lhsShape = {batch, transA ? k : m, transA ? m : k};
  Shape rhsShape = {transB ? n : k, transB ? k : n};
  if (!sharedRhs)
    rhsShape.insert(rhsShape.begin(), batch);
  KernelAttrs attrs;
  attrs.ints = {transA, transB};
  ASSERT_OK(runCpuKernel(KernelKind::Matmul, attrs,
                         {{lhs.host.data(), operands, lhsShape},
                          {rhs.host.data(), operands, rhsShape}},
                         {{expected.host.data(), resultType, {batch, m, n}}},
                         pool));

  int64_t failures = 0;
  double worst = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double absSum = 0;
        for (int64_t p = 0; p < k; ++p) {
          int64_t ai = b * m * k + (transA ? p * m + i : i * k + p);
          int64_t bi =
              (sharedRhs ? 0 : b * k * n) + (transB ? j * k + p : p * n + j);
          // The product in f32, as the bound was first computed.
          absSum += std::fabs(static_cast<float>(lhs.get(ai)) *
                              static_cast<float>(rhs.get(bi)));
        }
        int64_t ci = (b * m + i) * n + j;
        double got = result.get(ci);
        double want = expected.get(ci);
        double bound = 2.0 * k * 0x1p-24 * absSum;
        if (resultType == DType::BF16 && want != 0)
          bound += bf16Ulp(want);
        if (resultType == DType::F16 && want != 0) // one f16 ulp: 2^(e - 10)
          bound += std::ldexp(1.0, std::ilogb(want) - 10);
        worst = std::max(worst, std::fabs(got - want) / std::max(bound, 1e-30));
        if (!(std::fabs(got - want) <= bound) && ++failures <= 5)
          ADD_FAILURE() << "element [" << b << ", " << i << ", " << j
                        << "]: gpu " << got << ", cpu " << want << ", bound "
                        << bound;
      }
  EXPECT_EQ(failures, 0);
  std::printf("  matmul %s->%s [%lld] %lldx%lldx%lld tA=%d tB=%d shared=%d: "
              "worst error %.3f of the bound\n",
              dtypeName(operands), dtypeName(resultType),
              static_cast<long long>(batch), static_cast<long long>(m),
              static_cast<long long>(n), static_cast<long long>(k), transA,
              transB, sharedRhs, worst);
}

TEST_F(CudaTest, CublasLtMatmulMatchesTheCpu) {
  std::mt19937 rng(std::random_device{}());
  ThreadPool pool;
  std::unique_ptr<CublasLtMatmul> matmul;
  ASSERT_OK(CublasLtMatmul::create(matmul));
  struct Types {
    DType operands, result;
  };
  for (Types t :
       {Types{DType::F32, DType::F32}, Types{DType::BF16, DType::BF16},
        Types{DType::BF16, DType::F32}, Types{DType::F16, DType::F16},
        Types{DType::F16, DType::F32}})
    for (bool transA : {false, true})
      for (bool transB : {false, true}) {
        runMatmul(*matmul, t.operands, t.result, 1, 128, 96, 64, transA, transB,
                  false, rng, pool);
        runMatmul(*matmul, t.operands, t.result, 3, 33, 17, 40, transA, transB,
                  false, rng, pool);
        runMatmul(*matmul, t.operands, t.result, 4, 24, 40, 56, transA, transB,
                  true, rng, pool);
      }
  // Every distinct problem asked the heuristic once; a repeat hits the cache.
  size_t plans = matmul->cachedPlans();
  EXPECT_EQ(plans, 5u * 4u * 3u); // type pairs x transposes x shapes
  runMatmul(*matmul, DType::F32, DType::F32, 1, 128, 96, 64, false, false,
            false, rng, pool);
  EXPECT_EQ(matmul->cachedPlans(), plans);
}

TEST_F(CudaTest, CublasLtRefusesUnsupportedTypes) {
  std::unique_ptr<CublasLtMatmul> matmul;
  ASSERT_OK(CublasLtMatmul::create(matmul));
  MatmulProblem problem;
  problem.operands = DType::F64;
  problem.m = problem.n = problem.k = 4;
  Status status = matmul->run(problem, nullptr, nullptr, nullptr, nullptr);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_NE(status.message().find("expected f32, bf16 or f16 operands, got f64"),
            std::string::npos)
      << status.message();
}

// ---- Flash attention ---------------------------------------------------------

/// Largest |gpu - cpu| over a tensor against `relative` times the tensor's
/// largest reference magnitude (plus one ulp of the element for bf16, whose
/// two roundings of nearby f32/f64 values may land on neighbours).
void compareAttention(const std::string &name, const DeviceTensor &gpu,
                      const DeviceTensor &cpu, double relative) {
  CompareResult r = compareToLargest(name, gpu, cpu, relative);
  std::printf("  %-44s max error %.2e of the largest |value| %.3g\n",
              name.c_str(), r.worst, r.largest);
}

struct AttentionCase {
  int64_t seq, kvSeq, headDim;
  bool causal;
  /// Elements past cudaMalloc's alignment where every operand starts: 1
  /// misaligns bf16 operands for the 16-byte loads of the tensor-core
  /// kernels, so the scalar ones run.
  int64_t offsetElements = 0;
};

/// Forward and backward of attention on the GPU (CudaKernels::launch, the
/// flash kernels) against the CPU reference (runCpuKernel) for
/// B = 2, Hq = 4, Hkv = 2 (grouped queries).
void runFlashAttention(CudaKernels &kernels, DType dtype, AttentionCase c,
                       std::mt19937 &rng, ThreadPool &pool) {
  std::string name = std::string(dtypeName(dtype)) + " T=" +
                     std::to_string(c.seq) + " S=" + std::to_string(c.kvSeq) +
                     " D=" + std::to_string(c.headDim) +
                     (c.causal ? " causal" : "") +
                     (c.offsetElements ? " unaligned" : "");
  SCOPED_TRACE(name);
  const int64_t batch = 2, heads = 4, kvHeads = 2;
  Shape qShape = {batch, heads, c.seq, c.headDim};
  Shape kvShape = {batch, kvHeads, c.kvSeq, c.headDim};
  DeviceTensor q(dtype, qShape), k(dtype, kvShape), v(dtype, kvShape),
      dout(dtype, qShape);
  // Scores of a few units: the softmax neither uniform nor one-hot.
  q.fillUniform(rng, -2.0f, 2.0f);
  k.fillUniform(rng, -2.0f, 2.0f);
  v.fillUniform(rng, -1.0f, 1.0f);
  dout.fillUniform(rng, -1.0f, 1.0f);
  KernelAttrs attrs;
  attrs.ints = {c.causal ? 1 : 0};
  attrs.floats = {1.0 / std::sqrt(static_cast<double>(c.headDim))};

  // The CPU reference: out and the rows' log-sum-exp, then dq, dk, dv from
  // that out.
  Shape rowShape = {batch, heads, c.seq};
  DeviceTensor out(dtype, qShape), dq(dtype, qShape), dk(dtype, kvShape),
      dv(dtype, kvShape), lse(DType::F32, rowShape),
      gpuLse(DType::F32, rowShape);
  ASSERT_OK(runCpuKernel(KernelKind::Attention, attrs,
                         {q.hostRef(), k.hostRef(), v.hostRef()},
                         {out.hostRef(), lse.hostRef()}, pool));
  DeviceTensor cpuDq(dtype, qShape), cpuDk(dtype, kvShape),
      cpuDv(dtype, kvShape);
  ASSERT_OK(runCpuKernel(
      KernelKind::AttentionGrad, attrs,
      {q.hostRef(), k.hostRef(), v.hostRef(), out.hostRef(), dout.hostRef()},
      {cpuDq.hostRef(), cpuDk.hostRef(), cpuDv.hostRef()}, pool));

  // The GPU: the forward into gpuOut and gpuLse, the backward from the
  // CPU's out (so that both backward passes see the same operands), once
  // recomputing the statistics and once reading the GPU forward's lse (as
  // the autodiff pass arranges).
  DeviceTensor gpuOut(dtype, qShape);
  for (DeviceTensor *t :
       {&q, &k, &v, &out, &dout, &gpuOut, &dq, &dk, &dv, &gpuLse}) {
    ASSERT_OK(t->allocate(c.offsetElements));
    ASSERT_OK(t->upload());
  }
  for (DeviceTensor *t : {&gpuOut, &gpuLse})
    ASSERT_OK(t->poison());
  ASSERT_OK(launchSelected(kernels, KernelKind::Attention, attrs,
                           {q.deviceRef(), k.deviceRef(), v.deviceRef()},
                           {gpuOut.deviceRef(), gpuLse.deviceRef()}, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_OK(gpuOut.download());
  ASSERT_OK(gpuLse.download());
  double relative = dtype == DType::F32 ? 1e-4 : 2e-2;
  compareAttention("attention " + name, gpuOut, out, relative);
  // The log-sum-exp is f32 either way: sums of the same products in f32
  // against f64, a few units large (1e-5 of the largest |lse|).
  compareAttention("attention lse " + name, gpuLse, lse, 1e-5);

  for (bool withLse : {false, true}) {
    std::string how = withLse ? " (forward lse) " : " ";
    for (DeviceTensor *t : {&dq, &dk, &dv})
      ASSERT_OK(t->poison());
    std::vector<TensorRef> inputs = {q.deviceRef(), k.deviceRef(),
                                     v.deviceRef(), out.deviceRef(),
                                     dout.deviceRef()};
    if (withLse)
      inputs.push_back(gpuLse.deviceRef());
    ASSERT_OK(launchSelected(kernels, KernelKind::AttentionGrad, attrs, inputs,
                             {dq.deviceRef(), dk.deviceRef(), dv.deviceRef()},
                             nullptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (DeviceTensor *t : {&dq, &dk, &dv})
      ASSERT_OK(t->download());
    compareAttention("attention_grad dq" + how + name, dq, cpuDq, relative);
    compareAttention("attention_grad dk" + how + name, dk, cpuDk, relative);
    compareAttention("attention_grad dv" + how + name, dv, cpuDv, relative);
  }
}

// Tolerances, relative to the tensor's largest magnitude: f32 1e-4 (the GPU
// sums in f32 over up to S keys and D columns in tile order, the CPU in f64:
// about sqrt(S D) 2^-24 relative to the summands, and the backward's
// dp - delta cancels, so an element-wise relative bound would be
// meaningless near zero); bf16 2e-2 plus one bf16 ulp of the element (the
// inputs are the same bf16 values on both sides, the results round once
// to bf16 from f32 vs f64, and the backward reads the rounded bf16 `out`).
// The bf16 cases with D = 64 and 128 run the tensor-core kernels
// (attention/FlashTc.cuh), whose P and dS are also rounded to
// bf16 before their products (as FlashAttention-2): the same 2e-2.
TEST_F(CudaTest, FlashAttentionMatchesTheCpu) {
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  std::mt19937 rng(std::random_device{}());
  ThreadPool pool;
  // f16 runs the scalar kernels (f32 arithmetic on f16 storage).
  for (DType dtype : {DType::F32, DType::BF16, DType::F16})
    for (bool causal : {false, true}) {
      for (int64_t headDim : {16, 64, 128})
        runFlashAttention(*kernels, dtype, {64, 64, headDim, causal}, rng,
                          pool);
      // Not a multiple of any tile; a head dimension padded to 64.
      runFlashAttention(*kernels, dtype, {100, 100, 64, causal}, rng, pool);
      runFlashAttention(*kernels, dtype, {100, 100, 48, causal}, rng, pool);
      runFlashAttention(*kernels, dtype, {37, 37, 32, causal}, rng, pool);
    }
  // Cross attention: fewer queries than keys, and more.
  runFlashAttention(*kernels, DType::F32, {20, 100, 64, false}, rng, pool);
  runFlashAttention(*kernels, DType::F32, {100, 20, 128, false}, rng, pool);
}

// The tensor-core path (bf16, D = 64 and 128) over several tiles of 64 and
// a partial last tile, causal and not, with grouped queries (B = 2, Hq = 4,
// Hkv = 2); cross attention with partial tiles on either side; and bf16
// operands off 16-byte alignment, which take the scalar kernels. Same
// tolerance as above (2e-2 of the largest magnitude plus one bf16 ulp).
TEST_F(CudaTest, FlashAttentionTensorCoresMatchTheCpu) {
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  std::mt19937 rng(std::random_device{}());
  ThreadPool pool;
  for (bool causal : {false, true})
    for (int64_t headDim : {64, 128})
      // One partial tile (T < 64), one and two full tiles, partial last
      // tiles past one and two (the key tiles of 16 and 32 of D = 128 and
      // the two cp.async buffers alternate), and many tiles.
      for (int64_t seq : {20, 64, 100, 130, 1024})
        runFlashAttention(*kernels, DType::BF16, {seq, seq, headDim, causal},
                          rng, pool);
  runFlashAttention(*kernels, DType::BF16, {20, 100, 64, false}, rng, pool);
  runFlashAttention(*kernels, DType::BF16, {20, 100, 128, false}, rng, pool);
  runFlashAttention(*kernels, DType::BF16, {130, 70, 128, false}, rng, pool);
  runFlashAttention(*kernels, DType::BF16, {70, 130, 64, false}, rng, pool);
  runFlashAttention(*kernels, DType::BF16, {100, 100, 64, true, 1}, rng, pool);
}

/// The forward and backward time of causal bf16 attention for q
/// [batch, heads, seq, headDim] and k, v [batch, kvHeads, seq, headDim],
/// printed so that a run of the tests shows the speed (median of 20 after 3
/// warm-ups; no assertion on it). Asserts that the backward is
/// deterministic: two runs give the same bits.
void timeFlashAttention(CudaKernels &kernels, const char *name, int64_t batch,
                        int64_t heads, int64_t kvHeads, int64_t seq,
                        int64_t headDim) {
  Shape shape = {batch, heads, seq, headDim};
  Shape kvShape = {batch, kvHeads, seq, headDim};
  std::mt19937 rng(1234);
  DeviceTensor q(DType::BF16, shape), k(DType::BF16, kvShape),
      v(DType::BF16, kvShape), out(DType::BF16, shape),
      dout(DType::BF16, shape), dq(DType::BF16, shape),
      dk(DType::BF16, kvShape), dv(DType::BF16, kvShape),
      lse(DType::F32, {batch, heads, seq});
  for (DeviceTensor *t : {&q, &k, &v, &dout})
    t->fillUniform(rng, -1.0f, 1.0f);
  for (DeviceTensor *t : {&q, &k, &v, &out, &dout, &dq, &dk, &dv, &lse}) {
    ASSERT_OK(t->allocate());
    ASSERT_OK(t->upload());
  }
  KernelAttrs attrs;
  attrs.ints = {1};
  attrs.floats = {1.0 / std::sqrt(static_cast<double>(headDim))};
  // As in training: the forward returns the log-sum-exp and the backward
  // reads it; `recompute` times the backward without it.
  auto forward = [&] {
    return launchSelected(kernels, KernelKind::Attention, attrs,
                          {q.deviceRef(), k.deviceRef(), v.deviceRef()},
                          {out.deviceRef(), lse.deviceRef()}, nullptr);
  };
  auto backward = [&] {
    return launchSelected(kernels, KernelKind::AttentionGrad, attrs,
                          {q.deviceRef(), k.deviceRef(), v.deviceRef(),
                           out.deviceRef(), dout.deviceRef(), lse.deviceRef()},
                          {dq.deviceRef(), dk.deviceRef(), dv.deviceRef()},
                          nullptr);
  };
  auto recompute = [&] {
    return launchSelected(kernels, KernelKind::AttentionGrad, attrs,
                          {q.deviceRef(), k.deviceRef(), v.deviceRef(),
                           out.deviceRef(), dout.deviceRef()},
                          {dq.deviceRef(), dk.deviceRef(), dv.deviceRef()},
                          nullptr);
  };
  // The median of 20 launches after 3 warm-ups.
  auto medianMs = [&](const std::function<Status()> &run, double &ms) {
    ASSERT_OK(medianLaunchMs(run, 23, 3, ms));
  };
  double forwardMs = 0.0, backwardMs = 0.0, recomputeMs = 0.0;
  medianMs(forward, forwardMs);
  medianMs(recompute, recomputeMs);
  medianMs(backward, backwardMs);

  // Determinism: the gradients of the last timed run, then of one more.
  std::vector<std::vector<uint8_t>> first;
  for (DeviceTensor *t : {&dq, &dk, &dv}) {
    ASSERT_OK(t->download());
    first.push_back(t->host);
  }
  ASSERT_EQ(cudaMemset(dk.device, 0, dk.bytes()), cudaSuccess);
  ASSERT_OK(backward());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const char *names[] = {"dq", "dk", "dv"};
  int index = 0;
  for (DeviceTensor *t : {&dq, &dk, &dv}) {
    ASSERT_OK(t->download());
    EXPECT_TRUE(t->host == first[index])
        << names[index] << " differs between two runs of the backward";
    ++index;
  }
  // Causal flops as FlashAttention counts them: 4 B H T^2 D / 2 forward,
  // 2.5 times that backward.
  double flops = 4.0 * batch * heads * seq * seq * headDim / 2.0;
  std::printf("flash attention bf16 %s B=%lld H=%lld Hkv=%lld T=%lld D=%lld "
              "causal: forward %.3f ms (%.0f TFLOP/s), backward %.3f ms "
              "(%.0f TFLOP/s; %.3f ms recomputing the log-sum-exp)\n",
              name, static_cast<long long>(batch),
              static_cast<long long>(heads), static_cast<long long>(kvHeads),
              static_cast<long long>(seq), static_cast<long long>(headDim),
              forwardMs, flops / forwardMs * 1e-9, backwardMs,
              2.5 * flops / backwardMs * 1e-9, recomputeMs);
}

// GPT-2 124M's attention (B = 16, H = 12, T = 1024, D = 64, causal, bf16)
// and a LLaMA-like one (D = 128, 32 query heads over 8 key/value heads).
TEST_F(CudaTest, FlashAttentionTimingGpt2) {
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  timeFlashAttention(*kernels, "GPT-2 124M", 16, 12, 12, 1024, 64);
  timeFlashAttention(*kernels, "LLaMA-like", 4, 32, 8, 1024, 128);
}

TEST_F(CudaTest, FlashAttentionRefusesLargeHeads) {
  std::unique_ptr<CudaKernels> kernels;
  ASSERT_OK(createHandWrittenKernels(kernels));
  TensorRef q{nullptr, DType::F32, {1, 1, 4, 256}};
  TensorRef out{reinterpret_cast<void *>(16), DType::F32, {1, 1, 4, 256}};
  Status status = launchSelected(*kernels, KernelKind::Attention, {{0}, {0.0625}},
                                  {q, q, q}, {out}, nullptr);
  EXPECT_EQ(status.code(), StatusCode::Unimplemented);
  EXPECT_NE(status.message().find("head dimensions up to 128, got 256"),
            std::string::npos)
      << status.message();
}

} // namespace
} // namespace llmc::rt::cuda
