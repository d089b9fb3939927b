//===- MovementLaunch.cpp - copies, concat, gather, scatter_add, iota -----===//
//
// The movement family (kernels of movement/Movement.cuh): broadcast,
// transpose and slice as one strided copy (simplified to fewer, wider
// dimensions where the shape and alignment allow), concat part by part,
// gather and embedding by element size, scatter_add (f32 atomics; bf16
// through an f32 copy: widen, scatter, narrow) and iota. The launch side:
// codegen selects (codegen/cuda/movement/MovementSelect.cpp).
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

// The host mirror of StridedMove (movement/Movement.cuh): the same members
// in the same order, hence the same layout.
struct StridedMove {
  int rank;
  long long shape[kMaxRank];
  long long inStrides[kMaxRank];
  long long base;
  long long count;
};

Shape rowMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// The suffix of the move entries for elements of `bytes`.
std::string moveSuffix(size_t bytes) { return "b" + std::to_string(bytes); }

/// Rewrites a strided move (element units, `bytes` per element) as an
/// equal one with fewer dimensions and wider elements, and names its
/// entry: size-1 dimensions go, dimensions contiguous in the input merge
/// (the result is row-major), and when the innermost run is contiguous and
/// sizes, strides, base and both pointers allow, elements of 16, 8 or 4
/// bytes move at once (a bf16 transpose keeping the 64-element head rows
/// moves 16 bytes per thread instead of 2). Indices are 32-bit when the
/// result and every input offset fit.
std::string simplifyMove(StridedMove &move, size_t bytes, const void *in,
                         const void *out) {
  int rank = 0;
  for (int d = 0; d < move.rank; ++d) {
    if (move.shape[d] == 1)
      continue;
    if (rank > 0 &&
        move.inStrides[rank - 1] == move.inStrides[d] * move.shape[d]) {
      move.shape[rank - 1] *= move.shape[d];
      move.inStrides[rank - 1] = move.inStrides[d];
      continue;
    }
    move.shape[rank] = move.shape[d];
    move.inStrides[rank] = move.inStrides[d];
    ++rank;
  }
  if (rank == 0) { // one element
    move.shape[0] = 1;
    move.inStrides[0] = 0;
    rank = 1;
  }
  move.rank = rank;
  size_t width = bytes;
  if (move.inStrides[rank - 1] == 1)
    for (long long w : {16LL, 8LL, 4LL}) {
      long long f = w / static_cast<long long>(bytes);
      if (f <= 1 || move.shape[rank - 1] % f || move.base % f ||
          reinterpret_cast<uintptr_t>(in) % w ||
          reinterpret_cast<uintptr_t>(out) % w)
        continue;
      bool strides = true;
      for (int d = 0; d + 1 < rank; ++d)
        strides = strides && move.inStrides[d] % f == 0;
      if (!strides)
        continue;
      move.shape[rank - 1] /= f;
      for (int d = 0; d + 1 < rank; ++d)
        move.inStrides[d] /= f;
      move.base /= f;
      move.count /= f;
      width = static_cast<size_t>(w);
      break;
    }
  long long lastInput = move.base;
  for (int d = 0; d < rank; ++d)
    lastInput += (move.shape[d] - 1) * move.inStrides[d];
  bool small = move.count < (1LL << 31) && lastInput < (1LL << 31);
  return std::string("llmc_strided_copy") + (small ? "32_" : "_") +
         moveSuffix(width);
}

/// Whether a simplified move is a batch of row-major [rows, cols] matrices
/// transposed to [cols, rows] (the result [batch, cols, rows], or [cols,
/// rows] with batch 1), the case of the tiled kernel: the weight and
/// activation transposes of the linear layers' backward and of FP8. The
/// tile's block rows must fit the grid's 65535.
bool asBatchedTranspose(const StridedMove &move, long long &batch,
                        long long &rows, long long &cols) {
  if (move.base != 0)
    return false;
  if (move.rank == 2 && move.inStrides[0] == 1 &&
      move.inStrides[1] == move.shape[0]) {
    batch = 1;
    cols = move.shape[0];
    rows = move.shape[1];
  } else if (move.rank == 3 && move.inStrides[1] == 1 &&
             move.inStrides[2] == move.shape[1] &&
             move.inStrides[0] == move.shape[1] * move.shape[2]) {
    batch = move.shape[0];
    cols = move.shape[1];
    rows = move.shape[2];
  } else {
    return false;
  }
  return (rows + 31) / 32 <= 65535;
}

} // namespace

