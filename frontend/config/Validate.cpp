//===- Validate.cpp - model consistency checks and message helpers --------===//
//
// The checks a model's sizes must pass whichever file they came from (a run
// description or a Hugging Face config.json), and the small helpers that
// shape every config message: numbers, "did you mean" suggestions, lists.
//
//===----------------------------------------------------------------------===//
#include "frontend/config/ConfigDetail.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace llmc {

using namespace config_detail;
using llvm::StringRef;

const char *modelFamilyName(ModelFamily family) {
  switch (family) {
  case ModelFamily::Gpt2:
    return "gpt2";
  case ModelFamily::Llama:
    return "llama";
  case ModelFamily::Moe:
    return "moe";
  }
  return "unknown";
}

std::string ConfigDiagnostic::format() const {
  std::string out = location.file;
  if (location.line > 0) {
    out += ":" + std::to_string(location.line);
    if (location.column > 0)
      out += ":" + std::to_string(location.column);
  }
  switch (severity) {
  case Severity::Error:
    out += ": error: ";
    break;
  case Severity::Warning:
    out += ": warning: ";
    break;
  case Severity::Note:
    out += ": note: ";
    break;
  }
  return out + message;
}

namespace config_detail {

std::string formatNumber(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  // Whole numbers in full (10000, not 1e4): they are sizes and thetas.
  if (value == std::trunc(value) && std::fabs(value) < 1e15)
    return std::to_string(static_cast<int64_t>(value));
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  // Write exponents as people do in TOML: 1e-5, 1e6 (not 1e-05, 1e+06).
  std::string text = buffer;
  size_t e = text.find('e');
  if (e == std::string::npos)
    return text;
  std::string mantissa = text.substr(0, e);
  std::string exponent = text.substr(e + 1);
  bool negative = !exponent.empty() && exponent[0] == '-';
  if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+'))
    exponent.erase(0, 1);
  exponent.erase(
      0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return mantissa + "e" + (negative ? "-" : "") + exponent;
}

StringRef closestMatch(StringRef word, llvm::ArrayRef<StringRef> candidates) {
  // A typo changes a character or two; beyond a third of the word it is a
  // different word, and suggesting it would mislead.
  unsigned limit =
      word.size() <= 2 ? 1 : std::max<unsigned>(2, word.size() / 3);
  StringRef best;
  unsigned bestDistance = limit + 1;
  for (StringRef candidate : candidates) {
    unsigned distance = word.edit_distance_insensitive(
        candidate, /*AllowReplacements=*/true, /*MaxEditDistance=*/limit + 1);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

std::string joinList(llvm::ArrayRef<StringRef> items, StringRef quote) {
  std::string out;
  for (StringRef item : items) {
    if (!out.empty())
      out += ", ";
    out += (quote + item + quote).str();
  }
  return out;
}

std::string listDivisors(int64_t n, llvm::function_ref<bool(int64_t)> keep) {
  constexpr int kMaxListed = 7;
  std::string out;
  int listed = 0;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d != 0 || !keep(d))
      continue;
    if (listed == kMaxListed)
      return out + ", ...";
    if (listed++)
      out += ", ";
    out += std::to_string(d);
  }
  return out;
}

void sortDiagnostics(std::vector<ConfigDiagnostic> &diagnostics,
                     const std::string &mainFile) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [&](const ConfigDiagnostic &a, const ConfigDiagnostic &b) {
                     bool aMain = a.location.file == mainFile;
                     bool bMain = b.location.file == mainFile;
                     if (aMain != bMain)
                       return aMain;
                     if (!aMain)
                       return false;
                     return std::make_pair(a.location.line, a.location.column) <
                            std::make_pair(b.location.line, b.location.column);
                   });
}

std::string lowerFirst(StringRef text) {
  std::string out = text.str();
  if (!out.empty())
    out[0] = llvm::toLower(out[0]);
  return out;
}

