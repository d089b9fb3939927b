//===- CudaPlan.h - the CUDA kernels an Executable carries ------*- C++ -*-===//
//
// What codegen decided for the CUDA backend when it wrote the Executable
// (docs/executable.md, "The CUDA kernel plan"): per command of a rank
// program the kernel that runs it (or the refusal "no CUDA kernel for ...
// yet: ..." that the GPU session reports at creation), per elementwise fused
// region its kernel or why it runs op by op, the multi-tensor groups, and
// the CUDA sources of every NVRTC unit those need: the generated ones and
// the hand-written ones, so that the artifact is self-contained. With
// `--cuda-arch` a unit carries its cubin too. The runtime only loads,
// compiles (where no cubin fits) and launches what is here.
//
// Plain data, no CUDA types: the CPU runtime reads and writes it too.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDAPLAN_H
#define LLMC_RUNTIME_CUDAPLAN_H

#include "runtime/DType.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt {

/// How one command runs on the GPU (rt::cuda::KernelChoice::Route).
enum class CudaRoute : uint8_t {
  Nothing,     ///< nothing to launch (a command with no kernel)
  Copy,        ///< a device-to-device copy (CommandKind::Copy)
  Elementwise, ///< the generated unit of `elementwise`
  DeviceUnit,  ///< `entries` of the hand-written units
  Gemm,        ///< `matmul` through cuBLASLt
};
constexpr uint8_t kNumCudaRoutes = 5;

/// A generated elementwise unit's signature (the kind, its operand and
/// result types and integer attributes) and what its launch needs.
struct CudaElementwisePlan {
  KernelKind kind = KernelKind::Add;
  std::vector<DType> inputs;
  DType result = DType::F32;
  std::vector<int64_t> ints;
  std::string entry; ///< the scalar entry; entry + "_vec" the vectorized one
  int32_t vectorWidth = 1;
  std::vector<int32_t> elementBytes; ///< per input, then the result
};

/// A cuBLASLt problem (rt::cuda::MatmulProblem).
struct CudaMatmulPlan {
  DType operands = DType::F32;
  DType result = DType::F32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false, sharedRhs = false;
  bool hasEpilogue = false;
  MatmulEpilogueKind epilogue = MatmulEpilogueKind::Bias;
};

/// The choice for one command, or why no CUDA kernel runs it (`code` not
/// Ok: `error` is the message the session reports, "at <origin>: ...").
struct CudaCommandPlan {
  StatusCode code = StatusCode::Ok;
  std::string error;
  CudaRoute route = CudaRoute::Nothing;
  CudaElementwisePlan elementwise;
  /// DeviceUnit: the entries launched, in launch order (or the candidates
  /// the launch picks from by alignment); a MatmulEpilogue's bias-gradient
  /// fallback: ReduceSum's entries.
  std::vector<std::string> entries;
  CudaMatmulPlan matmul;
  uint64_t scratchBytes = 0; ///< device scratch the launch needs
};

/// An elementwise fused region (its FusedElementwise marker command): its
/// one kernel, or why it runs its commands one by one.
struct CudaFusedPlan {
  int32_t marker = -1;   ///< the marker's command index
  std::string entry;     ///< empty: no kernel (see `unfused`)
  int64_t elements = 0;  ///< the region's element count
  std::string unfused;   ///< why the generator refused it
};

/// Consecutive commands launched together (rt::cuda::MultiTensorGroup).
struct CudaMultiTensorPlan {
  enum class Kind : uint8_t { Elementwise, SumSquares };
  Kind kind = Kind::Elementwise;
  std::vector<int64_t> members, ends;
  std::vector<std::vector<int32_t>> inputs, outputs;
  std::vector<int64_t> elements;
  std::string entry; ///< Elementwise: the generated unit's entry
  std::string label;
};

/// One NVRTC unit: its CUDA C++ (includes expanded), the entries it
/// defines, how it is compiled and loaded, and, when codegen compiled it
/// (`--cuda-arch`), its cubin for `arch`.
struct CudaUnit {
  enum Flags : uint8_t {
    kNoContraction = 1 << 0, ///< compiled with --fmad=false (fused code)
    kOnDemand = 1 << 1,      ///< hand-written, loaded only when an entry is used
    kGenerated = 1 << 2,     ///< generated (loaded on first use)
  };
  std::string name;
  std::string source;
  std::vector<std::string> entries;
  uint8_t flags = 0;
  std::string arch;           ///< "sm_90"; empty: no cubin
  std::vector<uint8_t> cubin; ///< NVRTC's output for `arch`
};
constexpr uint8_t kKnownCudaUnitFlags = 7;

/// The CUDA kernel plan of one rank program.
struct CudaPlan {
  /// Written by a codegen that plans CUDA kernels (format 5 and later).
  /// An older artifact has none: it still runs on the CPU, and the CUDA
  /// session refuses it ("written by an older llmc: compile it again").
  bool present = false;
  std::vector<CudaCommandPlan> commands; ///< one per command
  std::vector<CudaFusedPlan> fused;      ///< one per FusedElementwise marker
  std::vector<CudaMultiTensorPlan> multiTensor;
  std::vector<CudaUnit> units;

  /// The unit defining `entry`, or null.
  const CudaUnit *unitDefining(const std::string &entry) const;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_CUDAPLAN_H
