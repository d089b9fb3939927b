//===- ReduceKernels.h - how a reduction runs on the GPU --------*- C++ -*-===//
//
// reduce_sum / reduce_max / reduce_mean take one of four paths, chosen from
// the input's shape, the reduced dimensions and the input type alone (no
// device), so that the selection and the launch (ReduceLaunch.cpp, and
// cuda-coverage) agree and a result's order of additions is a function of
// the shape only. The kernels are in ReduceRows.cuh (rows, columns) and
// Reduce.cuh (general, split); docs/cuda.md, "Reductions", says why and
// how fast.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_REDUCEKERNELS_H
#define LLMC_RUNTIME_CUDA_REDUCEKERNELS_H

#include "runtime/DType.h"
#include "runtime/Kernel.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmc::rt::cuda {

/// The launch of one reduction. Size-1 dimensions are dropped and adjacent
/// dimensions of the same kind (reduced or kept) merged first, as the CPU
/// kernel does (runtime/cpu/Reduce.cpp).
struct ReduceLaunch {
  enum class Path {
    General, ///< one block per result, any dims (llmc_reduce_<in>_<out>)
    Split,   ///< few results of long contiguous runs: `chunks` blocks each
             ///< (llmc_reduce_partial_<in>, llmc_reduce_finish_<out>)
    Rows,    ///< `outer` rows of `length` contiguous elements, a warp per row
             ///< (llmc_reduce_rows[_vec]_<in>_<out>)
    Columns, ///< [outer, length, inner] over the middle, `inner` contiguous
             ///< (llmc_reduce_columns[_vec]_<in>_<out>, and
             ///< llmc_reduce_columns_finish_<out> when chunks > 1)
  };
  Path path = Path::General;
  int64_t outer = 1, length = 1, inner = 1;
  /// Split: blocks per result. Columns: chunks of `rowsPerChunk` rows of
  /// the reduced dimension, each folded by one block per column tile.
  int64_t chunks = 1;
  int64_t rowsPerChunk = 1;
  /// Device scratch (double partials) of Split and of Columns with more
  /// than one chunk.
  size_t scratchBytes = 0;
  /// Elements per 16-byte vector of the input type (4 f32, 8 bf16): the
  /// `_vec` entries of Rows and Columns need `length` (Rows) or `inner`
  /// (Columns) to be a multiple of it and the input 16-byte aligned.
  int64_t vector = 1;
};

/// The path of reducing `input` over `dims` (strictly increasing, in range;
/// validated by the program).
ReduceLaunch planReduceLaunch(const Shape &input,
                              const std::vector<int64_t> &dims, DType inType);

/// Column reductions narrower than this run the general or split kernel: a
/// column tile would leave most lanes idle.
constexpr int64_t kReduceMinColumns = 32;

/// SumSquares (reduce/ReduceRows.cuh): a tensor is cut into chunks of
/// kSumSquaresChunk elements, a block of 256 threads each, whose double
/// partial sums a second kernel folds in chunk order. The multi-tensor
/// launch (MultiTensorLaunch.h; codegen/cuda/optimizer/MultiTensor.h plans
/// it) cuts every tensor the same way, so one tensor's result has the same
/// bits alone or in a group.
constexpr long long kSumSquaresChunk = 4096;
inline long long sumSquaresChunks(long long elements) {
  return (elements + kSumSquaresChunk - 1) / kSumSquaresChunk;
}

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_REDUCEKERNELS_H
