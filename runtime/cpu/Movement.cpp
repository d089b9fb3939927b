//===- Movement.cpp - broadcast, transpose, slice, concat ----------===//
//
// Broadcast, transpose and slice are one strided copy each: every result
// element reads the input at `base + Σ index[d] · stride[d]`, where a
// broadcast dimension has stride 0, a transpose permutes the strides and a
// slice scales them. Concat copies contiguous blocks. These kernels only
// move bytes, so they handle every dtype by its element size.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/PrimitiveHelpers.h"

namespace llmc::rt {

using namespace primitive;

namespace {

/// out[i] = in[inBase + Σ_d index(i)[d] · inStrides[d]] for every element of
/// the row-major `shape`; parallel over rows of the innermost dimension.
template <typename T>
void stridedCopyTyped(ThreadPool &pool, const T *in, T *out, const Shape &shape,
                      const Shape &inStrides, int64_t inBase) {
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t count = numElements(shape);
  if (count == 0)
    return;
  if (rank == 0) {
    out[0] = in[inBase];
    return;
  }
  int64_t inner = shape[rank - 1], innerStride = inStrides[rank - 1];
  pool.parallelFor(
      count / inner, grainFor(inner), [&](int64_t begin, int64_t end) {
        // 1. The index of row `begin` over the outer dimensions, and its
        // offset.
        std::vector<int64_t> index(rank - 1, 0);
        int64_t offset = inBase;
        for (int64_t d = rank - 2, rest = begin; d >= 0; --d) {
          index[d] = rest % shape[d];
          rest /= shape[d];
          offset += index[d] * inStrides[d];
        }
        for (int64_t row = begin; row < end; ++row) {
          // 2. Copy one row.
          T *dst = out + row * inner;
          const T *src = in + offset;
          if (innerStride == 1)
            std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(T));
          else
            for (int64_t j = 0; j < inner; ++j)
              dst[j] = src[j * innerStride];
          // 3. Step the outer index like an odometer.
          for (int64_t d = rank - 2; d >= 0; --d) {
            offset += inStrides[d];
            if (++index[d] < shape[d])
              break;
            offset -= index[d] * inStrides[d];
            index[d] = 0;
          }
        }
      });
}

void stridedCopy(ThreadPool &pool, const TensorRef &in, const TensorRef &out,
                 const Shape &inStrides, int64_t inBase) {
  switch (dtypeSize(in.dtype)) {
  case 1:
    return stridedCopyTyped(pool, static_cast<const uint8_t *>(in.data),
                            static_cast<uint8_t *>(out.data), out.shape,
                            inStrides, inBase);
  case 2:
    return stridedCopyTyped(pool, static_cast<const uint16_t *>(in.data),
                            static_cast<uint16_t *>(out.data), out.shape,
                            inStrides, inBase);
  case 4:
    return stridedCopyTyped(pool, static_cast<const uint32_t *>(in.data),
                            static_cast<uint32_t *>(out.data), out.shape,
                            inStrides, inBase);
  default:
    return stridedCopyTyped(pool, static_cast<const uint64_t *>(in.data),
                            static_cast<uint64_t *>(out.data), out.shape,
                            inStrides, inBase);
  }
}

/// The checks every data-movement kernel with one input starts with; the
/// attribute count depends on the input's rank.
Status checkMove(const KernelArgs &args, size_t intsPerDim) {
  LLMC_RETURN_IF_ERROR(args.expectArity(1, 1));
  LLMC_RETURN_IF_ERROR(checkOperands(args));
  const TensorRef &in = args.inputs[0], &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(args.expectAttrs(intsPerDim * in.shape.size(), 0));
  return expectSameDType(args, "result", out.dtype, in.dtype);
}

} // namespace

Status cpuBroadcast(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkMove(args, 1));
  const TensorRef &in = args.inputs[0], &out = args.outputs[0];
  const std::vector<int64_t> &dims = args.attrs.ints;
  Shape inStrides = rowMajorStrides(in.shape);
  Shape outStrides(out.shape.size(), 0); // new dimensions repeat: stride 0
  for (size_t i = 0; i < dims.size(); ++i) {
    LLMC_RETURN_IF_ERROR(expectDim(args, "dims[" + std::to_string(i) + "]", dims[i],
                       out.rank()));
    if (i > 0 && dims[i] <= dims[i - 1])
      return args.error("expected dims to be strictly increasing, got " +
                        formatShape(dims));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t size = out.shape[dims[i]];
    if (in.shape[i] != 1 && in.shape[i] != size)
      return args.error("expected input dimension " + std::to_string(i) +
                        " to be 1 or " + std::to_string(size) +
                        " (result dimension " + std::to_string(dims[i]) +
                        "), got " + std::to_string(in.shape[i]));
    if (in.shape[i] == size && size != 1)
      outStrides[dims[i]] = inStrides[i];
  }
  stridedCopy(args.pool, in, out, outStrides, 0);
  return Status::ok();
}

