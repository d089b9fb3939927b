//===- JsonSyntax.cpp - where a JSON text stops being JSON ----------------===//
#include "runtime/io/JsonSyntax.h"

#include <nlohmann/json.hpp>

namespace llmc::rt {

namespace {

using Json = nlohmann::json;

// Accepts every event and keeps the message of the first syntax error.
struct SyntaxErrorFinder : nlohmann::json_sax<Json> {
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &error) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 9: ..."
    message = error.what();
    size_t start = message.find("] ");
    if (start != std::string::npos)
      message = message.substr(start + 2);
    return false;
  }
};

} // namespace

std::string jsonSyntaxError(std::string_view text) {
  SyntaxErrorFinder finder;
  (void)Json::sax_parse(text, &finder);
  return finder.message;
}

} // namespace llmc::rt
