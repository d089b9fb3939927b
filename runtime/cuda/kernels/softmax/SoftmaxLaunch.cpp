//===- SoftmaxLaunch.cpp - softmax, a warp or a block per row -------------===//
//
// The softmax family: a warp per row (softmax/Softmax.cuh), or for
// contiguous rows of 1024 elements and more a block per row with one online
// pass (softmax/SoftmaxLong.cuh), 16-byte loads where the row and the
// pointers allow. The selection is codegen's
// (codegen/cuda/softmax/SoftmaxSelect.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

namespace {

/// Threads of the long-row kernels (softmax/SoftmaxLong.cuh).
constexpr unsigned kLongRowThreads = 256;

/// The long-row variant of a softmax row entry (a block
/// per row) for contiguous rows (inner 1) of 1024 elements and more, with
/// 16-byte loads ("_vec") when the row length and `pointers` allow; "" to
/// keep the warp-per-row entry.
std::string longRowEntry(const std::string &entry, long long inner,
                         long long length, size_t bytes,
                         std::initializer_list<const void *> pointers,
                         unsigned alignment = 16) {
  if (inner != 1 || length < 1024 || (bytes != 4 && bytes != 2))
    return "";
  long long perLoad = 16 / static_cast<long long>(bytes);
  bool vec = length % perLoad == 0;
  for (const void *p : pointers)
    vec = vec && reinterpret_cast<uintptr_t>(p) % alignment == 0;
  return entry + "_long" + (vec ? "_vec" : "");
}

} // namespace

Status family::launchSoftmax(LaunchContext &context, const KernelCall &call,
                             const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  const TensorRef &x = inputs[0];
  AxisView view = viewAround(x.shape, attrs.ints[0]);
  long long rows = view.outer * view.inner, length = view.size,
            inner = view.inner;
  const void *source = x.data;
  void *result = out->data;
  // A widened result (bf16 in, f32 out) moves 32 bytes per vector store.
  bool widened = out->dtype != x.dtype;
  if (std::string entry =
          longRowEntry(entries[0], inner, length, dtypeSize(x.dtype),
                       {source, result}, widened ? 32u : 16u);
      !entry.empty()) {
    std::vector<void *> args = {&source, &result, &length};
    return context.launch(entry, static_cast<unsigned>(rows), kLongRowThreads,
                          0, args);
  }
  std::vector<void *> args = {&source, &result, &rows, &length, &inner};
  unsigned blocks =
      static_cast<unsigned>((rows * 32 + kRowThreads - 1) / kRowThreads);
  return context.launch(entries[0], blocks, kRowThreads, 0, args);
}

} // namespace llmc::rt::cuda
