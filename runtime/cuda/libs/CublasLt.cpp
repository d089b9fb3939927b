//===- CublasLt.cpp - the matmul kernel through cuBLASLt ------------------===//
#include "runtime/cuda/libs/CublasLt.h"

#include "runtime/cuda/libs/CudaModule.h"

#include <string>

namespace llmc::rt::cuda {

namespace {

/// cuBLASLt's workspace: 32 MiB is what it asks for on Hopper for its
/// split-K and stream-K algorithms.
constexpr size_t kWorkspaceBytes = 32u << 20;

/// Heuristic candidates timed per problem, and the timed launches of each
/// (after one warm-up).
constexpr int kCandidates = 8;
constexpr int kTimedRuns = 3;

Status cublasStatus(cublasStatus_t status, const std::string &what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(StatusCode::Internal,
                       what + " failed: " + cublasLtGetStatusName(status));
}

#define LLMC_CUBLAS_CHECK(call, what)                                          \
  LLMC_RETURN_IF_ERROR(cublasStatus((call), (what)))

cudaDataType_t cudaType(DType dtype) {
  return dtype == DType::BF16       ? CUDA_R_16BF
         : dtype == DType::F16      ? CUDA_R_16F
         : dtype == DType::F8E4M3FN ? CUDA_R_8F_E4M3
         : dtype == DType::F8E5M2   ? CUDA_R_8F_E5M2
                                    : CUDA_R_32F;
}

/// A column-major layout of rows x cols with leading dimension ld, batched.
Status makeLayout(cublasLtMatrixLayout_t &layout, DType dtype, int64_t rows,
                  int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  LLMC_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&layout, cudaType(dtype), rows, cols, ld),
      "cublasLtMatrixLayoutCreate");
  int32_t count = static_cast<int32_t>(batch);
  LLMC_CUBLAS_CHECK(
      cublasLtMatrixLayoutSetAttribute(
          layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
      "setting the batch count");
  LLMC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
                        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                        &stride, sizeof(stride)),
                    "setting the batch stride");
  return Status::ok();
}

cublasLtEpilogue_t cublasEpilogue(MatmulEpilogueKind kind) {
  switch (kind) {
  case MatmulEpilogueKind::Bias:
  case MatmulEpilogueKind::BiasResidual: // the residual is C, beta = 1
    return CUBLASLT_EPILOGUE_BIAS;
  case MatmulEpilogueKind::BiasGelu:
    return CUBLASLT_EPILOGUE_GELU_BIAS;
  case MatmulEpilogueKind::BiasGeluAux:
    return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  case MatmulEpilogueKind::BiasGradient:
    return CUBLASLT_EPILOGUE_BGRADA;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

/// Points the descriptor at this launch's bias and pre-activation (a plan
/// is shared by every command of its problem).
Status setEpiloguePointers(cublasLtMatmulDesc_t desc, const MatmulProblem &p,
                           const MatmulEpilogueOperands &e) {
  if (!p.hasEpilogue)
    return Status::ok();
  const void *bias = p.epilogue == MatmulEpilogueKind::BiasGradient
                         ? e.biasGradient
                         : e.bias;
  LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                        desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                        sizeof(bias)),
                    "setting the bias pointer");
  if (p.epilogue == MatmulEpilogueKind::BiasGeluAux)
    LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                          desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                          &e.preActivation, sizeof(e.preActivation)),
                      "setting the pre-activation pointer");
  return Status::ok();
}

} // namespace

/// The descriptors of one problem and the algorithm chosen for it.
struct CublasLtMatmul::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  /// The chosen algorithm's time per launch when the candidates were timed
  /// (timeCandidates), else -1.
  float ms = -1.0f;

  ~Plan() {
    if (c)
      cublasLtMatrixLayoutDestroy(c);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (desc)
      cublasLtMatmulDescDestroy(desc);
  }
};

