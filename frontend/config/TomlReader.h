//===- TomlReader.h - typed, checked reads of a TOML table ------*- C++ -*-===//
//
// Private to frontend/config. The list of sections and keys of a run
// description, and SectionReader, which reads one section's keys with their
// types and ranges and reports each problem once, at the position toml++
// recorded for it. RunDescription.cpp turns what it reads into the structs.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_CONFIG_TOMLREADER_H
#define LLMC_FRONTEND_CONFIG_TOMLREADER_H

#include "frontend/config/ConfigDetail.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

// toml++ is used header-only. LLVM-flagged targets build with
// -fno-exceptions and plain ones with exceptions; fixing the mode here makes
// toml::parse return a parse_result (never throw) in both.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>
static_assert(!TOML_EXCEPTIONS, "the config parser expects toml::parse_result");

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace llmc {
namespace config_detail {

/// A key of a run description and a value to show in "write e.g. ..." hints.
struct KeySpec {
  const char *name;
  const char *example;
};
struct SectionSpec {
  const char *name;
  llvm::ArrayRef<KeySpec> keys;
};

/// Every section of a run description, in the order the docs list them.
llvm::ArrayRef<SectionSpec> runDescriptionSections();
const SectionSpec *findSection(llvm::StringRef name);

/// The values a number may take.
struct Bound {
  enum class Kind { Any, Above, AtLeast, HalfOpen, Closed };
  Kind kind = Kind::Any;
  double low = 0, high = 0;

  static Bound above(double low) { return {Kind::Above, low, 0}; }
  static Bound atLeast(double low) { return {Kind::AtLeast, low, 0}; }
  /// [low, high)
  static Bound halfOpen(double low, double high) {
    return {Kind::HalfOpen, low, high};
  }
  /// [low, high]
  static Bound closed(double low, double high) {
    return {Kind::Closed, low, high};
  }
  bool contains(double value) const;
  /// "> 0", ">= 1", "in [0, 1)", "in [0, 3]".
  std::string text() const;
};

/// The messages about one TOML file; at most one per key ("model.heads").
class TomlDiagnostics {
public:
  explicit TomlDiagnostics(std::string file) : file(std::move(file)) {}

  SourceLocation locate(const toml::source_position &position) const {
    return {file, static_cast<int>(position.line),
            static_cast<int>(position.column)};
  }
  /// Adds an error unless `key` (when not empty) already has one.
  void error(const SourceLocation &location, const std::string &key,
             std::string message);
  bool hasMessage(const std::string &key) const {
    return keysWithMessages.count(key) != 0;
  }

  const std::string file;
  std::vector<ConfigDiagnostic> diagnostics;

private:
  std::set<std::string> keysWithMessages;
};

/// Reads the keys of one section. Every accessor returns nothing when the key
/// is absent or wrong (and then reports it); report-once is per key, so a key
/// with a wrong type is not also reported by a later consistency check.
class SectionReader {
public:
  /// `table` is null when the file has no such section. Reports the table's
  /// unknown keys, with a suggestion when one is close.
  SectionReader(TomlDiagnostics &diagnostics, const SectionSpec &spec,
                const toml::table *table);

  const char *section() const { return spec.name; }
  bool present() const { return table != nullptr; }
  bool given(llvm::StringRef key) const { return node(key) != nullptr; }
  /// Whether `key` has a message already (its value must not be used).
  bool failed(llvm::StringRef key) const {
    return diagnostics.hasMessage(qualified(key));
  }
  /// The position of the key's value, or of the section header when the key
  /// is absent (or of nothing when the section is absent too).
  SourceLocation at(llvm::StringRef key) const;
  SourceLocation header() const;
  /// The value as the file wrote it: 12, 0.5, "gpt2", true.
  std::string literal(llvm::StringRef key) const;
  /// "layers = 12": the key with its example value.
  std::string example(llvm::StringRef key) const;

  /// Reports `message` at the key (once per key).
  void error(llvm::StringRef key, std::string message);
  /// Reports a missing required key at the section header; `context` follows
  /// the section name (" for family \"llama\""), `fix` replaces the default
  /// "add e.g. <example>".
  void missing(llvm::StringRef key, llvm::StringRef context = "",
               llvm::StringRef fix = "");

  std::optional<int64_t> integer(llvm::StringRef key, Bound bound = {});
  /// An array of integers, each within `bound` ([1, 3]; [] is empty).
  std::optional<std::vector<int64_t>> integerList(llvm::StringRef key,
                                                  Bound bound = {});
  /// A float; an integer is accepted too (rope_theta = 10000).
  std::optional<double> number(llvm::StringRef key, Bound bound = {});
  std::optional<bool> boolean(llvm::StringRef key);
  std::optional<std::string> string(llvm::StringRef key);
  /// A string, or an array of strings ("a.bin" or ["a.bin", "b.bin"]);
  /// empty strings are an error.
  std::optional<std::vector<std::string>> stringList(llvm::StringRef key);
  /// One of the named values.
  template <typename E>
  std::optional<E>
  choice(llvm::StringRef key,
         llvm::ArrayRef<std::pair<llvm::StringRef, E>> options) {
    std::vector<llvm::StringRef> names;
    for (const auto &option : options)
      names.push_back(option.first);
    if (std::optional<size_t> index = choiceIndex(key, names))
      return options[*index].second;
    return std::nullopt;
  }

  /// Records `key` as given but not yet implemented (by `issue`) when the file
  /// sets it and it has no message.
  void recordPending(std::vector<PendingField> &pending, llvm::StringRef key,
                     llvm::StringRef issue) const;

private:
  const toml::node *node(llvm::StringRef key) const;
  std::string qualified(llvm::StringRef key) const {
    return (llvm::Twine(spec.name) + "." + key).str();
  }
  void wrongType(llvm::StringRef key, llvm::StringRef expected);
  std::optional<size_t> choiceIndex(llvm::StringRef key,
                                    llvm::ArrayRef<llvm::StringRef> names);
  void reportUnknownKey(const toml::key &key);

  TomlDiagnostics &diagnostics;
  const SectionSpec &spec;
  const toml::table *table;
};

/// Reports the root's keys that are not sections (or not tables) and returns
/// the sections that are, by name.
std::vector<std::pair<std::string, const toml::table *>>
readSections(TomlDiagnostics &diagnostics, const toml::table &root);

} // namespace config_detail
} // namespace llmc

#endif // LLMC_FRONTEND_CONFIG_TOMLREADER_H
