//===- Fp8Launch.cpp - the launch of FP8 training's kernels on a GPU ------===//
//
// The fp8 family (the selection is codegen's, codegen/cuda/fp8/
// Fp8Select.cpp): Amax zeroes its scalar and runs the atomicMax kernel,
// ScaledCast one grid-stride kernel (fp8/Fp8.cuh; a thread per eight
// elements), ScaledCastTranspose one 64 x 64 tile a block, ScaledMatmul cuBLASLt's
// FP8 GEMM with the two inverse scales as its scale pointers
// (CublasLtMatmul::runScaled).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/libs/CublasLt.h"
#include "runtime/cuda/libs/CudaModule.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace llmc::rt::cuda {

namespace {

constexpr unsigned kThreads = 256;

/// Grid-stride blocks: at most 8 of 256 threads per SM.
unsigned strideBlocks(int64_t items, unsigned multiprocessors) {
  int64_t blocks = (items + kThreads - 1) / kThreads;
  int64_t cap = static_cast<int64_t>(multiprocessors) * 8;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

} // namespace

Status family::launchFp8(LaunchContext &context, const KernelCall &call,
                         const KernelChoice &choice) {
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::Amax: {
    const void *x = inputs[0].data;
    void *out = outputs[0].data;
    long long n = inputs[0].numElements();
    LLMC_RETURN_IF_ERROR(cudaStatus(
        cudaMemsetAsync(out, 0, sizeof(float), context.stream()),
        "cudaMemsetAsync(amax)"));
    std::vector<void *> args = {&x, &out, &n};
    return context.launch(choice.entries[0],
                          strideBlocks(n, context.multiprocessors()), kThreads,
                          0, args);
  }
  case KernelKind::ScaledCast: {
    const void *x = inputs[0].data, *scale = inputs[1].data;
    void *out = outputs[0].data;
    long long n = inputs[0].numElements();
    std::vector<void *> args = {&x, &scale, &out, &n};
    return context.launch(choice.entries[0],
                          strideBlocks((n + 7) / 8, context.multiprocessors()),
                          kThreads, 0, args);
  }
  case KernelKind::ScaledCastTranspose: {
    const void *x = inputs[0].data, *scale = inputs[1].data;
    void *out = outputs[0].data, *transposed = outputs[1].data;
    long long rows = inputs[0].shape[0], cols = inputs[0].shape[1];
    std::vector<void *> args = {&x, &scale, &out, &transposed, &rows, &cols};
    dim3 blocks(static_cast<unsigned>((cols + 63) / 64),
                static_cast<unsigned>(
                    std::clamp<long long>((rows + 63) / 64, 1, 65535)));
    return context.launch(choice.entries[0], blocks, kThreads, 0, args);
  }
  case KernelKind::ScaledMatmul: {
    ScaledMatmulProblem problem;
    problem.lhs = inputs[0].dtype;
    problem.rhs = inputs[1].dtype;
    problem.result = outputs[0].dtype;
    problem.m = inputs[0].shape[0];
    problem.n = inputs[1].shape[0];
    problem.k = inputs[0].shape[1];
    return context.matmul().runScaled(
        problem, inputs[0].data, inputs[1].data,
        static_cast<const float *>(inputs[2].data),
        static_cast<const float *>(inputs[3].data), outputs[0].data,
        context.stream());
  }
  default:
    return call.refuse("not an fp8 kernel");
  }
}

} // namespace llmc::rt::cuda
