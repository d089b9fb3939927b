//===- ReduceLaunch.cpp - the path and the launch of a GPU reduction ------===//
//
// The reduce family's launch: planReduceLaunch (ReduceKernels.h) picks a
// reduction's kernels from the shape, codegen's selection names their
// entries (codegen/cuda/reduce/ReduceSelect.cpp), launchReduction computes
// their grids and launches them; and SumSquares, the gradient norm's
// terms, in fixed chunks (reduce/ReduceRows.cuh). The order of the double
// additions of every path is a function of the shape alone; grids that depend on the device (the multiprocessor
// count) only decide which warp or block does which fixed piece of work.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/reduce/ReduceKernels.h"
#include "runtime/cuda/kernels/KernelFamily.h"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace llmc::rt::cuda {

namespace {

constexpr unsigned kReduceThreads = 256; // 8 warps (kReduceWarps)
constexpr int64_t kReduceWarps = 8;

// Split: results fewer than this with reductions of at least
// kSplitMinLength elements cut each reduction into chunks so that about
// kSplitBlocks blocks run (4 per multiprocessor of an H100/H200; the
// launch used to ask the device, which gave 528 on the H200: the same
// chunks, so the same sums, as before). Measured on the H200, GPT-2 124M:
// one block per result spent 267 ms of a 668 ms step on the optimizer's 148
// whole-tensor reductions; split, 19 ms.
constexpr int64_t kSplitBlocks = 528;
constexpr int64_t kSplitMinLength = 16384;
constexpr int64_t kSplitMaxChunks = 1024;

// Columns: about this many pass-1 blocks (two waves of 4 blocks of 256
// threads per multiprocessor on 132), each chunk at least
// kColumnMinChunkRows rows (4 per warp) so that the partials written stay
// a small fraction of the input read.
constexpr int64_t kColumnBlocks = 1024;
constexpr int64_t kColumnMinChunkRows = 32;

// Host mirror of reduce/Reduce.cuh's ReducePlan (same members, same
// order, hence the same layout).
struct ReducePlan {
  int keptRank;
  long long keptSizes[kMaxRank];
  long long keptStrides[kMaxRank];
  int reducedRank;
  long long reducedSizes[kMaxRank];
  long long reducedStrides[kMaxRank];
  long long reduceCount;
  long long outputCount;
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }


void planSplit(ReduceLaunch &launch, int64_t outputs, int64_t length) {
  launch.path = ReduceLaunch::Path::Split;
  launch.chunks = std::min<int64_t>({kSplitMaxChunks,
                                     ceilDiv(kSplitBlocks, outputs),
                                     ceilDiv(length, 4096)});
  launch.scratchBytes =
      static_cast<size_t>(outputs * launch.chunks) * sizeof(double);
}

} // namespace

ReduceLaunch planReduceLaunch(const Shape &shape,
                              const std::vector<int64_t> &dims, DType inType) {
  ReduceLaunch launch;
  launch.vector = std::max<int64_t>(1, 16 / dtypeSize(inType));
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t d : dims)
    reduced[d] = true;
  // 1. Groups of adjacent dimensions of one kind, size-1 ones dropped.
  struct Group {
    int64_t size;
    bool reduced;
  };
  std::vector<Group> groups;
  int64_t outputs = 1, length = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    (reduced[d] ? length : outputs) *= shape[d];
    if (shape[d] == 1)
      continue;
    if (!groups.empty() && groups.back().reduced == reduced[d])
      groups.back().size *= shape[d];
    else
      groups.push_back({shape[d], reduced[d]});
  }
  launch.outer = outputs;
  launch.length = length;
  if (outputs == 0 || length == 0)
    return launch; // general: writes the empty reduction's value
  size_t n = groups.size();
  auto isReduced = [&](size_t i) { return groups[i].reduced; };

  // 2. Rows: [kept] [reduced], each result one contiguous run.
  if (n == 0 || (isReduced(n - 1) && (n == 1 || (n == 2 && !isReduced(0))))) {
    if (outputs < kSplitBlocks && length >= kSplitMinLength)
      planSplit(launch, outputs, length);
    else
      launch.path = ReduceLaunch::Path::Rows;
    return launch;
  }

  // 3. Columns: [kept] [reduced] [kept], the last kept run contiguous.
  if (n >= 2 && !isReduced(n - 1) && isReduced(n - 2) &&
      (n == 2 || (n == 3 && !isReduced(0))) &&
      groups[n - 1].size >= kReduceMinColumns) {
    launch.path = ReduceLaunch::Path::Columns;
    launch.outer = n == 3 ? groups[0].size : 1;
    launch.length = groups[n - 2].size;
    launch.inner = groups[n - 1].size;
    // The tile width of the vector kernel fixes the chunks for both
    // kernels, so the scalar one (an unaligned input) sums in the same
    // order.
    int64_t tiles = launch.outer * ceilDiv(launch.inner, 32 * launch.vector);
    int64_t chunks = std::max<int64_t>(
        1, std::min(ceilDiv(kColumnBlocks, tiles),
                    ceilDiv(launch.length, kColumnMinChunkRows)));
    launch.rowsPerChunk = ceilDiv(launch.length, chunks);
    launch.chunks = ceilDiv(launch.length, launch.rowsPerChunk);
    if (launch.chunks > 1)
      launch.scratchBytes = static_cast<size_t>(
          launch.chunks * launch.outer * launch.inner) * sizeof(double);
    return launch;
  }

  // 4. Anything else (reduced runs between kept ones, narrow columns).
  if (outputs < kSplitBlocks && length >= kSplitMinLength)
    planSplit(launch, outputs, length);
  return launch;
}

