//===- FlashTileSweepTest.cpp - time tile variants of the flash kernels ---===//
//
// CudaTest-style GPU timing (skips without a device): compiles the D = 64
// tensor-core flash attention unit with other tile sizes (the
// LLMC_FLASH_TC_D64_* macros of attention/FlashTc.cuh) and
// prints the forward and backward time of each at GPT-2 124M's shape
// (B = 16, H = 12, T = 1024, D = 64, causal, bf16), so that one GPU run
// shows which sizes to compile by default. Only variant 0 (the default) is
// what the session runs; the others are checked for correctness on the
// CPU by cuda-flash-emulation only where FlashTensorCoreEmulationTest.cpp
// says so, hence no numerical assertion here beyond finite results.
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/attention/FlashLaunch.h"
#include "runtime/cuda/libs/Nvrtc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace llmc::rt::cuda {
namespace {

using namespace testing;

class CudaTileSweep : public GpuTest {
protected:
  CudaTileSweep() : GpuTest("the flash attention tile sweep's timings") {}
};

/// One set of tile sizes, the blocks per SM each kernel promises and
/// whether it keeps its fixed rows' fragments in registers (forward,
/// grad_rows, grad_keys).
struct Variant {
  FlashTcTileSizes tiles;
  int forwardMinBlocks, rowsMinBlocks, keysMinBlocks;
  bool forwardCached = false, rowsCached = false, keysCached = false;
};

std::string kernelName(int rowBlocks, const char *rows, int streamed,
                       const char *what, int minBlocks, bool cached) {
  return std::to_string(16 * rowBlocks) + " " + rows + "/warp x " +
         std::to_string(streamed) + " " + what + ", " +
         std::to_string(minBlocks) + " blocks/SM" +
         (cached ? ", rows in registers" : "");
}
std::string forwardName(const Variant &v) {
  return kernelName(v.tiles.forwardRowBlocks, "rows", v.tiles.forwardKeys,
                    "keys", v.forwardMinBlocks, v.forwardCached);
}
std::string rowsName(const Variant &v) {
  return kernelName(v.tiles.rowsRowBlocks, "rows", v.tiles.rowsKeys, "keys",
                    v.rowsMinBlocks, v.rowsCached);
}
std::string keysName(const Variant &v) {
  return kernelName(v.tiles.keysRowBlocks, "keys", v.tiles.keysQueries,
                    "queries", v.keysMinBlocks, v.keysCached);
}

/// The D = 64 unit with `v`'s sizes in place of the defaults.
std::string variantSource(const Variant &v, const std::string &unit) {
  const FlashTcTileSizes &t = v.tiles;
  std::string defines;
  auto define = [&](const char *name, int value) {
    defines += std::string("#define ") + name + " " + std::to_string(value) +
               "\n";
  };
  define("LLMC_FLASH_TC_D64_FORWARD_ROW_BLOCKS", t.forwardRowBlocks);
  define("LLMC_FLASH_TC_D64_FORWARD_KEYS", t.forwardKeys);
  define("LLMC_FLASH_TC_D64_ROWS_ROW_BLOCKS", t.rowsRowBlocks);
  define("LLMC_FLASH_TC_D64_ROWS_KEYS", t.rowsKeys);
  define("LLMC_FLASH_TC_D64_KEYS_ROW_BLOCKS", t.keysRowBlocks);
  define("LLMC_FLASH_TC_D64_KEYS_QUERIES", t.keysQueries);
  define("LLMC_FLASH_TC_D64_FORWARD_MIN_BLOCKS", v.forwardMinBlocks);
  define("LLMC_FLASH_TC_D64_ROWS_MIN_BLOCKS", v.rowsMinBlocks);
  define("LLMC_FLASH_TC_D64_KEYS_MIN_BLOCKS", v.keysMinBlocks);
  define("LLMC_FLASH_TC_FORWARD_CACHED", v.forwardCached);
  define("LLMC_FLASH_TC_ROWS_CACHED", v.rowsCached);
  define("LLMC_FLASH_TC_KEYS_CACHED", v.keysCached);
  return defines + unit;
}

/// A device buffer freed at the end of the test.
struct Buffer {
  void *data = nullptr;
  explicit Buffer(size_t bytes) { (void)cudaMalloc(&data, bytes); }
  ~Buffer() { (void)cudaFree(data); }
};

Status launch(const CudaLibrary &library, const std::string &entry,
              unsigned blocks, unsigned sharedBytes,
              std::vector<void *> args) {
  cudaKernel_t kernel;
  LLMC_RETURN_IF_ERROR(library.kernel(entry, kernel));
  int device = 0;
  LLMC_CUDA_CHECK(cudaGetDevice(&device), "cudaGetDevice");
  LLMC_CUDA_CHECK(cudaKernelSetAttributeForDevice(
                      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                      static_cast<int>(sharedBytes), device),
                  "raising the shared memory of " + entry);
  LLMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(kernel),
                                   dim3(blocks), dim3(128), args.data(),
                                   sharedBytes, nullptr),
                  "launching " + entry);
  LLMC_CUDA_CHECK(cudaGetLastError(), "launching " + entry);
  return Status::ok();
}

