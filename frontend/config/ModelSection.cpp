//===- ModelSection.cpp - the [model] section of a run description --------===//
//
// Reads the model's sizes, or the config.json that hf_config names (or the
// Hugging Face folder that hf names: its config and its weights), applies
// the family's rules and defaults (gpt2 ties its embeddings and learns its
// positions; llama and moe need ffn_width; moe needs its experts), and checks
// the model's shape with validateModel's rules, each message at its key.
//
//===----------------------------------------------------------------------===//
#include "frontend/config/RunParser.h"

#include "llvm/Support/FileSystem.h"

namespace llmc {
namespace config_detail {

using llvm::StringRef;

void RunParser::parseModel() {
  if (!section("model")) {
    // Reported once per key: a [model] that is not a table already has its
    // message from readSections.
    diagnostics.error({run.path, 0, 0}, "model",
                      "missing section [model]; add [model] with family = "
                      "\"gpt2\" and the sizes, with hf = \"MODEL_DIR\", or "
                      "with hf_config = \"config.json\"");
    return;
  }
  SectionReader s = reader("model");
  if (s.given("hf") || s.given("hf_config"))
    parseModelFromHf(s);
  else
    parseModelSizes(s);
}

void RunParser::parseModelFromHf(SectionReader &s) {
  // config.json gives every size; capacity_factor is llmc's own and has no
  // Hugging Face key, so it may accompany it, as may strict (how the
  // weights load) and dropout (the override training needs).
  const bool folder = s.given("hf");
  const char *source = folder ? "hf" : "hf_config";
  if (folder && s.given("hf_config"))
    s.error("hf_config", "expected either hf (a model folder: config.json "
                         "and the weights) or hf_config (a config.json alone, "
                         "random initial weights), got both; remove one");
  for (const KeySpec &key : findSection("model")->keys) {
    StringRef name = key.name;
    if (name == "hf" || name == "hf_config" || name == "capacity_factor" ||
        name == "strict" || name == "dropout" || !s.given(name))
      continue;
    s.error(name, "expected either " + std::string(source) +
                      " or family and sizes, got both " + source + " and " +
                      name.str() + "; remove " + name.str() +
                      " (config.json gives it) or remove " + source);
  }
  std::optional<double> capacity = s.number("capacity_factor", kAtLeastOne);
  std::optional<bool> strict = s.boolean("strict");
  if (strict && !folder)
    s.error("strict", "expected strict only with hf (it says how a model "
                      "folder's weights load), got it with hf_config; remove "
                      "strict or name the folder with hf");
  std::optional<double> dropout =
      s.number("dropout", Bound{Bound::Kind::Closed, 0, 1});
  if (dropout && *dropout != 0.0)
    s.error("dropout", "expected dropout = 0.0 (llmc trains without dropout; "
                       "the key turns config.json's off), got " +
                           s.literal("dropout") + "; set dropout = 0.0");
  HfOutcome hf;
  if (folder) {
    std::optional<std::string> dir = s.string("hf");
    if (!dir)
      return;
    std::string resolved = resolve(*dir);
    if (dir->empty() || !llvm::sys::fs::is_directory(resolved)) {
      s.error("hf", "expected hf to name a Hugging Face model folder, got \"" +
                        *dir + "\" (looked for '" + resolved +
                        "'); fix the path, which is relative to this file's "
                        "directory");
      return;
    }
    hf = parseHuggingFaceFolder(resolved);
  } else {
    std::optional<std::string> file = existingFile(s, "hf_config");
    if (!file)
      return;
    hf = parseHuggingFaceConfig(*file);
  }
  hfDiagnostics = std::move(hf.diagnostics);
  if (!hf.model)
    return;
  run.model = *hf.model;
  if (strict)
    run.model.strictWeights = *strict;
  if (dropout && *dropout == 0.0)
    run.model.dropout.clear();
  if (capacity) {
    if (run.model.family == ModelFamily::Moe)
      run.model.capacityFactor = *capacity;
    else
      s.error("capacity_factor",
              "expected capacity_factor only for a moe model, got a " +
                  std::string(modelFamilyName(run.model.family)) +
                  " model from hf_config; remove capacity_factor");
  }
  checkPositions(s, source,
                 run.model.family == ModelFamily::Gpt2 ? "n_positions" : "");
}

void RunParser::parseModelSizes(SectionReader &s) {
  ModelConfig &m = run.model;
  std::optional<ModelFamily> family =
      s.choice<ModelFamily>("family", {{"gpt2", ModelFamily::Gpt2},
                                       {"llama", ModelFamily::Llama},
                                       {"moe", ModelFamily::Moe}});
  std::optional<int64_t> vocab = s.integer("vocab_size", kSize);
  std::optional<int64_t> layers = s.integer("layers", kCount);
  std::optional<int64_t> width = s.integer("width", kSize);
  std::optional<int64_t> heads = s.integer("heads", kCount);
  std::optional<int64_t> kvHeads = s.integer("kv_heads", kCount);
  std::optional<int64_t> ffn = s.integer("ffn_width", kSize);
  std::optional<int64_t> positions = s.integer("max_positions", kSize);
  std::optional<double> normEps = s.number("norm_eps", kPositive);
  std::optional<double> ropeTheta = s.number("rope_theta", kPositive);
  std::optional<bool> tie = s.boolean("tie_embeddings");
  std::optional<int64_t> experts = s.integer("experts", kCount);
  std::optional<int64_t> topK = s.integer("experts_per_token", kCount);
  std::optional<double> capacity = s.number("capacity_factor", kAtLeastOne);
  std::optional<double> auxLoss = s.number("aux_loss_weight", kNonNegative);

  // strict and dropout are about a Hugging Face model's files.
  for (StringRef key : {"strict", "dropout"})
    if (s.given(key))
      s.error(key, "expected " + key.str() +
                       " only with hf or hf_config (a Hugging Face model), "
                       "got it with family; remove " +
                       key.str());

  // 1. The keys every family needs.
  if (!s.given("family"))
    s.missing("family", "",
              "add family = \"gpt2\", \"llama\" or \"moe\" with the sizes, "
              "or hf_config = \"config.json\"");
  for (StringRef key : {"vocab_size", "layers", "width", "heads"})
    if (!s.given(key))
      s.missing(key);
  if (!family)
    return; // the remaining rules depend on the family
  m.family = *family;
  assign(m.vocabSize, vocab);
  assign(m.numLayers, layers);
  assign(m.hiddenSize, width);
  assign(m.numHeads, heads);
  assign(m.normEps, normEps);
  const bool gpt2 = m.family == ModelFamily::Gpt2;
  const bool moe = m.family == ModelFamily::Moe;
  const std::string familyName = modelFamilyName(m.family);
  const std::string forFamily = " for family \"" + familyName + "\"";

  // 2. The family's own keys and defaults.
  if (!moe)
    for (StringRef key :
         {"experts", "experts_per_token", "capacity_factor", "aux_loss_weight"})
      if (s.given(key))
        s.error(key, "expected " + key.str() +
                         " only with family \"moe\", got family \"" +
                         familyName + "\"; remove " + key.str() +
                         " or set family = \"moe\"");
  m.numKvHeads = kvHeads.value_or(m.numHeads);
  if (gpt2) {
    if (s.given("rope_theta"))
      s.error("rope_theta", "expected no rope_theta for family \"gpt2\", got " +
                                s.literal("rope_theta") +
                                "; remove it (gpt2 uses learned positions)");
    if (tie && !*tie)
      s.error("tie_embeddings",
              "expected tie_embeddings = true for family \"gpt2\", got false; "
              "remove it (gpt2 always shares the token embedding with the "
              "classifier)");
    m.tieEmbeddings = true;
    m.intermediateSize = ffn.value_or(4 * m.hiddenSize);
    if (!s.given("max_positions"))
      s.missing("max_positions", forFamily);
    assign(m.maxPositions, positions);
  } else {
    assign(m.ropeTheta, ropeTheta);
    m.tieEmbeddings = tie.value_or(false);
    if (!s.given("ffn_width"))
      s.missing("ffn_width", forFamily);
    assign(m.intermediateSize, ffn);
    m.maxPositions = positions.value_or(run.train.seqLen);
  }
  if (moe) {
    for (StringRef key : {"experts", "experts_per_token"})
      if (!s.given(key))
        s.missing(key, forFamily);
    assign(m.numExperts, experts);
    assign(m.expertsPerToken, topK);
    assign(m.capacityFactor, capacity);
    assign(m.auxLossWeight, auxLoss);
  }

  // 3. The model's shape, with each message at the key it is about. A field
  // is usable when its value is known: read without a problem, or derived
  // from fields that were.
  using F = ModelField;
  ModelFieldSites sites;
  auto site = [&](ModelField field, bool known) {
    StringRef name = tomlFieldName(field);
    sites[static_cast<size_t>(field)] = {name.str(), s.at(name),
                                         known && !s.failed(name)};
  };
  auto readOrDefault = [&](StringRef key, bool read) {
    return s.given(key) ? read : true;
  };
  site(F::VocabSize, vocab.has_value());
  site(F::Layers, layers.has_value());
  site(F::Width, width.has_value());
  site(F::Heads, heads.has_value());
  site(F::KvHeads, kvHeads ? true : heads.has_value());
  site(F::FfnWidth, ffn ? true : gpt2 && width.has_value());
  site(F::MaxPositions, positions ? true : !gpt2 && seqLenUsable);
  site(F::NormEps, readOrDefault("norm_eps", normEps.has_value()));
  site(F::RopeTheta, readOrDefault("rope_theta", ropeTheta.has_value()));
  site(F::Experts, experts.has_value());
  site(F::ExpertsPerToken, topK.has_value());
  site(F::CapacityFactor,
       readOrDefault("capacity_factor", capacity.has_value()));
  site(F::AuxLossWeight, readOrDefault("aux_loss_weight", auxLoss.has_value()));
  for (FieldDiagnostic &d : validateModelFields(m, sites))
    diagnostics.error(d.diagnostic.location,
                      "model." + tomlFieldName(d.field).str(),
                      std::move(d.diagnostic.message));
  checkPositions(s, "max_positions", "max_positions");
}

/// gpt2 learns one embedding per position: a sequence cannot be longer than
/// the table. `positionsKey` is where the table's size came from.
void RunParser::checkPositions(SectionReader &s, StringRef positionsKey,
                               StringRef positionsName) {
  const ModelConfig &m = run.model;
  if (m.family != ModelFamily::Gpt2 || !seqLenUsable ||
      s.failed(positionsKey) || m.maxPositions <= 0 ||
      run.train.seqLen <= m.maxPositions)
    return;
  std::string seqLen = std::to_string(run.train.seqLen);
  std::string positions = std::to_string(m.maxPositions);
  if (seqLenGiven) {
    diagnostics.error(seqLenSite, "train.seq_len",
                      "expected seq_len <= " + positionsName.str() + " " +
                          positions + " for gpt2, got " + seqLen +
                          "; lower seq_len or raise " + positionsName.str() +
                          " (gpt2 learns one embedding per position)");
    return;
  }
  s.error(positionsKey, "expected " + positionsName.str() + " >= seq_len " +
                            seqLen +
                            " (the default of [train]) for gpt2, got " +
                            positions + "; set a smaller seq_len in [train]" +
                            (positionsKey == "hf_config" || positionsKey == "hf"
                                 ? std::string()
                                 : " or raise " + positionsName.str()));
}

} // namespace config_detail
} // namespace llmc