bool hasErrors(llvm::ArrayRef<ConfigDiagnostic> diagnostics) {
  return llvm::any_of(diagnostics, [](const ConfigDiagnostic &d) {
    return d.severity == ConfigDiagnostic::Severity::Error;
  });
}

ConfigDiagnostic makeError(const SourceLocation &location,
                           std::string message) {
  ConfigDiagnostic diagnostic;
  diagnostic.location = location;
  diagnostic.message = std::move(message);
  return diagnostic;
}

StringRef tomlFieldName(ModelField field) {
  static const char *const kNames[kNumModelFields] = {"vocab_size",
                                                      "layers",
                                                      "width",
                                                      "heads",
                                                      "kv_heads",
                                                      "ffn_width",
                                                      "max_positions",
                                                      "norm_eps",
                                                      "rope_theta",
                                                      "experts",
                                                      "experts_per_token",
                                                      "capacity_factor",
                                                      "aux_loss_weight"};
  return kNames[static_cast<size_t>(field)];
}

namespace {

/// Collects the messages of one model, at most one per field.
class ModelChecker {
public:
  ModelChecker(const ModelFieldSites &sites) : sites(sites) {}

  /// Whether the field's value can be used in a check (it parsed and passed
  /// its own range check).
  bool usable(ModelField field) const {
    return sites[index(field)].usable && !outOfRange[index(field)];
  }
  const std::string &name(ModelField field) const {
    return sites[index(field)].name;
  }

  void report(ModelField field, const std::string &message) {
    if (reported[index(field)])
      return;
    reported[index(field)] = true;
    diagnostics.push_back(
        {field, makeError(sites[index(field)].location, message)});
  }

  void requirePositive(ModelField field, int64_t value) {
    if (!usable(field) || value > 0)
      return;
    outOfRange[index(field)] = true;
    report(field, "expected " + name(field) + " > 0, got " +
                      std::to_string(value) + "; set it to a positive integer");
  }

  void requireAtLeast(ModelField field, double value, double bound, bool strict,
                      StringRef example) {
    if (!usable(field))
      return;
    if (std::isfinite(value) && (strict ? value > bound : value >= bound))
      return;
    outOfRange[index(field)] = true;
    report(field, "expected " + name(field) + (strict ? " > " : " >= ") +
                      formatNumber(bound) + ", got " + formatNumber(value) +
                      "; set it to a value such as " + example.str());
  }

  std::vector<FieldDiagnostic> diagnostics;

private:
  static size_t index(ModelField field) { return static_cast<size_t>(field); }

  const ModelFieldSites &sites;
  std::array<bool, kNumModelFields> outOfRange{};
  std::array<bool, kNumModelFields> reported{};
};

} // namespace

