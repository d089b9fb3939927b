//===- HfConfig.cpp - the Hugging Face config.json reader -----------------===//
//
// Reads the sizes of a gpt2, llama or mixtral model from the config.json that
// transformers writes beside the weights, into the same ModelConfig a run
// description gives, and checks them with the same model rules. Keys that do
// not change the numerics are ignored (ids, dtypes, architectures); those
// that do are implemented (head_dim, biases, LLaMA 3 rope scaling, GPT-2's
// attention scaling, the GELU form) or refused with the fix (other rope
// scalings, quantization, sliding windows, other activations), and dropout
// is recorded for trainingRefusals. Both transformers 4's `rope_theta` /
// `rope_scaling` and transformers 5's `rope_parameters` are read.
//
//===----------------------------------------------------------------------===//
#include "frontend/config/ConfigDetail.h"
#include "frontend/config/RunDescription.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace llmc {

using namespace config_detail;
using llvm::StringRef;
namespace json = llvm::json;

namespace {

/// Line and column (1-based, in code points) of byte `offset` of `text`.
SourceLocation locateOffset(StringRef text, size_t offset,
                            const std::string &file) {
  SourceLocation location{file, 1, 1};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++location.line;
      location.column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++location.column;
    }
  }
  return location;
}

/// Where the top-level object and each of its keys start. llvm::json keeps no
/// positions, so this scans the text, which the JSON parser has accepted.
struct JsonPositions {
  SourceLocation object;
  std::map<std::string, SourceLocation, std::less<>> keys;
};

// One pass, keeping the line and column as it goes: a config.json of many
// keys costs no more than reading it (locating each key from the start was
// quadratic in the file's size).
JsonPositions locateKeys(StringRef text, const std::string &file) {
  JsonPositions positions;
  positions.object = {file, 1, 1};
  SourceLocation cursor{file, 1, 1};
  size_t cursorOffset = 0;
  auto at = [&](size_t offset) {
    for (; cursorOffset < offset && cursorOffset < text.size();
         ++cursorOffset) {
      char c = text[cursorOffset];
      if (c == '\n') {
        ++cursor.line;
        cursor.column = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++cursor.column;
      }
    }
    return cursor;
  };
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{' || c == '[') {
      if (depth++ == 0)
        positions.object = at(i);
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      if (depth == 1 && next != StringRef::npos && text[next] == ':')
        positions.keys.emplace(text.slice(start + 1, i).str(), at(start));
    }
  }
  return positions;
}

