//===- VirtualRankTest.cpp - every rank of a mesh on one GPU --------------===//
//
// Virtual ranks (runtime/cuda/session/VirtualRanks.h, docs/distributed.md
// "Virtual ranks on one GPU"). The tests that train need a GPU (label
// `cuda`) and skip without one; the refusal test runs anywhere.
//
// 1. GPT-2 tiny under dp2, tp2 and dp2 + ZeRO-3 (all-reduce, all-reduce in
//    the tp group, all-gather and reduce-scatter), 10 steps from the
//    artifacts `llmc launch -n 2` would run (compiled for devices = "cuda"),
//    on two virtual ranks of one GPU, against (a) one GPU running the
//    one-device program (gpt2-tiny-dp1.llmcx: same model, batch and data)
//    and (b) the CPU virtual devices running the same mesh (compiled with
//    --fused-kernels=false: the CPU cannot run the fused-kernel artifact).
//    Losses and gradient norms within 1e-5 relative at every step. Why 1e-5:
//    the virtual collectives add in the CPU's order, so against the CPU only
//    the kernels differ (cuBLASLt and OpenBLAS sum the f32 GEMMs in other
//    orders, f32 atomics in the embedding gradient): 1.1e-7 relative over 50
//    steps of one GPU against the CPU (docs/cuda.md, "Training on the GPU");
//    against one GPU the mesh adds the partial sums in another order, about
//    1e-7 per step (NCCL dp2 against one GPU: 1.02e-7 over 10 steps). 1e-5
//    leaves two orders of magnitude, while a wrong collective (a missing
//    member, a chunk in the wrong place, a stale buffer read before its
//    producer finished) moves the loss in the first digits after one step.
// 2. Without --virtual-ranks a mesh is refused by the plain session, the
//    message naming the flag (and llmc launch, and the CPU).
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cuda/kernels/KernelChoice.h"
#include "runtime/cuda/session/CudaSession.h"
#include "runtime/cuda/session/VirtualRanks.h"
#include "runtime/train/Trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

class VirtualRankTest : public GpuTest {
protected:
  VirtualRankTest() : GpuTest("the virtual-rank tests", SelectDevice::Leave) {}
};

constexpr size_t kSteps = 10;
constexpr double kTolerance = 1e-5;

/// kSteps steps of `exe` on `devices` ("cpu", or "cuda" through `factory`).
void trainSteps(const Executable &exe, const std::string &devices,
                DeviceSessionFactory factory, TrainReport &report,
                std::string *deviceName = nullptr) {
  TrainOptions options;
  ASSERT_OK(readTrainSettings(exe.metadata, options.settings));
  options.settings.devices = devices;
  options.settings.trainData.clear(); // the built-in corpus
  options.settings.valData.clear();
  options.settings.sampleTokens = 0;
  options.settings.checkpointDir.clear();
  options.stopAfterStep = kSteps;
  options.log = nullptr;
  if (deviceName && factory) {
    DeviceSessionFactory inner = factory;
    factory = [inner, deviceName](const Executable &executable,
                                  std::unique_ptr<DeviceSession> &session) {
      Status status = inner(executable, session);
      if (status)
        *deviceName = session->deviceName();
      return status;
    };
  }
  options.cudaSession = std::move(factory);
  options.cudaDeviceCount = cudaDeviceCount;
  ASSERT_OK(train(exe, options, report));
  ASSERT_EQ(report.steps.size(), kSteps);
}

double relative(double a, double b) {
  return std::fabs(a - b) / std::max(std::fabs(b), 1e-30);
}

