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

/// What a traced model returns.
enum class ModelOutput {
  /// The training loss: inputs "tokens" and "targets", a rank-0 f32 result.
  Loss,
  /// The next-token logits: input "tokens" only, a [batch, seq, vocab] f32
  /// result (for generation and evaluation; MoE adds no balancing loss).
  Logits,
};

/// Traces `model` on batches of `batchSize` sequences of `seqLen` tokens.
/// With ModelOutput::Loss: inputs "tokens" and "targets" ([batch, seq], i32)
/// after every parameter; returns the rank-0 f32 mean cross-entropy (plus the
/// weighted load-balancing loss for MoE). With ModelOutput::Logits: input
/// "tokens" only, returns the head's [batch, seq, vocab] f32 logits. The
/// parameters (names, shapes, order, initializers) are the same for both.
Tensor traceGpt2(Tracer &tracer, const ModelConfig &model, int64_t batchSize,
                 int64_t seqLen, ModelOutput output = ModelOutput::Loss);
Tensor traceLlama(Tracer &tracer, const ModelConfig &model, int64_t batchSize,
                  int64_t seqLen, ModelOutput output = ModelOutput::Loss);
Tensor traceMoe(Tracer &tracer, const ModelConfig &model, int64_t batchSize,
                int64_t seqLen, ModelOutput output = ModelOutput::Loss);

/// Traces `model`'s family into a module holding `@loss`. Returns null if
/// tracing reported an error (diagnostics go to `context`).
mlir::OwningOpRef<mlir::ModuleOp> buildLossModule(mlir::MLIRContext &context,
                                                  const ModelConfig &model,
                                                  int64_t batchSize,
                                                  int64_t seqLen);

/// Traces `model`'s family into a module holding
/// `@logits(params..., tokens: [B, T] i32) -> [B, T, V] f32`, whose parameter
/// arguments are exactly those of `buildLossModule`'s `@loss` (names, types,
/// order and llmc attributes), so weights trained through @loss bind to it by
/// name. Returns null if tracing reported an error.
mlir::OwningOpRef<mlir::ModuleOp> buildLogitsModule(mlir::MLIRContext &context,
                                                    const ModelConfig &model,
                                                    int64_t batchSize,
                                                    int64_t seqLen);

} // namespace llmc

#endif // LLMC_FRONTEND_MODELS_MODELS_H
