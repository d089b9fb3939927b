//===- FlashLaunch.h - grids and operands of flash attention ----*- C++ -*-===//
//
// What the selection and the launch of Attention and AttentionGrad share
// (attention/AttentionLaunch.cpp), computed from the operands' shapes and
// the layout attribute alone (no device): the kernels' entries' suffix, the
// grids of the scalar and tensor-core kernels, their shared memory, and
// the operands' strides as the kernels take them.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_ATTENTION_FLASHLAUNCH_H
#define LLMC_RUNTIME_CUDA_KERNELS_ATTENTION_FLASHLAUNCH_H

#include "runtime/AttentionLayout.h"
#include "runtime/Kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// The strides of q (dq), k (dk), v (dv) and out (dout): the kernels'
/// FlashLayout parameter (attention/FlashLayout.cuh), field for field.
struct FlashOperands {
  AttentionStrides q, k, v, o;
};
static_assert(sizeof(FlashOperands) == 16 * sizeof(long long),
              "FlashOperands must match the kernels' FlashLayout");

/// The launch parameters of flash attention (attention/Flash.cuh)
/// shared by the selection and the launch.
struct FlashLaunch {
  std::string suffix; ///< "f32_d64" ...
  int heads = 0, kvHeads = 0, headDim = 0, causal = 0;
  long long seq = 0, kvSeq = 0;
  float scale = 0.0f;
  unsigned queryBlocks = 0; ///< forward or grad_rows
  unsigned keyBlocks = 0;   ///< grad_keys
  /// bf16 with D = 64 or 128: the tensor-core kernels
  /// (attention/FlashTc.cuh) apply, with these grids; the
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
/// attention/FlashTc.cuh, which must agree): per kernel, the
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
                           const Shape &q, const Shape &k, FlashLaunch &launch);
/// The flash launch of ring attention's blocks (AttentionBlock: inputs q,
/// k, v, qpos, kpos, outputs out, lse; AttentionBlockGrad: inputs q, k, v,
/// out, dout, lse, qpos, kpos, outputs dq, dk, dv; floats [scale]): the
/// grids of non-causal attention in bhtd (scalar, and tensor-core with
/// tensorCores set where those apply: bf16, D 64 or 128) with the blocks'
/// operands checked (i32 positions [T] and [S], lse f32 [B, Hq, T], one
/// element type throughout); returns why not ("" when the kernels cover
/// them).
std::string flashBlockLaunch(KernelKind kind,
                             const std::vector<TensorRef> &inputs,
                             const std::vector<TensorRef> &outputs,
                             const KernelAttrs &attrs, FlashLaunch &launch);
/// The query rows B * Hq * T of q (at least 1): the entries of
/// attention_grad's log-sum-exp and delta scratch.
int64_t flashRows(const TensorRef &q);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_ATTENTION_FLASHLAUNCH_H
