// Tests of what a Hugging Face config.json asks beyond the sizes (issue #23):
// the keys that change the numerics are implemented (head_dim, biases,
// LLaMA 3 rope scaling in both transformers 4's and 5's form, GPT-2's
// attention scaling and GELU) or refused with the fix, dropout is refused for
// training only, a model folder resolves to its config and files, and the
// config.json that export writes reads back as the same model. Every message
// is checked in full.
#include "frontend/config/RunDescription.h"
#include "test/compiler/ConfigTestSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace llmc;

namespace {

using Messages = std::vector<std::string>;

Messages format(const std::vector<ConfigDiagnostic> &diagnostics) {
  Messages messages;
  for (const ConfigDiagnostic &d : diagnostics)
    messages.push_back(d.format());
  return messages;
}

Messages jsonErrors(const std::string &text) {
  HfOutcome outcome = parseHuggingFaceConfigText(text, "config.json");
  EXPECT_FALSE(outcome.model.has_value());
  return format(outcome.diagnostics);
}

std::string replacedOnce(std::string text, const std::string &from,
                         const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

ModelConfig jsonClean(const std::string &text) {
  HfOutcome outcome = parseHuggingFaceConfigText(text, "config.json");
  EXPECT_EQ(format(outcome.diagnostics), Messages{});
  EXPECT_TRUE(outcome.model.has_value());
  return outcome.model ? *outcome.model : ModelConfig{};
}

// One line per key so that the messages' positions are easy to read: line
// N + 1 is the N-th key. `extra` goes after the last key (its own lines).
std::string llama(const std::string &extra = "",
                  const std::string &type = "llama") {
  return "{\n"                                          // 1
         "  \"model_type\": \"" + type + "\",\n"        // 2
         "  \"hidden_size\": 128,\n"                    // 3
         "  \"intermediate_size\": 344,\n"              // 4
         "  \"num_hidden_layers\": 2,\n"                // 5
         "  \"num_attention_heads\": 8,\n"              // 6
         "  \"num_key_value_heads\": 2,\n"              // 7
         "  \"vocab_size\": 256,\n"                     // 8
         + (type == "mixtral" ? "  \"num_local_experts\": 4,\n"
                                "  \"num_experts_per_tok\": 2,\n"
                              : "  \"rms_norm_eps\": 1e-6,\n"
                                "  \"tie_word_embeddings\": false,\n") + // 9, 10
         "  \"max_position_embeddings\": 256" +         // 11
         (extra.empty() ? "" : ",\n" + extra) + "\n}\n";
}

std::string gpt2(const std::string &extra = "") {
  return "{\n"                          // 1
         "  \"model_type\": \"gpt2\",\n" // 2
         "  \"n_embd\": 64,\n"           // 3
         "  \"n_head\": 4,\n"            // 4
         "  \"n_layer\": 2,\n"           // 5
         "  \"n_positions\": 64,\n"      // 6
         "  \"vocab_size\": 128" +       // 7
         (extra.empty() ? "" : ",\n" + extra) + "\n}\n";
}

const std::string kNoDropout = "  \"embd_pdrop\": 0.0,\n"   // 8
                               "  \"attn_pdrop\": 0.0,\n"   // 9
                               "  \"resid_pdrop\": 0.0";    // 10

//===----------------------------------------------------------------------===//
// Attention and MLP shapes
//===----------------------------------------------------------------------===//

TEST(HfNumerics, HeadDimOtherThanWidthOverHeads) {
  ModelConfig m = jsonClean(llama("  \"head_dim\": 64"));
  EXPECT_EQ(m.headDimension, 64);
  EXPECT_EQ(m.headDim(), 64);
  // The derived one is not recorded: the model is the usual one.
  EXPECT_EQ(jsonClean(llama("  \"head_dim\": 16")).headDimension, 0);
  EXPECT_EQ(jsonErrors(llama("  \"head_dim\": 15")),
            Messages{"config.json:12:3: error: expected an even head_dim > 0 "
                     "(rope rotates pairs of channels), got 15; set head_dim "
                     "to an even size"});
}

TEST(HfBounds, SizesNear2To63AreRefusedWhereRead) {
  // n_embd ~ 2^62: the default n_inner, 4 * n_embd, overflowed int64 (a
  // fuzzer's find, test/fuzz/regressions/hf-config/).
  EXPECT_EQ(jsonErrors(replacedOnce(gpt2(), "\"n_embd\": 64",
                                    "\"n_embd\": 5124095576030430990")),
            Messages{"config.json:3:3: error: expected n_embd at most 16777216, "
                     "got 5124095576030430990; llmc bounds a model's sizes at "
                     "2^24 and its counts (layers, heads, experts) at 2^16, "
                     "far beyond any released model: correct the value"});
  EXPECT_EQ(jsonErrors(replacedOnce(llama(), "\"num_hidden_layers\": 2",
                                    "\"num_hidden_layers\": 65537")),
            Messages{"config.json:5:3: error: expected num_hidden_layers at "
                     "most 65536, got 65537; llmc bounds a model's sizes at "
                     "2^24 and its counts (layers, heads, experts) at 2^16, "
                     "far beyond any released model: correct the value"});
}

TEST(HfBounds, ModelsBeyond2To48ParametersAreRefused) {
  // Each size within its bound, their product not: 2^16 layers of width
  // 2^14 and MLP 2^20 is about 2^54 parameters.
  std::string text = replacedOnce(llama(), "\"num_hidden_layers\": 2",
                                  "\"num_hidden_layers\": 65536");
  text = replacedOnce(text, "\"hidden_size\": 128", "\"hidden_size\": 16384");
  text = replacedOnce(text, "\"intermediate_size\": 344",
                      "\"intermediate_size\": 1048576");
  Messages messages = jsonErrors(text);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("config.json:5:3: error: expected a model of at "
                             "most 2^48 parameters, got about"),
            std::string::npos)
      << messages[0];
  // The largest released dense models are far inside the bound.
  jsonClean(replacedOnce(replacedOnce(llama(), "\"num_hidden_layers\": 2",
                                      "\"num_hidden_layers\": 126"),
                         "\"hidden_size\": 128", "\"hidden_size\": 16384"));
}

TEST(HfBounds, RopeOriginalPositionsBeyond2To24AreRefused) {
  // static_cast<int64_t>(1e300) was undefined behaviour.
  Messages messages = jsonErrors(llama(
      "  \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8, "
      "\"low_freq_factor\": 1, \"high_freq_factor\": 4, "
      "\"original_max_position_embeddings\": 1e300}"));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("original_max_position_embeddings (at most 2^24), "
                             "got factor 8"),
            std::string::npos)
      << messages[0];
}

