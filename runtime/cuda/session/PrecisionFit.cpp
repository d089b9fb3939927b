//===- PrecisionFit.cpp - does a program's precision fit the GPU? ---------===//
#include "runtime/cuda/session/PrecisionFit.h"

#include <algorithm>

namespace llmc::rt::cuda {

Status checkPrecisionFitsDevice(const RankProgram &program, int major,
                                int minor, const std::string &device) {
  int capability = major * 10 + minor;
  std::string arch = "sm_" + std::to_string(major) + std::to_string(minor);
  std::string where = device.empty() ? arch : device + " (" + arch + ")";
  if (capability < kMinComputeCapability)
    return Status::error(
        StatusCode::InvalidArgument,
        "the GPU " + where +
            " is older than llmc's CUDA backend supports: it needs compute "
            "capability 7.5 (sm_75) or later (CUDA 13's NVRTC compiles for "
            "nothing older); run on the CPU (devices = \"cpu\")");
  bool bf16 = std::any_of(program.values.begin(), program.values.end(),
                          [](const ValueInfo &value) {
                            return value.dtype == DType::BF16;
                          });
  if (bf16 && capability < kBf16ComputeCapability)
    return Status::error(
        StatusCode::InvalidArgument,
        "the program computes in bf16 ([precision] policy = \"bf16\", or "
        "bf16 values of the model), which needs compute capability 8.0 "
        "(sm_80) or later (cuBLASLt's bf16 GEMMs); the GPU " +
            where +
            " has none: compile with [precision] policy = \"fp16\" (f16 "
            "compute with dynamic loss scaling, sm_75 and later) or "
            "\"fp32\"");
  bool fp8 = std::any_of(program.values.begin(), program.values.end(),
                         [](const ValueInfo &value) {
                           return isFloat8(value.dtype);
                         });
  if (fp8 && capability < kFp8ComputeCapability)
    return Status::error(
        StatusCode::InvalidArgument,
        "the program computes its linear layers in FP8 ([precision] policy "
        "= \"fp8\"), which needs compute capability 8.9 (sm_89) or later "
        "(FP8 tensor cores, cuBLASLt's FP8 GEMMs); the GPU " +
            where +
            " has none: compile with [precision] policy = \"bf16\"");
  return Status::ok();
}

} // namespace llmc::rt::cuda
