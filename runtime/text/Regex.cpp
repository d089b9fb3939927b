//===- Regex.cpp - PCRE2 for the tokenizer's patterns ---------------------===//
//
// Subjects are validated as UTF-8 once per encode (Tokenizer::encode), so
// matches pass PCRE2_NO_UTF_CHECK: without it PCRE2 would check the whole
// subject again on every call, quadratic over a text's pre-tokens.
//
//===----------------------------------------------------------------------===//

#include "runtime/text/Regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "runtime/text/Utf8.h"

namespace llmc::rt::text {

namespace {

// The JIT stack: patterns of tokenizers need little (their repeats do not
// nest), but a long run of one class under a look-ahead can; 1 MiB is what
// PCRE2's documentation suggests for "large" patterns, allocated lazily.
constexpr size_t kJitStackStart = 32 * 1024;
constexpr size_t kJitStackMax = 1024 * 1024;

std::string pcre2Message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof(buffer)) < 0)
    return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char *>(buffer);
}

} // namespace

struct RegexScratch::Buffers {
  pcre2_match_data *data = nullptr;
  pcre2_match_context *context = nullptr;
  pcre2_jit_stack *stack = nullptr;
  ~Buffers() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
  }
};

RegexScratch::RegexScratch() : buffers_(std::make_unique<Buffers>()) {}
RegexScratch::~RegexScratch() = default;

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code *>(code_)); }

std::unique_ptr<Regex> Regex::compile(const std::string &pattern,
                                      std::string &error) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code *compiled = pcre2_compile(
      reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
      PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &code, &offset, nullptr);
  if (!compiled) {
    error = pcre2Message(code) + " at offset " + std::to_string(offset);
    return nullptr;
  }
  std::unique_ptr<Regex> regex(new Regex());
  regex->pattern_ = pattern;
  regex->code_ = compiled;
  // Without JIT support (an exotic CPU) PCRE2's interpreter gives the same
  // matches, only slower; jitCompiled() lets the caller say so.
  regex->jit_ = pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE) == 0;
  return regex;
}

Status Regex::forEachMatch(std::string_view text, RegexScratch &scratch,
                           FunctionRef<Status(Range)> onMatch) const {
  RegexScratch::Buffers &buffers = *scratch.buffers_;
  if (!buffers.data) {
    buffers.data = pcre2_match_data_create(1, nullptr);
    buffers.context = pcre2_match_context_create(nullptr);
    if (!buffers.data || !buffers.context)
      return Status::error(StatusCode::Internal,
                           "out of memory for PCRE2 match buffers");
    // Without JIT support there is no JIT stack (nor a need for one).
    buffers.stack = pcre2_jit_stack_create(kJitStackStart, kJitStackMax,
                                           nullptr);
    if (buffers.stack)
      pcre2_jit_stack_assign(buffers.context, nullptr, buffers.stack);
  }
  auto *compiled = static_cast<const pcre2_code *>(code_);
  const auto *subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t lastEnd = 0;
  bool hadMatch = false;
  size_t lastMatchEnd = 0;
  while (lastEnd <= text.size()) {
    int rc = pcre2_match(compiled, subject, text.size(), lastEnd,
                         PCRE2_NO_UTF_CHECK, buffers.data, buffers.context);
    if (rc == PCRE2_ERROR_NOMATCH)
      break;
    if (rc < 0)
      return Status::error(StatusCode::Internal,
                           "regex /" + pattern_ + "/ failed at byte " +
                               std::to_string(lastEnd) + ": " +
                               pcre2Message(rc));
    PCRE2_SIZE *vector = pcre2_get_ovector_pointer(buffers.data);
    size_t begin = vector[0], end = vector[1];
    if (begin == end && hadMatch && lastMatchEnd == end) {
      // The onig crate refuses an empty match that touches the previous
      // match and moves on by one character.
      lastEnd += lastEnd < text.size()
                     ? utf8SequenceLength(
                           static_cast<unsigned char>(text[lastEnd]))
                     : 1;
      continue;
    }
    lastEnd = end;
    lastMatchEnd = end;
    hadMatch = true;
    // The ovector is copied out: onMatch may run other patterns on the
    // same scratch.
    LLMC_RETURN_IF_ERROR(onMatch(Range{begin, end}));
  }
  return Status::ok();
}

} // namespace llmc::rt::text