std::vector<FieldDiagnostic> validateModelFields(const ModelConfig &model,
                                                 const ModelFieldSites &sites) {
  using F = ModelField;
  ModelChecker check(sites);
  const bool rope = model.family != ModelFamily::Gpt2;
  const bool moe = model.family == ModelFamily::Moe;

  // 1. Each field on its own.
  check.requirePositive(F::VocabSize, model.vocabSize);
  check.requirePositive(F::Layers, model.numLayers);
  check.requirePositive(F::Width, model.hiddenSize);
  check.requirePositive(F::Heads, model.numHeads);
  if (rope)
    check.requirePositive(F::KvHeads, model.numKvHeads);
  check.requirePositive(F::FfnWidth, model.intermediateSize);
  check.requirePositive(F::MaxPositions, model.maxPositions);
  check.requireAtLeast(F::NormEps, model.normEps, 0, /*strict=*/true, "1e-5");
  if (rope)
    check.requireAtLeast(F::RopeTheta, model.ropeTheta, 0, /*strict=*/true,
                         "10000");
  if (moe) {
    check.requirePositive(F::Experts, model.numExperts);
    check.requirePositive(F::ExpertsPerToken, model.expertsPerToken);
    check.requireAtLeast(F::CapacityFactor, model.capacityFactor, 1,
                         /*strict=*/false, "1.25");
    check.requireAtLeast(F::AuxLossWeight, model.auxLossWeight, 0,
                         /*strict=*/false, "0.01");
  }

  // 2. The attention shape: heads split the width evenly, rope rotates pairs
  // of channels (an even head dimension), and query heads form equal groups
  // over the key/value heads.
  const int64_t width = model.hiddenSize;
  if (!rope && check.usable(F::KvHeads) && check.usable(F::Heads) &&
      model.numKvHeads != model.numHeads)
    check.report(
        F::KvHeads,
        "expected " + check.name(F::KvHeads) + " to equal " +
            check.name(F::Heads) + " " + std::to_string(model.numHeads) +
            " for gpt2, got " + std::to_string(model.numKvHeads) + "; remove " +
            check.name(F::KvHeads) + " (gpt2 has no grouped-query attention)");
  // (An explicit head_dim of config.json was checked where it was read.)
  if (check.usable(F::Width) && check.usable(F::Heads) &&
      model.headDimension == 0) {
    auto evenHeadDim = [&](int64_t heads) {
      return !rope || (width / heads) % 2 == 0;
    };
    std::string valid = listDivisors(width, evenHeadDim);
    std::string fix =
        valid.empty() ? "no head count gives an even head dimension: "
                        "make " +
                            check.name(F::Width) + " even"
                      : "set " + check.name(F::Heads) + " to one of " + valid;
    if (width % model.numHeads != 0)
      check.report(F::Heads, "expected " + check.name(F::Heads) +
                                 " to divide " + check.name(F::Width) + " " +
                                 std::to_string(width) + ", got " +
                                 std::to_string(model.numHeads) + "; " + fix);
    else if (!evenHeadDim(model.numHeads))
      check.report(F::Heads,
                   "expected an even head dimension for rope, got " +
                       check.name(F::Width) + " " + std::to_string(width) +
                       " / " + check.name(F::Heads) + " " +
                       std::to_string(model.numHeads) + " = " +
                       std::to_string(width / model.numHeads) + "; " + fix);
  }
  if (rope && check.usable(F::Heads) && check.usable(F::KvHeads) &&
      model.numHeads % model.numKvHeads != 0)
    check.report(F::KvHeads, "expected " + check.name(F::KvHeads) +
                                 " to divide " + check.name(F::Heads) + " " +
                                 std::to_string(model.numHeads) + ", got " +
                                 std::to_string(model.numKvHeads) + "; set " +
                                 check.name(F::KvHeads) + " to one of " +
                                 listDivisors(model.numHeads,
                                              [](int64_t) { return true; }));

  // 3. The router picks k of the experts.
  if (moe && check.usable(F::Experts) && check.usable(F::ExpertsPerToken) &&
      model.expertsPerToken > model.numExperts)
    check.report(F::ExpertsPerToken,
                 "expected " + check.name(F::ExpertsPerToken) +
                     " <= " + check.name(F::Experts) + " " +
                     std::to_string(model.numExperts) + ", got " +
                     std::to_string(model.expertsPerToken) + "; lower " +
                     check.name(F::ExpertsPerToken) + " or raise " +
                     check.name(F::Experts));

  // 4. The whole model: each size is bounded on its own (kMaxModelSize), but
  // their products are not; above 2^48 parameters (281 trillion, far beyond
  // any model) the weight counts and byte sizes that the tracer, the planner
  // and the runtime form in int64 would overflow. Counted in double, which
  // cannot overflow here.
  if (check.usable(F::VocabSize) && check.usable(F::Layers) &&
      check.usable(F::Width) && check.usable(F::FfnWidth) &&
      check.usable(F::MaxPositions) && (!moe || check.usable(F::Experts))) {
    const double d = static_cast<double>(width);
    const double heads = static_cast<double>(std::max<int64_t>(model.numHeads, 1));
    const double headDim = model.headDimension > 0
                               ? static_cast<double>(model.headDimension)
                               : d / heads;
    const double attention = 4 * d * heads * headDim;
    const double mlp = (moe ? static_cast<double>(model.numExperts) : 1.0) * 3 *
                       d * static_cast<double>(model.intermediateSize);
    const double params =
        static_cast<double>(model.vocabSize) * d * (model.tieEmbeddings ? 1 : 2) +
        static_cast<double>(model.maxPositions) * d +
        static_cast<double>(model.numLayers) * (attention + mlp);
    constexpr double kMaxParams = 281474976710656.0; // 2^48
    if (params > kMaxParams)
      check.report(F::Layers,
                   "expected a model of at most 2^48 parameters, got about " +
                       formatNumber(params) + " (" + check.name(F::Layers) +
                       " " + std::to_string(model.numLayers) + ", " +
                       check.name(F::Width) + " " + std::to_string(width) +
                       ", " + check.name(F::FfnWidth) + " " +
                       std::to_string(model.intermediateSize) +
                       "); lower the sizes");
  }
  return std::move(check.diagnostics);
}

} // namespace config_detail

