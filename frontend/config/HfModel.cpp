//===- HfModel.cpp - what a Hugging Face model asks beyond its sizes ------===//
//
// The pieces of a Hugging Face model that are not sizes: the inverse
// frequencies of LLaMA 3's scaled rope (as transformers computes them), the
// settings training refuses (dropout: llmc has none), and the model folder
// (config.json, the weights, the tokenizer and the generation config) that
// `[model] hf = "DIR"` and `llmc train DIR` name. No MLIR.
//
//===----------------------------------------------------------------------===//
#include "frontend/config/ConfigDetail.h"
#include "frontend/config/RunDescription.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

namespace llmc {

using namespace config_detail;

std::vector<double> ropeInverseFrequencies(const ModelConfig &model) {
  const RopeScaling &s = model.ropeScaling;
  const int64_t dim = model.headDim();
  if (!s.llama3 || dim <= 0)
    return {};
  // transformers' _compute_llama3_parameters, in double: wavelengths
  // shorter than original / high_freq_factor keep their frequency, those
  // longer than original / low_freq_factor are divided by `factor`, and
  // those between are interpolated by how many turns the original context
  // makes of them.
  const double original = static_cast<double>(s.originalMaxPositions);
  const double lowWavelength = original / s.lowFreqFactor;
  const double highWavelength = original / s.highFreqFactor;
  std::vector<double> inverse(static_cast<size_t>(dim / 2));
  for (int64_t i = 0; i < dim / 2; ++i) {
    double base =
        1.0 / std::pow(model.ropeTheta, static_cast<double>(2 * i) / dim);
    double wavelength = 2.0 * M_PI / base;
    double scaled = wavelength > lowWavelength ? base / s.factor : base;
    bool medium = !(wavelength < highWavelength) && !(wavelength > lowWavelength);
    if (medium) {
      double smooth = (original / wavelength - s.lowFreqFactor) /
                      (s.highFreqFactor - s.lowFreqFactor);
      scaled = (1.0 - smooth) * scaled / s.factor + smooth * scaled;
    }
    inverse[static_cast<size_t>(i)] = scaled;
  }
  return inverse;
}

std::vector<ConfigDiagnostic> trainingRefusals(const ModelConfig &model) {
  std::vector<ConfigDiagnostic> refusals;
  for (const DropoutSetting &d : model.dropout) {
    bool jitter = d.key == "router_jitter_noise";
    std::string what = jitter ? "router jitter" : "dropout";
    std::string given =
        formatNumber(d.probability) +
        (d.defaulted ? " (transformers' default: config.json does not set it)"
                     : "");
    refusals.push_back(makeError(
        d.location,
        "expected " + d.key + " = 0 for training, got " + given +
            "; llmc does not implement " + what + ": " +
            (d.defaulted ? "add" : "set") + " \"" + d.key +
            "\": 0.0 in config.json, or add dropout = 0.0 to [model] of the "
            "run description to train without it"));
  }
  return refusals;
}

namespace {

std::string join(llvm::StringRef directory, llvm::StringRef name) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  return std::string(path.str());
}

} // namespace

HfOutcome parseHuggingFaceFolder(const std::string &directory) {
  HfOutcome outcome;
  auto fail = [&](std::string message) {
    outcome.diagnostics.push_back(
        makeError({directory, 0, 0}, std::move(message)));
    return outcome;
  };
  if (!llvm::sys::fs::is_directory(directory))
    return fail("expected a Hugging Face model folder, got '" + directory +
                "', which is not a directory; give the folder that holds "
                "config.json and the weights");
  std::string config = join(directory, "config.json");
  // A config.json or model.safetensors that exists but is not a file (a
  // folder, a device) is named as such, not reported missing.
  for (const char *name : {"config.json", "model.safetensors",
                           "model.safetensors.index.json"}) {
    std::string path = join(directory, name);
    if (llvm::sys::fs::exists(path) && !llvm::sys::fs::is_regular_file(path))
      return fail("expected " + std::string(name) + " in '" + directory +
                  "' to be a file, but '" + path +
                  "' is a directory or a device; replace it with the file "
                  "from the model's release");
  }
  if (!llvm::sys::fs::is_regular_file(config))
    return fail("expected a Hugging Face model folder with config.json, "
                "found none in '" +
                directory +
                "'; download the whole model folder (config.json and "
                "model.safetensors)");

  // 1. The weights: one file, or shards listed by an index.
  bool single = llvm::sys::fs::is_regular_file(
      join(directory, "model.safetensors"));
  bool sharded = llvm::sys::fs::is_regular_file(
      join(directory, "model.safetensors.index.json"));
  if (!single && !sharded) {
    bool pickle = llvm::sys::fs::exists(join(directory, "pytorch_model.bin")) ||
                  llvm::sys::fs::exists(
                      join(directory, "pytorch_model.bin.index.json"));
    return fail(
        pickle
            ? "'" + directory +
                  "' holds pytorch_model.bin, which llmc does not read (a "
                  "pickle); save it as safetensors first "
                  "(model.save_pretrained(DIR, safe_serialization=True) in "
                  "transformers)"
            : "expected weights in '" + directory +
                  "' (model.safetensors, or model.safetensors.index.json and "
                  "its shards), found none; download them, or name the "
                  "config alone with hf_config (random initial weights)");
  }

  // 2. The config, as for hf_config.
  outcome = parseHuggingFaceConfig(config);
  if (!outcome.model)
    return outcome;
  ModelConfig &model = *outcome.model;
  model.hfDirectory = directory;
  for (auto [name, field] :
       {std::pair<const char *, std::string *>{"tokenizer.json",
                                               &model.tokenizerPath},
        {"generation_config.json", &model.generationConfigPath}}) {
    std::string path = join(directory, name);
    if (llvm::sys::fs::is_regular_file(path))
      *field = path;
  }
  return outcome;
}

} // namespace llmc
