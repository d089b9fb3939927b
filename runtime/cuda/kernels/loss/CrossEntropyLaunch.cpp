//===- CrossEntropyLaunch.cpp - the loss and its gradient -----------------===//
//
// The cross-entropy family (loss/CrossEntropy.cuh, CrossEntropyGrad.cuh): a
// block per row for each position's loss (and log-sum-exp), then a one-block
// finish; the gradient's weight in one block, then a block per row writing
// dlogits. 16-byte moves where the row length and the pointers allow.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/libs/CudaModule.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

namespace {

/// Threads of the cross_entropy_grad kernels (loss/CrossEntropyGrad.cuh).
constexpr unsigned kGradThreads = 1024;

/// Whether the loss kernels' rows move 16 bytes at a time: the row length
/// a multiple of 16 bytes and every pointer 16-byte aligned.
bool lossRowsVectorized(long long vocab, size_t bytes,
                        std::initializer_list<const void *> pointers) {
  long long perMove = 16 / static_cast<long long>(bytes);
  bool vec = vocab % perMove == 0;
  for (const void *p : pointers)
    vec = vec && reinterpret_cast<uintptr_t>(p) % 16 == 0;
  return vec;
}

/// Threads of a loss row block (loss/CrossEntropy.cuh): enough for
/// LLMC_CE_BATCH (4) moves per thread, a multiple of a warp, at most 256
/// (the rows of GPT-2's 50304 classes take 256; GPT-2 tiny's 128 one warp).
unsigned lossRowThreads(long long vocab, size_t bytes, bool vec) {
  long long moves = vec ? vocab / (16 / static_cast<long long>(bytes)) : vocab;
  long long warps = (moves + 4 * 32 - 1) / (4 * 32);
  return static_cast<unsigned>(32 * std::clamp<long long>(warps, 1, 8));
}

} // namespace

Status family::selectCrossEntropy(const KernelCall &call,
                                  KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::CrossEntropy: {
    // Outputs: the loss, and optionally each position's log-sum-exp.
    if (inputs.size() != 2 || outputs.empty() || outputs.size() > 2 ||
        attrs.ints.size() < 3)
      return Status::error(StatusCode::InvalidArgument,
                           "CrossEntropy: expected 2 inputs, 1 or 2 outputs "
                           "and 3 ints");
    std::string suffix = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(inputs[1].dtype);
    if (suffix.empty() || index.empty() || outputs[0].dtype != DType::F32 ||
        inputs[0].rank() < 1)
      return call.refuse("cross_entropy covers f32 and bf16 logits, i32 or i64 "
                         "targets, an f32 result");
    if (outputs.size() == 2 &&
        (outputs[1].dtype != DType::F32 ||
         outputs[1].numElements() != inputs[1].numElements()))
      return call.refuse("cross_entropy's lse is f32, one per position");
    if (inputs[1].numElements() > 0x7fffffffLL ||
        inputs[0].shape.back() > 0x7fffffffLL)
      return call.refuse("more than 2^31 - 1 positions or classes");
    // One double loss per position.
    choice.scratchBytes =
        static_cast<size_t>(std::max<int64_t>(1, inputs[1].numElements())) *
        sizeof(double);
    // The launch takes the "_vec" row entry (16-byte loads) when the row
    // length and the pointer allow.
    return runEntries(
        choice, {"llmc_cross_entropy_rows_" + suffix + "_" + index,
                 "llmc_cross_entropy_rows_" + suffix + "_" + index + "_vec",
                 "llmc_cross_entropy_finish_" + index});
  }
  case KernelKind::CrossEntropyGrad: {
    // Inputs: logits, targets, dloss, and optionally the forward's lse.
    LLMC_RETURN_IF_ERROR(call.expect(3, 4, 3, 0));
    std::string suffix = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(inputs[1].dtype);
    if (suffix.empty() || index.empty() || inputs[2].dtype != DType::F32 ||
        outputs[0].dtype != inputs[0].dtype || inputs[0].rank() < 1)
      return call.refuse(
          "cross_entropy_grad covers f32 and bf16 logits (dlogits "
          "of their type), i32 or i64 targets, an f32 dloss");
    if (inputs.size() == 4 &&
        (inputs[3].dtype != DType::F32 ||
         inputs[3].numElements() != inputs[1].numElements()))
      return call.refuse("cross_entropy_grad's lse is f32, one per position");
    if (inputs[1].numElements() > 0x7fffffffLL ||
        inputs[0].shape.back() > 0x7fffffffLL)
      return call.refuse("more than 2^31 - 1 positions or classes");
    // The weight of a mean or sum (one double).
    choice.scratchBytes = sizeof(double);
    // The launch takes the "_vec" row entry (16-byte moves) when the
    // row length and the pointers allow.
    return runEntries(
        choice, {"llmc_cross_entropy_grad_weight_" + index,
                 "llmc_cross_entropy_grad_" + suffix + "_" + index,
                 "llmc_cross_entropy_grad_" + suffix + "_" + index + "_vec"});
  }
  default:
    return call.refuse("");
  }
}

