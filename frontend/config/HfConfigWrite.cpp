//===- HfConfigWrite.cpp - a config.json that transformers reads ----------===//
//
// The config.json of `llmc export` (and of every checkpoint): the model's
// sizes and constants under the Hugging Face keys of GPT2Config,
// LlamaConfig and MixtralConfig, so that AutoConfig and
// AutoModelForCausalLM.from_pretrained rebuild the same model. A model that
// came from a config.json keeps that file's other keys (token ids, the
// transformers version, ...); llmc's values replace the ones that define
// the model. The rope is written the transformers 4 way (`rope_theta`,
// `rope_scaling`), which transformers 5 reads too (it converts them into
// `rope_parameters`), so `rope_parameters` is dropped.
//
//===----------------------------------------------------------------------===//
#include "frontend/config/ConfigDetail.h"
#include "frontend/config/RunDescription.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace llmc {

namespace json = llvm::json;

namespace {

void writeGpt2(const ModelConfig &m, json::Object &c) {
  c["model_type"] = "gpt2";
  c["architectures"] = json::Array{"GPT2LMHeadModel"};
  c["n_embd"] = m.hiddenSize;
  c["n_layer"] = m.numLayers;
  c["n_head"] = m.numHeads;
  c["n_positions"] = m.maxPositions;
  if (c.get("n_ctx"))
    c["n_ctx"] = m.maxPositions;
  c["n_inner"] = m.intermediateSize == 4 * m.hiddenSize
                     ? json::Value(nullptr)
                     : json::Value(m.intermediateSize);
  c["layer_norm_epsilon"] = m.normEps;
  // Keep the file's name of the tanh GELU (gelu_new, gelu_fast, ...).
  const json::Value *act = c.get("activation_function");
  bool tanhNamed = act && act->getAsString() && *act->getAsString() != "gelu";
  if (m.exactGelu)
    c["activation_function"] = "gelu";
  else if (!tanhNamed)
    c["activation_function"] = "gelu_new";
  c["scale_attn_weights"] = m.scaleAttnWeights;
  c["scale_attn_by_inverse_layer_idx"] = m.scaleAttnByInverseLayerIdx;
  // Dropout is a training setting: a model of llmc's own trains without.
  for (const char *key : {"embd_pdrop", "attn_pdrop", "resid_pdrop"})
    if (!c.get(key))
      c[key] = 0.0;
}

void writeLlama(const ModelConfig &m, json::Object &c) {
  bool mixtral = m.family == ModelFamily::Moe;
  c["model_type"] = mixtral ? "mixtral" : "llama";
  c["architectures"] =
      json::Array{mixtral ? "MixtralForCausalLM" : "LlamaForCausalLM"};
  c["hidden_size"] = m.hiddenSize;
  c["intermediate_size"] = m.intermediateSize;
  c["num_hidden_layers"] = m.numLayers;
  c["num_attention_heads"] = m.numHeads;
  c["num_key_value_heads"] = m.numKvHeads;
  c["head_dim"] = m.headDim();
  c["max_position_embeddings"] = m.maxPositions;
  c["rms_norm_eps"] = m.normEps;
  c["hidden_act"] = "silu";
  c["rope_theta"] = m.ropeTheta;
  c.erase("rope_parameters");
  if (m.ropeScaling.llama3)
    c["rope_scaling"] = json::Object{
        {"rope_type", "llama3"},
        {"factor", m.ropeScaling.factor},
        {"low_freq_factor", m.ropeScaling.lowFreqFactor},
        {"high_freq_factor", m.ropeScaling.highFreqFactor},
        {"original_max_position_embeddings",
         m.ropeScaling.originalMaxPositions}};
  else
    c["rope_scaling"] = nullptr;
  if (!c.get("attention_dropout"))
    c["attention_dropout"] = 0.0;
  if (mixtral) {
    c["num_local_experts"] = m.numExperts;
    c["num_experts_per_tok"] = m.expertsPerToken;
    c["router_aux_loss_coef"] = m.auxLossWeight;
    if (!c.get("sliding_window"))
      c["sliding_window"] = nullptr;
  } else {
    c["attention_bias"] = m.attentionBias;
    c["mlp_bias"] = m.mlpBias;
  }
}

} // namespace

bool writeHuggingFaceConfig(const ModelConfig &model, const std::string &dtype,
                            std::string &text, std::string &error) {
  json::Object config;
  if (!model.hfConfigPath.empty()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        llvm::MemoryBuffer::getFile(model.hfConfigPath, /*IsText=*/true);
    if (!buffer) {
      error = "cannot read " + model.hfConfigPath + ": " +
              buffer.getError().message();
      return false;
    }
    if (config_detail::jsonTooDeep((*buffer)->getBuffer())) {
      error = model.hfConfigPath + " is no longer a JSON object of settings "
                                   "(nested too deep)";
      return false;
    }
    llvm::Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
    if (!parsed || !parsed->getAsObject()) {
      error = model.hfConfigPath + " is no longer a JSON object" +
              (parsed ? std::string()
                      : ": " + llvm::toString(parsed.takeError()));
      return false;
    }
    config = std::move(*parsed->getAsObject());
  }
  config["vocab_size"] = model.vocabSize;
  config["tie_word_embeddings"] = model.tieEmbeddings;
  config["torch_dtype"] = dtype;
  if (config.get("dtype"))
    config["dtype"] = dtype;
  config.erase("quantization_config");
  if (model.family == ModelFamily::Gpt2)
    writeGpt2(model, config);
  else
    writeLlama(model, config);
  text = llvm::formatv("{0:2}", json::Value(std::move(config))).str() + "\n";
  return true;
}

} // namespace llmc
