//===- NormsLaunch.cpp - layer_norm, rms_norm and their gradients ---------===//
//
// The norms family: the forward a warp per row (norms/Norms.cuh), the row in
// registers where it is whole 16-byte packs (NormRows4.cuh up to 4 packs per
// lane, NormRows8.cuh up to 8); the gradients a block per chunk of 32 rows
// (NormGrad.cuh; NormGradRows.cuh with the row in registers) and a finish
// kernel over the chunks' column partials. LayerNormGrad and RmsNormGrad may
// store dx plus a residual gradient (LaunchContext::residualAddend). The
// selection is codegen's (codegen/cuda/norms/NormsSelect.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelFamily.h"
#include "runtime/cuda/kernels/norms/NormGradLaunch.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

namespace {

/// Packs of 16 bytes a lane of the norms' "rows" entries holds at most
/// (LLMC_NORM_PACKS, NormRows4.cuh), and of their "rows8" entries
/// (NormRows8.cuh).
constexpr long long kNormPacks = 4;
constexpr long long kNormPacks8 = 8;

} // namespace

NormGradLaunch normGradLaunch(const TensorRef &x) {
  NormGradLaunch launch;
  launch.dim = x.shape.empty() ? 0 : x.shape.back();
  launch.rows = launch.dim > 0 ? x.numElements() / launch.dim : 0;
  launch.chunks = (launch.rows + NormGradLaunch::kChunkRows - 1) /
                  NormGradLaunch::kChunkRows;
  return launch;
}

Status family::launchNorms(LaunchContext &context, const KernelCall &call,
                           const KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  const std::vector<std::string> &entries = choice.entries;
  const TensorRef *out = &outputs[0];
  switch (call.kind) {
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm: {
    bool layer = call.kind == KernelKind::LayerNorm;
    const TensorRef &x = inputs[0];
    long long dim = x.shape.back();
    long long rows = dim ? x.numElements() / dim : 0;
    double epsilon = attrs.floats[0];
    const void *source = x.data, *gamma = inputs[1].data;
    const void *beta = inputs.size() == 3 ? inputs[2].data : nullptr;
    void *result = out->data;
    std::vector<void *> args;
    if (layer)
      args = {&source, &gamma, &beta, &result, &rows, &dim, &epsilon};
    else
      args = {&source, &gamma, &result, &rows, &dim, &epsilon};
    unsigned blocks =
        static_cast<unsigned>((rows * 32 + kRowThreads - 1) / kRowThreads);
    // The row in registers (NormRows.cuh): 16 bytes of x per pack,
    // at most 4 (rows) or 8 (rows8) packs per lane, gamma and beta read as
    // packs too.
    size_t bytes = dtypeSize(x.dtype), paramBytes = dtypeSize(inputs[1].dtype);
    long long perPack = 16 / static_cast<long long>(bytes);
    bool packed =
        dim % perPack == 0 && dim / perPack <= 32 * kNormPacks8 &&
        aligned16({source, result}) &&
        reinterpret_cast<uintptr_t>(gamma) % (paramBytes * perPack) == 0 &&
        reinterpret_cast<uintptr_t>(beta) % (paramBytes * perPack) == 0;
    const std::string &entry = !packed                            ? entries[0]
                               : dim / perPack <= 32 * kNormPacks ? entries[1]
                                                                  : entries[2];
    return context.launch(entry, blocks, kRowThreads, 0, args);
  }
  case KernelKind::LayerNormGrad:
  case KernelKind::RmsNormGrad: {
    NormGradLaunch launch = normGradLaunch(inputs[0]);
    if (launch.dim == 0)
      return Status::ok();
    const void *x = inputs[0].data, *gamma = inputs[1].data,
               *dy = inputs[2].data;
    void *dx = outputs[0].data, *dgamma = outputs[1].data;
    void *dbeta = outputs.size() == 3 ? outputs[2].data : nullptr;
    const void *addend = context.residualAddend();
    int centered = call.kind == KernelKind::LayerNormGrad ? 1 : 0;
    double epsilon = attrs.floats[0];
    // The chunks' partial column sums, in the scratch prepare() reserved.
    double *partials = static_cast<double *>(context.scratch());
    // 1. A block per chunk of rows: dx and the chunk's partials, the row in
    //    registers (entries 2 and 3: up to 4 or 8 packs of 16 bytes per
    //    lane) when the row is whole packs and the pointers 16-byte aligned.
    if (launch.chunks > 0) {
      std::vector<void *> chunkArgs = {
          &x,        &gamma,       &dy,         &dx,      &addend,
          &partials, &launch.rows, &launch.dim, &epsilon, &centered};
      long long perPack =
          16 / static_cast<long long>(dtypeSize(inputs[0].dtype));
      long long packs = launch.dim / perPack;
      bool packed = launch.dim % perPack == 0 && packs <= 32 * 8 &&
                    aligned16({x, dy, dx, addend});
      const std::string &entry = !packed           ? entries[0]
                                 : packs <= 32 * 4 ? entries[2]
                                                   : entries[3];
      LLMC_RETURN_IF_ERROR(context.launch(
          entry, static_cast<unsigned>(launch.chunks), 256, 0, chunkArgs));
    }
    // 2. dgamma and dbeta from the partials (zeros for no rows): blocks of
    //    1024 threads, 32 columns x 32 runs of chunks.
    const double *finished = partials;
    std::vector<void *> finishArgs = {&finished, &dgamma, &dbeta,
                                      &launch.chunks, &launch.dim};
    unsigned columnBlocks = static_cast<unsigned>((launch.dim + 31) / 32);
    return context.launch(entries[1], columnBlocks, 1024, 0, finishArgs);
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
