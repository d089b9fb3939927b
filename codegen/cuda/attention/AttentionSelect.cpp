//===- AttentionSelect.cpp - flash attention forward and backward ---------===//
//
// The selection of the attention family: llmc's flash kernels, the
// tensor-core entries first where they apply (bf16, D 64 or 128) and the
// scalar ones after, which the launch
// (runtime/cuda/kernels/attention/AttentionLaunch.cpp) takes where the
// device or the operands' alignment rule the tensor cores out. flashLaunch
// (FlashLaunch.h) checks the shapes and the layout for both. Where cuDNN
// loads, it takes bf16 attention at launch time instead (a run-time
// choice, AttentionCudnn.cpp). Ring attention's position-masked blocks
// (AttentionBlock, AttentionBlockGrad) go to llmc's block kernels only
// (never cuDNN): the tensor-core ones (llmc_flash_block_tc_,
// attention/FlashTc.cuh) first where they apply, as for attention, and the
// scalar ones of attention/FlashBlock.cuh after.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"
#include "runtime/cuda/kernels/attention/FlashLaunch.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectAttention(const KernelCall &call, KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::Attention: {
    // The result and, optionally, the rows' log-sum-exp (f32 [B, Hq, T]).
    if (outputs.size() == 2 &&
        (outputs[1].dtype != DType::F32 ||
         outputs[1].numElements() != flashRows(outputs[0])))
      return call.refuse("attention's log-sum-exp is f32 [B, Hq, T]");
    // The counts as Kernels.def says, the optional lse aside.
    std::vector<TensorRef> result =
        outputs.size() == 2 ? std::vector<TensorRef>{outputs[0]} : outputs;
    LLMC_RETURN_IF_ERROR(
        (KernelCall{call.kind, attrs, inputs, result}.expect(3, 3, 1, 1)));
    FlashLaunch flash;
    if (std::string why = flashLaunch(inputs, attrs, flash, &outputs[0]);
        !why.empty())
      return call.refuse(why);
    if (outputs[0].dtype != inputs[0].dtype)
      return call.refuse("attention expects one element type throughout");
    if (flash.tensorCores)
      return runEntries(choice,
                        {"llmc_flash_attention_tc_forward_" + flash.suffix,
                         "llmc_flash_attention_forward_" + flash.suffix});
    return runEntries(choice, {"llmc_flash_attention_forward_" + flash.suffix});
  }
  case KernelKind::AttentionGrad: {
    // Three outputs dq, dk, dv, or one packed gradient (layout 2); the
    // forward's log-sum-exp optionally as a sixth input.
    if (inputs.size() < 5 || inputs.size() > 6 ||
        (outputs.size() != 3 && outputs.size() != 1) || attrs.ints.empty() ||
        attrs.floats.empty())
      return Status::error(StatusCode::InvalidArgument,
                           "AttentionGrad: expected 5-6 inputs, 3 outputs (1 "
                           "packed), 1 int and 1 float, got " +
                               std::to_string(inputs.size()) + ", " +
                               std::to_string(outputs.size()) + ", " +
                               std::to_string(attrs.ints.size()) + " and " +
                               std::to_string(attrs.floats.size()));
    FlashLaunch flash;
    if (std::string why = flashLaunch(inputs, attrs, flash); !why.empty())
      return call.refuse(why);
    bool packed =
        attrs.ints.size() > 1 &&
        attrs.ints[1] == static_cast<int64_t>(AttentionLayout::Packed);
    if (packed != (outputs.size() == 1))
      return call.refuse(packed ? "packed attention_grad writes one gradient"
                                : "attention_grad writes dq, dk and dv");
    for (const TensorRef &operand : {inputs[3], inputs[4]})
      if (operand.dtype != inputs[0].dtype)
        return call.refuse(
            "attention_grad expects one element type throughout");
    for (const TensorRef &operand : outputs)
      if (operand.dtype != inputs[0].dtype)
        return call.refuse(
            "attention_grad expects one element type throughout");
    if (inputs.size() == 6 && (inputs[5].dtype != DType::F32 ||
                               inputs[5].numElements() != flashRows(inputs[3])))
      return call.refuse("attention_grad's log-sum-exp is f32 [B, Hq, T]");
    // The log-sum-exp and delta of every query row (f32 each): the rows of
    // out, [B, Hq, T] in any layout.
    choice.scratchBytes =
        static_cast<size_t>(flashRows(inputs[3])) * 2 * sizeof(float);
    if (flash.tensorCores)
      return runEntries(choice,
                        {"llmc_flash_attention_tc_grad_rows_" + flash.suffix,
                         "llmc_flash_attention_tc_grad_keys_" + flash.suffix,
                         "llmc_flash_attention_grad_rows_" + flash.suffix,
                         "llmc_flash_attention_grad_keys_" + flash.suffix});
    return runEntries(choice,
                      {"llmc_flash_attention_grad_rows_" + flash.suffix,
                       "llmc_flash_attention_grad_keys_" + flash.suffix});
  }
  case KernelKind::AttentionBlock:
  case KernelKind::AttentionBlockGrad: {
    // Ring attention's blocks: the position-masked kernels only, the
    // tensor-core entries first where they apply (bf16, D 64 or 128; the
    // launch falls back to the scalar ones after them where the device or
    // the alignment rule them out). cuDNN has no position mask, so it may
    // not take them.
    FlashLaunch flash;
    if (std::string why =
            flashBlockLaunch(call.kind, inputs, outputs, attrs, flash);
        !why.empty())
      return call.refuse(why);
    if (call.kind == KernelKind::AttentionBlock) {
      if (flash.tensorCores)
        return runEntries(choice,
                          {"llmc_flash_block_tc_forward_" + flash.suffix,
                           "llmc_flash_block_forward_" + flash.suffix});
      return runEntries(choice, {"llmc_flash_block_forward_" + flash.suffix});
    }
    // The rows' log-sum-exp (the scalar kernels copy the operand there) and
    // delta.
    choice.scratchBytes =
        static_cast<size_t>(flashRows(inputs[3])) * 2 * sizeof(float);
    if (flash.tensorCores)
      return runEntries(choice,
                        {"llmc_flash_block_tc_grad_rows_" + flash.suffix,
                         "llmc_flash_block_tc_grad_keys_" + flash.suffix,
                         "llmc_flash_block_grad_rows_" + flash.suffix,
                         "llmc_flash_block_grad_keys_" + flash.suffix});
    return runEntries(choice, {"llmc_flash_block_grad_rows_" + flash.suffix,
                               "llmc_flash_block_grad_keys_" + flash.suffix});
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