Status CublasLtMatmul::create(std::unique_ptr<CublasLtMatmul> &matmul) {
  std::unique_ptr<CublasLtMatmul> created(new CublasLtMatmul());
  LLMC_CUBLAS_CHECK(cublasLtCreate(&created->handle_), "cublasLtCreate");
  LLMC_CUDA_CHECK(cudaMalloc(&created->workspace_, kWorkspaceBytes),
                  "allocating the cuBLASLt workspace");
  created->workspaceBytes_ = kWorkspaceBytes;
  matmul = std::move(created);
  return Status::ok();
}

CublasLtMatmul::~CublasLtMatmul() {
  plans_.clear();
  scaledPlans_.clear();
  if (workspace_)
    (void)cudaFree(workspace_);
  if (handle_)
    (void)cublasLtDestroy(handle_);
}

Status CublasLtMatmul::plan(const MatmulProblem &p,
                            const MatmulEpilogueOperands &epilogue,
                            const MatmulOperandPointers &at,
                            cudaStream_t stream, Plan *&result) {
  auto found = plans_.find(p.key());
  if (found != plans_.end()) {
    result = found->second.get();
    return Status::ok();
  }
  auto made = std::make_unique<Plan>();
  // 1. C^T = op(B)^T op(A)^T in cuBLASLt's column-major terms: its first
  // operand is our rhs, its second our lhs (see the header).
  LLMC_CUBLAS_CHECK(
      cublasLtMatmulDescCreate(&made->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
      "cublasLtMatmulDescCreate");
  cublasOperation_t opFirst = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(made->desc,
                                                   CUBLASLT_MATMUL_DESC_TRANSA,
                                                   &opFirst, sizeof(opFirst)),
                    "setting transa");
  LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(made->desc,
                                                   CUBLASLT_MATMUL_DESC_TRANSB,
                                                   &opSecond, sizeof(opSecond)),
                    "setting transb");
  if (p.hasEpilogue) {
    cublasLtEpilogue_t mode = cublasEpilogue(p.epilogue);
    LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                          made->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &mode,
                          sizeof(mode)),
                      "setting the epilogue");
    if (p.epilogue == MatmulEpilogueKind::BiasGeluAux) {
      // The pre-activation is laid out as D: N rows (column-major), ld N.
      int64_t ld = p.n;
      LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                            made->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                            &ld, sizeof(ld)),
                        "setting the pre-activation's leading dimension");
    }
    // The heuristic reads the pointers' alignment.
    LLMC_RETURN_IF_ERROR(setEpiloguePointers(made->desc, p, epilogue));
  }
  // 2. Layouts of the stored matrices, before the op.
  int64_t rhsStride = p.sharedRhs ? 0 : p.k * p.n;
  if (p.transB)
    LLMC_RETURN_IF_ERROR(
        makeLayout(made->a, p.operands, p.k, p.n, p.k, p.batch, rhsStride));
  else
    LLMC_RETURN_IF_ERROR(
        makeLayout(made->a, p.operands, p.n, p.k, p.n, p.batch, rhsStride));
  if (p.transA)
    LLMC_RETURN_IF_ERROR(
        makeLayout(made->b, p.operands, p.m, p.k, p.m, p.batch, p.m * p.k));
  else
    LLMC_RETURN_IF_ERROR(
        makeLayout(made->b, p.operands, p.k, p.m, p.k, p.batch, p.m * p.k));
  LLMC_RETURN_IF_ERROR(
      makeLayout(made->c, p.result, p.n, p.m, p.n, p.batch, p.m * p.n));

  // 3. The heuristic's candidates within our workspace. Split-K schemes
  //    that add partial sums in the output type (in place, or stored in it)
  //    would round bf16 partial sums: only f32 (compute type) reductions,
  //    so that every result is the f32 sum rounded once.
  cublasLtMatmulPreference_t preference = nullptr;
  LLMC_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference),
                    "cublasLtMatmulPreferenceCreate");
  uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  Status status =
      cublasStatus(cublasLtMatmulPreferenceSetAttribute(
                       preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                       &workspaceBytes_, sizeof(workspaceBytes_)),
                   "setting the workspace preference");
  if (status.isOk())
    status = cublasStatus(cublasLtMatmulPreferenceSetAttribute(
                              preference,
                              CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                              &reductions, sizeof(reductions)),
                          "setting the reduction schemes");
  cublasLtMatmulHeuristicResult_t candidates[kCandidates] = {};
  int found_count = 0;
  auto ask = [&]() {
    return cublasStatus(cublasLtMatmulAlgoGetHeuristic(
                            handle_, made->desc, made->a, made->b, made->c,
                            made->c, preference, kCandidates, candidates,
                            &found_count),
                        "cublasLtMatmulAlgoGetHeuristic");
  };
  if (status.isOk())
    status = ask();
  // Nothing with f32 reductions (not seen; the mask cannot name "no
  // split-K"): any scheme rather than no GEMM.
  if (status.isOk() && found_count == 0) {
    reductions = CUBLASLT_REDUCTION_SCHEME_MASK;
    status = cublasStatus(cublasLtMatmulPreferenceSetAttribute(
                              preference,
                              CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                              &reductions, sizeof(reductions)),
                          "setting the reduction schemes");
    if (status.isOk())
      status = ask();
  }
  cublasLtMatmulPreferenceDestroy(preference);
  LLMC_RETURN_IF_ERROR(status);
  if (found_count == 0)
    return Status::error(
        p.hasEpilogue ? StatusCode::Unimplemented : StatusCode::Internal,
        "cuBLASLt has no algorithm for a " +
            std::string(dtypeName(p.operands)) + " matmul of batch " +
            std::to_string(p.batch) + ", M=" + std::to_string(p.m) +
            ", N=" + std::to_string(p.n) + ", K=" + std::to_string(p.k) +
            (p.hasEpilogue ? " with epilogue " +
                                 std::to_string(static_cast<int>(p.epilogue))
                           : std::string()));
  made->algo = candidates[0].algo;
  // 4. Where it is safe, the fastest candidate on the real operands
  //    (timeCandidates); the heuristic's order otherwise.
  LLMC_RETURN_IF_ERROR(
      timeCandidates(*made, candidates, found_count, p, at, stream));
  // 5. A bias gradient in the GEMM must cost less than the reduction it
  //    replaces (ReduceSum reads dY [K, N] at about 2 TB/s, plus its
  //    launch); otherwise the caller runs the plain GEMM and the reduction.
  if (p.hasEpilogue && p.epilogue == MatmulEpilogueKind::BiasGradient &&
      made->ms >= 0) {
    MatmulProblem plain = p;
    plain.hasEpilogue = false;
    Plan *plainPlan = nullptr;
    LLMC_RETURN_IF_ERROR(plan(plain, {}, at, stream, plainPlan));
    double reductionMs = static_cast<double>(p.k) * p.n *
                             dtypeSize(p.operands) / 2.0e9 +
                         0.003;
    if (plainPlan->ms >= 0 && made->ms > plainPlan->ms + reductionMs)
      return Status::error(
          StatusCode::Unimplemented,
          "the GEMM with BGRADA takes " + std::to_string(made->ms) +
              " ms, the GEMM alone " + std::to_string(plainPlan->ms) +
              " ms and the reduction about " + std::to_string(reductionMs) +
              " ms");
  }
  result = made.get();
  plans_.emplace(p.key(), std::move(made));
  return Status::ok();
}

