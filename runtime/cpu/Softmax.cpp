//===- Softmax.cpp - CPU kernel of softmax --------------------------------===//
//
// The reference of the CUDA softmax family (runtime/cuda/kernels/softmax/):
// each row along `dim` is loaded as double, its max and sum of exponentials
// taken in f64, and stored rounded to the result type. Rows are
// independent, so they are split over the pool.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CompositeCommon.h"

#include <cmath>
#include <limits>
#include <vector>

namespace llmc::rt {

using namespace composite;

Status cpuSoftmax(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(expectOperands(args, 1, 1, 1));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(1, 0));
  const TensorRef &x = args.inputs[0], &y = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectFloat(args, "input", x));
  // The result is x's type, or f32 of x's shape (a widening cast folded in).
  if (y.dtype == DType::F32 && x.dtype != DType::F32)
    LLMC_RETURN_IF_ERROR(expectShape(args, "result", y, x.shape));
  else
    LLMC_RETURN_IF_ERROR(expectSameType(args, "result", y, x));
  const int64_t dim = args.attrs.ints[0];
  if (dim < 0 || dim >= x.rank())
    return args.error("expected dim in [0, " + std::to_string(x.rank()) +
                      "), got " + std::to_string(dim));
  if (x.numElements() == 0)
    return Status::ok();

  // View x as [outer, length, inner]: row (o, i) has stride `inner`.
  const int64_t length = x.shape[dim];
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.rank(); ++d)
    inner *= x.shape[d];
  const int64_t rows = x.numElements() / length;

  args.pool.parallelFor(
      rows, rowGrain(length), [&](int64_t begin, int64_t end) {
        std::vector<double> row(length);
        for (int64_t r = begin; r < end; ++r) {
          int64_t offset = (r / inner) * length * inner + r % inner;
          loadRow(x, offset, length, row.data(), inner);
          double max = -std::numeric_limits<double>::infinity();
          for (double v : row)
            max = std::max(max, v);
          double sum = 0.0;
          for (double &v : row) {
            v = std::exp(v - max);
            sum += v;
          }
          for (double &v : row)
            v /= sum;
          storeRow(y, offset, length, row.data(), inner);
        }
      });
  return Status::ok();
}

} // namespace llmc::rt
