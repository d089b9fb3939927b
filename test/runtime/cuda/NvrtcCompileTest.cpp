//===- NvrtcCompileTest.cpp - every generated CUDA kernel compiles --------===//
//
// Runs without a GPU (ctest `cuda-nvrtc-compile`): every elementwise kernel
// the generator covers is compiled with NVRTC for sm_90 into a fresh cache
// directory, must give a non-empty ELF cubin and PTX with both entry
// points, and must hit the cache on a second compile. The times of both
// passes are printed (docs/cuda.md quotes them). The unit of the other
// kernels (deviceKernelUnit()) must compile too, with every flash attention
// entry.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/CudaCoverage.h"
#include "codegen/cuda/DeviceUnits.h"
#include "codegen/cuda/KernelSelection.h"
#include "codegen/cuda/PlanKernels.h"
#include "codegen/cuda/elementwise/ElementwiseKernels.h"
#include "codegen/cuda/elementwise/FusedKernels.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/reduce/ReduceKernels.h"
#include "runtime/cuda/libs/Nvrtc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace llmc::rt::cuda {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// A fresh directory under $TMPDIR (or /tmp), so the first pass is cold.
std::string freshCacheDir() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/llmc-nvrtc-test-XXXXXX";
  char *made = mkdtemp(pattern.data());
  return made ? std::string(made) : std::string();
}

TEST(CudaNvrtcCompile, EveryElementwiseKernelCompilesAndHitsTheCache) {
  std::string dir = freshCacheDir();
  ASSERT_FALSE(dir.empty());
  NvrtcOptions options;
  options.arch = "sm_90";
  options.cacheDir = dir;

  std::vector<ElementwiseSignature> all = allElementwiseSignatures();
  // 28 signatures per float type (f32, bf16, f16; casts to each and from
  // i1), 7 per integer type.
  ASSERT_EQ(all.size(), 98u);
  std::vector<CompiledCuda> cold(all.size());
  auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < all.size(); ++i) {
    SCOPED_TRACE(describe(all[i]));
    ElementwiseSource source;
    ASSERT_TRUE(generateElementwiseKernel(all[i], source).isOk());
    Status status =
        compileCuda(source.source, source.entry + ".cu", options, cold[i]);
    ASSERT_TRUE(status.isOk()) << status.toString() << "\n" << source.source;
    EXPECT_FALSE(cold[i].fromCache);
    ASSERT_GT(cold[i].cubin.size(), 4u);
    EXPECT_EQ(std::string(cold[i].cubin.data() + 1, 3), "ELF");
    EXPECT_NE(cold[i].ptx.find(".entry " + source.entry + "("),
              std::string::npos);
    EXPECT_NE(cold[i].ptx.find(".entry " + source.entry + "_vec("),
              std::string::npos);
    EXPECT_NE(cold[i].ptx.find(".target sm_90"), std::string::npos);
  }
  double coldSeconds = secondsSince(start);

  start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < all.size(); ++i) {
    SCOPED_TRACE(describe(all[i]));
    ElementwiseSource source;
    ASSERT_TRUE(generateElementwiseKernel(all[i], source).isOk());
    CompiledCuda warm;
    ASSERT_TRUE(
        compileCuda(source.source, source.entry + ".cu", options, warm).isOk());
    EXPECT_TRUE(warm.fromCache);
    EXPECT_EQ(warm.key, cold[i].key);
    EXPECT_EQ(warm.cubin, cold[i].cubin);
    EXPECT_EQ(warm.ptx, cold[i].ptx);
  }
  double warmSeconds = secondsSince(start);
  std::printf("NVRTC %d, sm_90, %zu kernels: cold %.2f s (%.1f ms/kernel), "
              "warm cache %.4f s (%.3f ms/kernel)\n",
              nvrtcVersion(), all.size(), coldSeconds,
              1e3 * coldSeconds / all.size(), warmSeconds,
              1e3 * warmSeconds / all.size());
  std::string remove = "rm -rf '" + dir + "'";
  (void)std::system(remove.c_str());
}

TEST(CudaNvrtcCompile, KeyDependsOnSourceArchAndOptions) {
  std::string dir = freshCacheDir();
  ASSERT_FALSE(dir.empty());
  const std::string source =
      "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n";
  NvrtcOptions options;
  options.cacheDir = dir;
  CompiledCuda base, otherArch, otherFlag, otherSource;
  ASSERT_TRUE(compileCuda(source, "k.cu", options, base).isOk());
  NvrtcOptions sm80 = options;
  sm80.arch = "sm_80";
  ASSERT_TRUE(compileCuda(source, "k.cu", sm80, otherArch).isOk());
  NvrtcOptions fast = options;
  fast.extraOptions = {"--use_fast_math"};
  ASSERT_TRUE(compileCuda(source, "k.cu", fast, otherFlag).isOk());
  ASSERT_TRUE(compileCuda(source + "\n", "k.cu", options, otherSource).isOk());
  EXPECT_FALSE(otherArch.fromCache);
  EXPECT_FALSE(otherFlag.fromCache);
  EXPECT_FALSE(otherSource.fromCache);
  EXPECT_NE(base.key, otherArch.key);
  EXPECT_NE(base.key, otherFlag.key);
  EXPECT_NE(base.key, otherSource.key);
  std::string remove = "rm -rf '" + dir + "'";
  (void)std::system(remove.c_str());
}

