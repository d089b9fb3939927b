//===- RunParser.h - the run description parser's state ---------*- C++ -*-===//
//
// Private to frontend/config: the class that reads a run description section
// by section. RunDescription.cpp holds the entry points and the sections of
// the run ([train], [precision], ...); ModelSection.cpp holds [model].
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_CONFIG_RUNPARSER_H
#define LLMC_FRONTEND_CONFIG_RUNPARSER_H

#include "frontend/config/RunDescription.h"
#include "frontend/config/TomlReader.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmc {
namespace config_detail {

constexpr Bound kPositive = {Bound::Kind::Above, 0, 0};
constexpr Bound kNonNegative = {Bound::Kind::AtLeast, 0, 0};
constexpr Bound kAtLeastOne = {Bound::Kind::AtLeast, 1, 0};
/// A model's sizes and counts, bounded as ConfigDetail.h says.
constexpr Bound kSize = {Bound::Kind::Closed, 1,
                         static_cast<double>(kMaxModelSize)};
constexpr Bound kCount = {Bound::Kind::Closed, 1,
                          static_cast<double>(kMaxModelCount)};

/// A step's batch_size, seq_len and microbatches: 2^40 each (and
/// batch_size x seq_len at most 2^40 tokens: checkActivations).
constexpr Bound kTokens = {Bound::Kind::Closed, 1, 1099511627776.0};
/// A memory budget: at most 2^20 GiB (a pebibyte).
constexpr Bound kBudgetGiB = {Bound::Kind::Closed, 0, 1048576.0};

/// Stores a value that was read; leaves the default when there is none.
template <typename T, typename U>
void assign(T &field, const std::optional<U> &value) {
  if (value)
    field = static_cast<T>(*value);
}

/// Parses one run description. The sections are methods of one class because
/// the rules between them need each other's values (the model's defaults use
/// train.seq_len); the model's methods are in ModelSection.cpp.
class RunParser {
public:
  explicit RunParser(const std::string &path) : diagnostics(path) {
    run.path = path;
  }

  ParseOutcome parse(const std::string &text);

private:
  const toml::table *section(llvm::StringRef name) const {
    for (const auto &[sectionName, table] : sections)
      if (sectionName == name)
        return table;
    return nullptr;
  }
  SectionReader reader(llvm::StringRef name) {
    return SectionReader(diagnostics, *findSection(name), section(name));
  }
  /// `path` relative to the run description's directory.
  std::string resolve(llvm::StringRef path) const;
  /// Reads `key` as a path that must name an existing file; the resolved
  /// path, or nothing (after reporting why).
  std::optional<std::string> existingFile(SectionReader &s,
                                          llvm::StringRef key);

  void parseTrain();
  void parseModel();
  void parseModelSizes(SectionReader &s);
  void parseModelFromHf(SectionReader &s);
  void checkPositions(SectionReader &s, llvm::StringRef positionsKey,
                      llvm::StringRef positionsName);
  /// The step's tokens (batch_size x seq_len) at most 2^40 and its largest
  /// activation (tokens x the widest of vocab, ffn and 4 x width) at most
  /// 2^48 elements: beyond them the buffer sizes overflow int64.
  void checkActivations();
  void parsePrecision();
  void parseParallel();
  /// The rules of the mesh: axes that exist, sizes that divide the model and
  /// the batch, ranks that the devices provide. `deviceCount` is devices' N
  /// (0 when it has none), nothing when devices is invalid.
  void checkMesh(SectionReader &s, std::optional<int64_t> deviceCount);
  void checkPipeline(SectionReader &s);
  /// Whether the model's sizes parsed and passed their checks.
  bool modelUsable() const;
  void parseMemory();
  void parseData();
  /// A data key's files: plain paths must exist, glob patterns must match.
  std::optional<std::vector<std::string>> dataFiles(SectionReader &s,
                                                    llvm::StringRef key);
  void parseEval();
  void parseCheckpoint();

  TomlDiagnostics diagnostics;
  /// Messages about a config.json named by hf_config.
  std::vector<ConfigDiagnostic> hfDiagnostics;
  RunDescription run;
  std::vector<std::pair<std::string, const toml::table *>> sections;
  /// train.seq_len as the model checks need it.
  bool seqLenUsable = true;
  bool seqLenGiven = false;
  SourceLocation seqLenSite;
  bool batchUsable = true;
  SourceLocation batchSite;
};

} // namespace config_detail
} // namespace llmc

#endif // LLMC_FRONTEND_CONFIG_RUNPARSER_H
