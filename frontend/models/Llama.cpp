//===- Llama.cpp - LLaMA: RMSNorm, RoPE, SwiGLU, grouped-query attention ---===//
//
// Names follow Hugging Face's LlamaForCausalLM (torch.nn.Linear weights
// stored [out, in], biases only with attention_bias / mlp_bias); the head is
// untied unless configured. head_dim may differ from hidden / heads, and a
// scaled rope (LLaMA 3) passes its per-pair frequencies to llmc.rope.
//
//===----------------------------------------------------------------------===//

#include "frontend/models/Layers.h"
#include "frontend/models/Models.h"

#include <string>
#include <vector>

namespace llmc {

Tensor llamaRmsNorm(Tracer &t, Tensor x, const ModelConfig &m) {
  Tensor gamma = t.parameter("weight", {m.hiddenSize}, DType::F32, Init::ones());
  return rmsNorm(x, gamma, m.normEps);
}

Tensor llamaSelfAttention(Tracer &t, Tensor x, const ModelConfig &m) {
  int64_t width = m.hiddenSize, headDim = m.headDim();
  int64_t qWidth = m.numHeads * headDim, kvWidth = m.numKvHeads * headDim;
  Init init = Init::normal(0.02);
  // Megatron: q, k and v column-parallel (each rank holds whole heads), o
  // row-parallel.
  auto projection = [&](llvm::StringRef name, Tensor input, int64_t in,
                        int64_t out, LinearSplit split) {
    auto s = t.scope(name);
    return linear(t, input, in, out, WeightLayout::OutIn, m.attentionBias,
                  init, split);
  };
  LinearSplit column = LinearSplit::column();
  Tensor q =
      splitHeads(projection("q_proj", x, width, qWidth, column), m.numHeads);
  Tensor k =
      splitHeads(projection("k_proj", x, width, kvWidth, column), m.numKvHeads);
  Tensor v =
      splitHeads(projection("v_proj", x, width, kvWidth, column), m.numKvHeads);
  std::vector<double> invFreq = ropeInverseFrequencies(m);
  q = rope(q, m.ropeTheta, Tensor(), invFreq);
  k = rope(k, m.ropeTheta, Tensor(), invFreq);
  Tensor a = mergeHeads(attention(q, k, v, /*causal=*/true));
  return projection("o_proj", a, qWidth, width, LinearSplit::row());
}

Tensor
traceLlamaTrunk(Tracer &t, const ModelConfig &m, int64_t batchSize,
                int64_t seqLen, ModelOutput output,
                llvm::function_ref<Tensor(Tracer &, Tensor, int64_t)> ffn) {
  Tensor tokens = t.input("tokens", {batchSize, seqLen}, DType::I32);
  Tensor targets;
  if (output == ModelOutput::Loss)
    targets = t.input("targets", {batchSize, seqLen}, DType::I32);

  Tensor table, x;
  {
    auto model = t.scope("model");
    {
      auto s = t.scope("embed_tokens");
      // Vocabulary-parallel, as the untied head below.
      table = t.parameter("weight", {m.vocabSize, m.hiddenSize}, DType::F32,
                          Init::normal(0.02), TensorParallelSplit::along(0));
      x = embedding(table, tokens);
    }
    for (int64_t layer = 0; layer < m.numLayers; ++layer) {
      auto s = t.scope("layers." + std::to_string(layer));
      Tensor h;
      {
        auto norm = t.scope("input_layernorm");
        h = llamaRmsNorm(t, x, m);
      }
      {
        auto attn = t.scope("self_attn");
        x = x + llamaSelfAttention(t, h, m);
      }
      {
        auto norm = t.scope("post_attention_layernorm");
        h = llamaRmsNorm(t, x, m);
      }
      x = x + ffn(t, h, layer);
    }
    auto norm = t.scope("norm");
    x = llamaRmsNorm(t, x, m);
  }
  Tensor logits;
  {
    auto s = t.scope("lm_head");
    Tensor head = m.tieEmbeddings
                      ? table
                      : t.parameter("weight", {m.vocabSize, m.hiddenSize},
                                    DType::F32, Init::normal(0.02),
                                    TensorParallelSplit::along(0));
    logits = classifier(t, x, head, m, output);
  }
  if (output == ModelOutput::Logits)
    return logits;
  auto s = t.scope("loss");
  return crossEntropy(logits, targets);
}

Tensor traceLlama(Tracer &t, const ModelConfig &m, int64_t batchSize,
                  int64_t seqLen, ModelOutput output) {
  auto mlp = [&](Tracer &tr, Tensor h, int64_t) {
    auto s = tr.scope("mlp");
    return swigluMlp(tr, h, m.hiddenSize, m.intermediateSize,
                     {"gate_proj", "up_proj", "down_proj"},
                     TensorParallelLayout::Megatron, m.mlpBias);
  };
  return traceLlamaTrunk(t, m, batchSize, seqLen, output, mlp);
}

} // namespace llmc
