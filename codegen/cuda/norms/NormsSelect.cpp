//===- NormsSelect.cpp - layer_norm, rms_norm and their gradients ---------===//
//
// The selection of the norms family: the forward's entries (a warp per
// row, and the "rows" and "rows8" ones with the row in registers, which
// the launch takes when the row length and the pointers allow), and the
// gradients' (a block per chunk of rows, their "rows" forms, the finish),
// with the chunks' scratch of normGradLaunch (norms/NormGradLaunch.h). The
// launches are runtime/cuda/kernels/norms/NormsLaunch.cpp.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"
#include "runtime/cuda/kernels/norms/NormGradLaunch.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectNorms(const KernelCall &call, KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm: {
    bool layer = call.kind == KernelKind::LayerNorm;
    LLMC_RETURN_IF_ERROR(call.expect(2, layer ? 3 : 2, 0, 1));
    const TensorRef &x = inputs[0];
    std::string type = floatSuffix(x.dtype),
                params = floatSuffix(inputs[1].dtype);
    // f16 x takes f16 or f32 gamma; f16 gamma only with f16 x (the
    // kernels an fp16 program runs, Norms.cuh).
    bool halfMix = (type == "f16" && params == "bf16") ||
                   (params == "f16" && type != "f16");
    if (type.empty() || params.empty() || halfMix ||
        (inputs.size() == 3 && inputs[2].dtype != inputs[1].dtype) ||
        outputs[0].dtype != x.dtype || x.rank() < 1)
      return call.refuse("norms cover f32, bf16 and f16 inputs (the result "
                         "of the input's type) with f32 or bf16 gamma, or f16 "
                         "gamma for f16 inputs (and beta of gamma's type)");
    // The launch takes a "rows" entry (the row in registers, 16-byte
    // loads; up to 4 or 8 packs per lane) when the row length and the
    // pointers allow.
    std::string name = layer ? "llmc_layer_norm_" : "llmc_rms_norm_";
    return runEntries(choice, {name + type + "_" + params,
                               name + "rows_" + type + "_" + params,
                               name + "rows8_" + type + "_" + params});
  }
  case KernelKind::LayerNormGrad:
  case KernelKind::RmsNormGrad: {
    bool layer = call.kind == KernelKind::LayerNormGrad;
    size_t results = layer ? 3 : 2;
    if (inputs.size() != 3 || outputs.size() != results || attrs.floats.empty())
      return Status::error(
          StatusCode::InvalidArgument,
          std::string(kernelName(call.kind)) + ": expected 3 inputs, " +
              std::to_string(results) + " outputs and 1 float, got " +
              std::to_string(inputs.size()) + ", " +
              std::to_string(outputs.size()) + " and " +
              std::to_string(attrs.floats.size()));
    const TensorRef &x = inputs[0], &gamma = inputs[1];
    std::string type = floatSuffix(x.dtype), params = floatSuffix(gamma.dtype);
    bool typesMatch = inputs[2].dtype == x.dtype &&
                      outputs[0].dtype == x.dtype &&
                      outputs[1].dtype == gamma.dtype &&
                      (!layer || outputs[2].dtype == gamma.dtype);
    bool halfMix = (type == "f16" && params == "bf16") ||
                   (params == "f16" && type != "f16");
    if (type.empty() || params.empty() || halfMix || !typesMatch ||
        x.rank() < 1)
      return call.refuse(
          "norm gradients cover f32, bf16 and f16 x and dy (dx of their "
          "type) with f32 or bf16 gamma, or f16 gamma for f16 x (dgamma and "
          "dbeta of its type)");
    choice.scratchBytes = normGradLaunch(x).scratchBytes();
    if (normGradLaunch(x).chunks > 0x7fffffffLL)
      return call.refuse("more than 2^31 - 1 chunks of rows");
    // The launch takes a "rows" entry (the row in registers, 16-byte
    // loads) when the row length and the pointers allow.
    return runEntries(choice, {"llmc_norm_grad_" + type + "_" + params,
                               "llmc_norm_grad_finish_" + params,
                               "llmc_norm_grad_rows4_" + type + "_" + params,
                               "llmc_norm_grad_rows8_" + type + "_" + params});
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
