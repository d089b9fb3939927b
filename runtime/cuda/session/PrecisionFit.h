//===- PrecisionFit.h - does a program's precision fit the GPU? -*- C++ -*-===//
//
// Checked by CudaSession::create before any device work, and testable
// without a GPU: the compute capability is an argument. bf16 needs sm_80
// (cuBLASLt's CUDA_R_16BF GEMMs, bf16 mma.sync); f16 and f32 run from
// sm_75 (Turing), the oldest architecture CUDA 13's NVRTC compiles for
// (sm_70 and older are refused by NVRTC itself, docs/precision.md).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_SESSION_PRECISIONFIT_H
#define LLMC_RUNTIME_CUDA_SESSION_PRECISIONFIT_H

#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <string>

namespace llmc::rt::cuda {

/// The oldest compute capability llmc's CUDA backend runs on (major * 10 +
/// minor): sm_75, as CUDA 13's NVRTC.
constexpr int kMinComputeCapability = 75;
/// The oldest one that runs bf16.
constexpr int kBf16ComputeCapability = 80;
/// The oldest one with FP8 tensor cores (Ada sm_89, Hopper sm_90):
/// cuBLASLt's FP8 GEMMs need it.
constexpr int kFp8ComputeCapability = 89;

/// Whether `program` can run on a device of compute capability
/// major.minor named `device` ("NVIDIA T4"): InvalidArgument naming the
/// device, what needs the newer architecture and the fix (`[precision]
/// policy = "fp16"` for a bf16 program below sm_80, `policy = "bf16"` for
/// an FP8 one below sm_89) otherwise.
Status checkPrecisionFitsDevice(const RankProgram &program, int major,
                                int minor, const std::string &device);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_SESSION_PRECISIONFIT_H
