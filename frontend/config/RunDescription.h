//===- RunDescription.h - what the user asked llmc to train -----*- C++ -*-===//
//
// The parsed form of a run description (a TOML file, docs/run-description.md)
// or of a Hugging Face config.json. Parsing checks types, ranges and the
// consistency of the model's sizes, and reports each problem with the file,
// line and column and how to fix it. Nothing here depends on MLIR: the model
// builders (frontend/models) turn a ModelConfig into IR.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_CONFIG_RUNDESCRIPTION_H
#define LLMC_FRONTEND_CONFIG_RUNDESCRIPTION_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmc {

enum class ModelFamily { Gpt2, Llama, Moe };

/// The name used in run descriptions: "gpt2", "llama", "moe".
const char *modelFamilyName(ModelFamily family);

/// Where a value came from, for messages about it.
struct SourceLocation {
  std::string file;
  int line = 0;   ///< 1-based; 0 when unknown
  int column = 0; ///< 1-based; 0 when unknown
};

/// LLaMA 3's rope scaling (config.json `rope_scaling` or `rope_parameters`
/// with `"rope_type": "llama3"`): the low frequencies are divided by
/// `factor`, the high ones kept, those between interpolated (transformers'
/// `_compute_llama3_parameters`; ropeInverseFrequencies).
struct RopeScaling {
  bool llama3 = false;
  double factor = 1.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  int64_t originalMaxPositions = 0;
};

/// A non-zero dropout probability of a config.json (`resid_pdrop`,
/// `attention_dropout`, ...). llmc has no dropout: training refuses it
/// (trainingRefusals), evaluation and generation (dropout off) accept it.
struct DropoutSetting {
  std::string key;
  double probability = 0.0;
  SourceLocation location;
  /// The file does not set the key: `probability` is transformers' default.
  bool defaulted = false;
};

/// Sizes and constants of a model. Fields a family does not use keep their
/// defaults and are ignored by its builder.
/// What the loaders pad the classifier's width to (ModelConfig::
/// vocabPadMultiple): 64 elements keep every row of bf16 or f16 logits 16-byte
/// aligned, as cuBLASLt's fast kernels need, and GPT-2's 50257 becomes
/// llm.c's 50304.
constexpr int64_t kVocabPadMultiple = 64;

struct ModelConfig {
  ModelFamily family = ModelFamily::Gpt2;
  int64_t vocabSize = 0;
  int64_t numLayers = 0;
  int64_t hiddenSize = 0;       ///< width of the residual stream
  int64_t numHeads = 0;
  int64_t numKvHeads = 0;       ///< llama/moe; equals numHeads for gpt2
  int64_t intermediateSize = 0; ///< MLP width (gpt2: 4 * hiddenSize)
  int64_t maxPositions = 0;     ///< gpt2: learned position table rows
  double normEps = 1e-5;
  double ropeTheta = 10000.0;   ///< llama/moe
  bool tieEmbeddings = true;    ///< gpt2 always ties; llama/moe optional
  int64_t numExperts = 0;       ///< moe
  int64_t expertsPerToken = 0;  ///< moe: top-k
  double capacityFactor = 1.25; ///< moe: expert capacity = ceil(cf * N * k / E)
  double auxLossWeight = 0.01;  ///< moe: load-balancing loss coefficient
  /// llama/moe: config.json's head_dim when it is not hiddenSize /
  /// numHeads (q/k/v project to numHeads * headDim); 0: derived.
  int64_t headDimension = 0;
  bool attentionBias = false; ///< llama: q, k, v and o projections with bias
  bool mlpBias = false;       ///< llama: gate, up and down with bias
  RopeScaling ropeScaling;    ///< llama/moe
  /// gpt2: attention scores scaled by 1/sqrt(head_dim) (scale_attn_weights)
  /// and, in layer i, by 1/(i + 1) (scale_attn_by_inverse_layer_idx).
  bool scaleAttnWeights = true;
  bool scaleAttnByInverseLayerIdx = false;
  /// gpt2: activation_function "gelu" (erf) instead of the tanh form.
  bool exactGelu = false;
  /// Dropout probabilities above 0 in config.json (training refuses them).
  std::vector<DropoutSetting> dropout;
  /// The Hugging Face config.json the sizes came from, if any.
  std::string hfConfigPath;
  /// An HF model folder ([model] hf, or `llmc train DIR`): the initial
  /// weights are its safetensors files; empty: initializers.
  std::string hfDirectory;
  /// The folder's tokenizer.json and generation_config.json, when present
  /// (the data's tokenizer defaults to the model's).
  std::string tokenizerPath;
  std::string generationConfigPath;
  /// Whether a weight file's tensors that the model does not use are an
  /// error ([model] strict, default true) or a warning.
  bool strictWeights = true;
  /// The classifier's GEMMs run at the vocabulary rounded up to a multiple
  /// of this (frontend/models/Layers.h, `classifier`); 1: at vocabSize.
  /// The loaders set it (kVocabPadMultiple unless tensor parallelism may
  /// split the vocabulary); the parameters keep vocabSize rows either way.
  int64_t vocabPadMultiple = 1;