TEST(HfNumerics, HeadDimLetsHeadsNotDivideTheWidth) {
  ModelConfig m = jsonClean(
      replacedOnce(llama("  \"head_dim\": 32"), "\"num_attention_heads\": 8",
                   "\"num_attention_heads\": 6"));
  EXPECT_EQ(m.numHeads, 6);
  EXPECT_EQ(m.headDim(), 32);
}

TEST(HfNumerics, AttentionAndMlpBiases) {
  ModelConfig m =
      jsonClean(llama("  \"attention_bias\": true,\n  \"mlp_bias\": true"));
  EXPECT_TRUE(m.attentionBias);
  EXPECT_TRUE(m.mlpBias);
  ModelConfig plain = jsonClean(llama());
  EXPECT_FALSE(plain.attentionBias);
  EXPECT_FALSE(plain.mlpBias);
}

TEST(HfNumerics, OtherActivationsAreRefused) {
  EXPECT_EQ(jsonErrors(llama("  \"hidden_act\": \"gelu\"")),
            Messages{"config.json:12:3: error: expected hidden_act \"silu\" "
                     "(SwiGLU), got \"gelu\"; llmc's llama implements SwiGLU "
                     "only"});
  EXPECT_EQ(jsonErrors(gpt2("  \"activation_function\": \"relu\"")),
            Messages{"config.json:8:3: error: expected activation_function "
                     "\"gelu_new\" (the tanh GELU, also \"gelu_fast\" and "
                     "\"gelu_pytorch_tanh\") or \"gelu\" (erf), got \"relu\"; "
                     "llmc's gpt2 implements these two GELUs only"});
}

