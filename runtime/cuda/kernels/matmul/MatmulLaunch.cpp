//===- MatmulLaunch.cpp - GEMMs and their epilogues through cuBLASLt ------===//
//
// The matmul family: Matmul and MatmulEpilogue as one cuBLASLt GEMM each
// (libs/CublasLt.h: row-major through the swapped column-major problem, the
// algorithm timed once per problem). A bias-gradient epilogue that cuBLASLt
// cannot run becomes the plain GEMM and ReduceSum's kernels, which the
// selection chose (codegen/cuda/matmul/MatmulSelect.cpp) and prepare
// reserved.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/libs/CublasLt.h"
#include "runtime/cuda/libs/CudaModule.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::launchMatmul(LaunchContext &context, const KernelCall &call,
                            const KernelChoice &choice) {
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  if (choice.matmul.k == 0)
    return cudaStatus(
        cudaMemsetAsync(out->data, 0, out->bytes(), context.stream()),
        "cudaMemsetAsync(empty matmul)");
  const MatmulProblem &problem = choice.matmul;
  MatmulEpilogueOperands epilogue;
  bool biasGradient = problem.hasEpilogue &&
                      problem.epilogue == MatmulEpilogueKind::BiasGradient;
  if (biasGradient)
    epilogue.biasGradient = outputs[1].data;
  else if (problem.hasEpilogue)
    epilogue.bias = inputs[2].data;
  if (problem.hasEpilogue &&
      problem.epilogue == MatmulEpilogueKind::BiasResidual)
    epilogue.residual = inputs[3].data;
  if (problem.hasEpilogue &&
      problem.epilogue == MatmulEpilogueKind::BiasGeluAux)
    epilogue.preActivation = outputs[1].data;
  if (!biasGradient || !context.lacksBiasGradient(problem)) {
    Status status =
        context.matmul().run(problem, inputs[0].data, inputs[1].data, out->data,
                             context.stream(), epilogue);
    if (!biasGradient || status)
      return status;
    // cuBLASLt has no BGRADA algorithm for this problem (Unimplemented)
    // or refused the one it offered: from now on the plain GEMM, then the
    // bias gradient with ReduceSum's kernels (the selection's entries).
    std::fprintf(stderr,
                 "llmc: cuBLASLt bias-gradient epilogue not available for "
                 "a GEMM of M=%lld N=%lld K=%lld (%s); running the GEMM and "
                 "a reduction\n",
                 static_cast<long long>(problem.m),
                 static_cast<long long>(problem.n),
                 static_cast<long long>(problem.k), status.message().c_str());
    context.markLacksBiasGradient(problem);
  }
  MatmulProblem plain = problem;
  plain.hasEpilogue = false;
  LLMC_RETURN_IF_ERROR(context.matmul().run(
      plain, inputs[0].data, inputs[1].data, out->data, context.stream()));
  return launchReduction(context, KernelKind::ReduceSum, entries,
                         biasGradientReduceAttrs(problem).ints,
                         biasGradientRows(problem, inputs[1]),
                         biasGradientSums(problem, outputs[1]));
}

} // namespace llmc::rt::cuda