int64_t paddedVocabulary(int64_t vocab, int64_t tp) {
  int64_t multiple = kVocabPadMultiple * std::max<int64_t>(tp, 1);
  return (vocab + multiple - 1) / multiple * multiple;
}

std::string tensorParallelError(const ModelConfig &model, int64_t tp) {
  // 1. The sizes Megatron's layout splits over the tp ranks.
  const bool gpt2 = model.family == ModelFamily::Gpt2;
  struct Split {
    StringRef name;
    int64_t size;
  };
  llvm::SmallVector<Split> splits = {{"heads", model.numHeads}};
  if (!gpt2)
    splits.push_back({"kv_heads", model.numKvHeads});
  splits.push_back({"vocab_size", model.vocabSize});
  splits.push_back({"ffn_width", model.intermediateSize});

  // 2. Which of them tp does not divide.
  llvm::SmallVector<StringRef> names;
  std::string failing;
  bool vocabFails = false, otherFails = false;
  int64_t all = 0, structural = 0; // gcds: of every size, of all but vocab
  for (const Split &split : splits) {
    names.push_back(split.name);
    all = std::gcd(all, split.size);
    if (split.name != "vocab_size")
      structural = std::gcd(structural, split.size);
    if (split.size % tp == 0)
      continue;
    (split.name == "vocab_size" ? vocabFails : otherFails) = true;
    failing += (failing.empty() ? "" : " or ") + split.name.str() + " " +
               std::to_string(split.size);
  }
  if (failing.empty())
    return "";

  // 3. The fix: the tp values that divide everything; a padded vocabulary
  // when it is what stands in the way.
  auto any = [](int64_t) { return true; };
  std::string fix;
  if (!otherFails) {
    fix = "pad vocab_size to " +
          std::to_string(paddedVocabulary(model.vocabSize, tp)) +
          " (a multiple of " + std::to_string(kVocabPadMultiple) + " x " +
          std::to_string(tp) +
          ", so that each rank's rows stay 16-byte aligned), or set tp to "
          "one of " +
          listDivisors(all, any);
  } else if (vocabFails) {
    int64_t best = 1; // the largest tp <= the asked one that fits the rest
    for (int64_t d = 1; d <= std::min(tp, structural); ++d)
      if (structural % d == 0)
        best = d;
    fix = "valid tp: " + listDivisors(structural, any);
    if (best > 1)
      fix += " with vocab_size padded to a multiple of " +
             std::to_string(kVocabPadMultiple) + " x tp (" +
             std::to_string(paddedVocabulary(model.vocabSize, best)) +
             " for tp " + std::to_string(best) + ")";
  } else {
    fix = "valid tp: " + listDivisors(all, any);
  }
  std::string list;
  for (auto [i, name] : llvm::enumerate(names))
    list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + name.str();
  return "expected tp to divide " + list +
         " (tensor parallelism splits them over the tp ranks), got " +
         std::to_string(tp) + ", which does not divide " + failing + "; " + fix;
}

