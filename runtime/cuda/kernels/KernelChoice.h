//===- KernelChoice.h - how one command runs on the GPU ---------*- C++ -*-===//
//
// What codegen's selection (codegen/cuda/KernelSelection.h) decides for one
// launch and the runtime's launch (CudaKernels, DeviceKernels.h) reads: a
// generated elementwise unit, entries of the hand-written units, a
// cuBLASLt GEMM, or a copy. The Executable's CUDA plan carries it
// (runtime/CudaPlan.h; KernelPlan.h converts). Also what both sides share
// to speak of a launch: KernelCall and its refusal "no CUDA kernel for
// <kind>(<types>) -> <types> yet: <why>", the suffixes of the entry names,
// the bias-gradient fallback's operands. Nothing here selects.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_KERNELCHOICE_H
#define LLMC_RUNTIME_CUDA_KERNELS_KERNELCHOICE_H

#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/elementwise/ElementwiseUnit.h"
#include "runtime/cuda/libs/CublasLt.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// How one command runs on the GPU.
struct KernelChoice {
  enum class Route {
    Nothing,     ///< nothing to launch (a command with no kernel)
    Copy,        ///< a device-to-device copy (CommandKind::Copy)
    Elementwise, ///< the generated unit of `elementwise`
    DeviceUnit,  ///< `entries` of the hand-written units
    Gemm,        ///< `matmul` through cuBLASLt
  };
  Route route = Route::Nothing;
  ElementwiseSignature elementwise;
  /// Elementwise: the generated unit's entry and layout; its source is
  /// set by codegen's selection (a choice made on the spot for the kernel
  /// tests) and empty in a choice read from a carried plan (the plan's
  /// units hold it).
  ElementwiseSource unit;
  /// DeviceUnit: the extern "C" entries launched, in launch order (a
  /// composite may launch several, e.g. cross-entropy's rows and finish).
  std::vector<std::string> entries;
  MatmulProblem matmul;
  /// Device scratch the launch needs (bytes; 0 for none).
  size_t scratchBytes = 0;
};

/// One launch as the families see it, in their selection (codegen) and
/// their launch (runtime) alike.
struct KernelCall {
  KernelKind kind;
  const KernelAttrs &attrs;
  const std::vector<TensorRef> &inputs;
  const std::vector<TensorRef> &outputs;

  /// Unimplemented "no CUDA kernel for <launch> yet[: why]".
  Status refuse(const std::string &why) const;
  /// InvalidArgument unless there are minInputs..maxInputs inputs, one
  /// output, and at least `ints` and `floats` attributes (Kernels.def's
  /// layout of the kind).
  Status expect(size_t minInputs, size_t maxInputs, size_t ints,
                size_t floats) const;
};

/// The most dimensions the hand-written kernels index (LLMC_MAX_RANK of
/// common/Prelude.cuh).
constexpr int kMaxRank = 8;
/// Kernels.def's kinds.
constexpr size_t kNumKernels = static_cast<size_t>(KernelKind::Count);

/// "f32" / "bf16" / "f16" of the float kernels' entry names, or "" for other types.
std::string floatSuffix(DType dtype);
/// "i32" / "i64", or "".
std::string indexSuffix(DType dtype);
/// "b<bytes per element>": the entries that only move elements.
std::string bytesSuffix(DType dtype);

/// A BiasGradient MatmulEpilogue's reduction where cuBLASLt has no BGRADA
/// algorithm: the rhs as rows [K, N] (or [N, K] for transB) summed over K
/// into [N], with ReduceSum's kernels (KernelChoice::entries of the
/// MatmulEpilogue's choice).
inline TensorRef biasGradientRows(const MatmulProblem &p, const TensorRef &rhs) {
  return {rhs.data, rhs.dtype, p.transB ? Shape{p.n, p.k} : Shape{p.k, p.n}};
}
inline TensorRef biasGradientSums(const MatmulProblem &p, const TensorRef &out) {
  return {out.data, out.dtype, Shape{p.n}};
}
inline KernelAttrs biasGradientReduceAttrs(const MatmulProblem &p) {
  return {{p.transB ? 1 : 0}, {}};
}

/// "LayerNorm(bf16[16, 1024, 768], f32[768], f32[768]) -> bf16[16, 1024, 768]".
std::string describeLaunch(KernelKind kind, const std::vector<TensorRef> &inputs,
                           const std::vector<TensorRef> &outputs);

/// Whether a CudaSession without a transport runs `executable` (one rank);
/// the message says why not and names the ways that run it: virtual ranks
/// (llmc-run --virtual-ranks), `llmc launch` (with `gpus`, the machine's
/// GPU count, when there are too few), the CPU.
Status checkOneRank(const Executable &executable, int gpus);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_KERNELCHOICE_H