Status CublasLtMatmul::timeCandidates(
    Plan &plan, const cublasLtMatmulHeuristicResult_t *candidates, int count,
    const MatmulProblem &p, const MatmulOperandPointers &at,
    cudaStream_t stream) {
  // Timing runs the GEMM into the real result (and pre-activation, bias
  // gradient), which the launch that follows overwrites: not with a
  // residual (C is D, beta = 1: the runs would accumulate), not without the
  // operands, not while a graph is being captured.
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  LLMC_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing),
                  "cudaStreamIsCapturing");
  bool residual =
      p.hasEpilogue && p.epilogue == MatmulEpilogueKind::BiasResidual;
  if (count < 2 || residual || !at.lhs || !at.rhs || !at.result ||
      capturing != cudaStreamCaptureStatusNone)
    return Status::ok();
  cudaEvent_t start = nullptr, stop = nullptr;
  LLMC_CUDA_CHECK(cudaEventCreate(&start), "cudaEventCreate");
  Status status = cudaStatus(cudaEventCreate(&stop), "cudaEventCreate");
  const float alpha = 1.0f, beta = 0.0f;
  auto once = [&](const cublasLtMatmulAlgo_t &algo) {
    return cublasLtMatmul(handle_, plan.desc, &alpha, at.rhs, plan.a, at.lhs,
                          plan.b, &beta, at.result, plan.c, at.result, plan.c,
                          &algo, workspace_, workspaceBytes_, stream);
  };
  float best = -1.0f;
  for (int i = 0; i < count && status.isOk(); ++i) {
    if (once(candidates[i].algo) != CUBLAS_STATUS_SUCCESS) // warm-up
      continue;
    status = cudaStatus(cudaEventRecord(start, stream), "cudaEventRecord");
    bool ran = true;
    for (int r = 0; r < kTimedRuns && status.isOk(); ++r)
      ran = ran && once(candidates[i].algo) == CUBLAS_STATUS_SUCCESS;
    if (status.isOk())
      status = cudaStatus(cudaEventRecord(stop, stream), "cudaEventRecord");
    if (status.isOk())
      status =
          cudaStatus(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0.0f;
    if (status.isOk())
      status = cudaStatus(cudaEventElapsedTime(&ms, start, stop),
                          "cudaEventElapsedTime");
    if (status.isOk() && ran && (best < 0 || ms < best)) {
      best = ms;
      plan.algo = candidates[i].algo;
    }
  }
  (void)cudaEventDestroy(start);
  if (stop)
    (void)cudaEventDestroy(stop);
  if (best >= 0)
    plan.ms = best / kTimedRuns;
  return status;
}