TEST(HfNumerics, Gpt2AttentionScalingAndGelu) {
  ModelConfig plain = jsonClean(gpt2());
  EXPECT_TRUE(plain.scaleAttnWeights);
  EXPECT_FALSE(plain.scaleAttnByInverseLayerIdx);
  EXPECT_FALSE(plain.exactGelu);
  ModelConfig m = jsonClean(gpt2("  \"scale_attn_weights\": false,\n"
                                 "  \"scale_attn_by_inverse_layer_idx\": true,\n"
                                 "  \"reorder_and_upcast_attn\": true,\n"
                                 "  \"activation_function\": \"gelu\""));
  EXPECT_FALSE(m.scaleAttnWeights);
  EXPECT_TRUE(m.scaleAttnByInverseLayerIdx);
  EXPECT_TRUE(m.exactGelu);
  EXPECT_FALSE(
      jsonClean(gpt2("  \"activation_function\": \"gelu_pytorch_tanh\""))
          .exactGelu);
}

TEST(HfNumerics, CrossAttentionQuantizationAndSlidingWindowAreRefused) {
  EXPECT_EQ(jsonErrors(gpt2("  \"add_cross_attention\": true")),
            Messages{"config.json:8:3: error: expected add_cross_attention to "
                     "be false, got true; llmc's gpt2 is a decoder without an "
                     "encoder to attend to: set it to false"});
  EXPECT_EQ(jsonErrors(llama("  \"quantization_config\": {\"quant_method\": "
                             "\"gptq\", \"bits\": 4}")),
            Messages{"config.json:12:3: error: expected an unquantized model, "
                     "got quantization_config (quant_method \"gptq\"); llmc "
                     "loads f32, bf16 and f16 weights only: use the model's "
                     "unquantized release"});
  EXPECT_EQ(jsonErrors(llama("  \"sliding_window\": 64", "mixtral")),
            Messages{"config.json:12:3: error: expected sliding_window to be "
                     "null or at least max_position_embeddings 256, got 64; "
                     "llmc attends to the whole context: set it to null (the "
                     "same model for sequences up to 64 tokens)"});
  jsonClean(llama("  \"sliding_window\": null", "mixtral"));
  jsonClean(llama("  \"sliding_window\": 4096", "mixtral"));
}

//===----------------------------------------------------------------------===//
// Rope
//===----------------------------------------------------------------------===//

const std::string kLlama3Scaling =
    "{\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0, "
    "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 64}";

// transformers' _compute_llama3_parameters on theta 500000, head_dim 16,
// factor 8, low/high frequency factors 1 and 4, an original context of 64
// (wavelengths 6.3, 32.4, 167, ...: one pair kept, one interpolated, the
// others divided by 8), computed with its torch expressions in float64 by
// numpy.
const std::vector<double> kLlama3Expected = {
    1.0,                    0.0794030091792082,    0.004700753866357992,
    0.0009115830921521386,  0.00017677669529663688, 3.428102195952591e-05,
    6.647869871181236e-06,  1.2891731721515574e-06};

void expectFrequencies(const ModelConfig &m) {
  std::vector<double> f = ropeInverseFrequencies(m);
  ASSERT_EQ(f.size(), kLlama3Expected.size());
  for (size_t i = 0; i < f.size(); ++i)
    EXPECT_NEAR(f[i], kLlama3Expected[i], 1e-15 * kLlama3Expected[i])
        << "pair " << i;
}

TEST(HfRope, Llama3ScalingTransformers4) {
  ModelConfig m = jsonClean(llama("  \"rope_theta\": 500000.0,\n"
                                  "  \"rope_scaling\": " +
                                  kLlama3Scaling));
  EXPECT_TRUE(m.ropeScaling.llama3);
  EXPECT_DOUBLE_EQ(m.ropeScaling.factor, 8.0);
  EXPECT_EQ(m.ropeScaling.originalMaxPositions, 64);
  EXPECT_DOUBLE_EQ(m.ropeTheta, 500000.0);
  expectFrequencies(m);
}

