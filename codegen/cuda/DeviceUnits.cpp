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
  };
  for (int headDim : {64, 128}) {
    std::string d = std::to_string(headDim);
    std::string suffix = "_bf16_d" + d;
    units.push_back(unitOf("llmc_flash_tc_d" + d, "FlashTcD" + d + ".cu",
                           /*onDemand=*/true,
                           {"llmc_flash_attention_tc_forward" + suffix,
                            "llmc_flash_attention_tc_grad_rows" + suffix,
                            "llmc_flash_attention_tc_grad_keys" + suffix}));
  }
  return units;
}

std::string deviceKernelUnit() {
  return unitOf("llmc_device_kernels", "DeviceKernels.cu").source;
}

} // namespace llmc::rt::cuda
