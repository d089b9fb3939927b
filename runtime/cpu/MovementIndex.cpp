//===- MovementIndex.cpp - gather, scatter_add, iota, embedding ----------===//
//
// Gather and scatter_add view their tensors as [outer, S, inner] around
// `dim`, with the index tensor flattened to J positions: gather reads row
// (o, indices[j]) into row (o, j), scatter_add adds row (o, j) into row
// (o, indices[j]). Indices outside [0, S) give zero rows (gather) or are
// skipped (scatter_add), as docs/ir.md defines, so that a vocabulary shard
// can look up global ids without masking. Embedding (the CUDA movement
// family's too) copies the table's rows at the ids as bytes, a zero row for
// an id outside [0, vocab).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CompositeCommon.h"
#include "runtime/cpu/PrimitiveHelpers.h"

#include <cstring>

namespace llmc::rt {

using namespace primitive;

namespace {

/// A tensor seen as [outer, size, inner] around dimension `dim`.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};

AxisView viewAround(const Shape &shape, int64_t dim) {
  AxisView v;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim)
      v.outer *= shape[d];
    else if (d == dim)
      v.size = shape[d];
    else
      v.inner *= shape[d];
  }
  return v;
}

/// The shape of `take(source, indices, axis=dim)`.
Shape gatheredShape(const Shape &source, const Shape &indices, int64_t dim) {
  Shape shape(source.begin(), source.begin() + dim);
  shape.insert(shape.end(), indices.begin(), indices.end());
  shape.insert(shape.end(), source.begin() + dim + 1, source.end());
  return shape;
}

/// Index j of an i32 or i64 tensor.
int64_t indexAt(const TensorRef &indices, int64_t j) {
  return indices.dtype == DType::I32
             ? static_cast<const int32_t *>(indices.data)[j]
             : static_cast<const int64_t *>(indices.data)[j];
}

/// Scatter columns [c0, c1) of every row of `updates` into `acc` (the
/// result, or an f32 copy of it), in index order so that the sums are
/// deterministic.
template <typename E, typename Acc>
void scatterColumns(const AxisView &dest, const TensorRef &indices,
                    const typename E::Storage *updates, Acc *acc, int64_t o,
                    int64_t c0, int64_t c1) {
  int64_t count = indices.numElements();
  for (int64_t j = 0; j < count; ++j) {
    int64_t target = indexAt(indices, j);
    if (target < 0 || target >= dest.size)
      continue; // out of range: skipped by definition
    Acc *row = acc + (o * dest.size + target) * dest.inner;
    const auto *src = updates + (o * count + j) * dest.inner;
    for (int64_t c = c0; c < c1; ++c) {
      if constexpr (std::is_integral_v<Acc>)
        row[c] = wrapAdd<Acc>(row[c], src[c]);
      else
        row[c] += static_cast<Acc>(E::load(src[c]));
    }
  }
}

} // namespace

Status cpuGather(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 2, 1, 1));
  const TensorRef &in = args.inputs[0], &indices = args.inputs[1];
  const TensorRef &out = args.outputs[0];
  int64_t dim = args.attrs.ints[0];
  LLMC_RETURN_IF_ERROR(expectDim(args, "dim", dim, in.rank()));
  LLMC_RETURN_IF_ERROR(expectDType(args, "indices", indices.dtype, kIntTypes));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "result", out.dtype, in.dtype));
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape,
                       gatheredShape(in.shape, indices.shape, dim)));

  AxisView view = viewAround(in.shape, dim);
  int64_t count = indices.numElements();
  size_t rowBytes = static_cast<size_t>(view.inner) * dtypeSize(in.dtype);
  args.pool.parallelFor(
      view.outer * count, grainFor(view.inner),
      [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t o = row / count, source = indexAt(indices, row % count);
          char *dst = static_cast<char *>(out.data) + row * rowBytes;
          if (source < 0 || source >= view.size) // zeros by definition
            std::memset(dst, 0, rowBytes);
          else
            std::memcpy(dst,
                        static_cast<const char *>(in.data) +
                            (o * view.size + source) * rowBytes,
                        rowBytes);
        }
      });
  return Status::ok();
}