Status checkMatmulProblem(const MatmulProblem &p) {
  if (p.operands != DType::F32 && p.operands != DType::BF16 &&
      p.operands != DType::F16)
    return Status::error(StatusCode::InvalidArgument,
                         std::string("cuBLASLt matmul: expected f32, bf16 or "
                                     "f16 operands, got ") +
                             dtypeName(p.operands));
  if (p.result != DType::F32 && p.result != p.operands)
    return Status::error(StatusCode::InvalidArgument,
                         std::string("cuBLASLt matmul: expected an f32 or ") +
                             dtypeName(p.operands) + " result, got " +
                             dtypeName(p.result));
  if (p.batch < 0 || p.m < 0 || p.n < 0 || p.k < 0)
    return Status::error(StatusCode::InvalidArgument,
                         "cuBLASLt matmul: expected non-negative sizes");
  if (p.hasEpilogue && (p.batch != 1 || p.k == 0))
    return Status::error(StatusCode::InvalidArgument,
                         "cuBLASLt matmul: an epilogue takes one GEMM with "
                         "K > 0, got batch " +
                             std::to_string(p.batch) + " and K " +
                             std::to_string(p.k));
  // Measured on the H200: with a leading dimension that is not a multiple
  // of 16 bytes (M = 17, K = 65, both operands transposed), cuBLASLt's bf16
  // epilogues missed the f32-accumulation bound by up to 24x
  // (CudaMatmulEpilogueTest). Codegen lowers such regions op by op
  // (codegen/LowerMatmulEpilogue.cpp). f16 is held to the same rule (not
  // measured there; the same 16-byte alignment question).
  if (p.hasEpilogue && dtypeSize(p.operands) == 2 &&
      p.epilogue != MatmulEpilogueKind::BiasGradient) {
    int64_t lhsLeading = p.transA ? p.m : p.k;
    int64_t rhsLeading = p.transB ? p.k : p.n;
    if (lhsLeading % 8 != 0 || rhsLeading % 8 != 0 || p.n % 8 != 0)
      return Status::error(
          StatusCode::InvalidArgument,
          std::string("cuBLASLt matmul: a ") + dtypeName(p.operands) +
              " epilogue needs leading dimensions that "
          "are multiples of 8 elements (lhs " +
              std::to_string(lhsLeading) + ", rhs " +
              std::to_string(rhsLeading) + ", result " + std::to_string(p.n) +
              "); recompile with this llmc, which lowers such regions op by "
              "op");
  }
  if (p.hasEpilogue && p.epilogue == MatmulEpilogueKind::BiasGeluAux &&
      p.n % 8 != 0)
    return Status::error(StatusCode::InvalidArgument,
                         "cuBLASLt matmul: the pre-activation's leading "
                         "dimension N must be a multiple of 8, got " +
                             std::to_string(p.n));
  return Status::ok();
}

