//===- KernelSelection.h - which CUDA kernel runs a command -----*- C++ -*-===//
//
// The CUDA backend's choice of kernel for one command, made from the
// command's kind, attributes and operand types and shapes alone, without a
// device: a generated elementwise unit, entries of the hand-written units
// (DeviceUnits.h), a cuBLASLt GEMM, or a copy; or the refusal
// "no CUDA kernel for <kind>(<types>) -> <types> yet: <why>". selectKernel
// dispatches through the one table of CUDA kernels (CudaKernels.def) to
// the kind's family (kernels/<family>/<Family>Launch.cpp). CudaKernels
// (prepare and launch) and CudaSession decide through these functions, and
// checkCudaCoverage (session/CudaCoverage.h) runs them over a whole
// Executable on a machine without a GPU, so the two can never disagree.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_KERNELSELECTION_H
#define LLMC_RUNTIME_CUDA_KERNELS_KERNELSELECTION_H

#include "runtime/AttentionLayout.h"
#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/attention/FlashLaunch.h"
#include "runtime/cuda/kernels/elementwise/ElementwiseKernels.h"
#include "runtime/cuda/kernels/norms/NormGradLaunch.h"
#include "runtime/cuda/kernels/reduce/ReduceKernels.h"
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
    DeviceUnit,  ///< `entries` of the hand-written units (DeviceUnits.h)
    Gemm,        ///< `matmul` through cuBLASLt
  };
  Route route = Route::Nothing;
  ElementwiseSignature elementwise;
  /// Elementwise: the generated unit's entry and layout; its source is
  /// set by the selection and empty in a choice read from a carried plan
  /// (the plan's units hold it).
  ElementwiseSource unit;
  /// DeviceUnit: the extern "C" entries launched, in launch order (a
  /// composite may launch several, e.g. cross-entropy's rows and finish).
  std::vector<std::string> entries;
  MatmulProblem matmul;
  /// Device scratch the launch needs (bytes; 0 for none).
  size_t scratchBytes = 0;
};

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

/// Chooses the kernel of one launch (operand data pointers are not read).
/// Unimplemented "no CUDA kernel for <launch> yet: <why>" when no CUDA
/// kernel covers the kind with these types; InvalidArgument when the
/// operand or attribute counts are not Kernels.def's.
Status selectKernel(KernelKind kind, const KernelAttrs &attrs,
                    const std::vector<TensorRef> &inputs,
                    const std::vector<TensorRef> &outputs, KernelChoice &choice);

/// The operands of `command` in rank `program`, with null data pointers.
void commandOperands(const RankProgram &program, const Command &command,
                     std::vector<TensorRef> &inputs,
                     std::vector<TensorRef> &outputs);

/// The choice for a command of a one-rank program, errors prefixed with
/// "at <origin>: " exactly as CudaSession reports them: collectives and
/// host steps are refused (they do not run on one GPU yet).
Status selectCommand(const RankProgram &program, const Command &command,
                     KernelChoice &choice);

/// Whether CudaSession runs `executable` at all (one rank); the message
/// says why not.
Status checkOneRank(const Executable &executable);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_KERNELSELECTION_H