  int64_t headDim() const {
    if (headDimension > 0)
      return headDimension;
    return numHeads ? hiddenSize / numHeads : 0;
  }
};

enum class LrSchedule { Cosine, Linear, Constant };
enum class PrecisionPolicy { Fp32, Bf16, Fp16, Fp8 };
enum class RematPolicy { None, Selective, Full, Auto };
enum class PipelineSchedule { GPipe, OneFOneB, Interleaved };
enum class DataFormat { Auto, Tokens, U16, Text };

struct TrainConfig {
  int64_t batchSize = 8;
  int64_t seqLen = 64;
  int64_t steps = 100;
  double learningRate = 3e-4;
  double minLearningRate = 0.0;
  int64_t warmupSteps = 0;
  LrSchedule schedule = LrSchedule::Cosine;
  double weightDecay = 0.1;
  /// Decay biases, norm weights and embeddings too (default: only the
  /// other matrices).
  bool decayAll = false;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double epsilon = 1e-8;
  double gradClip = 1.0; ///< 0 disables clipping
  int64_t microbatches = 1;
  uint64_t seed = 1337;
  int64_t logEvery = 1;
};

struct PrecisionConfig {
  PrecisionPolicy policy = PrecisionPolicy::Fp32;
  double initialLossScale = 65536.0; ///< fp16 only
  int64_t lossScaleGrowthInterval = 2000;
};

struct ParallelConfig {
  std::string devices = "auto"; ///< "auto", "cpu", "cpu:N", "cuda", "cuda:N"
  bool autoMesh = false;        ///< mesh = "auto"
  int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  bool sequenceParallel = false;
  int64_t zero = 0;
  PipelineSchedule pipelineSchedule = PipelineSchedule::OneFOneB;
  int64_t virtualStages = 1;
  /// pipeline_boundaries: the first layer of every model chunk after the
  /// first (pp x virtual_stages - 1 of them); empty: balanced by cost.
  std::vector<int64_t> pipelineBoundaries;
};

struct MemoryConfig {
  double budgetGiB = 0.0; ///< 0: the device's memory
  RematPolicy remat = RematPolicy::None;
};

struct DataConfig {
  /// Training data: files or glob patterns, resolved against the run
  /// description's directory (`train`, or its one-file shorthand `path`);
  /// empty: the built-in corpus.
  std::vector<std::string> train;
  /// Validation data, likewise (`val`; `validation_path` is its old name).
  std::vector<std::string> val;
  /// Auto: `.bin` files are llm.c shards, anything else text.
  DataFormat format = DataFormat::Auto;
  /// A Hugging Face tokenizer.json: text data is encoded with it and the
  /// sample decoded; empty: text is bytes.
  std::string tokenizer;
  /// Shuffled sequence windows (a permutation per epoch from train.seed) or
  /// llm.c's consecutive order.
  bool shuffle = true;
};

struct EvalConfig {
  int64_t every = 0;  ///< steps between validations; 0: only at the end
  int64_t steps = 20; ///< batches per validation
};

