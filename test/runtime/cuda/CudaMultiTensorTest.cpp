//===- CudaMultiTensorTest.cpp - multi-tensor launches on the GPU ---------===//
//
// Part of cuda-session-tests; needs a GPU (every test skips without one).
//
// 1. A hand-built program whose commands form three multi-tensor launches
//    (codegen/cuda/optimizer/MultiTensor.h): casts f32 -> bf16, an elementwise region
//    x * s + y, and sums of squares, of odd sizes (tails shorter than a
//    chunk or a 16-byte move, one tensor not 16-byte aligned), on
//    CudaSession against rt::Session with fresh random data. Casts and the
//    region: bitwise (each element runs the code of the member's own
//    kernel, which the fused-region tests hold to the CPU's bits). Sums of
//    squares: within 2^-22 relative (2 f32 ulps): both sides round each
//    square to f32 and fold in double, rounding once; only the order of the
//    double additions differs.
// 2. One GPT-2 tiny bf16 training step compiled for fused kernels, with
//    LLMC_MULTI_TENSOR=0 LLMC_FOLD_ADDS=0 (every command alone) and with the
//    groups and the residual adds folded into the norm gradients: every
//    output has the same bits (a group computes each element, and cuts each
//    sum of squares into chunks, exactly as the lone kernels do; a folded
//    add rounds as the Add kernel).
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/Session.h"
#include "runtime/cuda/session/CudaSession.h"
#include "codegen/cuda/PlanKernels.h"
#include "runtime/train/Init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

class CudaMultiTensorTest : public GpuTest {
protected:
  CudaMultiTensorTest()
      : GpuTest("the multi-tensor tests", SelectDevice::Leave) {}
};

TEST_F(CudaMultiTensorTest, HandBuiltGroupsMatchCpu) {
  const std::vector<int64_t> sizes = {1, 7, 768, 4096, 4099, 70001};
  HandProgram p;
  // 1. Casts, the first input 4 bytes past alignment (the scalar loop).
  for (size_t k = 0; k < sizes.size(); ++k) {
    int32_t x = p.input(DType::F32, {sizes[k]}, k == 0 ? 0 : (k == 2 ? 4 : 0));
    p.command(KernelKind::Cast, {x}, {p.output(DType::BF16, {sizes[k]})});
  }
  // 2. out = x * broadcast(s) + y, one region per size.
  int32_t s = p.input(DType::F32, {});
  for (int64_t n : sizes) {
    int32_t x = p.input(DType::F32, {n}), y = p.input(DType::F32, {n});
    int32_t wide = p.value(DType::F32, {n}), product = p.value(DType::F32, {n});
    int32_t out = p.output(DType::F32, {n});
    p.command(KernelKind::FusedElementwise, {s, x, y}, {out}, {3});
    p.command(KernelKind::Broadcast, {s}, {wide}, {});
    p.command(KernelKind::Mul, {x, wide}, {product});
    p.command(KernelKind::Add, {product, y}, {out});
  }
  // 3. Sums of squares, one input misaligned.
  for (size_t k = 0; k < sizes.size(); ++k) {
    int32_t x = p.input(DType::F32, {sizes[k] * 3}, k == 3 ? 8 : 0);
    p.command(KernelKind::SumSquares, {x}, {p.output(DType::F32, {})});
  }

  std::unique_ptr<Session> cpu;
  SessionOptions options;
  options.threads = 2;
  ASSERT_OK(Session::create(p.exe, options, cpu));
  planCudaKernels(p.exe); // codegen's step for a program built by hand
  std::unique_ptr<CudaSession> gpu;
  ASSERT_OK(CudaSession::create(p.exe, CudaSessionOptions(), gpu));
  EXPECT_EQ(gpu->multiTensorGroups(), 3u);
  EXPECT_EQ(gpu->multiTensorCommands(), 3 * sizes.size());

  std::mt19937 random(20261130);
  std::uniform_real_distribution<float> draw(-3.0f, 3.0f);
  for (const ArgumentInfo &arg : p.exe.arguments) {
    const ValueInfo &info = p.rank().values[arg.value];
    std::vector<float> data(static_cast<size_t>(numElements(info.shape)));
    for (float &v : data)
      v = draw(random);
    ASSERT_OK(cpu->setArgument(arg.name, info.dtype, info.shape, data.data(),
                               data.size() * 4));
    ASSERT_OK(gpu->setArgument(arg.name, info.dtype, info.shape, data.data(),
                               data.size() * 4));
  }
  ASSERT_OK(cpu->run());
  ASSERT_OK(gpu->run());
  ASSERT_OK(gpu->run()); // the second run is captured as a CUDA graph

  for (size_t o = 0; o < p.exe.outputs.size(); ++o) {
    TensorRef want, got;
    ASSERT_OK(cpu->output(o, want));
    ASSERT_OK(gpu->output(o, got));
    std::vector<uint8_t> host;
    ASSERT_OK(gpu->copyToHost(got, host));
    ASSERT_EQ(host.size(), want.bytes());
    if (want.numElements() != 1 || want.dtype != DType::F32 ||
        want.shape.size() != 0) {
      EXPECT_EQ(std::memcmp(host.data(), want.data, host.size()), 0)
          << p.exe.outputs[o].name << " differs from the CPU's bits";
      continue;
    }
    float cpuSum, gpuSum;
    std::memcpy(&cpuSum, want.data, 4);
    std::memcpy(&gpuSum, host.data(), 4);
    EXPECT_LE(std::fabs(gpuSum - cpuSum), std::ldexp(std::fabs(cpuSum), -22))
        << p.exe.outputs[o].name << ": gpu " << gpuSum << ", cpu " << cpuSum;
  }
}