Status launchReduction(LaunchContext &context, KernelKind kind,
                       const std::vector<std::string> &entries,
                       const std::vector<int64_t> &dims, const TensorRef &in,
                       const TensorRef &out) {
  ReduceLaunch launch = planReduceLaunch(in.shape, dims, in.dtype);
  int reduceKind = kind == KernelKind::ReduceSum   ? 0
                   : kind == KernelKind::ReduceMax ? 1
                                                   : 2;
  const void *source = in.data;
  void *result = out.data;
  void *partials = context.scratch();
  long long outer = launch.outer, length = launch.length, inner = launch.inner,
            chunks = launch.chunks, rowsPerChunk = launch.rowsPerChunk;

  switch (launch.path) {
  case ReduceLaunch::Path::Rows: {
    // entries: vector, scalar.
    bool vector =
        launch.vector > 1 && length % launch.vector == 0 && aligned16({source});
    unsigned blocks = static_cast<unsigned>(std::min<int64_t>(
        ceilDiv(outer, kReduceWarps),
        static_cast<int64_t>(context.multiprocessors()) * 16));
    std::vector<void *> args = {&source, &result, &outer, &length, &reduceKind};
    return context.launch(entries[vector ? 0 : 1], blocks, kReduceThreads, 0,
                          args);
  }
  case ReduceLaunch::Path::Columns: {
    // entries: vector, scalar, finish.
    bool vector =
        launch.vector > 1 && inner % launch.vector == 0 && aligned16({source});
    int64_t tile = 32 * (vector ? launch.vector : 1);
    int64_t tiles = outer * ceilDiv(inner, tile);
    if (tiles > INT_MAX || chunks > 65535)
      return Status::error(StatusCode::Unimplemented,
                           "reduction grid of " + std::to_string(tiles) +
                               " x " + std::to_string(chunks) +
                               " blocks is too large");
    std::vector<void *> first = {&source,       &partials, &result,
                                 &outer,        &length,   &inner,
                                 &rowsPerChunk, &chunks,   &reduceKind};
    LLMC_RETURN_IF_ERROR(context.launch(
        entries[vector ? 0 : 1],
        dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(chunks)),
        kReduceThreads, 0, first));
    if (chunks == 1)
      return Status::ok();
    long long count = outer * inner;
    std::vector<void *> second = {&partials, &result, &count,
                                  &chunks,   &length, &reduceKind};
    return context.launch(entries[2], static_cast<unsigned>(ceilDiv(count, 32)),
                          kReduceThreads, 0, second);
  }
  case ReduceLaunch::Path::Split:
  case ReduceLaunch::Path::General:
    break;
  }

  // General and split: the plan of every kept and reduced dimension, in
  // the input's order.
  std::vector<bool> reduced(in.shape.size(), false);
  for (int64_t d : dims)
    reduced[d] = true;
  ReducePlan plan{};
  plan.reduceCount = 1;
  plan.outputCount = 1;
  std::vector<long long> strides(in.shape.size(), 1);
  for (size_t d = in.shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * in.shape[d];
  for (size_t d = 0; d < in.shape.size(); ++d) {
    if (reduced[d]) {
      plan.reducedSizes[plan.reducedRank] = in.shape[d];
      plan.reducedStrides[plan.reducedRank++] = strides[d];
      plan.reduceCount *= in.shape[d];
    } else {
      plan.keptSizes[plan.keptRank] = in.shape[d];
      plan.keptStrides[plan.keptRank++] = strides[d];
      plan.outputCount *= in.shape[d];
    }
  }
  if (launch.path == ReduceLaunch::Path::Split) {
    // entries: partial, finish; block o * chunks + c folds chunk c of
    // result o.
    std::vector<void *> first = {&source, &partials, &plan, &reduceKind,
                                 &chunks};
    LLMC_RETURN_IF_ERROR(context.launch(
        entries[0], static_cast<unsigned>(plan.outputCount * chunks),
        kReduceThreads, 0, first));
    long long count = plan.reduceCount;
    std::vector<void *> second = {&partials, &result, &chunks, &count,
                                  &reduceKind};
    return context.launch(entries[1], static_cast<unsigned>(plan.outputCount),
                          kReduceThreads, 0, second);
  }
  // entries: general; one block per result (grid-stride beyond 64 per
  // multiprocessor).
  std::vector<void *> args = {&source, &result, &plan, &reduceKind};
  unsigned blocks = static_cast<unsigned>(std::min<int64_t>(
      plan.outputCount, static_cast<int64_t>(context.multiprocessors()) * 64));
  return context.launch(entries[0], blocks, kReduceThreads, 0, args);
}

Status family::launchReduce(LaunchContext &context, const KernelCall &call,
                            const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  switch (call.kind) {
  case KernelKind::ReduceSum:
  case KernelKind::ReduceMax:
  case KernelKind::ReduceMean:
    return launchReduction(context, call.kind, entries, attrs.ints, inputs[0],
                           *out);
  case KernelKind::SumSquares: {
    const void *x = inputs[0].data;
    void *result = out->data;
    void *partials = context.scratch();
    long long n = inputs[0].numElements();
    long long chunks = sumSquaresChunks(n);
    if (chunks > 0) {
      std::vector<void *> partialArgs = {&x, &n, &partials};
      LLMC_RETURN_IF_ERROR(context.launch(
          entries[0], static_cast<unsigned>(chunks), 256, 0, partialArgs));
    }
    std::vector<void *> finishArgs = {&partials, &chunks, &result};
    return context.launch(entries[1], 1, 256, 0, finishArgs);
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