TEST(HfRope, Llama3ScalingTransformers5) {
  // rope_parameters holds the theta too; no rope_theta at the top.
  std::string params = kLlama3Scaling;
  params.insert(1, "\"rope_theta\": 500000.0, ");
  ModelConfig m = jsonClean(llama("  \"rope_parameters\": " + params));
  EXPECT_DOUBLE_EQ(m.ropeTheta, 500000.0);
  expectFrequencies(m);
  ModelConfig plain = jsonClean(llama(
      "  \"rope_parameters\": {\"rope_theta\": 20000.0, \"rope_type\": "
      "\"default\"}"));
  EXPECT_FALSE(plain.ropeScaling.llama3);
  EXPECT_DOUBLE_EQ(plain.ropeTheta, 20000.0);
  EXPECT_TRUE(ropeInverseFrequencies(plain).empty());
}

TEST(HfRope, RopeScalingTakesThePlaceOfRopeParameters) {
  // As transformers 5 reads an old file: a non-null rope_scaling wins.
  ModelConfig m = jsonClean(llama(
      "  \"rope_theta\": 500000.0,\n  \"rope_scaling\": " + kLlama3Scaling +
      ",\n  \"rope_parameters\": {\"rope_type\": \"default\", \"rope_theta\": "
      "1.0}"));
  EXPECT_DOUBLE_EQ(m.ropeTheta, 500000.0);
  expectFrequencies(m);
}

TEST(HfRope, NoRopeTypeMeansTheDefault) {
  // transformers reads {"factor": 8} without a type as the default rope
  // (and warns about the unused key): the same frequencies here.
  ModelConfig m = jsonClean(llama("  \"rope_scaling\": {\"factor\": 8.0}"));
  EXPECT_FALSE(m.ropeScaling.llama3);
}

TEST(HfRope, OtherScalingsAreRefused) {
  EXPECT_EQ(jsonErrors(llama("  \"rope_scaling\": {\"rope_type\": \"yarn\", "
                             "\"factor\": 4.0}")),
            Messages{"config.json:12:3: error: expected rope_type \"default\" "
                     "or \"llama3\" in rope_scaling, got \"yarn\"; llmc "
                     "implements LLaMA 3's scaling only (linear, dynamic, "
                     "yarn, longrope and the others would rotate with other "
                     "frequencies than transformers)"});
  EXPECT_EQ(jsonErrors(llama("  \"rope_parameters\": {\"type\": \"linear\", "
                             "\"factor\": 2.0}")),
            Messages{"config.json:12:3: error: expected rope_type \"default\" "
                     "or \"llama3\" in rope_parameters, got \"linear\"; llmc "
                     "implements LLaMA 3's scaling only (linear, dynamic, "
                     "yarn, longrope and the others would rotate with other "
                     "frequencies than transformers)"});
}

TEST(HfRope, Llama3FieldsAreChecked) {
  EXPECT_EQ(jsonErrors(llama("  \"rope_scaling\": {\"rope_type\": \"llama3\", "
                             "\"factor\": 8.0, \"low_freq_factor\": 1.0, "
                             "\"high_freq_factor\": 4.0}")),
            Messages{"config.json:12:3: error: expected "
                     "rope_scaling.original_max_position_embeddings to be a "
                     "number for rope_type \"llama3\", got nothing; add "
                     "\"original_max_position_embeddings\" as transformers "
                     "writes it"});
  EXPECT_EQ(jsonErrors(llama("  \"rope_scaling\": {\"rope_type\": \"llama3\", "
                             "\"factor\": 8.0, \"low_freq_factor\": 4.0, "
                             "\"high_freq_factor\": 4.0, "
                             "\"original_max_position_embeddings\": 8192}")),
            Messages{"config.json:12:3: error: expected llama3 rope scaling "
                     "with factor > 0, 0 < low_freq_factor < high_freq_factor "
                     "and a positive integer original_max_position_embeddings "
                     "(at most 2^24), got factor 8, low_freq_factor 4, high_freq_factor 4, "
                     "original_max_position_embeddings 8192; use the values of "
                     "the model's release (Llama 3.1: 8, 1, 4, 8192)"});
  EXPECT_EQ(jsonErrors(llama("  \"rope_scaling\": [8.0]")),
            Messages{"config.json:12:3: error: expected rope_scaling to be an "
                     "object such as {\"rope_type\": \"llama3\", ...} or "
                     "null, got an array"});
}