TEST(CudaNvrtcCompile, CompileErrorCarriesTheLog) {
  NvrtcOptions options;
  options.cache = KernelCache::Bypass;
  CompiledCuda result;
  Status status = compileCuda(
      "extern \"C\" __global__ void broken(float *x) { x[0] = undeclared; }\n",
      "broken.cu", options, result);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_NE(
      status.message().find("NVRTC could not compile broken.cu for sm_90"),
      std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("undeclared"), std::string::npos)
      << status.message();
}

TEST(CudaNvrtcCompile, UnsupportedSignaturesAreRefused) {
  ElementwiseSource source;
  Status f64 = generateElementwiseKernel(
      {KernelKind::Add, {DType::F64, DType::F64}, DType::F64, {}}, source);
  EXPECT_EQ(f64.code(), StatusCode::Unimplemented);
  EXPECT_NE(f64.message().find("Add(f64, f64) -> f64"), std::string::npos)
      << f64.message();
  Status mixed = generateElementwiseKernel(
      {KernelKind::Mul, {DType::F32, DType::BF16}, DType::F32, {}}, source);
  EXPECT_EQ(mixed.code(), StatusCode::Unimplemented);
  Status direction = generateElementwiseKernel(
      {KernelKind::Compare, {DType::F32, DType::F32}, DType::I1, {6}}, source);
  EXPECT_EQ(direction.code(), StatusCode::Unimplemented);
  Status matmul = generateElementwiseKernel(
      {KernelKind::Matmul, {DType::F32, DType::F32}, DType::F32, {0, 0}},
      source);
  EXPECT_EQ(matmul.code(), StatusCode::Unimplemented);
}

