//===- CublasLt.h - the matmul kernel through cuBLASLt ----------*- C++ -*-===//
//
// Kernels.def's Matmul on a GPU: row-major lhs [..., M, K] times rhs
// [..., K, N] (each possibly stored transposed, as the transpose_a /
// transpose_b attributes say), batched over the leading dimensions, with a
// rank-2 rhs shared by every batch as on the CPU. f32 and bf16 operands,
// f32 accumulation (CUBLAS_COMPUTE_32F: no TF32, so f32 products match the
// CPU's sgemm up to summation order), an f32 or (for bf16 operands) bf16
// result.
//
// cuBLASLt is column-major; a row-major C = op(A) op(B) is computed as the
// column-major C^T = op(B)^T op(A)^T, i.e. with the operands swapped and
// the storage reinterpreted, which costs no copy. The algorithm is chosen
// once per problem (cublasLtMatmulAlgoGetHeuristic) and cached.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_CUBLASLT_H
#define LLMC_RUNTIME_CUDA_CUBLASLT_H

#include "runtime/DType.h"
#include "runtime/Status.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <tuple>

namespace llmc::rt::cuda {

/// One matmul problem. batch counts the leading dimensions' product;
/// sharedRhs: the rhs is rank 2, used by every batch.
struct MatmulProblem {
  DType operands = DType::F32; ///< lhs and rhs: f32 or bf16
  DType result = DType::F32;   ///< f32, or bf16 when operands are bf16
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false, sharedRhs = false;

  auto key() const {
    return std::make_tuple(operands, result, batch, m, n, k, transA, transB,
                           sharedRhs);
  }
};

/// Whether CublasLtMatmul::run takes `problem` (no device needed): f32 or
/// bf16 operands, an f32 result or one of the operands' type, non-negative
/// sizes. InvalidArgument naming what is not covered.
Status checkMatmulProblem(const MatmulProblem &problem);

/// A cuBLASLt handle, its workspace and the algorithm cache. One per device
/// (and per thread that launches: cuBLASLt handles are not thread-safe
/// while the cache is being filled).
class CublasLtMatmul {
public:
  /// Creates the handle and a workspace on the current device.
  static Status create(std::unique_ptr<CublasLtMatmul> &matmul);
  ~CublasLtMatmul();
  CublasLtMatmul(const CublasLtMatmul &) = delete;
  CublasLtMatmul &operator=(const CublasLtMatmul &) = delete;

  /// result = op(lhs) op(rhs) for device pointers, enqueued on `stream`.
  /// InvalidArgument for an unsupported problem, Internal with cuBLAS's
  /// status name when cuBLASLt fails or offers no algorithm.
  Status run(const MatmulProblem &problem, const void *lhs, const void *rhs,
             void *result, cudaStream_t stream);

  /// Problems whose algorithm is cached (each asked the heuristic once).
  size_t cachedPlans() const { return plans_.size(); }

private:
  struct Plan;
  CublasLtMatmul() = default;
  Status plan(const MatmulProblem &problem, Plan *&plan);

  cublasLtHandle_t handle_ = nullptr;
  void *workspace_ = nullptr;
  size_t workspaceBytes_ = 0;
  std::map<decltype(MatmulProblem().key()), std::unique_ptr<Plan>> plans_;
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_CUBLASLT_H
