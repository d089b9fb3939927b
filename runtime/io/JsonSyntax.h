//===- JsonSyntax.h - where a JSON text stops being JSON --------*- C++ -*-===//
//
// nlohmann-json's non-throwing parse only says that a text is not JSON; the
// files the runtime reads (safetensors headers, tokenizer.json) report
// where: "parse error at line 1, column 9: syntax error while parsing
// object key - ...", found by a second, SAX pass over the text.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_IO_JSONSYNTAX_H
#define LLMC_RUNTIME_IO_JSONSYNTAX_H

#include <string>
#include <string_view>

namespace llmc::rt {

/// The syntax error of `text` with its line and column (nlohmann's message
/// without its "[json.exception.parse_error.N] " prefix); empty when `text`
/// is valid JSON.
std::string jsonSyntaxError(std::string_view text);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_IO_JSONSYNTAX_H