/// The units of the non-elementwise kernels compile for sm_90 with, between
/// them, the flash attention entries of every dtype and head-dimension
/// capacity (the tensor-core ones in a unit per head dimension) and the
/// rows-in-registers norm gradients (a unit of their own), FP8
/// training's amax and scaled casts (llmc_fp8), the virtual ranks'
/// reductions (llmc_virtual_collectives, every entry its unit lists) and
/// ring attention's position-masked blocks (llmc_flash_block: every entry
/// it lists, and none of the flash unit's own) and their tensor-core
/// kernels (llmc_flash_block_tc_d64 and _d128: every entry each lists).
TEST(CudaNvrtcCompile, DeviceUnitHasEveryFlashAttentionKernel) {
  NvrtcOptions options;
  options.arch = "sm_90";
  options.cache = KernelCache::Bypass;
  auto start = std::chrono::steady_clock::now();
  std::string ptx; // every unit's
  std::vector<DeviceUnit> units = deviceKernelUnits();
  ASSERT_EQ(units.size(), 12u);
  for (const DeviceUnit &unit : units) {
    CompiledCuda compiled;
    auto unitStart = std::chrono::steady_clock::now();
    Status status =
        compileCuda(unit.source, unit.name + ".cu", options, compiled);
    ASSERT_TRUE(status.isOk()) << unit.name << ": " << status.toString();
    ASSERT_GT(compiled.cubin.size(), 4u);
    EXPECT_EQ(std::string(compiled.cubin.data() + 1, 3), "ELF");
    std::printf("NVRTC, sm_90, %s: %.2f s\n", unit.name.c_str(),
                secondsSince(unitStart));
    // The tensor-core entries only in the units of their head dimension;
    // the rows-in-registers norm gradients only in their own unit.
    bool tensorCores =
        compiled.ptx.find(".entry llmc_flash_attention_tc_") != std::string::npos;
    EXPECT_EQ(tensorCores, unit.name.rfind("llmc_flash_tc_", 0) == 0)
        << unit.name;
    bool rows = compiled.ptx.find(".entry llmc_norm_grad_rows") !=
                std::string::npos;
    EXPECT_EQ(rows, unit.name == "llmc_norm_grad_rows") << unit.name;
    bool reductions = compiled.ptx.find(".entry llmc_virtual_reduce_") !=
                      std::string::npos;
    EXPECT_EQ(reductions, unit.name == "llmc_virtual_collectives")
        << unit.name;
    bool blocks =
        compiled.ptx.find(".entry llmc_flash_block_") != std::string::npos;
    EXPECT_EQ(blocks, unit.name.rfind("llmc_flash_block", 0) == 0)
        << unit.name;
    bool blockTensorCores =
        compiled.ptx.find(".entry llmc_flash_block_tc_") != std::string::npos;
    EXPECT_EQ(blockTensorCores, unit.name.rfind("llmc_flash_block_tc_", 0) == 0)
        << unit.name;
    if (unit.name.rfind("llmc_flash_block_tc_", 0) == 0) {
      // 3 kernels of one head dimension, on sm_80 and later.
      EXPECT_EQ(unit.entries.size(), 3u);
      EXPECT_TRUE(unit.onDemand);
      EXPECT_EQ(unit.minArch, 80);
      for (const std::string &entry : unit.entries)
        EXPECT_NE(compiled.ptx.find(".entry " + entry + "("),
                  std::string::npos)
            << entry;
      EXPECT_NE(compiled.ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16"),
                std::string::npos);
    }
    if (unit.name == "llmc_flash_block") {
      // 3 kernels x 3 types x 4 head-dimension capacities.
      EXPECT_EQ(unit.entries.size(), 36u);
      EXPECT_TRUE(unit.onDemand);
      for (const std::string &entry : unit.entries)
        EXPECT_NE(compiled.ptx.find(".entry " + entry + "("),
                  std::string::npos)
            << entry;
      EXPECT_EQ(compiled.ptx.find(".entry llmc_flash_attention_"),
                std::string::npos);
    }
    if (unit.name == "llmc_virtual_collectives") {
      EXPECT_EQ(unit.entries.size(), 12u);
      EXPECT_TRUE(unit.forCollectives && unit.onDemand);
      for (const std::string &entry : unit.entries)
        EXPECT_NE(compiled.ptx.find(".entry " + entry + "("),
                  std::string::npos)
            << entry;
    }
    ptx += compiled.ptx;
  }
  for (const char *kernel : {"forward", "grad_rows", "grad_keys"})
    for (const char *type : {"f32", "bf16"})
      for (int headDim : {16, 32, 64, 128}) {
        std::string entry = std::string("llmc_flash_attention_") + kernel +
                            "_" + type + "_d" + std::to_string(headDim);
        EXPECT_NE(ptx.find(".entry " + entry + "("),
                  std::string::npos)
            << entry;
      }
  // The tensor-core kernels of bf16 D = 64 and 128.
  for (const char *kernel : {"forward", "grad_rows", "grad_keys"})
    for (int headDim : {64, 128}) {
      std::string entry = std::string("llmc_flash_attention_tc_") + kernel +
                          "_bf16_d" + std::to_string(headDim);
      EXPECT_NE(ptx.find(".entry " + entry + "("), std::string::npos)
          << entry;
    }
  EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16"),
            std::string::npos);
  // Their fragments come from ldmatrix (transposed for the B operands
  // whose rows are k), their tiles through cp.async.
  EXPECT_NE(ptx.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
            std::string::npos);
  EXPECT_NE(
      ptx.find("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
      std::string::npos);
  EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos);
  EXPECT_NE(ptx.find("cp.async.wait_group"), std::string::npos);
  // The naive kernel it replaces is gone.
  EXPECT_EQ(ptx.find(".entry llmc_attention_f32("), std::string::npos);
  // Every entry cross_entropy_grad selects, for each logits and target type
  // (loss/CrossEntropyGrad.cuh).
  for (DType logits : {DType::F32, DType::BF16, DType::F16})
    for (DType targets : {DType::I32, DType::I64}) {
      KernelChoice choice;
      Status selected = selectKernel(
          KernelKind::CrossEntropyGrad, {{0, 1, -100}, {}},
          {{nullptr, logits, {4, 50304}}, {nullptr, targets, {4}},
           {nullptr, DType::F32, {}}},
          {{nullptr, logits, {4, 50304}}}, choice);
      ASSERT_TRUE(selected.isOk()) << selected.toString();
      ASSERT_EQ(choice.entries.size(), 3u);
      EXPECT_EQ(choice.scratchBytes, sizeof(double));
      for (const std::string &entry : choice.entries)
        EXPECT_NE(ptx.find(".entry " + entry + "("),
                  std::string::npos)
            << entry;
    }
  // Every entry rope selects (the table, the general and the packed
  // rotation; rope/Rope.cuh), and its table's scratch; an odd head
  // dimension is refused.
  for (DType type : {DType::F32, DType::BF16, DType::F16})
    for (DType index : {DType::I32, DType::I64}) {
      KernelChoice choice;
      Status selected = selectKernel(
          KernelKind::Rope, {{}, {10000.0}},
          {{nullptr, type, {2, 4, 64, 128}}, {nullptr, index, {64}}},
          {{nullptr, type, {2, 4, 64, 128}}}, choice);
      ASSERT_TRUE(selected.isOk()) << selected.toString();
      ASSERT_EQ(choice.entries.size(), 3u);
      EXPECT_EQ(choice.scratchBytes, 64u * 128 * sizeof(double));
      for (const std::string &entry : choice.entries)
        EXPECT_NE(ptx.find(".entry " + entry + "("), std::string::npos)
            << entry;
    }
  KernelChoice odd;
  EXPECT_EQ(selectKernel(KernelKind::Rope, {{}, {10000.0}},
                         {{nullptr, DType::F32, {4, 7}}},
                         {{nullptr, DType::F32, {4, 7}}}, odd)
                .code(),
            StatusCode::Unimplemented);
  std::printf("NVRTC, sm_90, the device units one after another: %.2f s\n",
              secondsSince(start));
}