TEST(HfRope, PartialRotaryFactorIsRefused) {
  EXPECT_EQ(jsonErrors(llama("  \"partial_rotary_factor\": 0.5")),
            Messages{"config.json:12:3: error: expected partial_rotary_factor "
                     "1 (rope on the whole head dimension), got 0.5; llmc "
                     "rotates every pair of the head: remove it"});
  jsonClean(llama("  \"partial_rotary_factor\": 1.0"));
}

//===----------------------------------------------------------------------===//
// Dropout: recorded, refused for training only
//===----------------------------------------------------------------------===//

TEST(HfDropout, Gpt2DefaultsAreTransformersDropout) {
  ModelConfig m = jsonClean(gpt2("  \"resid_pdrop\": 0.1"));
  ASSERT_EQ(m.dropout.size(), 3u);
  EXPECT_EQ(format(trainingRefusals(m)),
            (Messages{
                "config.json:1:1: error: expected embd_pdrop = 0 for "
                "training, got 0.1 (transformers' default: config.json does "
                "not set it); llmc does not implement dropout: add "
                "\"embd_pdrop\": 0.0 in config.json, or add dropout = 0.0 to "
                "[model] of the run description to train without it",
                "config.json:1:1: error: expected attn_pdrop = 0 for "
                "training, got 0.1 (transformers' default: config.json does "
                "not set it); llmc does not implement dropout: add "
                "\"attn_pdrop\": 0.0 in config.json, or add dropout = 0.0 to "
                "[model] of the run description to train without it",
                "config.json:8:3: error: expected resid_pdrop = 0 for "
                "training, got 0.1; llmc does not implement dropout: set "
                "\"resid_pdrop\": 0.0 in config.json, or add dropout = 0.0 to "
                "[model] of the run description to train without it"}));
  EXPECT_TRUE(trainingRefusals(jsonClean(gpt2(kNoDropout))).empty());
}

TEST(HfDropout, LlamaAndMixtral) {
  EXPECT_TRUE(trainingRefusals(jsonClean(llama())).empty());
  EXPECT_EQ(format(trainingRefusals(
                jsonClean(llama("  \"attention_dropout\": 0.2")))),
            Messages{"config.json:12:3: error: expected attention_dropout = 0 "
                     "for training, got 0.2; llmc does not implement dropout: "
                     "set \"attention_dropout\": 0.0 in config.json, or add "
                     "dropout = 0.0 to [model] of the run description to "
                     "train without it"});
  EXPECT_EQ(format(trainingRefusals(jsonClean(
                llama("  \"router_jitter_noise\": 0.01", "mixtral")))),
            Messages{"config.json:12:3: error: expected router_jitter_noise = "
                     "0 for training, got 0.01; llmc does not implement router "
                     "jitter: set \"router_jitter_noise\": 0.0 in config.json, "
                     "or add dropout = 0.0 to [model] of the run description "
                     "to train without it"});
  EXPECT_EQ(jsonErrors(llama("  \"attention_dropout\": 1.5")),
            Messages{"config.json:12:3: error: expected attention_dropout in "
                     "[0, 1], got 1.5; set it to 0.0"});
}

//===----------------------------------------------------------------------===//
// Model folders and run descriptions
//===----------------------------------------------------------------------===//

/// The parser tests' fresh directory (ConfigTestSupport.h), with model
/// folders in it.
class HfFolderTest : public config_test::ConfigFilesTest {
protected:
  /// A folder with config.json and (an empty stand-in for) its weights.
  void folder(const std::string &name, const std::string &config) {
    write(name + "/config.json", config);
    write(name + "/model.safetensors", "");
  }
  ParseOutcome parse(const std::string &toml) {
    return parseRunDescription(write("run.toml", toml));
  }
};