Status family::launchCrossEntropy(LaunchContext &context,
                                  const KernelCall &call,
                                  const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  switch (call.kind) {
  case KernelKind::CrossEntropy: {
    const TensorRef &logits = inputs[0], &targets = inputs[1];
    long long vocab = logits.shape.back(), count = targets.numElements();
    int reduction = static_cast<int>(attrs.ints[0]);
    int hasIgnore = static_cast<int>(attrs.ints[1]);
    long long ignoreIndex = attrs.ints[2];
    const void *lp = logits.data, *tp = targets.data;
    void *losses = context.scratch(), *result = out->data;
    void *lse = outputs.size() == 2 ? outputs[1].data : nullptr;
    // 1. A block per row: the loss of each position (and its lse), with
    //    16-byte loads when every row starts aligned.
    if (count > 0) {
      bool vec = lossRowsVectorized(vocab, dtypeSize(logits.dtype), {lp});
      std::vector<void *> rowArgs = {&lp,    &tp,        &losses,     &lse,
                                     &vocab, &hasIgnore, &ignoreIndex};
      LLMC_RETURN_IF_ERROR(context.launch(
          vec ? entries[1] : entries[0], static_cast<unsigned>(count),
          lossRowThreads(vocab, dtypeSize(logits.dtype), vec), 0, rowArgs));
    }
    // 2. The reduction over positions, in a fixed order.
    std::vector<void *> finishArgs = {
        &losses, &tp, &result, &count, &reduction, &hasIgnore, &ignoreIndex};
    return context.launch(entries[2], 1, 256, 0, finishArgs);
  }
  case KernelKind::CrossEntropyGrad: {
    const TensorRef &logits = inputs[0], &targets = inputs[1];
    long long vocab = logits.shape.back(), count = targets.numElements();
    int reduction = static_cast<int>(attrs.ints[0]);
    int hasIgnore = static_cast<int>(attrs.ints[1]);
    long long ignoreIndex = attrs.ints[2];
    const void *lp = logits.data, *tp = targets.data, *dp = inputs[2].data;
    const void *lse = inputs.size() == 4 ? inputs[3].data : nullptr;
    void *result = out->data;
    // 1. The weight of a mean or sum into the scratch; none reads dloss
    //    per row (a null weight).
    void *weight = nullptr;
    if (reduction != 2) {
      weight = context.scratch();
      std::vector<void *> weightArgs = {
          &tp, &dp, &weight, &count, &reduction, &hasIgnore, &ignoreIndex};
      LLMC_RETURN_IF_ERROR(
          context.launch(entries[0], 1, kGradThreads, 0, weightArgs));
    }
    if (count == 0 || vocab == 0)
      return Status::ok();
    // 2. A block per row; 16-byte moves when every row starts aligned. With
    //    the forward's lse a row is one pass (the forward's block size);
    //    without, two, by 1024 threads so that the second read hits the L2.
    size_t bytes = dtypeSize(logits.dtype);
    bool vec = lossRowsVectorized(vocab, bytes, {lp, result});
    unsigned threads = lse ? lossRowThreads(vocab, bytes, vec) : kGradThreads;
    std::vector<void *> rowArgs = {&lp,     &tp,        &dp,
                                   &weight, &lse,       &result,
                                   &vocab,  &hasIgnore, &ignoreIndex};
    return context.launch(vec ? entries[2] : entries[1],
                          static_cast<unsigned>(count), threads, 0, rowArgs);
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