/// bf16 attention with D = 64 or 128 lists the tensor-core entries first
/// (the launcher falls back to the scalar ones after them); f32 and other
/// head dimensions list only the scalar ones.
TEST(CudaNvrtcCompile, FlashAttentionSelectsTensorCoresForBf16) {
  auto entriesOf = [](KernelKind kind, DType dtype, int64_t headDim) {
    TensorRef q{nullptr, dtype, {2, 4, 100, headDim}};
    TensorRef kv{nullptr, dtype, {2, 2, 100, headDim}};
    KernelAttrs attrs{{1}, {0.125}};
    std::vector<TensorRef> inputs = {q, kv, kv};
    std::vector<TensorRef> outputs = {q};
    if (kind == KernelKind::AttentionGrad) {
      inputs = {q, kv, kv, q, q};
      outputs = {q, kv, kv};
    }
    KernelChoice choice;
    Status status = selectKernel(kind, attrs, inputs, outputs, choice);
    EXPECT_TRUE(status.isOk()) << status.toString();
    return choice.entries;
  };
  using Entries = std::vector<std::string>;
  EXPECT_EQ(entriesOf(KernelKind::Attention, DType::BF16, 64),
            (Entries{"llmc_flash_attention_tc_forward_bf16_d64",
                     "llmc_flash_attention_forward_bf16_d64"}));
  EXPECT_EQ(entriesOf(KernelKind::AttentionGrad, DType::BF16, 128),
            (Entries{"llmc_flash_attention_tc_grad_rows_bf16_d128",
                     "llmc_flash_attention_tc_grad_keys_bf16_d128",
                     "llmc_flash_attention_grad_rows_bf16_d128",
                     "llmc_flash_attention_grad_keys_bf16_d128"}));
  EXPECT_EQ(entriesOf(KernelKind::Attention, DType::F32, 64),
            (Entries{"llmc_flash_attention_forward_f32_d64"}));
  EXPECT_EQ(entriesOf(KernelKind::Attention, DType::BF16, 48),
            (Entries{"llmc_flash_attention_forward_bf16_d64"}));
  // f16 (the fp16 policy) takes the scalar kernels: no f16 tensor-core
  // variant (cuDNN's HALF SDPA where it is loaded).
  EXPECT_EQ(entriesOf(KernelKind::Attention, DType::F16, 64),
            (Entries{"llmc_flash_attention_forward_f16_d64"}));
  EXPECT_EQ(entriesOf(KernelKind::AttentionGrad, DType::F16, 128),
            (Entries{"llmc_flash_attention_grad_rows_f16_d128",
                     "llmc_flash_attention_grad_keys_f16_d128"}));
}

/// Ring attention's blocks as attention: bf16 with D = 64 or 128 lists the
/// position-masked tensor-core entries first (the launcher falls back to
/// the scalar block entries after them), f32 and other head dimensions
/// only the scalar ones; the backward asks for the lse and delta scratch.
TEST(CudaNvrtcCompile, AttentionBlockSelectsTensorCoresForBf16) {
  auto select = [](KernelKind kind, DType dtype, int64_t headDim,
                   KernelChoice &choice) {
    TensorRef q{nullptr, dtype, {2, 4, 100, headDim}};
    TensorRef kv{nullptr, dtype, {2, 2, 70, headDim}};
    TensorRef lse{nullptr, DType::F32, {2, 4, 100}};
    TensorRef qpos{nullptr, DType::I32, {100}}, kpos{nullptr, DType::I32, {70}};
    std::vector<TensorRef> inputs = {q, kv, kv, qpos, kpos};
    std::vector<TensorRef> outputs = {q, lse};
    if (kind == KernelKind::AttentionBlockGrad) {
      inputs = {q, kv, kv, q, q, lse, qpos, kpos};
      outputs = {q, kv, kv};
    }
    Status status = selectKernel(kind, {{}, {0.125}}, inputs, outputs, choice);
    EXPECT_TRUE(status.isOk()) << status.toString();
  };
  using Entries = std::vector<std::string>;
  KernelChoice forward, backward, f32, padded;
  select(KernelKind::AttentionBlock, DType::BF16, 64, forward);
  EXPECT_EQ(forward.entries, (Entries{"llmc_flash_block_tc_forward_bf16_d64",
                                      "llmc_flash_block_forward_bf16_d64"}));
  select(KernelKind::AttentionBlockGrad, DType::BF16, 128, backward);
  EXPECT_EQ(backward.entries,
            (Entries{"llmc_flash_block_tc_grad_rows_bf16_d128",
                     "llmc_flash_block_tc_grad_keys_bf16_d128",
                     "llmc_flash_block_grad_rows_bf16_d128",
                     "llmc_flash_block_grad_keys_bf16_d128"}));
  EXPECT_EQ(backward.scratchBytes, 2u * 4 * 100 * 2 * sizeof(float));
  select(KernelKind::AttentionBlock, DType::F32, 64, f32);
  EXPECT_EQ(f32.entries, (Entries{"llmc_flash_block_forward_f32_d64"}));
  select(KernelKind::AttentionBlockGrad, DType::BF16, 48, padded);
  EXPECT_EQ(padded.entries, (Entries{"llmc_flash_block_grad_rows_bf16_d64",
                                     "llmc_flash_block_grad_keys_bf16_d64"}));
}

