//===- Gpt2.cpp - GPT-2: learned positions, LayerNorm, tanh-GELU, tied head -===//
//
// Names and layout follow Hugging Face's GPT2LMHeadModel: Conv1D weights are
// stored [in, out]; the head is the token embedding (tied). Initialization
// follows GPT-2: normal(0.02), residual projections scaled by 1/sqrt(2L).
// config.json's scale_attn_weights / scale_attn_by_inverse_layer_idx set
// the attention scale, activation_function "gelu" the erf GELU.
//
//===----------------------------------------------------------------------===//

#include "frontend/models/Layers.h"
#include "frontend/models/Models.h"

#include <cmath>
#include <optional>
#include <string>

namespace llmc {

namespace {

Tensor layerNormScope(Tracer &t, llvm::StringRef name, Tensor x,
                      const ModelConfig &m) {
  auto scope = t.scope(name);
  Tensor gamma = t.parameter("weight", {m.hiddenSize}, DType::F32, Init::ones());
  Tensor beta = t.parameter("bias", {m.hiddenSize}, DType::F32, Init::zeros());
  return layerNorm(x, gamma, beta, m.normEps);
}

/// GPT2Attention's scale in layer `layer`: 1/sqrt(D) unless
/// scale_attn_weights is false, divided by layer + 1 with
/// scale_attn_by_inverse_layer_idx; none when it is the op's default.
std::optional<double> attentionScale(const ModelConfig &m, int64_t layer) {
  if (m.scaleAttnWeights && !m.scaleAttnByInverseLayerIdx)
    return std::nullopt;
  double scale =
      m.scaleAttnWeights ? 1.0 / std::sqrt(static_cast<double>(m.headDim()))
                         : 1.0;
  if (m.scaleAttnByInverseLayerIdx)
    scale /= static_cast<double>(layer + 1);
  return scale;
}

Tensor block(Tracer &t, Tensor x, const ModelConfig &m, int64_t layer) {
  int64_t width = m.hiddenSize;
  Init weights = Init::normal(0.02);
  Init residual = Init::normal(0.02 / std::sqrt(2.0 * m.numLayers));

  Tensor h = layerNormScope(t, "ln_1", x, m);
  {
    auto attn = t.scope("attn");
    Tensor qkv;
    {
      auto s = t.scope("c_attn");
      qkv = linear(t, h, width, 3 * width, WeightLayout::InOut, true, weights,
                   LinearSplit::column(/*groups=*/3));
    }
    Tensor q = splitHeads(sliceDim(qkv, -1, 0, width), m.numHeads);
    Tensor k = splitHeads(sliceDim(qkv, -1, width, width), m.numHeads);
    Tensor v = splitHeads(sliceDim(qkv, -1, 2 * width, width), m.numHeads);
    Tensor a = mergeHeads(
        attention(q, k, v, /*causal=*/true, attentionScale(m, layer)));
    auto s = t.scope("c_proj");
    h = linear(t, a, width, width, WeightLayout::InOut, true, residual,
               LinearSplit::row());
  }
  x = x + h;

  h = layerNormScope(t, "ln_2", x, m);
  {
    auto mlp = t.scope("mlp");
    {
      auto s = t.scope("c_fc");
      h = linear(t, h, width, m.intermediateSize, WeightLayout::InOut, true,
                 weights, LinearSplit::column());
    }
    h = gelu(h, m.exactGelu ? GeluApprox::Erf : GeluApprox::Tanh);
    auto s = t.scope("c_proj");
    h = linear(t, h, m.intermediateSize, width, WeightLayout::InOut, true,
               residual, LinearSplit::row());
  }
  return x + h;
}

} // namespace

Tensor traceGpt2(Tracer &t, const ModelConfig &m, int64_t batchSize,
                 int64_t seqLen, ModelOutput output) {
  Tensor tokens = t.input("tokens", {batchSize, seqLen}, DType::I32);
  Tensor targets;
  if (output == ModelOutput::Loss)
    targets = t.input("targets", {batchSize, seqLen}, DType::I32);

  Tensor wte, x;
  {
    auto transformer = t.scope("transformer");
    {
      auto s = t.scope("wte");
      // Vocabulary-parallel: each tp rank holds a slice of the rows (and
      // of the tied head's logits).
      wte = t.parameter("weight", {m.vocabSize, m.hiddenSize}, DType::F32,
                        Init::normal(0.02), TensorParallelSplit::along(0));
      x = embedding(wte, tokens);
    }
    {
      auto s = t.scope("wpe");
      Tensor wpe = t.parameter("weight", {m.maxPositions, m.hiddenSize},
                               DType::F32, Init::normal(0.01));
      Tensor positions = t.iota({seqLen}, 0);
      x = x + embedding(wpe, positions);
    }
    for (int64_t layer = 0; layer < m.numLayers; ++layer) {
      auto s = t.scope("h." + std::to_string(layer));
      x = block(t, x, m, layer);
    }
    x = layerNormScope(t, "ln_f", x, m);
  }
  Tensor logits;
  {
    // The head shares the token embedding (tied weights).
    auto s = t.scope("lm_head");
    logits = classifier(t, x, wte, m, output);
  }
  if (output == ModelOutput::Logits)
    return logits;
  auto s = t.scope("loss");
  return crossEntropy(logits, targets);
}

} // namespace llmc
