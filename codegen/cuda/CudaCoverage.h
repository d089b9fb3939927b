//===- CudaCoverage.h - which commands of a program the GPU can run --*- C++ -*-===//
//
// The CUDA backend's coverage of an Executable, checked without a GPU: every
// command goes through the selection CudaSession makes (selectCommand), and
// every distinct CUDA C++ unit the chosen kernels live in is compiled with
// NVRTC for the target architecture (sm_90 by default), the entries each
// command launches looked up in the PTX, and each GEMM's type combination
// checked against what CublasLtMatmul runs. A gap carries the exact message
// CudaSession::create or run() would fail with.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_CUDACOVERAGE_H
#define LLMC_CODEGEN_CUDA_CUDACOVERAGE_H

#include "runtime/Executable.h"
#include "runtime/Status.h"
#include "runtime/cuda/libs/Nvrtc.h"

#include <map>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// One command the CUDA backend cannot run.
struct CoverageGap {
  /// Index in the rank's command list (SIZE_MAX for the program as a whole,
  /// e.g. more than one rank).
  size_t command = static_cast<size_t>(-1);
  /// The model part (the command's origin).
  std::string origin;
  /// What CudaSession says: "at <origin>: no CUDA kernel for ... yet: ...".
  std::string message;
  /// The kernel and its operand types without shapes, "LayerNorm(bf16, f32,
  /// f32) -> bf16": gaps of one kind share it.
  std::string kind;
};

struct CoverageReport {
  size_t commands = 0;     ///< commands checked (of every rank)
  size_t kernels = 0;      ///< of which launch a kernel (Kernel or Gemm)
  size_t units = 0;        ///< distinct NVRTC units compiled
  size_t entries = 0;      ///< distinct entries of the non-elementwise unit
  size_t gemmTypes = 0;    ///< distinct cuBLASLt type combinations
  size_t fusedRegions = 0; ///< elementwise regions run as one kernel
  size_t unfusedRegions = 0; ///< regions whose commands run one by one
  std::vector<std::string> unfusedReasons; ///< why, one per such region
  /// Multi-tensor launches (MultiTensor.h) and the commands they run.
  size_t multiTensorGroups = 0;
  size_t multiTensorCommands = 0;
  double compileSeconds = 0.0;
  std::vector<CoverageGap> gaps;
  /// What runs, with the number of commands: "elementwise Add(f32, f32) ->
  /// f32", "llmc_layer_norm_bf16_f32", "cuBLASLt bf16 x bf16 -> f32",
  /// "copy".
  std::map<std::string, size_t> choices;
  /// The distinct `kind`s of `gaps`, in first-seen order.
  std::vector<std::string> uncoveredKinds() const;
};

struct CoverageOptions {
  /// The architecture and kernel cache of the NVRTC compiles.
  NvrtcOptions nvrtc;
  /// False: selection only, nothing compiled.
  bool compile = true;
  /// Not empty: the generated fused-region units and the device unit are
  /// also written there, one .cu file each (named by their entry), to be
  /// read.
  std::string sourcesDir;
};

/// Checks every command of `executable` (see above). Returns an error only
/// when the check itself fails (an NVRTC compile error is reported as such:
/// a source the backend generates must compile); uncovered commands are
/// listed in report.gaps.
Status checkCudaCoverage(const Executable &executable,
                         const CoverageOptions &options,
                         CoverageReport &report);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_CUDACOVERAGE_H
