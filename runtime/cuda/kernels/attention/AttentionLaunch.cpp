//===- AttentionLaunch.cpp - flash attention forward and backward ---------===//
//
// The attention family: llmc's flash kernels, the tensor-core ones
// (attention/FlashTc*.cuh: bf16, D 64 or 128, aligned operands, sm_80) or the
// scalar ones (attention/Flash.cuh), as codegen chose them
// (codegen/cuda/attention/AttentionSelect.cpp); where cuDNN is loaded it
// takes bf16 attention before the carried choice (AttentionCudnn.cpp,
// CudaKernels::launch). flashLaunch (FlashLaunch.h) computes the grids and
// the operands' strides from the shapes and the layout attribute, for the
// selection and the launch alike.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/kernels/attention/FlashLaunch.h"

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

namespace {

constexpr long long kFlashForwardTile = 32;
long long flashBackwardTile(int capacity) { return capacity <= 64 ? 32 : 16; }

constexpr unsigned kFlashThreads = 128;

} // namespace

int64_t flashRows(const TensorRef &q) {
  int64_t headDim = q.shape.empty() ? 1 : std::max<int64_t>(1, q.shape.back());
  return std::max<int64_t>(1, q.numElements() / headDim);
}

std::string flashLaunch(const std::vector<TensorRef> &inputs,
                        const KernelAttrs &attrs, FlashLaunch &launch,
                        const TensorRef *result) {
  const TensorRef &q = inputs[0], &k = inputs[1], &v = inputs[2];
  std::string type = floatSuffix(q.dtype);
  if (type.empty() || q.rank() != 4 || k.rank() != 4 || k.dtype != q.dtype ||
      v.dtype != q.dtype)
    return "flash attention covers f32, bf16 and f16 [B, H, T, D]";
  // The query-side result (out): given, attention_grad's out, or the shape
  // of q (the forward in the bhtd and bthd layouts).
  const TensorRef &o = result               ? *result
                       : inputs.size() >= 4 ? inputs[3]
                                            : inputs[0];
  AttentionGeometry geometry;
  if (std::string why = attentionGeometry(
          attrs.ints.size() > 1 ? attrs.ints[1] : 0, q, k, o, geometry);
      !why.empty())
    return why;
  launch.layout = {geometry.q, geometry.k, geometry.v, geometry.o};
  launch.stridesAligned16 = true;
  for (const AttentionStrides &s :
       {geometry.q, geometry.k, geometry.v, geometry.o})
    for (int64_t stride : {s.offset, s.batch, s.head, s.row})
      launch.stridesAligned16 &= stride % 8 == 0; // 16 bytes of bf16
  int64_t headDim = geometry.headDim;
  // The kernels are instantiated for these head-dimension capacities; a
  // smaller D runs zero-padded in the next one up.
  int capacity = headDim <= 16    ? 16
                 : headDim <= 32  ? 32
                 : headDim <= 64  ? 64
                 : headDim <= 128 ? 128
                                  : 0;
  if (capacity == 0)
    return "flash attention covers head dimensions up to 128, got " +
           std::to_string(headDim);
  launch.suffix = type + "_d" + std::to_string(capacity);
  launch.heads = static_cast<int>(geometry.heads);
  launch.kvHeads = static_cast<int>(geometry.kvHeads);
  launch.seq = geometry.seq;
  launch.kvSeq = geometry.kvSeq;
  launch.headDim = static_cast<int>(headDim);
  launch.causal = static_cast<int>(attrs.ints[0]);
  launch.scale = static_cast<float>(attrs.floats[0]);
  long long forwardTile =
      inputs.size() == 3 ? kFlashForwardTile : flashBackwardTile(capacity);
  long long backwardTile = flashBackwardTile(capacity);
  long long queryBlocks = geometry.batch * geometry.heads *
                          ((launch.seq + forwardTile - 1) / forwardTile);
  long long keyBlocks = geometry.batch * geometry.kvHeads *
                        ((launch.kvSeq + backwardTile - 1) / backwardTile);
  if (queryBlocks > 0x7fffffffLL || keyBlocks > 0x7fffffffLL)
    return "more than 2^31 - 1 attention blocks";
  launch.queryBlocks = static_cast<unsigned>(queryBlocks);
  launch.keyBlocks = static_cast<unsigned>(keyBlocks);
  // The tensor-core kernels take bf16 with D exactly 64 or 128 (no padded
  // columns); their grids have fewer blocks than the scalar ones. f16 runs
  // the scalar kernels (f32 arithmetic on f16 storage): an f16 mma.sync
  // variant of FlashTc*.cuh is not written (TODO(#24)).
  launch.tensorCores =
      q.dtype == DType::BF16 && (headDim == 64 || headDim == 128);
  if (launch.tensorCores)
    flashTensorCoreLaunch(
        flashTcTileSizes(headDim), inputs.size() == 3,
        Shape{geometry.batch, geometry.heads, geometry.seq, headDim},
        Shape{geometry.batch, geometry.kvHeads, geometry.kvSeq, headDim},
        launch);
  return "";
}