/// One training step of `program` (beside this binary) from the seed-1337
/// initial state and a fixed batch; the bytes of every output.
void stepOutputs(const std::string &program, bool groups,
                 std::vector<std::vector<uint8_t>> &outputs,
                 size_t &groupCount, size_t &folds) {
  Executable exe;
  ASSERT_OK(readExecutable(binaryDir() + "/" + program, exe));
  ASSERT_EQ(setenv("LLMC_MULTI_TENSOR", groups ? "1" : "0", 1), 0);
  ASSERT_EQ(setenv("LLMC_FOLD_ADDS", groups ? "1" : "0", 1), 0);
  std::unique_ptr<CudaSession> gpu;
  Status created = CudaSession::create(exe, CudaSessionOptions(), gpu);
  unsetenv("LLMC_MULTI_TENSOR");
  unsetenv("LLMC_FOLD_ADDS");
  ASSERT_OK(created);
  groupCount = gpu->multiTensorGroups();
  folds = gpu->foldedAdds();
  const RankProgram &rank = exe.ranks.front();
  std::mt19937 random(11);
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const ArgumentInfo &arg = exe.arguments[i];
    const ValueInfo &info = rank.values[arg.value];
    std::vector<uint8_t> bytes;
    if (arg.role != ArgumentRole::Input) {
      ASSERT_OK(initialArgumentBytes(exe, i, 1337, bytes));
    } else if (info.dtype == DType::I32) {
      std::vector<int32_t> tokens(static_cast<size_t>(numElements(info.shape)));
      for (int32_t &t : tokens)
        t = static_cast<int32_t>(random() % 64);
      bytes.assign(reinterpret_cast<uint8_t *>(tokens.data()),
                   reinterpret_cast<uint8_t *>(tokens.data() + tokens.size()));
    } else {
      float one = 1.0f; // optimizer.step
      bytes.assign(reinterpret_cast<uint8_t *>(&one),
                   reinterpret_cast<uint8_t *>(&one) + 4);
    }
    ASSERT_OK(gpu->setArgument(arg.name, info.dtype, info.shape, bytes.data(),
                               bytes.size()));
  }
  ASSERT_OK(gpu->run());
  outputs.clear();
  for (size_t o = 0; o < exe.outputs.size(); ++o) {
    TensorRef out;
    ASSERT_OK(gpu->output(o, out));
    outputs.emplace_back();
    ASSERT_OK(gpu->copyToHost(out, outputs.back()));
  }
}

TEST_F(CudaMultiTensorTest, Gpt2TinyStepIsBitwiseWithAndWithoutGroups) {
  std::vector<std::vector<uint8_t>> alone, grouped;
  size_t none = 0, groups = 0, noFolds = 0, folds = 0;
  stepOutputs("gpt2-tiny-bf16-fused.llmcx", false, alone, none, noFolds);
  stepOutputs("gpt2-tiny-bf16-fused.llmcx", true, grouped, groups, folds);
  EXPECT_EQ(none, 0u);
  EXPECT_EQ(noFolds, 0u);
  // The residual adds after the layer norms' gradients, folded in.
  EXPECT_GE(folds, 2u);
  // The weight casts, the sums of squares, and AdamW with and without
  // weight decay at least.
  EXPECT_GE(groups, 4u);
  ASSERT_EQ(alone.size(), grouped.size());
  for (size_t o = 0; o < alone.size(); ++o)
    EXPECT_TRUE(alone[o] == grouped[o]) << "output #" << o;
}

TEST_F(CudaMultiTensorTest, Gpt2TinyFp16StepIsBitwiseWithAndWithoutFolds) {
  std::vector<std::vector<uint8_t>> alone, grouped;
  size_t none = 0, groups = 0, noFolds = 0, folds = 0;
  stepOutputs("gpt2-tiny-fp16-fused.llmcx", false, alone, none, noFolds);
  stepOutputs("gpt2-tiny-fp16-fused.llmcx", true, grouped, groups, folds);
  EXPECT_EQ(noFolds, 0u);
  // f16's residual adds after the layer norms' gradients, folded in too.
  EXPECT_GE(folds, 2u);
  ASSERT_EQ(alone.size(), grouped.size());
  for (size_t o = 0; o < alone.size(); ++o)
    EXPECT_TRUE(alone[o] == grouped[o]) << "output #" << o;
}

} // namespace
} // namespace llmc::rt::cuda