/// result = dest + the scattered updates. f32, f64 and integers accumulate
/// in the result itself (in index order, so deterministically; integers
/// wrap); bf16 and f16 accumulate in an f32 copy and round once at the end.
/// Work is split over (outer, column block) pairs, which touch disjoint
/// parts of the result, so repeated indices need no atomics.
Status cpuScatterAdd(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 3, 1, 1));
  const TensorRef &dest = args.inputs[0], &indices = args.inputs[1];
  const TensorRef &updates = args.inputs[2], &out = args.outputs[0];
  int64_t dim = args.attrs.ints[0];
  LLMC_RETURN_IF_ERROR(expectDim(args, "dim", dim, dest.rank()));
  LLMC_RETURN_IF_ERROR(expectDType(args, "dest", dest.dtype, kNumericTypes));
  LLMC_RETURN_IF_ERROR(expectDType(args, "indices", indices.dtype, kIntTypes));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "updates", updates.dtype, dest.dtype));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "result", out.dtype, dest.dtype));
  LLMC_RETURN_IF_ERROR(expectShape(args, "updates", updates.shape,
                       gatheredShape(dest.shape, indices.shape, dim)));
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, dest.shape));

  // 1. result = dest (nothing to do when they share the buffer).
  if (out.data != dest.data && dest.bytes() > 0)
    std::memmove(out.data, dest.data, dest.bytes());

  // 2. Add the updates, per (outer, column block).
  AxisView view = viewAround(dest.shape, dim);
  constexpr int64_t kColumns = 256;
  int64_t blocks = (view.inner + kColumns - 1) / kColumns;
  int64_t work = indices.numElements() * std::min(view.inner, kColumns);
  auto forEachBlock = [&](auto &&scatter) {
    args.pool.parallelFor(
        view.outer * blocks, grainFor(work), [&](int64_t begin, int64_t end) {
          for (int64_t item = begin; item < end; ++item) {
            int64_t o = item / blocks;
            int64_t c0 = (item % blocks) * kColumns;
            scatter(o, c0, std::min(view.inner, c0 + kColumns));
          }
        });
  };
  visitDType<kNumericTypes>(dest.dtype, [&](auto elem) {
    using E = decltype(elem);
    const auto *u = dataOf<E>(updates);
    auto *y = dataOf<E>(out);
    if constexpr (std::is_same_v<typename E::Storage, typename E::Compute>) {
      forEachBlock([&](int64_t o, int64_t c0, int64_t c1) {
        scatterColumns<E>(view, indices, u, y, o, c0, c1);
      });
    } else {
      int64_t n = out.numElements();
      std::vector<float> acc(static_cast<size_t>(n));
      forEachElement(args.pool, n, [&](int64_t i) { acc[i] = E::load(y[i]); });
      forEachBlock([&](int64_t o, int64_t c0, int64_t c1) {
        scatterColumns<E>(view, indices, u, acc.data(), o, c0, c1);
      });
      forEachElement(args.pool, n, [&](int64_t i) { y[i] = E::store(acc[i]); });
    }
  });
  return Status::ok();
}

/// result[..., i_dim, ...] = i_dim, rounded to the result type (bf16 holds
/// the integers up to 256 exactly, f16 up to 2048).
Status cpuIota(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 0, 1, 1));
  const TensorRef &out = args.outputs[0];
  int64_t dim = args.attrs.ints[0];
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", out.dtype, kNumericTypes));
  LLMC_RETURN_IF_ERROR(expectDim(args, "dim", dim, out.rank()));
  AxisView view = viewAround(out.shape, dim);
  visitDType<kNumericTypes>(out.dtype, [&](auto elem) {
    using E = decltype(elem);
    auto *y = dataOf<E>(out);
    // Rows of `inner` equal values, one per (outer, i_dim).
    args.pool.parallelFor(
        view.outer * view.size, grainFor(view.inner),
        [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            auto value = E::fromDouble(static_cast<double>(row % view.size));
            std::fill(y + row * view.inner, y + (row + 1) * view.inner, value);
          }
        });
  });
  return Status::ok();
}

/// embedding: the rows of `table` at the ids, a zero row for an id outside
/// [0, vocab) (the composite kernels' checks and messages).
Status cpuEmbedding(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(composite::expectOperands(args, 2, 2, 1));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 0));
  const TensorRef &table = args.inputs[0], &ids = args.inputs[1],
                  &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(composite::expectFloat(args, "table", table));
  LLMC_RETURN_IF_ERROR(composite::expectRank(args, "table", table, 2));
  LLMC_RETURN_IF_ERROR(composite::expectIndex(args, "ids", ids));
  LLMC_RETURN_IF_ERROR(
      composite::expectDType(args, "result", out, table.dtype));
  Shape expected = ids.shape;
  expected.push_back(table.shape[1]);
  LLMC_RETURN_IF_ERROR(composite::expectShape(args, "result", out, expected));

  if (out.numElements() == 0)
    return Status::ok();

  // Rows are copied as bytes: the result has the table's dtype.
  const int64_t vocab = table.shape[0], dim = table.shape[1];
  const size_t rowBytes = static_cast<size_t>(dim) * dtypeSize(table.dtype);
  const char *src = static_cast<const char *>(table.data);
  char *dst = static_cast<char *>(out.data);
  args.pool.parallelFor(
      ids.numElements(), composite::rowGrain(dim),
      [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
          int64_t id = loadInt(ids, n);
          if (id >= 0 && id < vocab)
            std::memcpy(dst + n * rowBytes, src + id * rowBytes, rowBytes);
          else // the zero bit pattern is +0.0 in every float format
            std::memset(dst + n * rowBytes, 0, rowBytes);
        }
      });
  return Status::ok();
}

} // namespace llmc::rt