Status CublasLtMatmul::run(const MatmulProblem &p, const void *lhs,
                           const void *rhs, void *result, cudaStream_t stream,
                           const MatmulEpilogueOperands &epilogue) {
  LLMC_RETURN_IF_ERROR(checkMatmulProblem(p));
  if (p.batch == 0 || p.m == 0 || p.n == 0)
    return Status::ok();
  if (p.k == 0) { // an empty sum
    LLMC_CUDA_CHECK(cudaMemsetAsync(result, 0,
                                    static_cast<size_t>(p.batch * p.m * p.n) *
                                        dtypeSize(p.result),
                                    stream),
                    "zeroing an empty matmul's result");
    return Status::ok();
  }
  Plan *chosen = nullptr;
  LLMC_RETURN_IF_ERROR(
      plan(p, epilogue, MatmulOperandPointers{lhs, rhs, result}, stream,
           chosen));
  LLMC_RETURN_IF_ERROR(setEpiloguePointers(chosen->desc, p, epilogue));
  // A residual is C: D = product + residual, then the bias.
  bool residual =
      p.hasEpilogue && p.epilogue == MatmulEpilogueKind::BiasResidual;
  const void *c = residual ? epilogue.residual : result;
  const float alpha = 1.0f, beta = residual ? 1.0f : 0.0f;
  LLMC_CUBLAS_CHECK(cublasLtMatmul(handle_, chosen->desc, &alpha, rhs,
                                   chosen->a, lhs, chosen->b, &beta, c,
                                   chosen->c, result, chosen->c, &chosen->algo,
                                   workspace_, workspaceBytes_, stream),
                    "cublasLtMatmul");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// FP8: ScaledMatmul
//===----------------------------------------------------------------------===//

Status checkScaledMatmulProblem(const ScaledMatmulProblem &p) {
  auto invalid = [](const std::string &why) {
    return Status::error(StatusCode::InvalidArgument,
                         "cuBLASLt FP8 matmul: " + why);
  };
  if (!isFloat8(p.lhs) || !isFloat8(p.rhs))
    return invalid(std::string("expected 8-bit float operands, got ") +
                   dtypeName(p.lhs) + " and " + dtypeName(p.rhs));
  if (p.lhs == DType::F8E5M2 && p.rhs == DType::F8E5M2)
    return invalid("expected at most one f8E5M2 operand, got two");
  if (p.result != DType::BF16 && p.result != DType::F32)
    return invalid(std::string("expected a bf16 or f32 result, got ") +
                   dtypeName(p.result));
  if (p.m <= 0 || p.n <= 0 || p.k <= 0 || p.m % 16 || p.n % 16 || p.k % 16)
    return invalid("expected M, N and K positive multiples of 16, got M " +
                   std::to_string(p.m) + ", N " + std::to_string(p.n) +
                   ", K " + std::to_string(p.k));
  return Status::ok();
}

Status CublasLtMatmul::planScaled(const ScaledMatmulProblem &p, Plan *&plan) {
  auto found = scaledPlans_.find(p.key());
  if (found != scaledPlans_.end()) {
    plan = found->second.get();
    return Status::ok();
  }
  auto made = std::make_unique<Plan>();
  LLMC_CUBLAS_CHECK(
      cublasLtMatmulDescCreate(&made->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
      "cublasLtMatmulDescCreate(FP8)");
  cublasOperation_t transA = CUBLAS_OP_T, transB = CUBLAS_OP_N;
  LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                        made->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transA,
                        sizeof(transA)),
                    "setting TRANSA");
  LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                        made->desc, CUBLASLT_MATMUL_DESC_TRANSB, &transB,
                        sizeof(transB)),
                    "setting TRANSB");
  int8_t fastAccumulation = 0;
  LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                        made->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                        &fastAccumulation, sizeof(fastAccumulation)),
                    "setting FAST_ACCUM");
  // Column-major: A = our rhs as [K, N] (ld K), transposed; B = our lhs as
  // [K, M] (ld K); C = D = our result as [N, M] (ld N).
  LLMC_RETURN_IF_ERROR(makeLayout(made->a, p.rhs, p.k, p.n, p.k, 1, 0));
  LLMC_RETURN_IF_ERROR(makeLayout(made->b, p.lhs, p.k, p.m, p.k, 1, 0));
  LLMC_RETURN_IF_ERROR(makeLayout(made->c, p.result, p.n, p.m, p.n, 1, 0));
  cublasLtMatmulPreference_t preference = nullptr;
  LLMC_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference),
                    "cublasLtMatmulPreferenceCreate");
  size_t workspace = workspaceBytes_;
  cublasStatus_t set = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
      sizeof(workspace));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int count = 0;
  cublasStatus_t asked =
      set != CUBLAS_STATUS_SUCCESS
          ? set
          : cublasLtMatmulAlgoGetHeuristic(handle_, made->desc, made->a,
                                           made->b, made->c, made->c,
                                           preference, 1, &heuristic, &count);
  cublasLtMatmulPreferenceDestroy(preference);
  LLMC_CUBLAS_CHECK(asked, "cublasLtMatmulAlgoGetHeuristic(FP8)");
  if (count == 0)
    return Status::error(StatusCode::Internal,
                         std::string("cuBLASLt offers no FP8 algorithm for ") +
                             dtypeName(p.lhs) + " [" + std::to_string(p.m) +
                             ", " + std::to_string(p.k) + "] x " +
                             dtypeName(p.rhs) + " [" + std::to_string(p.n) +
                             ", " + std::to_string(p.k) + "]ᵀ -> " +
                             dtypeName(p.result));
  made->algo = heuristic.algo;
  plan = made.get();
  scaledPlans_[p.key()] = std::move(made);
  return Status::ok();
}

