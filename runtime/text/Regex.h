//===- Regex.h - PCRE2 for the tokenizer's patterns -------------*- C++ -*-===//
//
// The tokenizers package compiles its patterns with Oniguruma; llmc uses
// PCRE2 (docs/tokenizer.md says why): both are backtracking engines with
// Unicode properties (\p{L}, \p{N}) and look-around (`\s+(?!\S)`), and PCRE2
// has a JIT. This wrapper compiles with UTF, UCP and MULTILINE (Oniguruma's
// `^` and `$` match at line ends), and iterates matches exactly as the onig
// crate's find_iter does.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_REGEX_H
#define LLMC_RUNTIME_TEXT_REGEX_H

#include "runtime/Status.h"
#include "runtime/text/FunctionRef.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace llmc::rt::text {

/// A byte range [begin, end) of a text.
struct Range {
  size_t begin, end;
};

/// Per-thread match buffers (PCRE2 match data, match context and JIT stack).
class RegexScratch {
public:
  RegexScratch();
  ~RegexScratch();
  RegexScratch(const RegexScratch &) = delete;
  RegexScratch &operator=(const RegexScratch &) = delete;

private:
  friend class Regex;
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

class Regex {
public:
  ~Regex();
  /// Compiles `pattern`; on failure `error` says what PCRE2 found and
  /// where ("missing closing parenthesis at offset 4").
  static std::unique_ptr<Regex> compile(const std::string &pattern,
                                        std::string &error);

  /// Calls `onMatch` with the [begin, end) of every match in `text` (valid
  /// UTF-8), in order, as the onig crate's find_iter yields them: the search
  /// resumes at the end of each match, and an empty match right at the end
  /// of the previous one is skipped by advancing one character. Stops at the
  /// first error, of the engine or of `onMatch`.
  Status forEachMatch(std::string_view text, RegexScratch &scratch,
                      FunctionRef<Status(Range)> onMatch) const;

  const std::string &pattern() const { return pattern_; }
  /// Whether PCRE2's JIT compiled it (else the interpreter runs it).
  bool jitCompiled() const { return jit_; }

private:
  Regex() = default;
  std::string pattern_;
  void *code_ = nullptr; // pcre2_code_8
  bool jit_ = false;
};

} // namespace llmc::rt::text

#endif // LLMC_RUNTIME_TEXT_REGEX_H