std::string flashBlockLaunch(KernelKind kind,
                             const std::vector<TensorRef> &inputs,
                             const std::vector<TensorRef> &outputs,
                             const KernelAttrs &attrs, FlashLaunch &launch) {
  const bool forward = kind == KernelKind::AttentionBlock;
  const size_t numInputs = forward ? 5 : 8, numOutputs = forward ? 2 : 3;
  if (inputs.size() != numInputs || outputs.size() != numOutputs ||
      attrs.floats.size() != 1)
    return std::string(kernelName(kind)) + " expects " +
           std::to_string(numInputs) + " inputs, " +
           std::to_string(numOutputs) + " outputs and floats [scale], got " +
           std::to_string(inputs.size()) + ", " +
           std::to_string(outputs.size()) + " and " +
           std::to_string(attrs.floats.size());
  // The flash kernels' grid of bhtd attention, not causal (the positions
  // mask): the forward's with q, k, v; the backward's with out as well.
  const KernelAttrs flashAttrs{{0, 0}, attrs.floats};
  std::vector<TensorRef> flashInputs(inputs.begin(),
                                     inputs.begin() + (forward ? 3 : 5));
  const TensorRef &out = forward ? outputs[0] : inputs[3];
  if (std::string why = flashLaunch(flashInputs, flashAttrs, launch, &out);
      !why.empty())
    return why;
  // launch.tensorCores as flashLaunch set it: the tensor-core block
  // kernels (llmc_flash_block_tc_) cover what the tensor-core attention
  // kernels do.
  const TensorRef &lse = forward ? outputs[1] : inputs[5];
  const TensorRef &queryPositions = inputs[forward ? 3 : 6];
  const TensorRef &keyPositions = inputs[forward ? 4 : 7];
  if (lse.dtype != DType::F32 || lse.numElements() != flashRows(out))
    return "the block's log-sum-exp is f32 [B, Hq, T]";
  if (queryPositions.dtype != DType::I32 || queryPositions.rank() != 1 ||
      queryPositions.shape[0] != launch.seq)
    return "the block's query positions are i32 [" +
           std::to_string(launch.seq) + "]";
  if (keyPositions.dtype != DType::I32 || keyPositions.rank() != 1 ||
      keyPositions.shape[0] != launch.kvSeq)
    return "the block's key positions are i32 [" +
           std::to_string(launch.kvSeq) + "]";
  for (size_t i = 0; i < numOutputs; ++i)
    if ((forward && i == 1 ? DType::F32 : inputs[0].dtype) != outputs[i].dtype)
      return "ring attention's blocks expect one element type throughout";
  if (!forward && (inputs[3].dtype != inputs[0].dtype ||
                   inputs[4].dtype != inputs[0].dtype))
    return "ring attention's blocks expect one element type throughout";
  return "";
}