TEST_F(HfFolderTest, FolderGivesConfigWeightsTokenizerAndGeneration) {
  folder("gpt2", gpt2(kNoDropout));
  write("gpt2/tokenizer.json", "{}");
  write("gpt2/generation_config.json", "{}");
  ParseOutcome outcome =
      parse("[model]\nhf = \"gpt2\"\nstrict = false\n[train]\nseq_len = 32\n");
  ASSERT_TRUE(outcome.ok()) << format(outcome.diagnostics).front();
  const ModelConfig &m = outcome.description->model;
  EXPECT_EQ(m.hfDirectory, file("gpt2"));
  EXPECT_EQ(m.hfConfigPath, file("gpt2/config.json"));
  EXPECT_EQ(m.tokenizerPath, file("gpt2/tokenizer.json"));
  EXPECT_EQ(m.generationConfigPath, file("gpt2/generation_config.json"));
  EXPECT_FALSE(m.strictWeights);
  EXPECT_EQ(m.hiddenSize, 64);

  // Without the optional files, and sharded weights (the index alone).
  write("llama/config.json", llama());
  write("llama/model.safetensors.index.json", "{}");
  HfOutcome sharded = parseHuggingFaceFolder(file("llama"));
  ASSERT_TRUE(sharded.model.has_value());
  EXPECT_EQ(sharded.model->tokenizerPath, "");
  EXPECT_TRUE(sharded.model->strictWeights);
}

TEST_F(HfFolderTest, DropoutZeroTurnsTheConfigsDropoutOff) {
  folder("gpt2", gpt2());
  ParseOutcome kept = parse("[model]\nhf = \"gpt2\"\n[train]\nseq_len = 32\n");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(trainingRefusals(kept.description->model).size(), 3u);
  ParseOutcome off = parse(
      "[model]\nhf = \"gpt2\"\ndropout = 0.0\n[train]\nseq_len = 32\n");
  ASSERT_TRUE(off.ok());
  EXPECT_TRUE(trainingRefusals(off.description->model).empty());
  ParseOutcome bad =
      parse("[model]\nhf = \"gpt2\"\ndropout = 0.1\n[train]\nseq_len = 32\n");
  EXPECT_EQ(format(bad.diagnostics),
            Messages{file("run.toml") +
                     ":3:11: error: expected dropout = 0.0 (llmc trains "
                     "without dropout; the key turns config.json's off), got "
                     "0.1; set dropout = 0.0"});
}

TEST_F(HfFolderTest, KeysThatDoNotGoTogether) {
  folder("m", llama());
  write("m/c.json", llama());
  std::string run = file("run.toml");
  EXPECT_EQ(format(parse("[model]\nhf = \"m\"\nhf_config = \"m/c.json\"\n")
                       .diagnostics),
            Messages{run + ":3:13: error: expected either hf (a model folder: "
                           "config.json and the weights) or hf_config (a "
                           "config.json alone, random initial weights), got "
                           "both; remove one"});
  EXPECT_EQ(format(parse("[model]\nhf = \"m\"\nlayers = 4\n").diagnostics),
            Messages{run + ":3:10: error: expected either hf or family and "
                           "sizes, got both hf and layers; remove layers "
                           "(config.json gives it) or remove hf"});
  EXPECT_EQ(
      format(parse("[model]\nhf_config = \"m/c.json\"\nstrict = false\n")
                 .diagnostics),
      Messages{run + ":3:10: error: expected strict only with hf (it says how "
                     "a model folder's weights load), got it with hf_config; "
                     "remove strict or name the folder with hf"});
  EXPECT_EQ(format(parse("[model]\nfamily = \"gpt2\"\nvocab_size = 128\n"
                         "layers = 2\nwidth = 64\nheads = 4\n"
                         "max_positions = 64\ndropout = 0.0\n")
                       .diagnostics),
            Messages{run + ":8:11: error: expected dropout only with hf or "
                           "hf_config (a Hugging Face model), got it with "
                           "family; remove dropout"});
}

