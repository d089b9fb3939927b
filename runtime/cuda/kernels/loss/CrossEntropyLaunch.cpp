//===- CrossEntropyLaunch.cpp - the loss and its gradient -----------------===//
//
// The cross-entropy family (loss/CrossEntropy.cuh, CrossEntropyGrad.cuh): a
// block per row for each position's loss (and log-sum-exp), then a one-block
// finish; the gradient's weight in one block, then a block per row writing
// dlogits. 16-byte moves where the row length and the pointers allow. The
// selection is codegen's (codegen/cuda/loss/CrossEntropySelect.cpp).
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
