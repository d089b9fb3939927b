//===- MatmulSelect.cpp - GEMMs and their epilogues through cuBLASLt ------===//
//
// The selection of the matmul family: Matmul and MatmulEpilogue as one
// cuBLASLt problem each, checked against the combinations CublasLtMatmul
// runs (checkMatmulProblem); a bias-gradient epilogue also carries
// ReduceSum's entries, which the launch
// (runtime/cuda/kernels/matmul/MatmulLaunch.cpp) runs where cuBLASLt has no
// BGRADA algorithm for the problem.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"
#include "codegen/cuda/KernelSelection.h"
#include "runtime/cuda/libs/CublasLt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectMatmul(const KernelCall &call, KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::Matmul: {
    LLMC_RETURN_IF_ERROR(call.expect(2, 2, 2, 0));
    const TensorRef &lhs = inputs[0], &rhs = inputs[1];
    if (lhs.rank() < 2 || rhs.rank() < 2)
      return call.refuse("expected operands of rank at least 2");
    if (rhs.dtype != lhs.dtype)
      return call.refuse("cuBLASLt runs operands of one type");
    MatmulProblem problem;
    problem.operands = lhs.dtype;
    problem.result = outputs[0].dtype;
    problem.transA = attrs.ints[0] != 0;
    problem.transB = attrs.ints[1] != 0;
    problem.sharedRhs = rhs.rank() == 2;
    int64_t lr = lhs.rank(), rr = rhs.rank();
    problem.batch = numElements(Shape(lhs.shape.begin(), lhs.shape.end() - 2));
    problem.m = lhs.shape[lr - (problem.transA ? 1 : 2)];
    problem.k = lhs.shape[lr - (problem.transA ? 2 : 1)];
    problem.n = rhs.shape[rr - (problem.transB ? 2 : 1)];
    if (Status status = checkMatmulProblem(problem); !status)
      return call.refuse(status.message());
    choice.route = KernelChoice::Route::Gemm;
    choice.matmul = problem;
    return Status::ok();
  }
  case KernelKind::MatmulEpilogue: {
    // Kernels.def: [transpose_a, transpose_b, epilogue]; lhs, rhs, bias[,
    // residual]; result[, pre-activation].
    if (attrs.ints.size() != 3 || attrs.ints[2] < 0 ||
        attrs.ints[2] >= kNumMatmulEpilogueKinds)
      return Status::error(StatusCode::InvalidArgument,
                           "MatmulEpilogue: expected ints [transpose_a, "
                           "transpose_b, epilogue in [0, 5)]");
    auto epilogue = static_cast<MatmulEpilogueKind>(attrs.ints[2]);
    if (inputs.size() != static_cast<size_t>(matmulEpilogueInputs(epilogue)) ||
        outputs.size() != static_cast<size_t>(matmulEpilogueOutputs(epilogue)))
      return Status::error(
          StatusCode::InvalidArgument,
          "MatmulEpilogue: expected " +
              std::to_string(matmulEpilogueInputs(epilogue)) + " inputs and " +
              std::to_string(matmulEpilogueOutputs(epilogue)) +
              " outputs for epilogue " + std::to_string(attrs.ints[2]));
    const TensorRef &lhs = inputs[0], &rhs = inputs[1], &out = outputs[0];
    if (lhs.rank() < 2 || rhs.rank() != 2 || rhs.dtype != lhs.dtype)
      return call.refuse(
          "cuBLASLt epilogues take a rank-2 rhs of the lhs's type");
    MatmulProblem problem;
    problem.operands = lhs.dtype;
    problem.result = out.dtype;
    problem.transA = attrs.ints[0] != 0;
    problem.transB = attrs.ints[1] != 0;
    problem.sharedRhs = true;
    problem.hasEpilogue = true;
    problem.epilogue = epilogue;
    if (problem.transA && lhs.rank() != 2)
      return call.refuse("a transposed lhs must be rank 2 for one GEMM");
    int64_t lr = lhs.rank();
    // A row-major lhs [..., M, K] with a shared rhs is one GEMM of batch·M
    // rows: the bias and the pre-activation are then plain matrices.
    problem.m = numElements(lhs.shape) / lhs.shape[lr - 1];
    problem.k = lhs.shape[lr - 1];
    if (problem.transA) {
      problem.m = lhs.shape[1];
      problem.k = lhs.shape[0];
    }
    problem.n = rhs.shape[problem.transB ? 0 : 1];
    if (epilogue == MatmulEpilogueKind::BiasGradient) {
      // BGRADA: the sum over K of cuBLASLt's A, which is our rhs.
      if (outputs[1].dtype != out.dtype ||
          outputs[1].numElements() != problem.n)
        return call.refuse("expected a bias gradient of N elements of the "
                           "result's type");
    } else if (inputs[2].dtype != out.dtype ||
               inputs[2].shape != Shape{problem.n}) {
      return call.refuse("expected a bias [N] of the result's type");
    }
    if (epilogue == MatmulEpilogueKind::BiasResidual &&
        (inputs[3].dtype != out.dtype || inputs[3].shape != out.shape))
      return call.refuse("expected a residual of the result's type and shape");
    if (epilogue == MatmulEpilogueKind::BiasGeluAux &&
        (outputs[1].dtype != out.dtype || outputs[1].shape != out.shape))
      return call.refuse(
          "expected a pre-activation of the result's type and shape");
    if (Status status = checkMatmulProblem(problem); !status)
      return call.refuse(status.message());
    choice.route = KernelChoice::Route::Gemm;
    choice.matmul = problem;
    if (epilogue == MatmulEpilogueKind::BiasGradient) {
      // Where cuBLASLt has no BGRADA algorithm for the problem, the launch
      // runs the plain GEMM and this reduction of the rhs over K.
      KernelChoice reduce;
      LLMC_RETURN_IF_ERROR(
          selectKernel(KernelKind::ReduceSum, biasGradientReduceAttrs(problem),
                       {biasGradientRows(problem, rhs)},
                       {biasGradientSums(problem, outputs[1])}, reduce));
      choice.entries = reduce.entries;
      choice.scratchBytes = reduce.scratchBytes;
    }
    return Status::ok();
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
