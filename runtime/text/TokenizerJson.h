//===- TokenizerJson.h - reading tokenizer.json with JSON paths -*- C++ -*-===//
//
// Typed access to the parsed tokenizer.json (nlohmann-json) in which every
// error names the file and the JSON path of the value, says what was
// expected and shows what was found:
//
//   tok.json: model.merges[17]: expected "left right" or ["left", "right"],
//   got 42
//
// Malformed values are InvalidArgument; parts llmc does not implement are
// Unimplemented, with what is supported.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TEXT_TOKENIZERJSON_H
#define LLMC_RUNTIME_TEXT_TOKENIZERJSON_H

#include "runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace llmc::rt::text {

using Json = nlohmann::json;

/// The file being read, for messages.
class JsonSource {
public:
  explicit JsonSource(std::string file) : file_(std::move(file)) {}
  const std::string &file() const { return file_; }

  /// InvalidArgument "FILE: PATH: MESSAGE" (PATH "" is the whole file).
  Status malformed(const std::string &path, const std::string &message) const;
  /// Unimplemented "FILE: PATH: MESSAGE".
  Status unsupported(const std::string &path,
                     const std::string &message) const;

private:
  std::string file_;
};

/// "model" + "merges" -> "model.merges"; "" + "model" -> "model".
std::string childPath(const std::string &path, std::string_view key);
/// "model.merges" + 17 -> "model.merges[17]".
std::string indexPath(const std::string &path, size_t index);
/// A key that is not an identifier, quoted: model.vocab["Ġthe"].
std::string keyPath(const std::string &path, std::string_view key);

/// A value for messages: 42, "abc" (shortened past 60 characters), null,
/// true, an array of 3 values, an object.
std::string describeJson(const Json &value);

/// The member `key` of `object` (an object), or nullptr when absent.
const Json *member(const Json &object, std::string_view key);

/// Refuses a member of `object` that is not in `known`: an option llmc does
/// not know may change what the package computes.
Status checkKeys(const JsonSource &source, const Json &object,
                 const std::string &path,
                 std::initializer_list<std::string_view> known);

/// A {"type": "Sequence", "<key>": [...]} component (normalizer,
/// pre-tokenizer, decoder, post-processor): each step parsed by
/// `parseStep(source, value, path, step)` at `<key>[i]`, null steps dropped,
/// into a new `SequenceT`'s `steps`. `what` names the steps in the message
/// for a missing or non-list `<key>`: "expected a list of <what>, got ...".
template <typename SequenceT, typename StepT, typename ParseStep>
Status parseSequence(const JsonSource &source, const Json &value,
                     const std::string &path, const char *key,
                     const char *what, ParseStep parseStep,
                     std::unique_ptr<StepT> &out) {
  LLMC_RETURN_IF_ERROR(checkKeys(source, value, path, {"type", key}));
  const Json *steps = member(value, key);
  std::string stepsPath = childPath(path, key);
  if (!steps || !steps->is_array())
    return source.malformed(stepsPath,
                            std::string("expected a list of ") + what +
                                ", got " +
                                (steps ? describeJson(*steps)
                                       : std::string("nothing")));
  auto sequence = std::make_unique<SequenceT>();
  for (size_t i = 0; i < steps->size(); ++i) {
    std::unique_ptr<StepT> step;
    LLMC_RETURN_IF_ERROR(
        parseStep(source, (*steps)[i], indexPath(stepsPath, i), step));
    if (step)
      sequence->steps.push_back(std::move(step));
  }
  out = std::move(sequence);
  return Status::ok();
}

/// Checks that `value` at `path` is an object.
Status expectObject(const JsonSource &source, const Json &value,
                    const std::string &path);

/// Required members of an object.
Status readString(const JsonSource &source, const Json &object,
                  const std::string &path, std::string_view key,
                  std::string &out);
Status readBool(const JsonSource &source, const Json &object,
                const std::string &path, std::string_view key, bool &out);
Status readUnsigned(const JsonSource &source, const Json &object,
                    const std::string &path, std::string_view key,
                    uint64_t &out);

/// Optional members: absent or null leave `out` as it is.
Status readOptionalString(const JsonSource &source, const Json &object,
                          const std::string &path, std::string_view key,
                          std::optional<std::string> &out);
Status readOptionalBool(const JsonSource &source, const Json &object,
                        const std::string &path, std::string_view key,
                        bool &out);
Status readOptionalUnsigned(const JsonSource &source, const Json &object,
                            const std::string &path, std::string_view key,
                            uint64_t &out);

/// The "type" member of a component object (a normalizer, pre-tokenizer,
/// model, post-processor or decoder).
Status readType(const JsonSource &source, const Json &object,
                const std::string &path, std::string &type);

/// A string that must be exactly one character (Metaspace's replacement,
/// Strip's content): its UTF-8 bytes.
Status readOneChar(const JsonSource &source, const Json &object,
                   const std::string &path, std::string_view key,
                   std::string &out);

} // namespace llmc::rt::text

#endif // LLMC_RUNTIME_TEXT_TOKENIZERJSON_H