/// Older GPUs: the tensor-core flash units (mma.sync on bf16, ldmatrix,
/// cp.async) compile for sm_80 and later only; the others for any
/// architecture NVRTC takes. llmc compile --cuda-arch below sm_80 refuses
/// a bf16 program with the fix.
TEST(CudaNvrtcCompile, TensorCoreUnitsNeedSm80) {
  EXPECT_EQ(archNumber("sm_75"), 75);
  EXPECT_EQ(archNumber("sm_90a"), 90);
  EXPECT_EQ(archNumber("compute_90"), 0);
  for (const char *unit : {"llmc_flash_tc_d64", "llmc_flash_tc_d128",
                           "llmc_flash_block_tc_d64",
                           "llmc_flash_block_tc_d128"}) {
    EXPECT_FALSE(unitCompilesFor(unit, "sm_75")) << unit;
    EXPECT_TRUE(unitCompilesFor(unit, "sm_80")) << unit;
    EXPECT_TRUE(unitCompilesFor(unit, "sm_90")) << unit;
  }
  EXPECT_TRUE(unitCompilesFor("llmc_device_kernels", "sm_75"));
  EXPECT_TRUE(unitCompilesFor("llmc_flash_attention", "sm_75"));
  Executable exe;
  exe.ranks.emplace_back();
  ValueInfo value;
  value.dtype = DType::BF16;
  value.shape = {8};
  exe.ranks[0].values.push_back(value);
  EXPECT_TRUE(compileCudaKernels(exe, "sm_80").isOk()); // no units
  Status refused = compileCudaKernels(exe, "sm_75");
  EXPECT_EQ(refused.code(), StatusCode::InvalidArgument);
  EXPECT_NE(refused.message().find("policy = \"fp16\""), std::string::npos)
      << refused.message();
}

/// The norm gradients: the chunk kernel of (x's, gamma's) types, the finish
/// of gamma's and the rows-in-registers entries (4 and 8 packs per lane),
/// with scratch for 2 doubles per column and 32-row chunk; f16 x (fp16's
/// steps) with f32 gamma; f32 x with f16 gamma is refused naming what is
/// covered.
TEST(CudaNvrtcCompile, NormGradSelection) {
  TensorRef x{nullptr, DType::BF16, {16, 1024, 768}};
  TensorRef gamma{nullptr, DType::F32, {768}};
  KernelChoice choice;
  ASSERT_TRUE(selectKernel(KernelKind::LayerNormGrad, {{}, {1e-5}},
                           {x, gamma, x}, {x, gamma, gamma}, choice)
                  .isOk());
  EXPECT_EQ(choice.entries,
            (std::vector<std::string>{"llmc_norm_grad_bf16_f32",
                                      "llmc_norm_grad_finish_f32",
                                      "llmc_norm_grad_rows4_bf16_f32",
                                      "llmc_norm_grad_rows8_bf16_f32"}));
  EXPECT_EQ(choice.scratchBytes, size_t{2} * (16 * 1024 / 32) * 768 * 8);
  TensorRef xf{nullptr, DType::F32, {33, 37}};
  TensorRef gb{nullptr, DType::BF16, {37}};
  KernelChoice rms;
  ASSERT_TRUE(selectKernel(KernelKind::RmsNormGrad, {{}, {1e-6}},
                           {xf, gb, xf}, {xf, gb}, rms)
                  .isOk());
  EXPECT_EQ(rms.entries,
            (std::vector<std::string>{"llmc_norm_grad_f32_bf16",
                                      "llmc_norm_grad_finish_bf16",
                                      "llmc_norm_grad_rows4_f32_bf16",
                                      "llmc_norm_grad_rows8_f32_bf16"}));
  EXPECT_EQ(rms.scratchBytes, size_t{2} * 2 * 37 * 8); // 2 chunks
  TensorRef half{nullptr, DType::F16, {4, 8}};
  TensorRef gf{nullptr, DType::F32, {8}};
  KernelChoice fp16;
  ASSERT_TRUE(selectKernel(KernelKind::LayerNormGrad, {{}, {1e-5}},
                           {half, gf, half}, {half, gf, gf}, fp16)
                  .isOk());
  EXPECT_EQ(fp16.entries,
            (std::vector<std::string>{"llmc_norm_grad_f16_f32",
                                      "llmc_norm_grad_finish_f32",
                                      "llmc_norm_grad_rows4_f16_f32",
                                      "llmc_norm_grad_rows8_f16_f32"}));
  TensorRef wide{nullptr, DType::F32, {4, 8}};
  TensorRef gh{nullptr, DType::F16, {8}};
  KernelChoice refused;
  Status status = selectKernel(KernelKind::LayerNormGrad, {{}, {1e-5}},
                               {wide, gh, wide}, {wide, gh, gh}, refused);
  EXPECT_EQ(status.code(), StatusCode::Unimplemented);
  EXPECT_NE(status.message().find("or f16 gamma for f16 x"),
            std::string::npos)
      << status.message();
}