/// `mesh` (gpt2-tiny-<mesh>.llmcx) on virtual ranks against one GPU and the
/// CPU, step by step.
void compareMesh(const std::string &mesh) {
  Executable launched, cpuMesh, single;
  ASSERT_OK(readExecutable(binaryDir() + "/gpt2-tiny-" + mesh + ".llmcx",
                           launched));
  ASSERT_OK(readExecutable(binaryDir() + "/gpt2-tiny-" + mesh + "-cpu.llmcx",
                           cpuMesh));
  ASSERT_OK(readExecutable(binaryDir() + "/gpt2-tiny-dp1.llmcx", single));
  ASSERT_EQ(launched.ranks.size(), 2u);
  TrainReport virtualRanks, oneGpu, cpu;
  std::string name;
  trainSteps(launched, "cuda", createVirtualRankDeviceSession, virtualRanks,
             &name);
  EXPECT_EQ(name, "cuda:0 (2 virtual ranks)");
  trainSteps(single, "cuda", createCudaDeviceSession, oneGpu);
  trainSteps(cpuMesh, "cpu", nullptr, cpu);
  double worstGpu = 0, worstCpu = 0;
  for (size_t i = 0; i < kSteps; ++i) {
    const StepMetrics &v = virtualRanks.steps[i];
    double gpuLoss = relative(v.loss, oneGpu.steps[i].loss);
    double cpuLoss = relative(v.loss, cpu.steps[i].loss);
    double gpuNorm = relative(v.gradNorm, oneGpu.steps[i].gradNorm);
    double cpuNorm = relative(v.gradNorm, cpu.steps[i].gradNorm);
    EXPECT_LT(gpuLoss, kTolerance) << mesh << " step " << i + 1 << ": loss "
                                   << v.loss << " vs one GPU "
                                   << oneGpu.steps[i].loss;
    EXPECT_LT(cpuLoss, kTolerance) << mesh << " step " << i + 1 << ": loss "
                                   << v.loss << " vs the CPU "
                                   << cpu.steps[i].loss;
    EXPECT_LT(gpuNorm, kTolerance) << mesh << " step " << i + 1;
    EXPECT_LT(cpuNorm, kTolerance) << mesh << " step " << i + 1;
    worstGpu = std::max({worstGpu, gpuLoss, gpuNorm});
    worstCpu = std::max({worstCpu, cpuLoss, cpuNorm});
  }
  // The loss must move: a run that trained nothing would match nothing.
  EXPECT_LT(virtualRanks.steps.back().loss, virtualRanks.steps.front().loss);
  std::printf("[virtual ranks] gpt2-tiny %s, %zu steps: losses %.7f -> "
              "%.7f; worst relative difference (loss, grad norm) against one "
              "GPU %.3g, against the CPU devices %.3g\n",
              mesh.c_str(), kSteps, virtualRanks.steps.front().loss,
              virtualRanks.steps.back().loss, worstGpu, worstCpu);
}

TEST_F(VirtualRankTest, DataParallelMatchesOneGpuAndTheCpu) {
  compareMesh("dp2");
}

TEST_F(VirtualRankTest, TensorParallelMatchesOneGpuAndTheCpu) {
  compareMesh("tp2");
}

TEST_F(VirtualRankTest, ZeroThreeMatchesOneGpuAndTheCpu) {
  compareMesh("dp2-zero3");
}

TEST_F(VirtualRankTest, TheMeshIsRefusedWithoutVirtualRanks) {
  Executable exe;
  ASSERT_OK(readExecutable(binaryDir() + "/gpt2-tiny-dp2.llmcx", exe));
  std::unique_ptr<DeviceSession> session;
  Status status = createCudaDeviceSession(exe, session);
  ASSERT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("llmc-run --virtual-ranks"),
            std::string::npos)
      << status.message();
}

// No GPU needed: the refusal's text, with too few GPUs and with enough.
TEST(VirtualRankRefusal, APlainSessionNamesTheWaysToRunAMesh) {
  Executable exe;
  exe.ranks.resize(2);
  exe.mesh = {{"dp", 2}};
  Status fewer = checkOneRank(exe, 1);
  EXPECT_EQ(fewer.code(), StatusCode::Unimplemented);
  EXPECT_EQ(fewer.message(),
            "the program has 2 ranks on the mesh {dp=2} and a CUDA session "
            "of one process runs one rank: run all 2 on one GPU as virtual "
            "ranks with `llmc-run --virtual-ranks` (docs/distributed.md, "
            "\"Virtual ranks on one GPU\"), one process per GPU with `llmc "
            "launch -n 2 RUN.toml` (docs/distributed.md), which needs 2 GPUs "
            "(this machine has 1), or on the CPU with --device cpu");
  Status enough = checkOneRank(exe, 8);
  EXPECT_EQ(enough.message().find("which needs"), std::string::npos);
  exe.ranks.resize(1);
  exe.mesh = {{"dp", 1}};
  EXPECT_TRUE(checkOneRank(exe, 0).isOk());
}

} // namespace
} // namespace llmc::rt::cuda
