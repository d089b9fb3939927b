//===- Utf8.h - UTF-8 helpers of the tokenizer ------------------*- C++ -*-===//
//
// What the tokenizer needs of UTF-8 and Unicode beyond the regex engine:
// validation, code point iteration, Rust's lossy conversion (decoded bytes
// that are not UTF-8 become U+FFFD as `String::from_utf8_lossy` makes them),
// and the two character classes the added-token options test (White_Space,
// and the Unicode `\w` of Rust's regex crate).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_UTF8_H
#define LLMC_RUNTIME_TEXT_UTF8_H

#include <cstddef>
#include <string>
#include <string_view>

namespace llmc::rt::text {

/// The byte offset of the first byte that does not start a valid UTF-8
/// sequence, or std::string_view::npos when all of `text` is UTF-8.
size_t firstInvalidUtf8(std::string_view text);

/// The number of bytes of the sequence that `lead` starts (valid text).
inline size_t utf8SequenceLength(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

/// The code point at text[i] of valid UTF-8; advances i past it.
char32_t nextCodePoint(std::string_view text, size_t &i);

/// The code point just before byte `end` of valid UTF-8 (end > 0).
char32_t previousCodePoint(std::string_view text, size_t end);

void appendUtf8(std::string &out, char32_t c);

/// `bytes` as text, each maximal ill-formed subsequence replaced by U+FFFD
/// (Unicode's recommended practice, which Rust's from_utf8_lossy follows).
std::string fromUtf8Lossy(std::string_view bytes);

/// Unicode's White_Space property (what `\s` matches in Rust's regex crate).
bool isWhiteSpace(char32_t c);

/// Rust's Unicode `\w`: Alphabetic, marks, decimal digits, connector
/// punctuation and the joiners (general categories through utf8proc).
bool isWordChar(char32_t c);

} // namespace llmc::rt::text

#endif // LLMC_RUNTIME_TEXT_UTF8_H
