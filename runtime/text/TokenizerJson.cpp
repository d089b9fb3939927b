//===- TokenizerJson.cpp - reading tokenizer.json with JSON paths ---------===//

#include "runtime/text/TokenizerJson.h"

#include "runtime/text/Utf8.h"

namespace llmc::rt::text {

namespace {

bool isIdentifier(std::string_view key) {
  if (key.empty())
    return false;
  for (char c : key)
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9')))
      return false;
  return true;
}

std::string quote(std::string_view text) {
  return Json(std::string(text))
      .dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

Status typeError(const JsonSource &source, const std::string &path,
                 const char *expected, const Json &found) {
  return source.malformed(path, std::string("expected ") + expected +
                                    ", got " + describeJson(found));
}

} // namespace

Status JsonSource::malformed(const std::string &path,
                             const std::string &message) const {
  return Status::error(StatusCode::InvalidArgument,
                       file_ + ": " + (path.empty() ? "" : path + ": ") +
                           message);
}

Status JsonSource::unsupported(const std::string &path,
                               const std::string &message) const {
  return Status::error(StatusCode::Unimplemented,
                       file_ + ": " + (path.empty() ? "" : path + ": ") +
                           message);
}

std::string childPath(const std::string &path, std::string_view key) {
  if (!isIdentifier(key))
    return keyPath(path, key);
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string indexPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string keyPath(const std::string &path, std::string_view key) {
  return path + "[" + quote(key) + "]";
}

std::string describeJson(const Json &value) {
  switch (value.type()) {
  case Json::value_t::array:
    return value.empty() ? "an empty array"
                         : "an array of " + std::to_string(value.size()) +
                               (value.size() == 1 ? " value" : " values");
  case Json::value_t::object:
    return "an object";
  case Json::value_t::string: {
    const std::string &text = value.get_ref<const std::string &>();
    constexpr size_t kShown = 60;
    if (text.size() <= kShown)
      return quote(text);
    // Cut at a character boundary.
    size_t cut = kShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80)
      --cut;
    return quote(text.substr(0, cut)) + "... (" +
           std::to_string(text.size()) + " bytes)";
  }
  default:
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

const Json *member(const Json &object, std::string_view key) {
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

Status checkKeys(const JsonSource &source, const Json &object,
                 const std::string &path,
                 std::initializer_list<std::string_view> known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool found = false;
    for (std::string_view key : known)
      found = found || key == it.key();
    if (found)
      continue;
    std::string list;
    for (std::string_view key : known)
      list += (list.empty() ? "" : ", ") + std::string(key);
    return source.unsupported(childPath(path, it.key()),
                              "unknown option (llmc reads " + list +
                                  " here); remove it if the tokenizers "
                                  "package ignores it too");
  }
  return Status::ok();
}

Status expectObject(const JsonSource &source, const Json &value,
                    const std::string &path) {
  if (!value.is_object())
    return typeError(source, path, "an object", value);
  return Status::ok();
}

Status readString(const JsonSource &source, const Json &object,
                  const std::string &path, std::string_view key,
                  std::string &out) {
  const Json *value = member(object, key);
  if (!value)
    return source.malformed(path, "missing \"" + std::string(key) +
                                      "\" (a string)");
  if (!value->is_string())
    return typeError(source, childPath(path, key), "a string", *value);
  out = value->get<std::string>();
  return Status::ok();
}

Status readBool(const JsonSource &source, const Json &object,
                const std::string &path, std::string_view key, bool &out) {
  const Json *value = member(object, key);
  if (!value)
    return source.malformed(path, "missing \"" + std::string(key) +
                                      "\" (true or false)");
  if (!value->is_boolean())
    return typeError(source, childPath(path, key), "true or false", *value);
  out = value->get<bool>();
  return Status::ok();
}

Status readUnsigned(const JsonSource &source, const Json &object,
                    const std::string &path, std::string_view key,
                    uint64_t &out) {
  const Json *value = member(object, key);
  if (!value)
    return source.malformed(path, "missing \"" + std::string(key) +
                                      "\" (a non-negative integer)");
  if (!value->is_number_unsigned())
    return typeError(source, childPath(path, key), "a non-negative integer",
                     *value);
  out = value->get<uint64_t>();
  return Status::ok();
}

Status readOptionalString(const JsonSource &source, const Json &object,
                          const std::string &path, std::string_view key,
                          std::optional<std::string> &out) {
  const Json *value = member(object, key);
  if (!value || value->is_null())
    return Status::ok();
  if (!value->is_string())
    return typeError(source, childPath(path, key), "a string or null",
                     *value);
  out = value->get<std::string>();
  return Status::ok();
}

Status readOptionalBool(const JsonSource &source, const Json &object,
                        const std::string &path, std::string_view key,
                        bool &out) {
  const Json *value = member(object, key);
  if (!value || value->is_null())
    return Status::ok();
  if (!value->is_boolean())
    return typeError(source, childPath(path, key), "true or false", *value);
  out = value->get<bool>();
  return Status::ok();
}

Status readOptionalUnsigned(const JsonSource &source, const Json &object,
                            const std::string &path, std::string_view key,
                            uint64_t &out) {
  const Json *value = member(object, key);
  if (!value || value->is_null())
    return Status::ok();
  if (!value->is_number_unsigned())
    return typeError(source, childPath(path, key), "a non-negative integer",
                     *value);
  out = value->get<uint64_t>();
  return Status::ok();
}

Status readType(const JsonSource &source, const Json &object,
                const std::string &path, std::string &type) {
  LLMC_RETURN_IF_ERROR(expectObject(source, object, path));
  return readString(source, object, path, "type", type);
}

Status readOneChar(const JsonSource &source, const Json &object,
                   const std::string &path, std::string_view key,
                   std::string &out) {
  LLMC_RETURN_IF_ERROR(readString(source, object, path, key, out));
  size_t i = 0;
  if (out.empty() || (nextCodePoint(out, i), i != out.size()))
    return source.malformed(childPath(path, key),
                            "expected exactly one character, got " +
                                quote(out));
  return Status::ok();
}

} // namespace llmc::rt::text
