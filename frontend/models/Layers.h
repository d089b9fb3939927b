//===- Layers.h - building blocks shared by the built-in models -*- C++ -*-===//
#ifndef LLMC_FRONTEND_MODELS_LAYERS_H
#define LLMC_FRONTEND_MODELS_LAYERS_H

#include "frontend/Trace.h"
#include "frontend/config/RunDescription.h"
#include "frontend/models/Models.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace llmc {

/// Weight layout of a linear layer.
enum class WeightLayout {
  InOut, ///< [in, out], GPT-2's Conv1D: y = x W
  OutIn, ///< [out, in], torch.nn.Linear: y = x W^T
};

/// How Megatron's tensor parallelism splits a linear layer (the parameters'
/// llmc.tp_split, whatever their WeightLayout): column-parallel splits the
/// output features and the bias over the tp ranks, in `groups` equal blocks
/// each split on its own (c_attn's q, k and v); row-parallel splits the input
/// features, and the bias stays whole (it is added after the reduction).
struct LinearSplit {
  enum class Kind { Replicated, Column, Row };
  Kind kind = Kind::Replicated;
  int64_t groups = 1;

  static LinearSplit replicated() { return {}; }
  static LinearSplit column(int64_t groups = 1) {
    return {Kind::Column, groups};
  }
  static LinearSplit row() { return {Kind::Row, 1}; }
};

/// A linear layer in the current scope: parameters "weight" (and "bias" when
/// `bias` is set), y = x W (+ b).
Tensor linear(Tracer &tracer, Tensor x, int64_t in, int64_t out,
              WeightLayout layout, bool bias, Init weightInit,
              LinearSplit split = LinearSplit::replicated());

/// [B, T, H * D] -> [B, H, T, D]
Tensor splitHeads(Tensor x, int64_t heads);
/// [B, H, T, D] -> [B, T, H * D]
Tensor mergeHeads(Tensor x);

/// A SwiGLU feed-forward block in the current scope: down(silu(gate(x)) *
/// up(x)), three bias-free [out, in] projections with the given scope names
/// (LLaMA: gate_proj, up_proj, down_proj; Mixtral experts: w1, w3, w2).
/// With TensorParallelLayout::Megatron, gate and up are column-parallel and
/// down row-parallel. (MoE experts are a batched form of this over stacked
/// weights, built in Moe.cpp.)
struct SwigluNames {
  llvm::StringRef gate, up, down;
};
enum class TensorParallelLayout { Replicated, Megatron };
/// `bias` gives each projection a bias (LLaMA's mlp_bias).
Tensor swigluMlp(Tracer &tracer, Tensor x, int64_t width, int64_t ffnWidth,
                 SwigluNames names, TensorParallelLayout tpLayout,
                 bool bias = false);

/// LLaMA's RMSNorm in the current scope: parameter "weight" of ones.
Tensor llamaRmsNorm(Tracer &tracer, Tensor x, const ModelConfig &model);

/// LLaMA's self-attention in the current scope ("self_attn"): q/k/v/o
/// projections without bias, rope on q and k, causal grouped-query
/// attention over [B, T, hidden] activations.
Tensor llamaSelfAttention(Tracer &tracer, Tensor x, const ModelConfig &model);

/// The classifier in the current scope: logits = x head^T, x [B, T, C],
/// head [V, C]. When model.vocabPadMultiple does not divide V the GEMMs run
/// at the padded width Vp: head gets Vp - V zero rows and the padded columns
/// a logit of -30000 (a bias vector, which the GEMM's epilogue adds), so
/// that the softmax gives them probability 0 exactly (exp(-30000) underflows
/// even in f32; -30000 is finite in f16) and their gradients are 0: the loss
/// and every gradient are the unpadded ones, and the zero rows' gradient is
/// sliced off with them. Why: a row of 50257 bf16 logits is not 16-byte
/// aligned, and GPT-2 124M's three lm_head GEMMs took 28.4 ms a step on the
/// H200 at 50257 against 4.7 ms at 50304 (bench/RESULTS.md). ModelOutput::
/// Logits returns the V real columns (a slice); ModelOutput::Loss the padded
/// logits, for the cross-entropy (targets are below V).
Tensor classifier(Tracer &tracer, Tensor x, Tensor head,
                  const ModelConfig &model, ModelOutput output);

/// The trunk shared by LLaMA and the MoE model: embedding, layers whose
/// feed-forward part is `ffn` (called inside the layer's scope), the final
/// norm, the head (tied or not) and, for ModelOutput::Loss, the
/// cross-entropy. Returns the loss before any extra term, or the logits.
Tensor traceLlamaTrunk(
    Tracer &tracer, const ModelConfig &model, int64_t batchSize, int64_t seqLen,
    ModelOutput output,
    llvm::function_ref<Tensor(Tracer &, Tensor, int64_t layer)> ffn);

} // namespace llmc

#endif // LLMC_FRONTEND_MODELS_LAYERS_H