Status cpuTranspose(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkMove(args, 1));
  const TensorRef &in = args.inputs[0], &out = args.outputs[0];
  const std::vector<int64_t> &perm = args.attrs.ints;
  Shape inStrides = rowMajorStrides(in.shape);
  Shape expected, outStrides;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= in.rank() || seen[p])
      return args.error("expected a permutation of [0, " +
                        std::to_string(in.rank()) + "), got " +
                        formatShape(perm));
    seen[p] = true;
    expected.push_back(in.shape[p]);
    outStrides.push_back(inStrides[p]);
  }
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, expected));
  stridedCopy(args.pool, in, out, outStrides, 0);
  return Status::ok();
}

Status cpuSlice(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkMove(args, 3));
  const TensorRef &in = args.inputs[0], &out = args.outputs[0];
  size_t rank = in.shape.size();
  const int64_t *starts = args.attrs.ints.data();
  const int64_t *limits = starts + rank;
  const int64_t *strides = limits + rank;
  Shape inStrides = rowMajorStrides(in.shape);
  Shape expected, outStrides;
  int64_t base = 0;
  for (size_t i = 0; i < rank; ++i) {
    if (starts[i] < 0 || starts[i] > limits[i] || limits[i] > in.shape[i])
      return args.error(
          "expected 0 <= start <= limit <= " + std::to_string(in.shape[i]) +
          " in dimension " + std::to_string(i) + ", got start " +
          std::to_string(starts[i]) + " and limit " +
          std::to_string(limits[i]));
    if (strides[i] < 1)
      return args.error("expected a positive stride in dimension " +
                        std::to_string(i) + ", got " +
                        std::to_string(strides[i]));
    expected.push_back((limits[i] - starts[i] + strides[i] - 1) / strides[i]);
    outStrides.push_back(inStrides[i] * strides[i]);
    base += starts[i] * inStrides[i];
  }
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, expected));
  stridedCopy(args.pool, in, out, outStrides, base);
  return Status::ok();
}

Status cpuConcat(const KernelArgs &args) {
  if (args.inputs.empty() || args.outputs.size() != 1)
    return args.error("expected at least 1 input and 1 output, got " +
                      std::to_string(args.inputs.size()) + " and " +
                      std::to_string(args.outputs.size()));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(1, 0));
  LLMC_RETURN_IF_ERROR(checkOperands(args));
  const TensorRef &out = args.outputs[0];
  int64_t dim = args.attrs.ints[0];
  LLMC_RETURN_IF_ERROR(expectDim(args, "dim", dim, out.rank()));
  int64_t total = 0;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    const TensorRef &in = args.inputs[i];
    std::string what = "input #" + std::to_string(i);
    LLMC_RETURN_IF_ERROR(expectSameDType(args, what, in.dtype, out.dtype));
    if (in.rank() != out.rank())
      return args.error("expected " + what + " of rank " +
                        std::to_string(out.rank()) + ", got rank " +
                        std::to_string(in.rank()));
    Shape expected = out.shape;
    expected[dim] = in.shape[dim];
    LLMC_RETURN_IF_ERROR(expectShape(args, what, in.shape, expected));
    total += in.shape[dim];
  }
  if (total != out.shape[dim])
    return args.error("expected result dimension " + std::to_string(dim) +
                      " to be the sum of the inputs' (" +
                      std::to_string(total) + "), got " +
                      std::to_string(out.shape[dim]));

  // The result is `outer` rows, each the concatenation of one contiguous
  // block of every input.
  size_t elemSize = dtypeSize(out.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= out.shape[d];
  for (int64_t d = dim + 1; d < out.rank(); ++d)
    inner *= out.shape[d];
  size_t rowBytes = static_cast<size_t>(out.shape[dim] * inner) * elemSize;
  args.pool.parallelFor(
      outer, grainFor(out.shape[dim] * inner), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          char *dst = static_cast<char *>(out.data) + row * rowBytes;
          for (const TensorRef &in : args.inputs) {
            size_t bytes =
                static_cast<size_t>(in.shape[dim] * inner) * elemSize;
            if (bytes == 0)
              continue;
            std::memcpy(dst, static_cast<const char *>(in.data) + row * bytes,
                        bytes);
            dst += bytes;
          }
        }
      });
  return Status::ok();
}

} // namespace llmc::rt