/// Reductions take their path from the shape alone: GPT-2 124M's per-row
/// statistics the row kernel, its bias and norm-parameter gradients and the
/// position-embedding gradient the column kernel (with the chunking, hence
/// the order of the sums, fixed by the shape), the optimizer's whole-tensor
/// sums the split kernel, anything else the general one.
TEST(CudaNvrtcCompile, ReductionsTakeTheRowAndColumnPaths) {
  using Path = ReduceLaunch::Path;
  auto entriesOf = [](DType in, DType out, const Shape &shape,
                      std::vector<int64_t> dims, size_t &scratch) {
    Shape result;
    for (size_t d = 0; d < shape.size(); ++d)
      if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) ==
          dims.end())
        result.push_back(shape[d]);
    KernelChoice choice;
    Status status = selectKernel(KernelKind::ReduceSum, {dims, {}},
                                 {{nullptr, in, shape}},
                                 {{nullptr, out, result}}, choice);
    EXPECT_TRUE(status.isOk()) << status.toString();
    scratch = choice.scratchBytes;
    return choice.entries;
  };
  using Entries = std::vector<std::string>;
  size_t scratch = 0;

  // Rows: [16, 1024, 768] over the last dimension.
  ReduceLaunch rows = planReduceLaunch({16, 1024, 768}, {2}, DType::F32);
  EXPECT_EQ(rows.path, Path::Rows);
  EXPECT_EQ(rows.outer, 16 * 1024);
  EXPECT_EQ(rows.length, 768);
  EXPECT_EQ(rows.vector, 4);
  EXPECT_EQ(entriesOf(DType::F32, DType::F32, {16, 1024, 768}, {2}, scratch),
            (Entries{"llmc_reduce_rows_vec_f32_f32", "llmc_reduce_rows_f32_f32"}));
  EXPECT_EQ(scratch, 0u);

  // Columns: [16, 1024, 3072] bf16 over the first two dimensions: 12 tiles
  // of 256 columns, 86 chunks of 191 rows, double partials.
  ReduceLaunch columns =
      planReduceLaunch({16, 1024, 3072}, {0, 1}, DType::BF16);
  EXPECT_EQ(columns.path, Path::Columns);
  EXPECT_EQ(columns.outer, 1);
  EXPECT_EQ(columns.length, 16 * 1024);
  EXPECT_EQ(columns.inner, 3072);
  EXPECT_EQ(columns.vector, 8);
  EXPECT_EQ(columns.rowsPerChunk, 191);
  EXPECT_EQ(columns.chunks, 86);
  EXPECT_EQ(entriesOf(DType::BF16, DType::BF16, {16, 1024, 3072}, {0, 1},
                      scratch),
            (Entries{"llmc_reduce_columns_vec_bf16_bf16",
                     "llmc_reduce_columns_bf16_bf16",
                     "llmc_reduce_columns_finish_bf16"}));
  EXPECT_EQ(scratch, 86u * 3072u * sizeof(double));
  // f32 [16, 1024, 768]: 6 tiles of 128 columns, 171 chunks of 96 rows.
  columns = planReduceLaunch({16, 1024, 768}, {0, 1}, DType::F32);
  EXPECT_EQ(columns.path, Path::Columns);
  EXPECT_EQ(columns.rowsPerChunk, 96);
  EXPECT_EQ(columns.chunks, 171);
  // The position-embedding gradient, [16, 1024 * 768] over dim 0: 3072
  // tiles already fill the GPU, one chunk, no partials.
  columns = planReduceLaunch({16, 1024, 768}, {0}, DType::BF16);
  EXPECT_EQ(columns.path, Path::Columns);
  EXPECT_EQ(columns.length, 16);
  EXPECT_EQ(columns.inner, 1024 * 768);
  EXPECT_EQ(columns.chunks, 1);
  EXPECT_EQ(columns.scratchBytes, 0u);
  // A kept leading dimension: [3, 50, 40] over dim 1.
  columns = planReduceLaunch({3, 50, 40}, {1}, DType::F32);
  EXPECT_EQ(columns.path, Path::Columns);
  EXPECT_EQ(columns.outer, 3);
  EXPECT_EQ(columns.length, 50);
  EXPECT_EQ(columns.inner, 40);

  // Split: the optimizer's sum of squares of a whole weight; the chunks of
  // before (528 blocks wanted on the H200's 132 multiprocessors).
  ReduceLaunch split = planReduceLaunch({768, 3072}, {0, 1}, DType::F32);
  EXPECT_EQ(split.path, Path::Split);
  EXPECT_EQ(split.chunks, 528);
  EXPECT_EQ(entriesOf(DType::F32, DType::F32, {768, 3072}, {0, 1}, scratch),
            (Entries{"llmc_reduce_partial_f32", "llmc_reduce_finish_f32"}));
  EXPECT_EQ(scratch, 528u * sizeof(double));

  // General: reduced dimensions around a kept one, narrow columns, an
  // empty reduction.
  for (auto [shape, dims] :
       {std::pair<Shape, std::vector<int64_t>>{{8, 3, 9}, {0, 2}},
        {{100, 5}, {0}},
        {{0, 40}, {0}}}) {
    EXPECT_EQ(planReduceLaunch(shape, dims, DType::F32).path, Path::General)
        << formatShape(shape);
    EXPECT_EQ(entriesOf(DType::F32, DType::F32, shape, dims, scratch),
              (Entries{"llmc_reduce_f32_f32"}));
  }
  // Size-1 dimensions drop out: [500, 1] over dim 0 is one row of 500.
  EXPECT_EQ(planReduceLaunch({500, 1}, {0}, DType::F32).path, Path::Rows);

  // Dims out of order or range are refused, not planned.
  KernelChoice choice;
  Status bad = selectKernel(KernelKind::ReduceSum, {{2}, {}},
                            {{nullptr, DType::F32, {4, 5}}},
                            {{nullptr, DType::F32, {4}}}, choice);
  EXPECT_FALSE(bad.isOk());
  EXPECT_NE(bad.toString().find("expected strictly increasing dims in [0, 2)"),
            std::string::npos)
      << bad.toString();
}