std::string describe(const json::Value &value) {
  switch (value.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return std::string("a boolean ") +
           (*value.getAsBoolean() ? "true" : "false");
  case json::Value::Number:
    if (std::optional<int64_t> integer = value.getAsInteger())
      return "an integer " + std::to_string(*integer);
    return "a number " + formatNumber(*value.getAsNumber());
  case json::Value::String:
    return "a string \"" + value.getAsString()->str() + "\"";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

/// Whether a key must be there, and whether null stands for its default
/// (transformers writes "n_inner": null).
enum class Presence { Required, Optional, NullMeansDefault };

/// Typed reads of the top-level keys; one message per key at most.
class HfReader {
public:
  HfReader(const json::Object &object, const JsonPositions &positions,
           std::vector<ConfigDiagnostic> &diagnostics)
      : object(object), positions(positions), diagnostics(diagnostics) {}

  std::string modelType;

  SourceLocation at(StringRef key) const {
    auto it = positions.keys.find(key);
    return it == positions.keys.end() ? positions.object : it->second;
  }
  bool given(StringRef key) const { return object.get(key) != nullptr; }
  bool failed(StringRef key) const { return keysWithMessages.count(key.str()); }

  void error(StringRef key, std::string message) {
    if (!keysWithMessages.insert(key.str()).second)
      return;
    diagnostics.push_back(makeError(at(key), std::move(message)));
  }
  void missing(StringRef key) {
    error(key, "missing required key '" + key.str() + "' for model_type \"" +
                   modelType + "\"; add \"" + key.str() + "\" to config.json");
  }

  /// An integer key whose magnitude is at most `limit` (kMaxModelSize or
  /// kMaxModelCount of ConfigDetail.h, the bounds the TOML path applies).
  std::optional<int64_t> integer(StringRef key, Presence presence,
                                 int64_t limit) {
    const json::Value *value = read(key, presence);
    if (!value)
      return std::nullopt;
    std::optional<int64_t> integer = value->getAsInteger();
    if (!integer) {
      wrongType(key, *value, "an integer");
      return std::nullopt;
    }
    if (*integer > limit || *integer < -limit) {
      error(key, "expected " + key.str() + " at most " +
                     std::to_string(limit) + ", got " +
                     std::to_string(*integer) +
                     "; llmc bounds a model's sizes at 2^24 and its counts "
                     "(layers, heads, experts) at 2^16, far beyond any "
                     "released model: correct the value");
      return std::nullopt;
    }
    return integer;
  }
  std::optional<double> number(StringRef key, Presence presence) {
    const json::Value *value = read(key, presence);
    if (!value)
      return std::nullopt;
    if (std::optional<double> number = value->getAsNumber())
      return number;
    wrongType(key, *value, "a number");
    return std::nullopt;
  }
  std::optional<bool> boolean(StringRef key, Presence presence) {
    const json::Value *value = read(key, presence);
    if (!value)
      return std::nullopt;
    if (std::optional<bool> boolean = value->getAsBoolean())
      return boolean;
    wrongType(key, *value, "a boolean");
    return std::nullopt;
  }
  std::optional<std::string> string(StringRef key, Presence presence) {
    const json::Value *value = read(key, presence);
    if (!value)
      return std::nullopt;
    if (std::optional<StringRef> text = value->getAsString())
      return text->str();
    wrongType(key, *value, "a string");
    return std::nullopt;
  }
  /// The raw value of a top-level key, or null.
  const json::Value *get(StringRef key) const { return object.get(key); }

private:
  /// The key's value when there is one to convert.
  const json::Value *read(StringRef key, Presence presence) {
    const json::Value *value = object.get(key);
    if (!value) {
      if (presence == Presence::Required)
        missing(key);
      return nullptr;
    }
    if (value->kind() == json::Value::Null &&
        presence == Presence::NullMeansDefault)
      return nullptr;
    return value;
  }
  void wrongType(StringRef key, const json::Value &value, StringRef expected) {
    error(key, "expected " + key.str() + " to be " + expected.str() + ", got " +
                   describe(value) + "; write it as a JSON " +
                   (expected == "a boolean"    ? "true or false"
                    : expected == "an integer" ? "integer"
                    : expected == "a string"   ? "string"
                                               : "number"));
  }

  const json::Object &object;
  const JsonPositions &positions;
  std::vector<ConfigDiagnostic> &diagnostics;
  std::set<std::string> keysWithMessages;
};

using F = ModelField;

void setSite(ModelFieldSites &sites, const HfReader &r, ModelField field,
             StringRef key, bool known) {
  sites[static_cast<size_t>(field)] = {key.str(), r.at(key),
                                       known && !r.failed(key)};
}

/// A field with a default is known unless the file gave a value that failed.
template <typename T>
bool readOrDefault(const HfReader &r, StringRef key,
                   const std::optional<T> &value) {
  return value || !r.given(key);
}

/// A dropout probability (default `fallback` when absent or null): in
/// [0, 1]; recorded when above 0, for trainingRefusals.
void readDropout(HfReader &r, ModelConfig &m, StringRef key, double fallback) {
  std::optional<double> p = r.number(key, Presence::NullMeansDefault);
  if (r.failed(key))
    return;
  double probability = p.value_or(fallback);
  if (!(probability >= 0.0 && probability <= 1.0)) {
    r.error(key, "expected " + key.str() + " in [0, 1], got " +
                     formatNumber(probability) + "; set it to 0.0");
    return;
  }
  if (probability > 0.0)
    m.dropout.push_back({key.str(), probability, r.at(key), !p.has_value()});
}

/// A number of a nested object (rope_scaling), or nothing after an error
/// at `where` (the object's key) when it is missing or not a number.
std::optional<double> nestedNumber(HfReader &r, StringRef where,
                                   const json::Object &object, StringRef key,
                                   StringRef ropeType) {
  const json::Value *value = object.get(key);
  std::optional<double> number = value ? value->getAsNumber() : std::nullopt;
  if (!number)
    r.error(where, "expected " + where.str() + "." + key.str() +
                       " to be a number for rope_type \"" + ropeType.str() +
                       "\", got " + (value ? describe(*value) : "nothing") +
                       "; add \"" + key.str() + "\" as transformers writes it");
  return number;
}

/// The rope's base and scaling. transformers 5 keeps both in
/// `rope_parameters`; transformers 4 writes `rope_theta` and `rope_scaling`
/// (which, when not null, takes the place of `rope_parameters`: transformers
/// 5 reads old files that way). Returns the key the theta came from.
std::string readRope(HfReader &r, ModelConfig &m, bool mixtral) {
  StringRef where;
  for (StringRef key : {"rope_scaling", "rope_parameters"}) {
    const json::Value *value = r.get(key);
    if (value && value->kind() != json::Value::Null) {
      where = key;
      break;
    }
  }
  std::string thetaKey = "rope_theta";
  std::optional<double> theta = r.number("rope_theta", Presence::Optional);
  m.ropeTheta = theta.value_or(mixtral ? 1e6 : 10000.0);
  auto partial = [&](StringRef key, const json::Value *value) {
    std::optional<double> factor = value ? value->getAsNumber() : std::nullopt;
    if (value && value->kind() != json::Value::Null &&
        (!factor || *factor != 1.0))
      r.error(key, "expected partial_rotary_factor 1 (rope on the whole head "
                   "dimension), got " +
                       (factor ? formatNumber(*factor) : describe(*value)) +
                       "; llmc rotates every pair of the head: remove it");
  };
  partial("partial_rotary_factor", r.get("partial_rotary_factor"));
  if (where.empty())
    return thetaKey;
  const json::Object *params = r.get(where)->getAsObject();
  if (!params) {
    r.error(where, "expected " + where.str() + " to be an object such as "
                   "{\"rope_type\": \"llama3\", ...} or null, got " +
                       describe(*r.get(where)));
    return thetaKey;
  }
  if (const json::Value *inner = params->get("rope_theta")) {
    if (std::optional<double> value = inner->getAsNumber()) {
      m.ropeTheta = *value;
      thetaKey = where.str();
    } else {
      r.error(where, "expected " + where.str() +
                         ".rope_theta to be a number, got " + describe(*inner));
    }
  }
  partial(where, params->get("partial_rotary_factor"));
  std::string type = "default";
  for (StringRef key : {"rope_type", "type"})
    if (const json::Value *value = params->get(key)) {
      if (std::optional<StringRef> text = value->getAsString())
        type = text->str();
      break;
    }
  if (type == "default")
    return thetaKey;
  if (type != "llama3") {
    r.error(where, "expected rope_type \"default\" or \"llama3\" in " +
                       where.str() + ", got \"" + type +
                       "\"; llmc implements LLaMA 3's scaling only (linear, "
                       "dynamic, yarn, longrope and the others would rotate "
                       "with other frequencies than transformers)");
    return thetaKey;
  }
  auto factor = nestedNumber(r, where, *params, "factor", type);
  auto low = nestedNumber(r, where, *params, "low_freq_factor", type);
  auto high = nestedNumber(r, where, *params, "high_freq_factor", type);
  auto original = nestedNumber(r, where, *params,
                               "original_max_position_embeddings", type);
  if (!factor || !low || !high || !original)
    return thetaKey;
  if (!(*factor > 0) || !(*low > 0) || !(*high > *low) || !(*original >= 1) ||
      *original > static_cast<double>(kMaxModelSize) ||
      *original != std::trunc(*original)) {
    r.error(where, "expected llama3 rope scaling with factor > 0, 0 < "
                   "low_freq_factor < high_freq_factor and a positive integer "
                   "original_max_position_embeddings (at most 2^24), got factor " +
                       formatNumber(*factor) + ", low_freq_factor " +
                       formatNumber(*low) + ", high_freq_factor " +
                       formatNumber(*high) +
                       ", original_max_position_embeddings " +
                       formatNumber(*original) +
                       "; use the values of the model's release (Llama 3.1: "
                       "8, 1, 4, 8192)");
    return thetaKey;
  }
  m.ropeScaling = {true, *factor, *low, *high, static_cast<int64_t>(*original)};
  return thetaKey;
}

void readGpt2(HfReader &r, ModelConfig &m, ModelFieldSites &sites) {
  m.family = ModelFamily::Gpt2;
  auto vocab = r.integer("vocab_size", Presence::Required, kMaxModelSize);
  auto layers = r.integer("n_layer", Presence::Required, kMaxModelCount);
  auto width = r.integer("n_embd", Presence::Required, kMaxModelSize);
  auto heads = r.integer("n_head", Presence::Required, kMaxModelCount);
  auto positions = r.integer("n_positions", Presence::Required, kMaxModelSize);
  auto inner = r.integer("n_inner", Presence::NullMeansDefault, kMaxModelSize);
  auto eps = r.number("layer_norm_epsilon", Presence::Optional);
  auto tie = r.boolean("tie_word_embeddings", Presence::Optional);
  m.vocabSize = vocab.value_or(0);
  m.numLayers = layers.value_or(0);
  m.hiddenSize = width.value_or(0);
  m.numHeads = heads.value_or(0);
  m.numKvHeads = m.numHeads;
  m.maxPositions = positions.value_or(0);
  m.intermediateSize = inner.value_or(4 * m.hiddenSize);
  m.normEps = eps.value_or(1e-5);
  m.tieEmbeddings = true;
  if (tie && !*tie)
    r.error("tie_word_embeddings",
            "expected tie_word_embeddings to be true for gpt2, got false; "
            "set it to true (llmc's gpt2 always shares the token embedding "
            "with the classifier)");

  // The attention scale and the GELU form change the numerics: implemented.
  // reorder_and_upcast_attn computes the scaled scores and the softmax in
  // f32 for half-precision models, which llmc's attention always does (its
  // kernels accumulate in f32 or f64 and scale before the softmax), so it
  // is read for its type only.
  m.scaleAttnWeights =
      r.boolean("scale_attn_weights", Presence::Optional).value_or(true);
  m.scaleAttnByInverseLayerIdx =
      r.boolean("scale_attn_by_inverse_layer_idx", Presence::Optional)
          .value_or(false);
  (void)r.boolean("reorder_and_upcast_attn", Presence::Optional);
  if (auto act = r.string("activation_function", Presence::Optional)) {
    if (*act == "gelu")
      m.exactGelu = true;
    else if (*act != "gelu_new" && *act != "gelu_fast" &&
             *act != "gelu_pytorch_tanh")
      r.error("activation_function",
              "expected activation_function \"gelu_new\" (the tanh GELU, "
              "also \"gelu_fast\" and \"gelu_pytorch_tanh\") or \"gelu\" "
              "(erf), got \"" +
                  *act +
                  "\"; llmc's gpt2 implements these two GELUs only");
  }
  if (r.boolean("add_cross_attention", Presence::Optional).value_or(false))
    r.error("add_cross_attention",
            "expected add_cross_attention to be false, got true; llmc's gpt2 "
            "is a decoder without an encoder to attend to: set it to false");
  // GPT2Config's defaults are 0.1: a config without them means dropout.
  for (StringRef key : {"embd_pdrop", "attn_pdrop", "resid_pdrop"})
    readDropout(r, m, key, 0.1);

  setSite(sites, r, F::VocabSize, "vocab_size", vocab.has_value());
  setSite(sites, r, F::Layers, "n_layer", layers.has_value());
  setSite(sites, r, F::Width, "n_embd", width.has_value());
  setSite(sites, r, F::Heads, "n_head", heads.has_value());
  setSite(sites, r, F::KvHeads, "n_head", heads.has_value());
  setSite(sites, r, F::FfnWidth, "n_inner",
          inner ? true : width.has_value() && !r.failed("n_inner"));
  setSite(sites, r, F::MaxPositions, "n_positions", positions.has_value());
  setSite(sites, r, F::NormEps, "layer_norm_epsilon",
          readOrDefault(r, "layer_norm_epsilon", eps));
}

/// llama and mixtral: mixtral is llama with a routed MLP.
void readLlama(HfReader &r, ModelConfig &m, ModelFieldSites &sites,
               bool mixtral) {
  m.family = mixtral ? ModelFamily::Moe : ModelFamily::Llama;
  auto vocab = r.integer("vocab_size", Presence::Required, kMaxModelSize);
  auto layers = r.integer("num_hidden_layers", Presence::Required, kMaxModelCount);
  auto width = r.integer("hidden_size", Presence::Required, kMaxModelSize);
  auto heads = r.integer("num_attention_heads", Presence::Required, kMaxModelCount);
  auto kvHeads = r.integer("num_key_value_heads", Presence::NullMeansDefault, kMaxModelCount);
  auto ffn = r.integer("intermediate_size", Presence::Required, kMaxModelSize);
  auto positions = r.integer("max_position_embeddings", Presence::Required, kMaxModelSize);
  auto eps = r.number("rms_norm_eps", Presence::Optional);
  auto tie = r.boolean("tie_word_embeddings", Presence::Optional);
  auto headDim = r.integer("head_dim", Presence::NullMeansDefault, kMaxModelSize);
  m.vocabSize = vocab.value_or(0);
  m.numLayers = layers.value_or(0);
  m.hiddenSize = width.value_or(0);
  m.numHeads = heads.value_or(0);
  m.numKvHeads = kvHeads.value_or(m.numHeads);
  m.intermediateSize = ffn.value_or(0);
  m.maxPositions = positions.value_or(0);
  // The defaults of transformers' LlamaConfig and MixtralConfig.
  m.normEps = eps.value_or(mixtral ? 1e-5 : 1e-6);
  std::string thetaKey = readRope(r, m, mixtral);
  m.tieEmbeddings = tie.value_or(false);

  std::optional<int64_t> experts, topK;
  std::optional<double> auxLoss;
  if (mixtral) {
    experts = r.integer("num_local_experts", Presence::Required, kMaxModelCount);
    topK = r.integer("num_experts_per_tok", Presence::Required, kMaxModelCount);
    auxLoss = r.number("router_aux_loss_coef", Presence::Optional);
    m.numExperts = experts.value_or(0);
    m.expertsPerToken = topK.value_or(0);
    m.auxLossWeight = auxLoss.value_or(0.001);
  }

  // Newer configs state the head dimension; where it is not hidden_size /
  // num_attention_heads, q, k and v project to heads * head_dim.
  if (headDim && width && heads && *heads > 0 &&
      (*width % *heads != 0 || *headDim != *width / *heads)) {
    if (*headDim <= 0 || *headDim % 2 != 0)
      r.error("head_dim", "expected an even head_dim > 0 (rope rotates pairs "
                          "of channels), got " +
                              std::to_string(*headDim) +
                              "; set head_dim to an even size");
    else
      m.headDimension = *headDim;
  }

  // What the attention and the MLP compute.
  if (auto act = r.string("hidden_act", Presence::Optional); act && *act != "silu")
    r.error("hidden_act", "expected hidden_act \"silu\" (SwiGLU), got \"" +
                              *act + "\"; llmc's " + r.modelType +
                              " implements SwiGLU only");
  if (!mixtral) {
    m.attentionBias =
        r.boolean("attention_bias", Presence::Optional).value_or(false);
    m.mlpBias = r.boolean("mlp_bias", Presence::Optional).value_or(false);
  }
  if (mixtral) {
    // Mistral's sliding window attends to the last `window` positions only;
    // llmc attends to the whole context, which is the same only when the
    // window covers every position the model takes.
    auto window = r.integer("sliding_window", Presence::NullMeansDefault, std::numeric_limits<int64_t>::max());
    if (window && positions && *window < *positions)
      r.error("sliding_window",
              "expected sliding_window to be null or at least "
              "max_position_embeddings " +
                  std::to_string(*positions) + ", got " +
                  std::to_string(*window) +
                  "; llmc attends to the whole context: set it to null "
                  "(the same model for sequences up to " +
                  std::to_string(*window) + " tokens)");
    readDropout(r, m, "router_jitter_noise", 0.0);
  }
  readDropout(r, m, "attention_dropout", 0.0);

  setSite(sites, r, F::VocabSize, "vocab_size", vocab.has_value());
  setSite(sites, r, F::Layers, "num_hidden_layers", layers.has_value());
  setSite(sites, r, F::Width, "hidden_size", width.has_value());
  setSite(sites, r, F::Heads, "num_attention_heads", heads.has_value());
  setSite(sites, r, F::KvHeads, "num_key_value_heads",
          kvHeads ? true
                  : heads.has_value() && !r.failed("num_key_value_heads"));
  setSite(sites, r, F::FfnWidth, "intermediate_size", ffn.has_value());
  setSite(sites, r, F::MaxPositions, "max_position_embeddings",
          positions.has_value());
  setSite(sites, r, F::NormEps, "rms_norm_eps",
          readOrDefault(r, "rms_norm_eps", eps));
  setSite(sites, r, F::RopeTheta, thetaKey, !r.failed(thetaKey));
  setSite(sites, r, F::Experts, "num_local_experts", experts.has_value());
  setSite(sites, r, F::ExpertsPerToken, "num_experts_per_tok",
          topK.has_value());
  setSite(sites, r, F::CapacityFactor, "capacity_factor", true);
  setSite(sites, r, F::AuxLossWeight, "router_aux_loss_coef",
          readOrDefault(r, "router_aux_loss_coef", auxLoss));
}

} // namespace

std::optional<size_t> config_detail::jsonTooDeep(StringRef text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth)
        return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return std::nullopt;
}

