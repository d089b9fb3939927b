//===- Models.h - the built-in model families ------------------*- C++ -*-===//
//
// GPT-2, LLaMA and a Mixtral-style MoE, traced with the C++ tracing API only
// (frontend/Trace.h). Parameter names are the Hugging Face names, so that a
// safetensors checkpoint of the same model loads without renaming, and the
// ops are located at the same module paths.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_MODELS_MODELS_H
#define LLMC_FRONTEND_MODELS_MODELS_H

#include "frontend/Trace.h"
#include "frontend/config/RunDescription.h"

namespace llmc {

/// Traces the loss of `model` on batches of `batchSize` sequences of
/// `seqLen` tokens: inputs "tokens" and "targets" ([batch, seq], i32) after
/// every parameter; returns the rank-0 f32 mean cross-entropy (plus the
/// weighted load-balancing loss for MoE).
Tensor traceGpt2(Tracer &tracer, const ModelConfig &model, int64_t batchSize,
                 int64_t seqLen);
Tensor traceLlama(Tracer &tracer, const ModelConfig &model, int64_t batchSize,
                  int64_t seqLen);
Tensor traceMoe(Tracer &tracer, const ModelConfig &model, int64_t batchSize,
                int64_t seqLen);

/// Traces `model`'s family into a module holding `@loss`. Returns null if
/// tracing reported an error (diagnostics go to `context`).
mlir::OwningOpRef<mlir::ModuleOp> buildLossModule(mlir::MLIRContext &context,
                                                  const ModelConfig &model,
                                                  int64_t batchSize,
                                                  int64_t seqLen);

} // namespace llmc

#endif // LLMC_FRONTEND_MODELS_MODELS_H
