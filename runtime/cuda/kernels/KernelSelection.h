//===- KernelSelection.h - which CUDA kernel runs a command -----*- C++ -*-===//
//
// The CUDA backend's choice of kernel for one command, made from the
// command's kind, attributes and operand types and shapes alone, without a
// device: a generated elementwise unit, entries of the non-elementwise unit
// (deviceKernelUnit()), a cuBLASLt GEMM, or a copy; or the refusal
// "no CUDA kernel for <kind>(<types>) -> <types> yet: <why>". CudaKernels
// (prepare and launch) and CudaSession decide through these functions, and
// checkCudaCoverage (CudaCoverage.h) runs them over a whole Executable on a
// machine without a GPU, so the two can never disagree.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELSELECTION_H
#define LLMC_RUNTIME_CUDA_KERNELSELECTION_H

#include "runtime/AttentionLayout.h"
#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/libs/CublasLt.h"
#include "runtime/cuda/kernels/elementwise/ElementwiseKernels.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// How one command runs on the GPU.
struct KernelChoice {
  enum class Route {
    Nothing,     ///< nothing to launch (a command with no kernel)
    Copy,        ///< a device-to-device copy (CommandKind::Copy)
    Elementwise, ///< the generated unit of `elementwise`
    DeviceUnit,  ///< `entries` of deviceKernelUnit(), launched in order
    Gemm,        ///< `matmul` through cuBLASLt
  };
  Route route = Route::Nothing;
  ElementwiseSignature elementwise;
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

/// The strides of q (dq), k (dk), v (dv) and out (dout): the kernels'
/// FlashLayout parameter (FlashAttentionSource.cpp), field for field.
struct FlashOperands {
  AttentionStrides q, k, v, o;
};
static_assert(sizeof(FlashOperands) == 16 * sizeof(long long),
              "FlashOperands must match the kernels' FlashLayout");

/// The launch parameters of flash attention (FlashAttentionSource.cpp)
/// shared by the selection and the launch.
struct FlashLaunch {
  std::string suffix; ///< "f32_d64" ...
  int heads = 0, kvHeads = 0, headDim = 0, causal = 0;
  long long seq = 0, kvSeq = 0;
  float scale = 0.0f;
  unsigned queryBlocks = 0; ///< forward or grad_rows
  unsigned keyBlocks = 0;   ///< grad_keys
  /// bf16 with D = 64 or 128: the tensor-core kernels
  /// (FlashAttentionTensorCoreSource.cpp) apply, with these grids; the
  /// selection lists their entries first and the scalar ones after.
  bool tensorCores = false;
  unsigned tensorCoreQueryBlocks = 0; ///< forward or grad_rows
  unsigned tensorCoreKeyBlocks = 0;   ///< grad_keys
  /// Their dynamic shared memory in bytes (over 48 KiB for some: the
  /// launcher raises the kernel's limit): forward, grad_rows, grad_keys.
  unsigned tensorCoreForwardShared = 0;
  unsigned tensorCoreRowsShared = 0;
  unsigned tensorCoreKeysShared = 0;
  /// The operands' strides (runtime/AttentionLayout.h), passed to every
  /// flash kernel as one FlashLayout parameter (the same bytes).
  FlashOperands layout;
  /// Whether every offset and stride is a multiple of 16 bytes (bf16), as
  /// the tensor-core kernels' 16-byte copies need.
  bool stridesAligned16 = false;
};
/// Fills `launch` from q, k (and `result`, the query-side result: the
/// forward's result; attention_grad's out, inputs[3], when null) and the
/// attributes ints [causal, layout], floats [scale]; returns why not when
/// the kernels do not cover them ("" when they do).
std::string flashLaunch(const std::vector<TensorRef> &inputs,
                        const KernelAttrs &attrs, FlashLaunch &launch,
                        const TensorRef *result = nullptr);
/// The tiles of the tensor-core kernels (FlashTcTiles<D> in
/// FlashAttentionTensorCoreSource.cpp, which must agree): per kernel, the
/// 16-row blocks each of the 4 warps owns (rows per block = 64 times that:
/// query rows of the forward and grad_rows, key rows of grad_keys) and the
/// rows of the tiles it streams.
struct FlashTcTileSizes {
  int forwardRowBlocks, forwardKeys;
  int rowsRowBlocks, rowsKeys;
  int keysRowBlocks, keysQueries;
};
/// The sizes the kernels are compiled with for head dimension 64 or 128.
FlashTcTileSizes flashTcTileSizes(int64_t headDim);
/// The tensor-core grids and shared memory of `launch` for `tiles`: those
/// of the forward (`forward`) or of attention_grad, for q [B, Hq, T, D]
/// and k [B, Hkv, S, D] (the sizes, in any layout).
void flashTensorCoreLaunch(const FlashTcTileSizes &tiles, bool forward,
                           const Shape &q, const Shape &k,
                           FlashLaunch &launch);
/// The query rows B * Hq * T of q (at least 1): the entries of
/// attention_grad's log-sum-exp and delta scratch.
int64_t flashRows(const TensorRef &q);

/// The launch geometry of layer_norm_grad / rms_norm_grad
/// (NormGradKernelsSource.cpp) shared by the selection (its scratch) and
/// the launch: rows of `dim` elements in `chunks` chunks of kChunkRows rows
/// (a block each; the CPU reference's chunks too).
struct NormGradLaunch {
  static constexpr long long kChunkRows = 32;
  long long rows = 0, dim = 0, chunks = 0;
  /// dgamma's and dbeta's partial sums per chunk, double.
  size_t scratchBytes() const {
    return static_cast<size_t>(2 * chunks * dim) * sizeof(double);
  }
};
NormGradLaunch normGradLaunch(const TensorRef &x);

/// SumSquares (ReduceKernelsSource.cpp): a tensor is cut into chunks of
/// kSumSquaresChunk elements, a block of 256 threads each, whose double
/// partial sums a second kernel folds in chunk order. The multi-tensor
/// launch (MultiTensor.h) cuts every tensor the same way, so one tensor's
/// result has the same bits alone or in a group.
constexpr long long kSumSquaresChunk = 4096;
inline long long sumSquaresChunks(long long elements) {
  return (elements + kSumSquaresChunk - 1) / kSumSquaresChunk;
}

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELSELECTION_H