HfOutcome parseHuggingFaceConfigText(const std::string &text,
                                     const std::string &path) {
  HfOutcome outcome;
  std::vector<ConfigDiagnostic> &diagnostics = outcome.diagnostics;

  // 1. The JSON itself. llvm::json reports "[line:col, byte=N]: message";
  // the byte offset gives the position in code points, as for TOML.
  // llvm::json parses (and destroys) nested values recursively: a file
  // nested 50,000 deep overflowed the stack, so the nesting is capped first.
  if (std::optional<size_t> offset = jsonTooDeep(text)) {
    diagnostics.push_back(makeError(
        locateOffset(text, *offset, path),
        "malformed JSON: arrays and objects nested deeper than " +
            std::to_string(kMaxJsonDepth) +
            " levels; a config.json is one object of settings, a few levels "
            "deep"));
    return outcome;
  }
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    std::string error = llvm::toString(parsed.takeError());
    size_t offset = 0;
    StringRef rest = StringRef(error).split("byte=").second;
    auto [number, message] = rest.split("]: ");
    if (number.getAsInteger(10, offset))
      message = error;
    diagnostics.push_back(makeError(locateOffset(text, offset, path),
                                    "malformed JSON: " + lowerFirst(message) +
                                        "; fix the syntax"));
    return outcome;
  }
  const json::Object *object = parsed->getAsObject();
  if (!object) {
    diagnostics.push_back(makeError(
        {path, 1, 1}, "expected a JSON object at the top level, got " +
                          describe(*parsed) +
                          "; a config.json is one object of named settings"));
    return outcome;
  }
  JsonPositions positions = locateKeys(text, path);
  HfReader r(*object, positions, diagnostics);

  // 2. The architecture.
  static const StringRef kModelTypes[] = {"gpt2", "llama", "mixtral"};
  const json::Value *type = object->get("model_type");
  std::optional<StringRef> typeName = type ? type->getAsString() : std::nullopt;
  if (!typeName) {
    r.error("model_type",
            (type ? "expected model_type to be a string, got " + describe(*type)
                  : std::string("missing required key 'model_type'")) +
                "; add \"model_type\": \"gpt2\", \"llama\" or \"mixtral\"");
    return outcome;
  }
  if (!llvm::is_contained(kModelTypes, *typeName)) {
    StringRef close = closestMatch(*typeName, kModelTypes);
    r.error("model_type",
            "expected model_type to be one of " + joinList(kModelTypes, "\"") +
                ", got \"" + typeName->str() + "\"; " +
                (close.empty() ? "llmc builds only these architectures"
                               : "did you mean \"" + close.str() + "\"?"));
    return outcome;
  }
  r.modelType = typeName->str();

  // 3. The sizes, then the rules every model follows.
  ModelConfig model;
  model.hfConfigPath = path;
  ModelFieldSites sites;
  if (*typeName == "gpt2")
    readGpt2(r, model, sites);
  else
    readLlama(r, model, sites, /*mixtral=*/*typeName == "mixtral");
  for (FieldDiagnostic &d : validateModelFields(model, sites))
    r.error(sites[static_cast<size_t>(d.field)].name,
            std::move(d.diagnostic.message));

  // Quantized weights (GPTQ, AWQ, bitsandbytes, fp8) are not the model's
  // numbers: llmc trains and loads f32, bf16 and f16 only.
  if (const json::Value *quantization = object->get("quantization_config");
      quantization && quantization->kind() != json::Value::Null) {
    std::string method;
    if (const json::Object *q = quantization->getAsObject())
      if (const json::Value *name = q->get("quant_method"))
        if (std::optional<StringRef> text = name->getAsString())
          method = " (quant_method \"" + text->str() + "\")";
    r.error("quantization_config",
            "expected an unquantized model, got quantization_config" + method +
                "; llmc loads f32, bf16 and f16 weights only: use the "
                "model's unquantized release");
  }

  sortDiagnostics(diagnostics, path);
  if (!hasErrors(diagnostics))
    outcome.model = model;
  return outcome;
}

HfOutcome parseHuggingFaceConfig(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    HfOutcome outcome;
    outcome.diagnostics.push_back(makeError(
        {path, 0, 0},
        "cannot read config.json: " + lowerFirst(buffer.getError().message()) +
            "; check the path"));
    return outcome;
  }
  return parseHuggingFaceConfigText((*buffer)->getBuffer().str(), path);
}

} // namespace llmc