TEST_F(HfFolderTest, FoldersThatAreNotModels) {
  std::string run = file("run.toml");
  EXPECT_EQ(format(parse("[model]\nhf = \"nope\"\n").diagnostics),
            Messages{run + ":2:6: error: expected hf to name a Hugging Face "
                           "model folder, got \"nope\" (looked for '" +
                     file("nope") +
                     "'); fix the path, which is relative to this file's "
                     "directory"});
  write("empty/readme.txt", "");
  EXPECT_EQ(format(parseHuggingFaceFolder(file("empty")).diagnostics),
            Messages{file("empty") +
                     ": error: expected a Hugging Face model folder with "
                     "config.json, found none in '" +
                     file("empty") +
                     "'; download the whole model folder (config.json and "
                     "model.safetensors)"});
  // A config.json that is a folder is named as one, not reported missing.
  write("config-dir/config.json/readme.txt", "");
  EXPECT_EQ(format(parseHuggingFaceFolder(file("config-dir")).diagnostics),
            Messages{file("config-dir") + ": error: expected config.json in '" +
                     file("config-dir") + "' to be a file, but '" +
                     file("config-dir/config.json") +
                     "' is a directory or a device; replace it with the file "
                     "from the model's release"});
  write("weights-dir/config.json", llama());
  write("weights-dir/model.safetensors/readme.txt", "");
  EXPECT_EQ(format(parseHuggingFaceFolder(file("weights-dir")).diagnostics),
            Messages{file("weights-dir") +
                     ": error: expected model.safetensors in '" +
                     file("weights-dir") + "' to be a file, but '" +
                     file("weights-dir/model.safetensors") +
                     "' is a directory or a device; replace it with the file "
                     "from the model's release"});
  write("config-only/config.json", llama());
  EXPECT_EQ(format(parseHuggingFaceFolder(file("config-only")).diagnostics),
            Messages{file("config-only") +
                     ": error: expected weights in '" + file("config-only") +
                     "' (model.safetensors, or model.safetensors.index.json "
                     "and its shards), found none; download them, or name "
                     "the config alone with hf_config (random initial "
                     "weights)"});
  write("pickle/config.json", llama());
  write("pickle/pytorch_model.bin", "");
  EXPECT_EQ(format(parseHuggingFaceFolder(file("pickle")).diagnostics),
            Messages{file("pickle") + ": error: '" + file("pickle") +
                     "' holds pytorch_model.bin, which llmc does not read (a "
                     "pickle); save it as safetensors first "
                     "(model.save_pretrained(DIR, safe_serialization=True) "
                     "in transformers)"});
}

//===----------------------------------------------------------------------===//
// The config.json export writes
//===----------------------------------------------------------------------===//

/// Writes `m`'s config.json and reads it back.
ModelConfig roundTrip(const ModelConfig &m, const std::string &dtype,
                      llvm::json::Object *written = nullptr) {
  std::string text, error;
  EXPECT_TRUE(writeHuggingFaceConfig(m, dtype, text, error)) << error;
  if (written) {
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
    EXPECT_TRUE(static_cast<bool>(parsed));
    if (parsed && parsed->getAsObject())
      *written = *parsed->getAsObject();
  }
  return jsonClean(text);
}

