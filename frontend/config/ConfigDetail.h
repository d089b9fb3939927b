//===- ConfigDetail.h - helpers shared by the config parsers ----*- C++ -*-===//
//
// Private to frontend/config: message helpers (numbers, suggestions, lists)
// and the model check behind validateModel, which the TOML and the
// config.json parsers call with the name and position of every field so that
// a message points at the key that is wrong, in the file's own vocabulary.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_CONFIG_CONFIGDETAIL_H
#define LLMC_FRONTEND_CONFIG_CONFIGDETAIL_H

#include "frontend/config/ParallelChecks.h"
#include "frontend/config/RunDescription.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace llmc {
namespace config_detail {

/// The shortest decimal form of `value` that reads back exactly
/// (0.0003, 1e-05, 10000).
std::string formatNumber(double value);

/// The candidate closest to `word` (case-insensitive edit distance), or an
/// empty string when none is close enough to be a plausible typo.
llvm::StringRef closestMatch(llvm::StringRef word,
                             llvm::ArrayRef<llvm::StringRef> candidates);

/// "a, b, c" with each item wrapped in `quote` ("\"" or "'" or "").
std::string joinList(llvm::ArrayRef<llvm::StringRef> items,
                     llvm::StringRef quote);

/// The divisors of `n` for which `keep` holds, ascending, as "1, 2, 3, ...":
/// at most seven are listed, then "...".
std::string listDivisors(int64_t n, llvm::function_ref<bool(int64_t)> keep);

/// Sorts by position: the main file's messages first, in line order, then
/// other files' (a config.json named by the TOML) in the order they came.
void sortDiagnostics(std::vector<ConfigDiagnostic> &diagnostics,
                     const std::string &mainFile);

/// `text` with its first letter in lower case (for messages that embed a
/// library's "Error while ..." text).
std::string lowerFirst(llvm::StringRef text);

bool hasErrors(llvm::ArrayRef<ConfigDiagnostic> diagnostics);

/// A model's sizes (vocab, width, ffn width, positions, head dim): at most
/// 2^24 each, far beyond any model; this keeps every product the frontend
/// and the planner form (vocab x width, 4 x width, width x ffn x layers x
/// experts) inside int64 instead of overflowing into negative sizes. Both
/// the TOML and the config.json readers apply it.
constexpr int64_t kMaxModelSize = int64_t{1} << 24;
/// A model's counts (layers, heads, experts): at most 2^16 each.
constexpr int64_t kMaxModelCount = int64_t{1} << 16;

/// The deepest nesting of arrays and objects a config.json may have, as for
/// TOML (toml++ caps its tables and arrays at 256).
constexpr int kMaxJsonDepth = 256;

/// The byte offset of the first `[` or `{` (outside strings) nested deeper
/// than kMaxJsonDepth, or nullopt. llvm::json parses recursively: this runs
/// first, so that no text can overflow the stack.
std::optional<size_t> jsonTooDeep(llvm::StringRef text);

ConfigDiagnostic makeError(const SourceLocation &location, std::string message);

/// The model fields that validateModel checks, in ModelConfig order.
enum class ModelField {
  VocabSize,
  Layers,
  Width,
  Heads,
  KvHeads,
  FfnWidth,
  MaxPositions,
  NormEps,
  RopeTheta,
  Experts,
  ExpertsPerToken,
  CapacityFactor,
  AuxLossWeight,
};
constexpr size_t kNumModelFields = 13;

/// How messages name a field and where they point. A field that is not
/// `usable` already has a message (a wrong type, a missing key): checks that
/// involve it are skipped so that each key gets at most one message.
struct FieldSite {
  std::string name;
  SourceLocation location;
  bool usable = true;
};
using ModelFieldSites = std::array<FieldSite, kNumModelFields>;

/// The run-description key names of the fields ("heads", "width", ...).
llvm::StringRef tomlFieldName(ModelField field);

/// A message of validateModelFields and the field it is about.
struct FieldDiagnostic {
  ModelField field;
  ConfigDiagnostic diagnostic;
};

/// validateModel with a name and a position per field.
std::vector<FieldDiagnostic> validateModelFields(const ModelConfig &model,
                                                 const ModelFieldSites &sites);

} // namespace config_detail
} // namespace llmc

#endif // LLMC_FRONTEND_CONFIG_CONFIGDETAIL_H