namespace {

/// The strided copies: broadcast, transpose and slice (a transpose of the
/// last two dimensions through the tiled kernel).
Status launchStridedMove(LaunchContext &context, const KernelCall &call,
                         const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const TensorRef *out = &call.outputs[0];
  const TensorRef &in = inputs[0];
  StridedMove move{};
  move.rank = static_cast<int>(out->rank());
  move.count = out->numElements();
  Shape inStrides = rowMajorStrides(in.shape);
  for (int d = 0; d < move.rank; ++d)
    move.shape[d] = out->shape[d];
  const std::vector<int64_t> &ints = attrs.ints;
  if (call.kind == KernelKind::Broadcast) {
    if (ints.size() != in.shape.size())
      return call.refuse("expected one dims entry per input dimension");
    for (size_t i = 0; i < ints.size(); ++i)
      if (in.shape[i] == out->shape[ints[i]] && in.shape[i] != 1)
        move.inStrides[ints[i]] = inStrides[i];
  } else if (call.kind == KernelKind::Transpose) {
    if (ints.size() != in.shape.size())
      return call.refuse("expected a permutation of the input's dimensions");
    for (size_t i = 0; i < ints.size(); ++i)
      move.inStrides[i] = inStrides[ints[i]];
  } else {
    size_t rank = in.shape.size();
    if (ints.size() != 3 * rank)
      return call.refuse("expected starts, limits and strides per dimension");
    for (size_t i = 0; i < rank; ++i) {
      move.inStrides[i] = inStrides[i] * ints[2 * rank + i];
      move.base += ints[i] * inStrides[i];
    }
  }
  const void *source = in.data;
  void *result = out->data;
  std::string entry = simplifyMove(move, dtypeSize(in.dtype), source, result);
  if (call.kind == KernelKind::Transpose) {
    long long batch = 0, rows = 0, cols = 0;
    if (asBatchedTranspose(move, batch, rows, cols)) {
      std::vector<void *> args = {&source, &result, &batch, &rows, &cols};
      if (dtypeSize(in.dtype) == 1 && rows % 4 == 0 && cols % 4 == 0 &&
          (rows + 63) / 64 <= 65535 &&
          reinterpret_cast<uintptr_t>(source) % 4 == 0 &&
          reinterpret_cast<uintptr_t>(result) % 4 == 0) {
        dim3 blocks(static_cast<unsigned>((cols + 63) / 64),
                    static_cast<unsigned>((rows + 63) / 64),
                    static_cast<unsigned>(std::min<long long>(batch, 65535)));
        return context.launch("llmc_transpose_bytes", blocks, 256, 0, args);
      }
      dim3 blocks(static_cast<unsigned>((cols + 31) / 32),
                  static_cast<unsigned>((rows + 31) / 32),
                  static_cast<unsigned>(std::min<long long>(batch, 65535)));
      return context.launch("llmc_transpose_tiled_" +
                                moveSuffix(dtypeSize(in.dtype)),
                            blocks, 256, 0, args);
    }
  }
  std::vector<void *> args = {&source, &result, &move};
  return context.launch(entry, context.gridFor(move.count, 256), 256, 0,
                        args);
}

/// Concat: one strided part copy per input.
Status launchConcat(LaunchContext &context, const KernelCall &call,
                    const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const TensorRef *out = &call.outputs[0];
  int64_t dim = attrs.ints[0];
  AxisView view = viewAround(out->shape, dim);
  long long outer = view.outer, outRow = view.size * view.inner;
  long long column = 0;
  for (const TensorRef &in : inputs) {
    long long inRow = in.shape[dim] * view.inner;
    if (inRow > 0 && outer > 0) {
      const void *source = in.data;
      void *result = out->data;
      // As a strided copy's: wider elements where every row and the
      // column stay whole, 32-bit indices where they fit.
      size_t bytes = dtypeSize(in.dtype);
      long long wide = 1;
      for (long long w : {16LL, 8LL, 4LL, 2LL}) {
        long long f = w / static_cast<long long>(bytes);
        if (f <= 1 || inRow % f || outRow % f || column % f ||
            reinterpret_cast<uintptr_t>(source) % w ||
            reinterpret_cast<uintptr_t>(result) % w)
          continue;
        wide = f;
        break;
      }
      long long partRow = inRow / wide, partOutRow = outRow / wide,
                partColumn = column / wide;
      bool small = outer * partOutRow < (1LL << 31);
      std::string entry = std::string("llmc_concat_part") +
                          (small ? "32_" : "_") +
                          moveSuffix(bytes * static_cast<size_t>(wide));
      std::vector<void *> args = {&source,  &result,     &outer,
                                  &partRow, &partOutRow, &partColumn};
      LLMC_RETURN_IF_ERROR(context.launch(
          entry, context.gridFor(outer * partRow, 256), 256, 0, args));
    }
    column += inRow;
  }
  return Status::ok();
}

/// Gather and embedding: rows of the input by index.
Status launchGatherRows(LaunchContext &context, const KernelCall &call,
                        const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &call.outputs[0];
  const TensorRef &in = inputs[0], &indices = inputs[1];
  AxisView view = call.kind == KernelKind::Gather
                      ? viewAround(in.shape, attrs.ints[0])
                      : viewAround(in.shape, 0);
  const void *source = in.data, *ids = indices.data;
  void *result = out->data;
  long long outer = view.outer, size = view.size,
            count = indices.numElements(), inner = view.inner;
  std::vector<void *> args = {&source, &ids,   &result, &outer,
                              &size,   &count, &inner};
  return context.launch(
      entries[0], context.gridFor(outer * count * inner, 256), 256, 0, args);
}

/// ScatterAdd: f32 atomics into a copy of dest, or bf16 and f16 through the
/// f32 scratch.
Status launchScatterAdd(LaunchContext &context, const KernelCall &call,
                        const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &call.outputs[0];
  const TensorRef &dest = inputs[0], &indices = inputs[1],
                  &updates = inputs[2];
  AxisView view = viewAround(dest.shape, attrs.ints[0]);
  const void *ids = indices.data, *source = updates.data;
  long long outer = view.outer, size = view.size,
            count = indices.numElements(), inner = view.inner;
  long long elements = dest.numElements();
  if (entries.size() == 1) {
    // f32: atomics straight into the result, a copy of dest.
    if (out->data != dest.data)
      LLMC_CUDA_CHECK(cudaMemcpyAsync(out->data, dest.data, dest.bytes(),
                                      cudaMemcpyDeviceToDevice,
                                      context.stream()),
                      "cudaMemcpyAsync(scatter_add dest)");
    void *result = out->data;
    if (outer * count * inner == 0)
      return Status::ok();
    std::vector<void *> args = {&result, &ids,   &source, &outer,
                                &size,   &count, &inner};
    return context.launch(entries[0],
                          context.gridFor(outer * count * inner, 256), 256, 0,
                          args);
  }
  // bf16, f16: 1. dest widened into the f32 scratch, 2. the updates added
  // there, 3. rounded once into the result.
  const void *destData = dest.data;
  void *wide = context.scratch(), *result = out->data;
  std::vector<void *> widenArgs = {&destData, &wide, &elements};
  LLMC_RETURN_IF_ERROR(context.launch(
      entries[0], context.gridFor(elements, 256), 256, 0, widenArgs));
  if (outer * count * inner > 0) {
    std::vector<void *> args = {&wide, &ids,   &source, &outer,
                                &size, &count, &inner};
    LLMC_RETURN_IF_ERROR(context.launch(
        entries[1], context.gridFor(outer * count * inner, 256), 256, 0,
        args));
  }
  const void *wideIn = context.scratch();
  std::vector<void *> narrowArgs = {&wideIn, &result, &elements};
  return context.launch(entries[2], context.gridFor(elements, 256), 256, 0,
                        narrowArgs);
}

/// Iota.
Status launchIota(LaunchContext &context, const KernelCall &call,
                  const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &call.outputs[0];
  AxisView view = viewAround(out->shape, attrs.ints[0]);
  void *result = out->data;
  long long count = out->numElements(), size = view.size, inner = view.inner;
  std::vector<void *> args = {&result, &count, &size, &inner};
  return context.launch(entries[0], context.gridFor(count, 256), 256, 0,
                        args);
}

} // namespace

Status family::launchMovement(LaunchContext &context, const KernelCall &call,
                              const KernelChoice &choice) {
  switch (call.kind) {
  case KernelKind::Broadcast:
  case KernelKind::Transpose:
  case KernelKind::Slice:
    return launchStridedMove(context, call, choice);
  case KernelKind::Concat:
    return launchConcat(context, call, choice);
  case KernelKind::Gather:
  case KernelKind::Embedding:
    return launchGatherRows(context, call, choice);
  case KernelKind::ScatterAdd:
    return launchScatterAdd(context, call, choice);
  case KernelKind::Iota:
    return launchIota(context, call, choice);
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