FlashTcTileSizes flashTcTileSizes(int64_t headDim) {
  // D = 64: the fastest of CudaTest.FlashAttentionTileSweep on the H200.
  if (headDim <= 64)
    return {1, 64, 1, 32, 1, 32};
  return {1, 32, 1, 16, 1, 16};
}

void flashTensorCoreLaunch(const FlashTcTileSizes &tiles, bool forward,
                           const Shape &q, const Shape &k,
                           FlashLaunch &launch) {
  auto blocks = [](long long heads, long long rows, long long tile) {
    return static_cast<unsigned>(heads * ((rows + tile - 1) / tile));
  };
  // Rows per block: 16 per row block of each of the 4 warps.
  long long queryRows =
      64LL * (forward ? tiles.forwardRowBlocks : tiles.rowsRowBlocks);
  long long keyRows = 64LL * tiles.keysRowBlocks;
  launch.tensorCoreQueryBlocks = blocks(q[0] * q[1], q[2], queryRows);
  launch.tensorCoreKeyBlocks = blocks(k[0] * k[1], k[2], keyRows);
  // As FlashTcTiles<D> lays it out (the kernels trap when given less):
  // tiles of bf16 rows padded by 8 elements, plus two buffers of the
  // streamed tiles.
  unsigned stride = static_cast<unsigned>(q[3]) + 8;
  auto tile = [&](long long tileRows) {
    return static_cast<unsigned>(tileRows) * stride * 2;
  };
  long long forwardRows = 64LL * tiles.forwardRowBlocks;
  long long rowsRows = 64LL * tiles.rowsRowBlocks;
  // q, 2 x (k, v).
  launch.tensorCoreForwardShared =
      tile(forwardRows) + 4 * tile(tiles.forwardKeys);
  // q, dout, 2 x (k, v), the rows' delta (f32).
  launch.tensorCoreRowsShared = 2 * tile(rowsRows) + 4 * tile(tiles.rowsKeys) +
                                4 * static_cast<unsigned>(rowsRows);
  // k, v, 2 x (q, dout, lse, delta).
  launch.tensorCoreKeysShared = 2 * tile(keyRows) +
                                4 * tile(tiles.keysQueries) +
                                16 * static_cast<unsigned>(tiles.keysQueries);
}