struct CheckpointConfig {
  std::string directory;
  int64_t every = 0; ///< steps; 0: only at the end
  int64_t keep = 2;
};

/// One message about the input: "file:line:col: error: message".
struct ConfigDiagnostic {
  enum class Severity { Error, Warning, Note };
  Severity severity = Severity::Error;
  SourceLocation location;
  std::string message;

  /// Formats as compilers do: `path:line:col: error: message`.
  std::string format() const;
};

/// A field that was given but has no effect yet, with the issue that adds it.
struct PendingField {
  SourceLocation location;
  std::string key;   ///< "parallel.tp"
  std::string issue; ///< "#8"
};

struct RunDescription {
  std::string path;
  ModelConfig model;
  TrainConfig train;
  PrecisionConfig precision;
  ParallelConfig parallel;
  MemoryConfig memory;
  DataConfig data;
  EvalConfig eval;
  CheckpointConfig checkpoint;
  /// Fields set to a non-default value that later issues implement.
  std::vector<PendingField> pending;
};

/// The outcome of parsing: a description, or the errors that prevent one.
/// Warnings may accompany a success.
struct ParseOutcome {
  std::optional<RunDescription> description;
  std::vector<ConfigDiagnostic> diagnostics;
  bool ok() const { return description.has_value(); }
};

/// Parses the run description at `path`. Relative paths inside it
/// (hf_config, data, checkpoint) are resolved against its directory.
ParseOutcome parseRunDescription(const std::string &path);

/// Parses TOML text as if it were the file `path` (for tests and tools).
ParseOutcome parseRunDescriptionText(const std::string &text,
                                     const std::string &path);

/// Reads a Hugging Face config.json (model_type gpt2, llama, mixtral) into a
/// ModelConfig. Errors name the file and the key.
struct HfOutcome {
  std::optional<ModelConfig> model;
  std::vector<ConfigDiagnostic> diagnostics;
};
HfOutcome parseHuggingFaceConfig(const std::string &path);
HfOutcome parseHuggingFaceConfigText(const std::string &text,
                                     const std::string &path);

/// Reads a Hugging Face model folder: DIR/config.json as
/// parseHuggingFaceConfig does, and records the folder (its weights:
/// model.safetensors or the shards of model.safetensors.index.json, which
/// must be there), tokenizer.json and generation_config.json.
HfOutcome parseHuggingFaceFolder(const std::string &directory);

/// The D/2 inverse frequencies of a scaled rope (LLaMA 3's), in double, as
/// transformers' `_compute_llama3_parameters` computes them from theta, the
/// head dimension and the scaling; empty for an unscaled rope (the op's own
/// theta^(-2i/D)).
std::vector<double> ropeInverseFrequencies(const ModelConfig &model);

/// What a model's config asks for that llmc cannot train (today: dropout
/// above 0, Mixtral's router jitter), each an error at its key with the
/// fix; empty when it can be trained. Evaluation and generation accept it.
std::vector<ConfigDiagnostic>
trainingRefusals(const ModelConfig &model);

/// A config.json for `model` that transformers' AutoConfig reads
/// (GPT2LMHeadModel, LlamaForCausalLM, MixtralForCausalLM): the keys of
/// the config.json it came from, when there is one, with llmc's values
/// for everything that defines the model, and `torch_dtype` = `dtype`
/// ("float32", "bfloat16", "float16"). Fails (and says why in `error`)
/// when the original file cannot be read.
bool writeHuggingFaceConfig(const ModelConfig &model, const std::string &dtype,
                            std::string &json, std::string &error);

/// Checks the sizes of a model for consistency (heads divide the width, kv
/// heads divide heads, an even head dimension for rope, k <= experts, ...).
/// `where` locates the messages (the [model] table or the config.json).
std::vector<ConfigDiagnostic> validateModel(const ModelConfig &model,
                                            const SourceLocation &where);

} // namespace llmc

#endif // LLMC_FRONTEND_CONFIG_RUNDESCRIPTION_H