/// A dump of one kernel is readable: one statement per line, named values.
TEST(CudaNvrtcCompile, GeneratedSourceIsReadable) {
  ElementwiseSource source;
  ASSERT_TRUE(
      generateElementwiseKernel(
          {KernelKind::Add, {DType::BF16, DType::BF16}, DType::BF16, {}},
          source)
          .isOk());
  EXPECT_EQ(source.entry, "llmc_add_bf16");
  EXPECT_EQ(source.vectorWidth, 8);
  EXPECT_NE(source.source.find("// Add(bf16, bf16) -> bf16"),
            std::string::npos);
  EXPECT_NE(source.source.find("  return lhs + rhs;\n"), std::string::npos);
  EXPECT_NE(source.source.find("llmc_float_to_bf16(value)"), std::string::npos);
  EXPECT_NE(source.source.find("uint4"), std::string::npos);
}

/// A program compiled for fused kernels (docs/buffers.md): one region,
/// onehot(labels) * 2 over [4, 8], whose five intermediates have no storage.
/// It reads a constant (value 1, inside the region), an iota and an integer
/// compare, which the generator covers.
Executable oneHotProgram() {
  Executable exe;
  exe.source = "one-hot";
  exe.name = "step";
  exe.fusedKernels = true;
  RankProgram &rank = exe.ranks.emplace_back();
  rank.values = {{DType::I32, {4}, 0},          {DType::F32, {}, 64},
                 {DType::I32, {4, 8}, kNoStorage}, {DType::I32, {4, 8}, kNoStorage},
                 {DType::I1, {4, 8}, kNoStorage},  {DType::F32, {4, 8}, kNoStorage},
                 {DType::F32, {4, 8}, kNoStorage}, {DType::F32, {4, 8}, 128}};
  rank.arenaBytes = 256;
  float two = 2.0f;
  ConstantData constant{1, std::vector<uint8_t>(4)};
  std::memcpy(constant.bytes.data(), &two, 4);
  rank.constants.push_back(constant);
  auto command = [](KernelKind kind, std::vector<int32_t> inputs, int32_t output,
                    std::vector<int64_t> ints = {}) {
    Command c;
    c.kernel = kind;
    c.inputs = std::move(inputs);
    c.outputs = {output};
    c.attrs.ints = std::move(ints);
    c.origin = "loss (backward)";
    return c;
  };
  rank.commands = {command(KernelKind::FusedElementwise, {0, 1}, 7, {6}),
                   command(KernelKind::Iota, {}, 2, {1}),
                   command(KernelKind::Broadcast, {0}, 3, {0}),
                   command(KernelKind::Compare, {2, 3}, 4, {0}),
                   command(KernelKind::Broadcast, {1}, 5, {}),
                   command(KernelKind::Cast, {4}, 6),
                   command(KernelKind::Mul, {6, 5}, 7)};
  exe.arguments = {{"labels", ArgumentRole::Input, 0, {}}};
  exe.outputs = {{"scaled", 7}};
  return exe;
}