TEST_F(CudaTileSweep, FlashAttentionTileSweep) {
  int major = 0, minor = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                   0),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                                   0),
            cudaSuccess);
  if (major < 8)
    GTEST_SKIP() << "no bf16 mma.sync before sm_80";
  std::string unit;
  for (const DeviceUnit &candidate : deviceKernelUnits())
    if (candidate.source.find("LLMC_FLASH_TC_KERNELS(64)") != std::string::npos)
      unit = candidate.source;
  ASSERT_FALSE(unit.empty()) << "no D = 64 tensor-core unit";

  // Each kernel's sizes are independent of the others': one run shows the
  // best of each. ptxas (sm_90) keeps every one of these within its
  // register bound, a few with small spills (docs/cuda.md).
  //
  // Measured on the H200 (b2f510c, ms per layer; the first set was the
  // default then and is the last now): forward 0.216, 0.215, 0.193, 0.246,
  // 0.213, 0.234, 0.211, 0.211; grad_rows 0.291, 0.293, 0.279, 0.249,
  // 0.253, 0.335, 0.290, 0.281; grad_keys 0.351, 0.411, 0.318, 0.315,
  // 0.354, 0.429, 0.314, 0.401. The default now takes the forward of set
  // 2 and the backward of set 3.
  const std::vector<Variant> variants = {
      {flashTcTileSizes(64), 3, 3, 3},
      {{2, 32, 2, 16, 2, 16}, 3, 3, 1},
      {{1, 64, 1, 64, 1, 64}, 3, 2, 2},
      {{1, 128, 1, 32, 1, 32}, 3, 3, 3},
      {{1, 32, 1, 64, 1, 64}, 3, 3, 3},
      {{2, 32, 2, 16, 2, 16}, 2, 1, 3},
      {{2, 32, 2, 16, 1, 32}, 3, 2, 3, true, true, true},
      {{2, 64, 2, 32, 2, 16}, 1, 1, 1, true, true, true},
      {{2, 64, 2, 32, 2, 32}, 1, 1, 1},
  };
  NvrtcOptions options;
  options.arch = "sm_" + std::to_string(major) + std::to_string(minor);
  std::vector<ParallelUnit> parallel;
  for (size_t i = 0; i < variants.size(); ++i)
    parallel.push_back({variantSource(variants[i], unit),
                        "flash_sweep_" + std::to_string(i), false});
  compileInParallel(parallel);

  const long long batch = 16, heads = 12, seq = 1024, headDim = 64;
  const Shape q = {batch, heads, seq, headDim};
  const size_t elements = batch * heads * seq * headDim;
  const size_t rows = batch * heads * seq;
  std::vector<uint16_t> host(elements);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> draw(-1.0f, 1.0f);
  Buffer qb(elements * 2), kb(elements * 2), vb(elements * 2),
      ob(elements * 2), dob(elements * 2), dqb(elements * 2),
      dkb(elements * 2), dvb(elements * 2), lseb(rows * 4),
      scratch(rows * 8);
  for (Buffer *b : {&qb, &kb, &vb, &dob}) {
    for (uint16_t &h : host) {
      float value = draw(rng);
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      h = static_cast<uint16_t>(bits >> 16);
    }
    ASSERT_EQ(cudaMemcpy(b->data, host.data(), elements * 2,
                         cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  int kHeads = static_cast<int>(heads);
  long long kSeq = seq;
  // Every operand in the [B, H, T, D] layout (the kernels' FlashLayout
  // parameter, runtime/AttentionLayout.h).
  FlashOperands layout;
  layout.q = layout.k = layout.v = layout.o =
      AttentionStrides{0, heads * seq * headDim, seq * headDim, headDim};
  int causal = 1;
  float scale = 0.125f;
  const void *qp = qb.data, *kp = kb.data, *vp = vb.data, *op = ob.data,
             *dop = dob.data, *lseIn = lseb.data;
  void *outp = ob.data, *lsep = lseb.data, *dqp = dqb.data, *dkp = dkb.data,
       *dvp = dvb.data;
  float *lseScratch = static_cast<float *>(scratch.data);
  float *delta = lseScratch + rows;
  double flops = 4.0 * batch * heads * seq * seq * headDim / 2.0;

  for (size_t i = 0; i < variants.size(); ++i) {
    SCOPED_TRACE("variant " + std::to_string(i));
    CompiledCuda compiled;
    ASSERT_OK(compileCuda(parallel[i].source, parallel[i].name + ".cu",
                          options, compiled));
    std::unique_ptr<CudaLibrary> library;
    ASSERT_OK(CudaLibrary::load(compiled.cubin, library));
    FlashLaunch forward, backward;
    flashTensorCoreLaunch(variants[i].tiles, true, q, q, forward);
    flashTensorCoreLaunch(variants[i].tiles, false, q, q, backward);
    auto runForward = [&] {
      return launch(*library, "llmc_flash_attention_tc_forward_bf16_d64",
                    forward.tensorCoreQueryBlocks,
                    forward.tensorCoreForwardShared,
                    {&qp, &kp, &vp, &outp, &lsep, &kHeads, &kHeads, &kSeq,
                     &kSeq, &causal, &scale, &layout});
    };
    // The backward as the session runs it with the forward's lse: rows
    // (which also writes delta), then keys.
    auto runRows = [&] {
      return launch(*library, "llmc_flash_attention_tc_grad_rows_bf16_d64",
                    backward.tensorCoreQueryBlocks,
                    backward.tensorCoreRowsShared,
                    {&qp, &kp, &vp, &op, &dop, &lseIn, &dqp, &lseScratch,
                     &delta, &kHeads, &kHeads, &kSeq, &kSeq, &causal, &scale,
                     &layout});
    };
    auto runKeys = [&] {
      return launch(*library, "llmc_flash_attention_tc_grad_keys_bf16_d64",
                    backward.tensorCoreKeyBlocks,
                    backward.tensorCoreKeysShared,
                    {&qp, &kp, &vp, &dop, &lseIn, &delta, &dkp, &dvp, &kHeads,
                     &kHeads, &kSeq, &kSeq, &causal, &scale, &layout});
    };
    // The median of 10 launches after 3 warm-ups.
    auto medianMs = [&](const std::function<Status()> &run) {
      double ms = 0.0;
      Status status = medianLaunchMs(run, 13, 3, ms);
      EXPECT_TRUE(status.isOk()) << status.message();
      return ms;
    };
    double forwardMs = medianMs(runForward);
    double rowsMs = medianMs(runRows);
    double keysMs = medianMs(runKeys);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint16_t> dq(elements);
    ASSERT_EQ(cudaMemcpy(dq.data(), dqp, elements * 2, cudaMemcpyDeviceToHost),
              cudaSuccess);
    bool finite = std::all_of(dq.begin(), dq.end(), [](uint16_t bits) {
      return (bits & 0x7f80u) != 0x7f80u;
    });
    EXPECT_TRUE(finite) << "dq has a NaN or infinity";
    std::printf("flash tile sweep %zu: forward %.3f ms (%s); grad_rows %.3f "
                "ms (%s); grad_keys %.3f ms (%s); backward %.3f ms (%.0f "
                "TFLOP/s)\n",
                i, forwardMs, forwardName(variants[i]).c_str(), rowsMs,
                rowsName(variants[i]).c_str(), keysMs,
                keysName(variants[i]).c_str(), rowsMs + keysMs,
                2.5 * flops / (rowsMs + keysMs) * 1e-9);
  }
}

} // namespace
} // namespace llmc::rt::cuda
