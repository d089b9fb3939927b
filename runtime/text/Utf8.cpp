//===- Utf8.cpp - UTF-8 helpers of the tokenizer --------------------------===//
//
// Validation and the lossy conversion share one decoder of a sequence's
// length, written after the table of well-formed byte sequences in the
// Unicode standard (table 3-7): the second byte's range depends on the lead.
//
//===----------------------------------------------------------------------===//

#include "runtime/text/Utf8.h"

#include <utf8proc.h>

namespace llmc::rt::text {

namespace {

/// The length of the well-formed sequence at text[i], or 0 with `prefix`
/// set to the length of its longest well-formed prefix (at least 1): the
/// "maximal subpart" that one U+FFFD replaces.
size_t wellFormedLength(std::string_view text, size_t i, size_t &prefix) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  prefix = 1;
  if (lead < 0x80)
    return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xbf; // range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0)
      low = 0xa0;
    if (lead == 0xed)
      high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0)
      low = 0x90;
    if (lead == 0xf4)
      high = 0x8f;
  } else {
    return 0;
  }
  for (size_t k = 1; k < length; ++k) {
    if (i + k >= text.size())
      return 0;
    unsigned char next = byte(i + k);
    unsigned char lo = k == 1 ? low : 0x80, hi = k == 1 ? high : 0xbf;
    if (next < lo || next > hi)
      return 0;
    prefix = k + 1;
  }
  return length;
}

} // namespace

size_t firstInvalidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    // ASCII runs, eight bytes at a time.
    while (i + 8 <= text.size()) {
      uint64_t word;
      __builtin_memcpy(&word, text.data() + i, 8);
      if (word & 0x8080808080808080ull)
        break;
      i += 8;
    }
    if (i >= text.size())
      break;
    size_t prefix;
    size_t length = wellFormedLength(text, i, prefix);
    if (length == 0)
      return i;
    i += length;
  }
  return std::string_view::npos;
}

char32_t nextCodePoint(std::string_view text, size_t &i) {
  unsigned char lead = static_cast<unsigned char>(text[i]);
  size_t length = utf8SequenceLength(lead);
  char32_t code = length == 1   ? lead
                  : length == 2 ? lead & 0x1f
                  : length == 3 ? lead & 0x0f
                                : lead & 0x07;
  for (size_t k = 1; k < length; ++k)
    code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
  i += length;
  return code;
}

char32_t previousCodePoint(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80)
    --start;
  return nextCodePoint(text, start);
}

void appendUtf8(std::string &out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

std::string fromUtf8Lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    size_t prefix;
    size_t length = wellFormedLength(bytes, i, prefix);
    if (length) {
      out.append(bytes.data() + i, length);
      i += length;
    } else {
      out += "\xef\xbf\xbd"; // U+FFFD
      i += prefix;
    }
  }
  return out;
}

bool isWhiteSpace(char32_t c) {
  // PropList.txt, White_Space (stable since Unicode 6.3).
  return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
         c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

bool isWordChar(char32_t c) {
  if (c < 0x80)
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '_';
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
  case UTF8PROC_CATEGORY_LU:
  case UTF8PROC_CATEGORY_LL:
  case UTF8PROC_CATEGORY_LT:
  case UTF8PROC_CATEGORY_LM:
  case UTF8PROC_CATEGORY_LO:
  case UTF8PROC_CATEGORY_NL:
  case UTF8PROC_CATEGORY_MN:
  case UTF8PROC_CATEGORY_MC:
  case UTF8PROC_CATEGORY_ME:
  case UTF8PROC_CATEGORY_ND:
  case UTF8PROC_CATEGORY_PC:
    return true;
  default:
    break;
  }
  // Join_Control, and the symbols that are Other_Alphabetic (circled and
  // squared Latin letters): Alphabetic beyond letters, Nl and marks.
  return c == 0x200c || c == 0x200d || (c >= 0x24b6 && c <= 0x24e9) ||
         (c >= 0x1f130 && c <= 0x1f149) || (c >= 0x1f150 && c <= 0x1f169) ||
         (c >= 0x1f170 && c <= 0x1f189);
}

} // namespace llmc::rt::text
