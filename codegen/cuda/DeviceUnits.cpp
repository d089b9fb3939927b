//===- DeviceUnits.cpp - the NVRTC units of the hand-written kernels ------===//
#include "codegen/cuda/DeviceUnits.h"
#include "codegen/cuda/KernelSources.h"

namespace llmc::rt::cuda {

namespace {

DeviceUnit unitOf(const std::string &name, const std::string &file,
                  bool onDemand = false,
                  std::vector<std::string> entries = {}) {
  DeviceUnit unit;
  unit.name = name;
  unit.file = "units/" + file;
  unit.onDemand = onDemand;
  unit.entries = std::move(entries);
  if (Status status = expandKernelUnit(unit.file, unit.source); !status)
    unit.error = status.message();
  return unit;
}

} // namespace

std::vector<DeviceUnit> deviceKernelUnits() {
  // Why the units are cut as they are: the comment of each .cu file.
  std::vector<DeviceUnit> units = {
      unitOf("llmc_device_kernels", "DeviceKernels.cu"),
      unitOf("llmc_flash_attention", "FlashAttention.cu"),
      unitOf("llmc_norm_grad_rows", "NormGradRows.cu"),
      unitOf("llmc_norm_rows8", "NormRows8.cu"),
      unitOf("llmc_rope", "Rope.cu"),
      // Compiled on the first launch that needs it: only fp8 programs do.
      unitOf("llmc_fp8", "Fp8.cu", /*onDemand=*/true,
             {"llmc_amax_f32", "llmc_amax_bf16", "llmc_amax_f16",
              "llmc_scaled_cast_f32_e4m3", "llmc_scaled_cast_f32_e5m2",
              "llmc_scaled_cast_bf16_e4m3", "llmc_scaled_cast_bf16_e5m2",
              "llmc_scaled_cast_f16_e4m3", "llmc_scaled_cast_f16_e5m2",
              "llmc_scaled_cast_transpose_f32_e4m3",
              "llmc_scaled_cast_transpose_f32_e5m2",
              "llmc_scaled_cast_transpose_bf16_e4m3",
              "llmc_scaled_cast_transpose_bf16_e5m2",
              "llmc_scaled_cast_transpose_f16_e4m3",
              "llmc_scaled_cast_transpose_f16_e5m2"}),
  };
  // Virtual ranks on one GPU (docs/distributed.md): the reductions of
  // their all-reduces and reduce-scatters. Carried by every program with
  // collectives, loaded only by the session of virtual ranks.
  {
    std::vector<std::string> entries;
    for (const char *op : {"sum", "max"})
      for (const char *type : {"f32", "f64", "bf16", "f16", "i32", "i64"})
        entries.push_back(std::string("llmc_virtual_reduce_") + op + "_" +
                          type);
    units.push_back(unitOf("llmc_virtual_collectives",
                           "VirtualCollectives.cu", /*onDemand=*/true,
                           entries));
    units.back().forCollectives = true;
  }
  // Ring attention's blocks (attention/FlashBlock.cuh): only programs with
  // context parallelism have them.
  {
    std::vector<std::string> entries;
    for (const char *kernel : {"forward", "grad_rows", "grad_keys"})
      for (const char *type : {"f32", "bf16", "f16"})
        for (int headDim : {16, 32, 64, 128})
          entries.push_back(std::string("llmc_flash_block_") + kernel + "_" +
                            type + "_d" + std::to_string(headDim));
    units.push_back(unitOf("llmc_flash_block", "FlashBlock.cu",
                           /*onDemand=*/true, entries));
  }
  for (int headDim : {64, 128}) {
    std::string d = std::to_string(headDim);
    std::string suffix = "_bf16_d" + d;
    units.push_back(unitOf("llmc_flash_tc_d" + d, "FlashTcD" + d + ".cu",
                           /*onDemand=*/true,
                           {"llmc_flash_attention_tc_forward" + suffix,
                            "llmc_flash_attention_tc_grad_rows" + suffix,
                            "llmc_flash_attention_tc_grad_keys" + suffix}));
    units.back().minArch = 80;
  }
  // Ring attention's blocks on tensor cores (bf16, D 64 or 128, sm_80):
  // only programs with context parallelism have them.
  for (int headDim : {64, 128}) {
    std::string d = std::to_string(headDim);
    std::string suffix = "_bf16_d" + d;
    units.push_back(unitOf("llmc_flash_block_tc_d" + d,
                           "FlashBlockTcD" + d + ".cu", /*onDemand=*/true,
                           {"llmc_flash_block_tc_forward" + suffix,
                            "llmc_flash_block_tc_grad_rows" + suffix,
                            "llmc_flash_block_tc_grad_keys" + suffix}));
    units.back().minArch = 80;
  }
  return units;
}

std::string deviceKernelUnit() {
  return unitOf("llmc_device_kernels", "DeviceKernels.cu").source;
}

int archNumber(const std::string &arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0)
    return 0;
  int number = 0;
  size_t i = 3;
  for (; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i)
    number = number * 10 + (arch[i] - '0');
  return i == 3 ? 0 : number;
}

bool unitCompilesFor(const std::string &name, const std::string &arch) {
  for (const DeviceUnit &unit : deviceKernelUnits())
    if (unit.name == name)
      return unit.minArch == 0 || archNumber(arch) >= unit.minArch;
  return true;
}

} // namespace llmc::rt::cuda
