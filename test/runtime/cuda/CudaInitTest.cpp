//===- CudaInitTest.cpp - initial values drawn on the device --------------===//
//
// Part of cuda-session-tests; needs a GPU (every test skips without one).
//
// CudaSession::drawArgument (runtime/cuda/kernels/init/Init.cuh) against
// the host's draw (initialArgumentBytes), element by element:
// 1. a hand-built program of one argument per case: normal, uniform, ones,
//    a constant, zeros, optimizer state, in f32, f64 and bf16, of odd sizes
//    (a last element without its Box-Muller partner) and one of 70,001
//    elements; an f16 argument is refused (`drawn` false: the host draws).
// 2. every parameter of GPT-2 tiny in bf16, as the training loop binds it.
// Tolerance: the device's double log, sin and cos may differ from glibc's
// in their last bits, which reaches the stored value only when the double
// lies that close to a rounding boundary of the stored type: every element
// within 1 ulp of the stored type and at most 1 in 100,000 differing
// (expected: none).
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cuda/session/CudaSession.h"
#include "codegen/cuda/PlanKernels.h"
#include "runtime/train/Init.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

class CudaInitTest : public GpuTest {
protected:
  CudaInitTest() : GpuTest("the device draw tests", SelectDevice::Leave) {}
};

/// Element k of `bytes` as an integer of the element's width, whose
/// difference between two values of one sign is their distance in ulps.
int64_t elementBits(const std::vector<uint8_t> &bytes, size_t width,
                    size_t k) {
  uint64_t word = 0;
  std::memcpy(&word, bytes.data() + k * width, width);
  return static_cast<int64_t>(word);
}

/// Draws argument `index` of `session` on the device and compares it with
/// the host's draw; `drawn` says whether the device drew it.
void expectDeviceDrawMatchesHost(CudaSession &session, size_t index,
                                 bool &drawn) {
  const Executable &exe = session.executable();
  ASSERT_OK(session.drawArgument(index, 1337, drawn));
  if (!drawn)
    return;
  std::vector<uint8_t> host;
  ASSERT_OK(initialArgumentBytes(exe, index, 1337, host));
  TensorRef slot;
  ASSERT_OK(session.argument(index, slot));
  std::vector<uint8_t> device;
  ASSERT_OK(session.copyToHost(slot, device));
  ASSERT_EQ(device.size(), host.size()) << exe.arguments[index].name;
  size_t width = dtypeSize(slot.dtype);
  size_t n = host.size() / width, differing = 0;
  for (size_t k = 0; k < n; ++k) {
    int64_t a = elementBits(device, width, k), b = elementBits(host, width, k);
    if (a == b)
      continue;
    ++differing;
    int64_t distance = a > b ? a - b : b - a;
    ASSERT_LE(distance, 1) << exe.arguments[index].name << " element " << k;
  }
  if (differing)
    std::printf("  %s: %zu of %zu elements differ from the host by 1 ulp\n",
                exe.arguments[index].name.c_str(), differing, n);
  EXPECT_LE(differing * 100000, n) << exe.arguments[index].name << ": "
                                   << differing << " of " << n << " differ";
}

TEST_F(CudaInitTest, HandBuiltCasesMatchTheHost) {
  struct Case {
    DType dtype;
    int64_t n;
    InitSpec::Kind kind;
    double scale;
    ArgumentRole role = ArgumentRole::Parameter;
  };
  const std::vector<Case> cases = {
      {DType::F32, 70001, InitSpec::Kind::Normal, 0.02},
      {DType::BF16, 4097, InitSpec::Kind::Normal, 1.0},
      {DType::F64, 9, InitSpec::Kind::Normal, 3.0},
      {DType::F32, 1001, InitSpec::Kind::Uniform, 0.5},
      {DType::BF16, 5, InitSpec::Kind::Ones, 0.0},
      {DType::F32, 3, InitSpec::Kind::Constant, 3.5},
      {DType::F32, 7, InitSpec::Kind::Zeros, 0.0},
      {DType::F32, 11, InitSpec::Kind::Normal, 1.0,
       ArgumentRole::OptimizerState},
      {DType::F16, 8, InitSpec::Kind::Normal, 1.0},
  };
  Executable exe;
  exe.ranks.resize(1);
  uint64_t next = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    ValueInfo value{cases[c].dtype, {cases[c].n}, (next + 63) / 64 * 64};
    next = value.offset + value.bytes();
    exe.ranks[0].values.push_back(value);
    ArgumentInfo arg;
    arg.name = "case" + std::to_string(c);
    arg.role = cases[c].role;
    arg.value = static_cast<int32_t>(c);
    arg.init = {cases[c].kind, cases[c].scale};
    exe.arguments.push_back(arg);
  }
  exe.ranks[0].arenaBytes = (next + 63) / 64 * 64;
  planCudaKernels(exe); // codegen's step for a program built by hand
  std::unique_ptr<CudaSession> session;
  ASSERT_OK(CudaSession::create(exe, CudaSessionOptions(), session));
  for (size_t c = 0; c < cases.size(); ++c) {
    bool drawn = false;
    expectDeviceDrawMatchesHost(*session, c, drawn);
    EXPECT_EQ(drawn, cases[c].dtype != DType::F16) << "case " << c;
  }
}

TEST_F(CudaInitTest, Gpt2TinyParametersMatchTheHost) {
  Executable exe;
  ASSERT_OK(readExecutable(binaryDir() + "/gpt2-tiny-bf16.llmcx", exe));
  std::unique_ptr<CudaSession> session;
  ASSERT_OK(CudaSession::create(exe, CudaSessionOptions(), session));
  size_t parameters = 0;
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    if (exe.arguments[i].role != ArgumentRole::Parameter)
      continue;
    ++parameters;
    bool drawn = false;
    expectDeviceDrawMatchesHost(*session, i, drawn);
    EXPECT_TRUE(drawn) << exe.arguments[i].name;
  }
  EXPECT_GT(parameters, 10u);
}

} // namespace
} // namespace llmc::rt::cuda