namespace {

/// The forward: the tensor-core kernel where the device and the operands allow it, else the scalar one.
Status launchFlashForward(LaunchContext &context, const KernelCall &call,
                          const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  FlashLaunch flash;
  if (std::string why = flashLaunch(inputs, attrs, flash, out); !why.empty())
    return call.refuse(why);
  const void *qp = inputs[0].data, *kp = inputs[1].data, *vp = inputs[2].data;
  void *result = outputs[0].data;
  // The rows' log-sum-exp, when the op returns it (else null: not stored).
  void *lse = outputs.size() == 2 ? outputs[1].data : nullptr;
  // The tensor-core kernel (entries[0]) where the device has bf16 MMA and
  // the operands allow 16-byte loads; else the scalar one after it.
  if (flash.tensorCores && context.bf16TensorCores() &&
      flash.stridesAligned16 && aligned16({qp, kp, vp, result})) {
    if (flash.tensorCoreQueryBlocks == 0)
      return Status::ok();
    std::vector<void *> args = {&qp,
                                &kp,
                                &vp,
                                &result,
                                &lse,
                                &flash.heads,
                                &flash.kvHeads,
                                &flash.seq,
                                &flash.kvSeq,
                                &flash.causal,
                                &flash.scale,
                                &flash.layout};
    return context.launch(entries[0], flash.tensorCoreQueryBlocks,
                          kFlashThreads, flash.tensorCoreForwardShared, args);
  }
  std::vector<void *> args = {&qp,
                              &kp,
                              &vp,
                              &result,
                              &lse,
                              &flash.heads,
                              &flash.kvHeads,
                              &flash.seq,
                              &flash.kvSeq,
                              &flash.headDim,
                              &flash.causal,
                              &flash.scale,
                              &flash.layout};
  return context.launch(entries[flash.tensorCores ? 1 : 0], flash.queryBlocks,
                        kFlashThreads, 0, args);
}

/// The backward: grad_rows then grad_keys, tensor-core or scalar.
Status launchFlashBackward(LaunchContext &context, const KernelCall &call,
                           const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  FlashLaunch flash;
  if (std::string why = flashLaunch(inputs, attrs, flash); !why.empty())
    return call.refuse(why);
  const void *qp = inputs[0].data, *kp = inputs[1].data, *vp = inputs[2].data,
             *op = inputs[3].data, *dop = inputs[4].data;
  // Packed: one gradient, dq, dk and dv at the strides of q, k and v.
  void *dq = outputs[0].data;
  void *dk = outputs[outputs.size() == 3 ? 1 : 0].data;
  void *dv = outputs[outputs.size() == 3 ? 2 : 0].data;
  // lse and delta of every query row, in the scratch prepare() reserved.
  float *lse = static_cast<float *>(context.scratch());
  float *delta = lse + flashRows(inputs[3]);
  // The forward's log-sum-exp when the op has it: the tensor-core
  // grad_rows then skips its statistics pass, and grad_keys reads it.
  const void *forwardLse = inputs.size() == 6 ? inputs[5].data : nullptr;
  // The tensor-core pair (entries[0..1]) where the device has bf16 MMA
  // and the operands allow 16-byte loads; else the scalar pair.
  if (flash.tensorCores && context.bf16TensorCores() &&
      flash.stridesAligned16 &&
      aligned16({qp, kp, vp, op, dop, dq, dk, dv})) {
    // 1. Per query tile: the row statistics (unless given), then dq.
    if (flash.tensorCoreQueryBlocks > 0) {
      std::vector<void *> rowArgs = {&qp,
                                     &kp,
                                     &vp,
                                     &op,
                                     &dop,
                                     &forwardLse,
                                     &dq,
                                     &lse,
                                     &delta,
                                     &flash.heads,
                                     &flash.kvHeads,
                                     &flash.seq,
                                     &flash.kvSeq,
                                     &flash.causal,
                                     &flash.scale,
                                     &flash.layout};
      LLMC_RETURN_IF_ERROR(
          context.launch(entries[0], flash.tensorCoreQueryBlocks,
                         kFlashThreads, flash.tensorCoreRowsShared, rowArgs));
    }
    // 2. Per key tile of each key/value head: dk and dv (after 1).
    const void *keysLse = forwardLse != nullptr ? forwardLse : lse;
    if (flash.tensorCoreKeyBlocks > 0) {
      std::vector<void *> keyArgs = {&qp,           &kp,
                                     &vp,           &dop,
                                     &keysLse,      &delta,
                                     &dk,           &dv,
                                     &flash.heads,  &flash.kvHeads,
                                     &flash.seq,    &flash.kvSeq,
                                     &flash.causal, &flash.scale,
                                     &flash.layout};
      LLMC_RETURN_IF_ERROR(
          context.launch(entries[1], flash.tensorCoreKeyBlocks, kFlashThreads,
                         flash.tensorCoreKeysShared, keyArgs));
    }
    return Status::ok();
  }
  size_t scalar = flash.tensorCores ? 2 : 0;
  // 1. Per query tile: the row statistics, then dq.
  if (flash.queryBlocks > 0) {
    std::vector<void *> rowArgs = {&qp,
                                   &kp,
                                   &vp,
                                   &op,
                                   &dop,
                                   &dq,
                                   &lse,
                                   &delta,
                                   &flash.heads,
                                   &flash.kvHeads,
                                   &flash.seq,
                                   &flash.kvSeq,
                                   &flash.headDim,
                                   &flash.causal,
                                   &flash.scale,
                                   &flash.layout};
    LLMC_RETURN_IF_ERROR(context.launch(entries[scalar], flash.queryBlocks,
                                        kFlashThreads, 0, rowArgs));
  }
  // 2. Per key tile of each key/value head: dk and dv over its group's
  //    query heads (after 1, on the same stream).
  if (flash.keyBlocks > 0) {
    std::vector<void *> keyArgs = {&qp,
                                   &kp,
                                   &vp,
                                   &dop,
                                   &lse,
                                   &delta,
                                   &dk,
                                   &dv,
                                   &flash.heads,
                                   &flash.kvHeads,
                                   &flash.seq,
                                   &flash.kvSeq,
                                   &flash.headDim,
                                   &flash.causal,
                                   &flash.scale,
                                   &flash.layout};
    LLMC_RETURN_IF_ERROR(context.launch(entries[scalar + 1], flash.keyBlocks,
                                        kFlashThreads, 0, keyArgs));
  }
  return Status::ok();
}

namespace {

/// LLMC_RING_TENSOR_CORES=1: ring attention's bf16 blocks on the
/// tensor-core kernels. Off by default: they pass the CPU emulation of the
/// CUDA code (FlashBlockTcEmulationTest) but have not yet run on a GPU
/// against the CPU kernels (CudaAttentionBlockTest.TensorCoresMatchTheCpu
/// sets it), so the scalar kernels, checked on the H200, stay the default.
bool ringTensorCores() {
  const char *env = std::getenv("LLMC_RING_TENSOR_CORES");
  return env && std::string(env) == "1";
}

} // namespace

/// Ring attention's blocks: the position-masked kernels, forward or
/// grad_rows then grad_keys; the tensor-core ones (attention/FlashTc.cuh,
/// entries[0] and [0..1]) where the device has bf16 MMA and the operands
/// allow 16-byte loads, as for attention, and LLMC_RING_TENSOR_CORES=1
/// asks for them; else the scalar ones (attention/FlashBlock.cuh) after
/// them.
Status launchFlashBlock(LaunchContext &context, const KernelCall &call,
                        const KernelChoice &choice) {
  FlashLaunch flash;
  if (std::string why = flashBlockLaunch(call.kind, call.inputs, call.outputs,
                                         call.attrs, flash);
      !why.empty())
    return call.refuse(why);
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<std::string> &entries = choice.entries;
  const void *qp = inputs[0].data, *kp = inputs[1].data, *vp = inputs[2].data;
  const bool forward = call.kind == KernelKind::AttentionBlock;
  const bool tensorCores =
      flash.tensorCores && ringTensorCores() && context.bf16TensorCores() &&
      flash.stridesAligned16 &&
      (forward ? aligned16({qp, kp, vp, call.outputs[0].data})
               : aligned16({qp, kp, vp, inputs[3].data, inputs[4].data,
                            call.outputs[0].data, call.outputs[1].data,
                            call.outputs[2].data}));
  // The first scalar entry.
  const size_t scalar = flash.tensorCores ? (forward ? 1 : 2) : 0;
  if (forward) {
    void *out = call.outputs[0].data, *lse = call.outputs[1].data;
    const void *qpos = inputs[3].data, *kpos = inputs[4].data;
    if (tensorCores) {
      if (flash.tensorCoreQueryBlocks == 0)
        return Status::ok();
      std::vector<void *> args = {&qp,          &kp,          &vp,
                                  &out,         &lse,         &qpos,
                                  &kpos,        &flash.heads, &flash.kvHeads,
                                  &flash.seq,   &flash.kvSeq, &flash.scale,
                                  &flash.layout};
      return context.launch(entries[0], flash.tensorCoreQueryBlocks,
                            kFlashThreads, flash.tensorCoreForwardShared,
                            args);
    }
    if (flash.queryBlocks == 0)
      return Status::ok();
    std::vector<void *> args = {&qp,          &kp,          &vp,
                                &out,         &lse,         &qpos,
                                &kpos,        &flash.heads, &flash.kvHeads,
                                &flash.seq,   &flash.kvSeq, &flash.headDim,
                                &flash.scale, &flash.layout};
    return context.launch(entries[scalar], flash.queryBlocks, kFlashThreads,
                          0, args);
  }
  const void *op = inputs[3].data, *dop = inputs[4].data,
             *givenLse = inputs[5].data, *qpos = inputs[6].data,
             *kpos = inputs[7].data;
  void *dq = call.outputs[0].data, *dk = call.outputs[1].data,
       *dv = call.outputs[2].data;
  // The rows' lse (the given one, copied by the scalar grad_rows) and
  // delta, in the scratch the selection asked for.
  float *lse = static_cast<float *>(context.scratch());
  float *delta = lse + flashRows(inputs[3]);
  if (tensorCores) {
    // 1. Per query tile: delta, then dq with the given lse.
    if (flash.tensorCoreQueryBlocks > 0) {
      std::vector<void *> rowArgs = {
          &qp,           &kp,        &vp,          &op,
          &dop,          &givenLse,  &dq,          &lse,
          &delta,        &qpos,      &kpos,        &flash.heads,
          &flash.kvHeads, &flash.seq, &flash.kvSeq, &flash.scale,
          &flash.layout};
      LLMC_RETURN_IF_ERROR(
          context.launch(entries[0], flash.tensorCoreQueryBlocks,
                         kFlashThreads, flash.tensorCoreRowsShared, rowArgs));
    }
    // 2. Per key tile: dk and dv, reading the given lse too (after 1).
    if (flash.tensorCoreKeyBlocks > 0) {
      std::vector<void *> keyArgs = {
          &qp,        &kp,          &vp,          &dop,
          &givenLse,  &delta,       &dk,          &dv,
          &qpos,      &kpos,        &flash.heads, &flash.kvHeads,
          &flash.seq, &flash.kvSeq, &flash.scale, &flash.layout};
      LLMC_RETURN_IF_ERROR(
          context.launch(entries[1], flash.tensorCoreKeyBlocks, kFlashThreads,
                         flash.tensorCoreKeysShared, keyArgs));
    }
    return Status::ok();
  }
  if (flash.queryBlocks > 0) {
    std::vector<void *> rowArgs = {&qp,
                                   &kp,
                                   &vp,
                                   &op,
                                   &dop,
                                   &givenLse,
                                   &dq,
                                   &lse,
                                   &delta,
                                   &qpos,
                                   &kpos,
                                   &flash.heads,
                                   &flash.kvHeads,
                                   &flash.seq,
                                   &flash.kvSeq,
                                   &flash.headDim,
                                   &flash.scale,
                                   &flash.layout};
    LLMC_RETURN_IF_ERROR(context.launch(entries[scalar], flash.queryBlocks,
                                        kFlashThreads, 0, rowArgs));
  }
  if (flash.keyBlocks > 0) {
    std::vector<void *> keyArgs = {&qp,          &kp,          &vp,
                                   &dop,         &lse,         &delta,
                                   &dk,          &dv,          &qpos,
                                   &kpos,        &flash.heads, &flash.kvHeads,
                                   &flash.seq,   &flash.kvSeq, &flash.headDim,
                                   &flash.scale, &flash.layout};
    LLMC_RETURN_IF_ERROR(context.launch(entries[scalar + 1], flash.keyBlocks,
                                        kFlashThreads, 0, keyArgs));
  }
  return Status::ok();
}

} // namespace

Status family::launchAttention(LaunchContext &context, const KernelCall &call,
                               const KernelChoice &choice) {
  switch (call.kind) {
  case KernelKind::Attention:
    return launchFlashForward(context, call, choice);
  case KernelKind::AttentionGrad:
    return launchFlashBackward(context, call, choice);
  case KernelKind::AttentionBlock:
  case KernelKind::AttentionBlockGrad:
    return launchFlashBlock(context, call, choice);
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
