//===- Fp8Select.cpp - the entries of FP8 training ------------------------===//
//
// The selection of the fp8 family: Amax, ScaledCast and ScaledCastTranspose
// as the fp8 unit's entries (runtime/cuda/kernels/fp8/Fp8.cuh, by input type and format),
// ScaledMatmul as cuBLASLt's FP8 GEMM (CublasLtMatmul::runScaled), checked
// by checkScaledMatmulProblem here so that a program cuBLASLt cannot run is
// refused when it is compiled, not when it runs.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"
#include "runtime/cuda/libs/CublasLt.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectFp8(const KernelCall &call, KernelChoice &choice) {
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::Amax: {
    LLMC_RETURN_IF_ERROR(call.expect(1, 1, 0, 0));
    std::string suffix = floatSuffix(inputs[0].dtype);
    if (suffix.empty() || outputs[0].dtype != DType::F32)
      return call.refuse("amax covers f32, bf16 and f16 inputs, f32 result");
    return runEntries(choice, {"llmc_amax_" + suffix});
  }
  case KernelKind::ScaledCast: {
    LLMC_RETURN_IF_ERROR(call.expect(2, 2, 0, 0));
    std::string suffix = floatSuffix(inputs[0].dtype);
    DType out = outputs[0].dtype;
    if (suffix.empty() || !isFloat8(out) || inputs[1].dtype != DType::F32)
      return call.refuse("scaled_cast covers f32, bf16 and f16 inputs to "
                         "f8E4M3FN or f8E5M2 with an f32 scale");
    return runEntries(choice, {"llmc_scaled_cast_" + suffix +
                               (out == DType::F8E4M3FN ? "_e4m3" : "_e5m2")});
  }
  case KernelKind::ScaledCastTranspose: {
    // Two outputs (expect() wants one): the codes and their transpose.
    if (inputs.size() != 2 || outputs.size() != 2)
      return call.refuse("expected 2 inputs and 2 outputs, got " +
                         std::to_string(inputs.size()) + " and " +
                         std::to_string(outputs.size()));
    std::string suffix = floatSuffix(inputs[0].dtype);
    DType out = outputs[0].dtype;
    if (suffix.empty() || !isFloat8(out) || outputs[1].dtype != out ||
        inputs[1].dtype != DType::F32 || inputs[0].rank() != 2)
      return call.refuse("scaled_cast_transpose covers f32, bf16 and f16 "
                         "matrices to f8E4M3FN or f8E5M2 (both results of one "
                         "format) with an f32 scale");
    return runEntries(choice, {"llmc_scaled_cast_transpose_" + suffix +
                               (out == DType::F8E4M3FN ? "_e4m3" : "_e5m2")});
  }
  case KernelKind::ScaledMatmul: {
    LLMC_RETURN_IF_ERROR(call.expect(4, 4, 0, 0));
    const TensorRef &lhs = inputs[0], &rhs = inputs[1];
    if (lhs.rank() != 2 || rhs.rank() != 2)
      return call.refuse("expected rank-2 operands");
    ScaledMatmulProblem problem;
    problem.lhs = lhs.dtype;
    problem.rhs = rhs.dtype;
    problem.result = outputs[0].dtype;
    problem.m = lhs.shape[0];
    problem.n = rhs.shape[0];
    problem.k = lhs.shape[1];
    if (Status status = checkScaledMatmulProblem(problem); !status)
      return call.refuse(status.message());
    // The plan's matmul record says what the GEMM is (coverage, timing);
    // the launch reads both operand types from the call.
    choice.route = KernelChoice::Route::Gemm;
    choice.matmul.operands = lhs.dtype;
    choice.matmul.result = problem.result;
    choice.matmul.m = problem.m;
    choice.matmul.n = problem.n;
    choice.matmul.k = problem.k;
    choice.matmul.transB = true;
    return Status::ok();
  }
  default:
    return call.refuse("not an fp8 kernel");
  }
}

} // namespace llmc::rt::cuda