Status CublasLtMatmul::runScaled(const ScaledMatmulProblem &p, const void *lhs,
                                 const void *rhs, const float *lhsScaleInv,
                                 const float *rhsScaleInv, void *result,
                                 cudaStream_t stream) {
  LLMC_RETURN_IF_ERROR(checkScaledMatmulProblem(p));
  Plan *plan = nullptr;
  LLMC_RETURN_IF_ERROR(planScaled(p, plan));
  // The scale pointers are per launch (the plan is shared by every
  // launch of the problem): cuBLASLt's A is our rhs, its B our lhs.
  LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                        plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                        &rhsScaleInv, sizeof(rhsScaleInv)),
                    "setting A_SCALE_POINTER");
  LLMC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
                        plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                        &lhsScaleInv, sizeof(lhsScaleInv)),
                    "setting B_SCALE_POINTER");
  float alpha = 1.0f, beta = 0.0f;
  LLMC_CUBLAS_CHECK(cublasLtMatmul(handle_, plan->desc, &alpha, rhs, plan->a,
                                   lhs, plan->b, &beta, result, plan->c,
                                   result, plan->c, &plan->algo, workspace_,
                                   workspaceBytes_, stream),
                    "cublasLtMatmul(FP8)");
  return Status::ok();
}

} // namespace llmc::rt::cuda