std::string dataParallelError(const TrainConfig &train, int64_t dp) {
  if (train.microbatches <= 0 || train.batchSize % train.microbatches != 0)
    return ""; // microbatches has its own message
  int64_t batch = train.batchSize / train.microbatches;
  if (batch % dp == 0)
    return "";
  std::string what =
      train.microbatches == 1
          ? "batch_size " + std::to_string(batch)
          : "the batch of a microbatch " + std::to_string(batch) +
                " (batch_size " + std::to_string(train.batchSize) +
                " / microbatches " + std::to_string(train.microbatches) + ")";
  return "expected dp to divide " + what + ", got " + std::to_string(dp) +
         " (data parallelism splits it over the dp ranks); valid dp: " +
         listDivisors(batch, [](int64_t) { return true; });
}

std::string expertParallelError(const ModelConfig &model,
                                const TrainConfig &train, int64_t dp,
                                int64_t ep) {
  if (model.family != ModelFamily::Moe)
    return "expected ep = 1 for a " + std::string(modelFamilyName(model.family)) +
           " model, got " + std::to_string(ep) +
           "; expert parallelism splits the experts of a moe model: remove "
           "ep, or use dp for data parallelism";
  if (model.numExperts > 0 && model.numExperts % ep != 0)
    return "expected ep to divide experts " +
           std::to_string(model.numExperts) + ", got " + std::to_string(ep) +
           " (expert parallelism gives each ep rank experts / ep experts); "
           "valid ep: " +
           listDivisors(model.numExperts, [](int64_t) { return true; });
  if (train.microbatches <= 0 || train.batchSize % train.microbatches != 0)
    return ""; // microbatches has its own message
  int64_t batch = train.batchSize / train.microbatches;
  int64_t ways = dp * ep;
  if (batch % ways != 0)
    return "expected dp x ep to divide the batch of a microbatch " +
           std::to_string(batch) + ", got " + std::to_string(dp) + " x " +
           std::to_string(ep) + " = " + std::to_string(ways) +
           " (the ep ranks split the tokens like dp); valid dp x ep: " +
           listDivisors(batch, [](int64_t) { return true; });
  // The capacity Moe.cpp gives each expert, per microbatch.
  int64_t tokens = batch * train.seqLen;
  if (model.numExperts <= 0 || model.expertsPerToken <= 0 || tokens <= 0)
    return "";
  auto capacity = std::min<int64_t>(
      tokens, static_cast<int64_t>(std::ceil(
                  model.capacityFactor *
                  static_cast<double>(tokens * model.expertsPerToken) /
                  static_cast<double>(model.numExperts))));
  if (capacity % ways != 0)
    return "expected dp x ep = " + std::to_string(ways) +
           " to divide the expert capacity " + std::to_string(capacity) +
           " (min(tokens, ceil(capacity_factor * tokens * k / experts)) for " +
           std::to_string(tokens) +
           " tokens per microbatch), got a remainder of " +
           std::to_string(capacity % ways) +
           "; each rank's tokens get capacity / (dp x ep) slots per expert: "
           "change capacity_factor or the batch";
  return "";
}

std::vector<ConfigDiagnostic> validateModel(const ModelConfig &model,
                                            const SourceLocation &where) {
  ModelFieldSites sites;
  for (size_t i = 0; i < kNumModelFields; ++i)
    sites[i] = {tomlFieldName(static_cast<ModelField>(i)).str(), where, true};
  std::vector<ConfigDiagnostic> diagnostics;
  for (FieldDiagnostic &d : validateModelFields(model, sites))
    diagnostics.push_back(std::move(d.diagnostic));
  return diagnostics;
}

} // namespace llmc