TEST_F(HfFolderTest, WrittenConfigReadsBackAsTheSameModel) {
  // A llama with every implemented feature, from a config.json whose other
  // keys survive (token ids) and whose rope_parameters give way.
  std::string params = kLlama3Scaling;
  params.insert(1, "\"rope_theta\": 500000.0, ");
  std::string path = write(
      "llama/config.json",
      replacedOnce(llama("  \"head_dim\": 64,\n  \"attention_bias\": true,\n"
                         "  \"mlp_bias\": true,\n"
                         "  \"bos_token_id\": 7,\n  \"dtype\": \"bfloat16\",\n"
                         "  \"rope_parameters\": " +
                         params),
                   "\"tie_word_embeddings\": false",
                   "\"tie_word_embeddings\": true"));
  HfOutcome read = parseHuggingFaceConfig(path);
  ASSERT_TRUE(read.model.has_value()) << format(read.diagnostics).front();
  llvm::json::Object written;
  ModelConfig back = roundTrip(*read.model, "float32", &written);
  const ModelConfig &m = *read.model;
  EXPECT_EQ(back.family, ModelFamily::Llama);
  EXPECT_EQ(back.headDim(), 64);
  EXPECT_TRUE(back.attentionBias && back.mlpBias && back.tieEmbeddings);
  EXPECT_DOUBLE_EQ(back.ropeTheta, m.ropeTheta);
  EXPECT_EQ(ropeInverseFrequencies(back), ropeInverseFrequencies(m));
  EXPECT_EQ(back.numKvHeads, 2);
  EXPECT_DOUBLE_EQ(back.normEps, 1e-6);
  EXPECT_EQ(written.getInteger("bos_token_id"), 7);
  EXPECT_EQ(written.getString("torch_dtype"), "float32");
  EXPECT_EQ(written.getString("dtype"), "float32");
  EXPECT_EQ(written.get("rope_parameters"), nullptr);
  EXPECT_EQ(written.getArray("architectures")->front().getAsString(),
            "LlamaForCausalLM");

  // A gpt2 and a mixtral of llmc's own (no config.json behind them).
  ModelConfig g;
  g.family = ModelFamily::Gpt2;
  g.vocabSize = 128, g.numLayers = 2, g.hiddenSize = 64, g.numHeads = 4;
  g.numKvHeads = 4, g.intermediateSize = 256, g.maxPositions = 64;
  g.scaleAttnByInverseLayerIdx = true;
  ModelConfig gBack = roundTrip(g, "bfloat16", &written);
  EXPECT_EQ(gBack.intermediateSize, 256);
  EXPECT_TRUE(gBack.scaleAttnByInverseLayerIdx);
  EXPECT_TRUE(gBack.dropout.empty()); // written as 0: trainable again
  EXPECT_EQ(written.getString("activation_function"), "gelu_new");
  EXPECT_EQ(written.getString("torch_dtype"), "bfloat16");

  ModelConfig x;
  x.family = ModelFamily::Moe;
  x.vocabSize = 256, x.numLayers = 2, x.hiddenSize = 64, x.numHeads = 4;
  x.numKvHeads = 2, x.intermediateSize = 128, x.maxPositions = 128;
  x.numExperts = 4, x.expertsPerToken = 2, x.auxLossWeight = 0.02;
  x.ropeTheta = 1e6, x.tieEmbeddings = false;
  ModelConfig xBack = roundTrip(x, "float32", &written);
  EXPECT_EQ(xBack.family, ModelFamily::Moe);
  EXPECT_EQ(xBack.numExperts, 4);
  EXPECT_EQ(xBack.expertsPerToken, 2);
  EXPECT_DOUBLE_EQ(xBack.auxLossWeight, 0.02);
  EXPECT_DOUBLE_EQ(xBack.ropeTheta, 1e6);
  EXPECT_EQ(written.getArray("architectures")->front().getAsString(),
            "MixtralForCausalLM");
}

} // namespace

//===----------------------------------------------------------------------===//
// Limits (issue #27)
//===----------------------------------------------------------------------===//

// 50,000 nested arrays overflowed the stack in llvm::json's recursive parser
// (and in the destructor of the value it builds); the nesting is capped at
// 256 levels before the text reaches it, as toml++ caps a TOML file's.
TEST(HfConfigLimits, NestingIsCappedBeforeParsing) {
  std::string deep = "{\"model_type\": \"gpt2\", \"x\": " +
                     std::string(50000, '[') + std::string(50000, ']') + "}";
  EXPECT_EQ(jsonErrors(deep),
            Messages{"config.json:1:284: error: malformed JSON: arrays and "
                     "objects nested deeper than 256 levels; a config.json is "
                     "one object of settings, a few levels deep"});
  // 256 levels (the top object and 255 arrays) are still JSON: the message
  // is about the key's type, not the nesting.
  std::string deepest = "{\"model_type\": " + std::string(255, '[') +
                        std::string(255, ']') + "}";
  Messages messages = jsonErrors(deepest);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].find("nested deeper"), std::string::npos)
      << messages[0];
  // Brackets inside strings are text, escaped quotes included.
  std::string inString = "{\"model_type\": \"\\\"" + std::string(300, '[') +
                         "\"}";
  messages = jsonErrors(inString);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].find("nested deeper"), std::string::npos)
      << messages[0];
}

// The positions of the keys are found in one pass: each key used to be
// located from the start of the file, quadratic in its size (200,000 keys,
// 3 MB: about 3e11 steps).
TEST(HfConfigLimits, ManyKeysAreLocatedInLinearTime) {
  std::string text = "{\"model_type\": \"gpt2\"";
  for (int i = 0; i < 200000; ++i)
    text += ",\n\"k" + std::to_string(i) + "\": 1";
  text += ",\n\"n_embd\": \"wide\"}";
  Messages messages = jsonErrors(text);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages.back(),
            "config.json:200002:1: error: expected n_embd to be an integer, "
            "got a string \"wide\"; write it as a JSON integer");
}