TEST(CudaNvrtcCompile, FusedKernelsProgramRunsEachRegionAsOneKernel) {
  Executable exe = oneHotProgram();
  ASSERT_TRUE(validateExecutable(exe).isOk());
  FusedSource source;
  Status status = generateFusedKernel(exe.ranks[0], 0, source);
  ASSERT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(source.elements, 32);
  // The iota along dimension 1 of [4, 8]; the labels broadcast over it
  // (32-bit index arithmetic: 32 elements).
  EXPECT_NE(source.source.find("(int)((i / 1u) % 8u)"), std::string::npos)
      << source.source;
  EXPECT_NE(source.source.find("in0[(0u + ((i / 8u) % 4u) * 1u)]"),
            std::string::npos)
      << source.source;
  NvrtcOptions options;
  options.cacheDir = freshCacheDir();
  options.extraOptions.push_back("--fmad=false");
  CompiledCuda compiled;
  status = compileCuda(source.source, source.entry + ".cu", options, compiled);
  ASSERT_TRUE(status.isOk()) << status.toString() << "\n" << source.source;
  EXPECT_NE(compiled.ptx.find(".entry " + source.entry + "("),
            std::string::npos);

  CoverageOptions coverageOptions;
  coverageOptions.compile = false;
  CoverageReport report;
  ASSERT_TRUE(checkCudaCoverage(exe, coverageOptions, report).isOk());
  EXPECT_EQ(report.fusedRegions, 1u);
  EXPECT_TRUE(report.gaps.empty());
}

// The plan codegen writes for a program built by hand: the fused region's
// kernel, its unit (compiled with --fmad=false), the hand-written units; and
// with --cuda-arch (compileCudaKernels) a cubin for each unit, kept by the
// file format.
TEST(CudaNvrtcCompile, ThePlanCarriesTheRegionsKernelAndCubinsOnRequest) {
  Executable exe = oneHotProgram();
  planCudaKernels(exe);
  const CudaPlan &plan = exe.ranks[0].cuda;
  ASSERT_TRUE(plan.present);
  ASSERT_EQ(plan.commands.size(), exe.ranks[0].commands.size());
  ASSERT_EQ(plan.fused.size(), 1u);
  FusedSource source;
  ASSERT_TRUE(generateFusedKernel(exe.ranks[0], 0, source).isOk());
  EXPECT_EQ(plan.fused[0].entry, source.entry);
  EXPECT_EQ(plan.fused[0].elements, 32);
  const CudaUnit *unit = plan.unitDefining(source.entry);
  ASSERT_NE(unit, nullptr);
  EXPECT_EQ(unit->source, source.source);
  EXPECT_EQ(unit->flags, CudaUnit::kGenerated | CudaUnit::kNoContraction);
  EXPECT_TRUE(std::any_of(plan.units.begin(), plan.units.end(),
                          [](const CudaUnit &u) { return u.flags == 0; }))
      << "the always-loaded hand-written units";
  // Only the generated units, to keep the compile short.
  std::vector<CudaUnit> &units = exe.ranks[0].cuda.units;
  units.erase(std::remove_if(units.begin(), units.end(),
                             [](const CudaUnit &u) {
                               return !(u.flags & CudaUnit::kGenerated);
                             }),
              units.end());
  Status bad = compileCudaKernels(exe, "compute_90");
  EXPECT_EQ(bad.message(),
            "--cuda-arch=compute_90: expected a real architecture such as "
            "sm_90");
  ASSERT_TRUE(compileCudaKernels(exe, "sm_90").isOk());
  for (const CudaUnit &compiled : units) {
    EXPECT_EQ(compiled.arch, "sm_90") << compiled.name;
    EXPECT_FALSE(compiled.cubin.empty()) << compiled.name;
  }
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  Executable back;
  ASSERT_TRUE(parseExecutable(bytes.data(), bytes.size(), "m", back).isOk());
  EXPECT_EQ(back.ranks[0].cuda.units[0].cubin, units[0].cubin);
}

TEST(CudaNvrtcCompile, ARegionThatMustBeOneKernelButIsNotCoveredIsAGap) {
  // A transpose inside the region: the generator refuses it.
  Executable exe = oneHotProgram();
  Command &mul = exe.ranks[0].commands[6];
  mul.kernel = KernelKind::Transpose;
  mul.inputs = {6};
  mul.attrs.ints = {0, 1};
  exe.ranks[0].values[7].shape = {4, 8};
  CoverageOptions coverageOptions;
  coverageOptions.compile = false;
  CoverageReport report;
  ASSERT_TRUE(checkCudaCoverage(exe, coverageOptions, report).isOk());
  ASSERT_EQ(report.gaps.size(), 1u);
  EXPECT_EQ(report.gaps[0].kind,
            "FusedElementwise (no storage for its intermediates)");
  EXPECT_EQ(report.gaps[0].message,
            "at loss (backward): the region's intermediates have no storage "
            "(compiled for fused kernels), so it must run as one kernel, but "
            "the generator refuses it (the fused region at loss (backward) "
            "runs op by op: a Transpose inside the region)");
  // Must not be a gap: the same region with every value stored runs its
  // commands one by one.
  exe.fusedKernels = false;
  for (size_t v = 2; v < 7; ++v)
    exe.ranks[0].values[v].offset = 128; // op by op, each dead after use
  report = CoverageReport();
  ASSERT_TRUE(checkCudaCoverage(exe, coverageOptions, report).isOk());
  EXPECT_TRUE(report.gaps.empty()) << report.gaps[0].message;
  EXPECT_EQ(report.unfusedRegions, 1u);
}

} // namespace
} // namespace llmc::rt::cuda
