//===- CublasLt.h - the matmul kernel through cuBLASLt ----------*- C++ -*-===//
//
// Kernels.def's Matmul on a GPU: row-major lhs [..., M, K] times rhs
// [..., K, N] (each possibly stored transposed, as the transpose_a /
// transpose_b attributes say), batched over the leading dimensions, with a
// rank-2 rhs shared by every batch as on the CPU. f32, bf16 (CUDA_R_16BF)
// and f16 (CUDA_R_16F) operands, f32 accumulation (CUBLAS_COMPUTE_32F: no
// TF32, so f32 products match the CPU's sgemm up to summation order), an f32
// or (for 16-bit operands) the operands' type result.
//
// cuBLASLt is column-major; a row-major C = op(A) op(B) is computed as the
// column-major C^T = op(B)^T op(A)^T, i.e. with the operands swapped and
// the storage reinterpreted, which costs no copy. The algorithm is chosen
// once per problem and cached: the fastest of the heuristic's first 8
// (cublasLtMatmulAlgoGetHeuristic), timed on the first launch's operands,
// among those that reduce split-K partial sums in f32.
//
// A problem may carry an epilogue (Kernels.def's MatmulEpilogue): the bias
// is a vector over our N, which is the column-major D's rows, so it is
// cuBLASLt's bias as is (CUBLASLT_EPILOGUE_BIAS / GELU_BIAS /
// GELU_AUX_BIAS, the pre-activation with leading dimension N); a residual
// is C with beta = 1 (D may be C itself). cuBLASLt applies the epilogue to
// the f32 accumulator and rounds once. A bias gradient is BGRADA: the sum
// over K of cuBLASLt's A, which is our rhs.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_CUBLASLT_H
#define LLMC_RUNTIME_CUDA_CUBLASLT_H

#include "runtime/DType.h"
#include "runtime/Kernel.h"
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
  DType operands = DType::F32; ///< lhs and rhs: f32, bf16 or f16
  DType result = DType::F32;   ///< f32, or the operands' 16-bit type
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false, sharedRhs = false;
  /// MatmulEpilogue: the epilogue applied to the product (batch must be 1).
  bool hasEpilogue = false;
  MatmulEpilogueKind epilogue = MatmulEpilogueKind::Bias;

  auto key() const {
    return std::make_tuple(operands, result, batch, m, n, k, transA, transB,
                           sharedRhs, hasEpilogue,
                           hasEpilogue ? static_cast<int64_t>(epilogue) : -1);
  }
};

/// The device pointers an epilogue reads and writes besides the GEMM's
/// operands: bias [N] (of the result's type), the residual (BiasResidual,
/// the result's shape; may be the result itself) and the pre-activation
/// (BiasGeluAux, the result's shape).
struct MatmulEpilogueOperands {
  const void *bias = nullptr;
  const void *residual = nullptr;
  void *preActivation = nullptr;
  void *biasGradient = nullptr; ///< BiasGradient: [N], the result's type
};

/// Whether CublasLtMatmul::run takes `problem` (no device needed): f32, bf16
/// or f16 operands, an f32 result or one of the operands' type, non-negative
/// sizes; with an epilogue, one GEMM (batch 1) with K > 0, and N a multiple
/// of 8 for BiasGeluAux (cuBLASLt's leading dimension of the
/// pre-activation). InvalidArgument naming what is not covered.
Status checkMatmulProblem(const MatmulProblem &problem);

/// Kernels.def's ScaledMatmul: row-major result [M, N] (bf16 or f32) =
/// (lhs [M, K] · rhs [N, K]ᵀ) · lhs_scale_inv · rhs_scale_inv for 8-bit
/// operands (f8E4M3FN or f8E5M2, not both f8E5M2). As the column-major
/// problem it is cuBLASLt's "TN" FP8 GEMM (A = our rhs transposed, B = our
/// lhs, both with K innermost: the only layout Hopper's FP8 GEMMs take),
/// the inverse scales as CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER, f32
/// accumulation with fast accumulation off (CUBLASLT_MATMUL_DESC_FAST_ACCUM
/// 0: partial sums promoted to f32, the precise mode).
struct ScaledMatmulProblem {
  DType lhs = DType::F8E4M3FN, rhs = DType::F8E4M3FN;
  DType result = DType::BF16;
  int64_t m = 0, n = 0, k = 0;

  auto key() const { return std::make_tuple(lhs, rhs, result, m, n, k); }
};

/// Whether CublasLtMatmul::runScaled takes `problem` (no device needed):
/// 8-bit operands (not both f8E5M2), a bf16 or f32 result, and M, N, K
/// positive multiples of 16 (16-byte leading dimensions and aligned
/// pointers, as cuBLASLt's FP8 GEMMs require). InvalidArgument naming what
/// is not covered.
Status checkScaledMatmulProblem(const ScaledMatmulProblem &problem);

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
  /// `epilogue` gives the pointers of problem.epilogue (ignored without).
  /// Unimplemented when cuBLASLt offers no algorithm for the problem with
  /// its epilogue (the caller may run it another way).
  Status run(const MatmulProblem &problem, const void *lhs, const void *rhs,
             void *result, cudaStream_t stream,
             const MatmulEpilogueOperands &epilogue = {});

  /// ScaledMatmul (ScaledMatmulProblem) for device pointers; the scales
  /// are device pointers to one f32 each. The heuristic's first algorithm,
  /// cached per problem. Errors as run's.
  Status runScaled(const ScaledMatmulProblem &problem, const void *lhs,
                   const void *rhs, const float *lhsScaleInv,
                   const float *rhsScaleInv, void *result,
                   cudaStream_t stream);

  /// Problems whose algorithm is cached (each asked the heuristic once).
  size_t cachedPlans() const { return plans_.size(); }

private:
  struct Plan;
  CublasLtMatmul() = default;
  /// The operands of the launch that plans, for timing the candidates.
  struct MatmulOperandPointers {
    const void *lhs = nullptr, *rhs = nullptr;
    void *result = nullptr;
  };
  Status plan(const MatmulProblem &problem,
              const MatmulEpilogueOperands &epilogue,
              const MatmulOperandPointers &at, cudaStream_t stream,
              Plan *&plan);
  /// Times up to kCandidates of the heuristic's algorithms on the real
  /// operands (writing only the launch's own results, which the launch
  /// then overwrites) and keeps the fastest in `plan`; leaves the
  /// heuristic's first choice where that is not safe (a residual in place,
  /// a stream being captured).
  Status timeCandidates(Plan &plan,
                        const cublasLtMatmulHeuristicResult_t *candidates,
                        int count, const MatmulProblem &problem,
                        const MatmulOperandPointers &at, cudaStream_t stream);

  cublasLtHandle_t handle_ = nullptr;
  void *workspace_ = nullptr;
  size_t workspaceBytes_ = 0;
  std::map<decltype(MatmulProblem().key()), std::unique_ptr<Plan>> plans_;
  std::map<decltype(ScaledMatmulProblem().key()), std::unique_ptr<Plan>>
      scaledPlans_;
  Status planScaled(const ScaledMatmulProblem &problem, Plan *&plan);
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_CUBLASLT_H
