//===- TomlReader.cpp - typed, checked reads of a TOML table --------------===//
//
// The sections and keys of a run description (the one list the parser, the
// unknown-key check and its suggestions share) and the reader that checks a
// value's type and range where toml++ located it.
//
//===----------------------------------------------------------------------===//
#include "frontend/config/TomlReader.h"

#include <algorithm>

#include "llvm/ADT/STLExtras.h"

#include <cmath>

namespace llmc {
namespace config_detail {

using llvm::StringRef;

namespace {

// The examples are what "write e.g. key = value" hints show: realistic
// values, in the form the key wants (a float where a float is expected).
const KeySpec kModelKeys[] = {
    {"family", "\"gpt2\""},
    {"hf", "\"models/gpt2\""},
    {"hf_config", "\"config.json\""},
    {"strict", "false"},
    {"dropout", "0.0"},
    {"vocab_size", "50257"},
    {"layers", "12"},
    {"width", "768"},
    {"heads", "12"},
    {"kv_heads", "4"},
    {"ffn_width", "3072"},
    {"max_positions", "1024"},
    {"norm_eps", "1e-5"},
    {"rope_theta", "10000.0"},
    {"tie_embeddings", "true"},
    {"experts", "8"},
    {"experts_per_token", "2"},
    {"capacity_factor", "1.25"},
    {"aux_loss_weight", "0.01"},
};
const KeySpec kTrainKeys[] = {
    {"batch_size", "8"},
    {"seq_len", "1024"},
    {"steps", "1000"},
    {"learning_rate", "6e-4"},
    {"min_learning_rate", "6e-5"},
    {"warmup_steps", "100"},
    {"schedule", "\"cosine\""},
    {"weight_decay", "0.1"},
    {"decay_all", "false"},
    {"beta1", "0.9"},
    {"beta2", "0.95"},
    {"epsilon", "1e-8"},
    {"grad_clip", "1.0"},
    {"microbatches", "1"},
    {"seed", "1337"},
    {"log_every", "10"},
};
const KeySpec kPrecisionKeys[] = {
    {"policy", "\"bf16\""},
    {"initial_loss_scale", "65536.0"},
    {"loss_scale_growth_interval", "2000"},
};
const KeySpec kParallelKeys[] = {
    {"devices", "\"cuda:8\""},
    {"mesh", "\"auto\""},
    {"dp", "8"},
    {"tp", "2"},
    {"pp", "2"},
    {"cp", "2"},
    {"ep", "2"},
    {"sp", "true"},
    {"zero", "1"},
    {"pipeline_schedule", "\"1f1b\""},
    {"virtual_stages", "2"},
    {"pipeline_boundaries", "[2]"},
};
const KeySpec kMemoryKeys[] = {
    {"budget_gib", "80.0"},
    {"remat", "\"selective\""},
};
const KeySpec kDataKeys[] = {
    {"train", "\"data/train_*.bin\""},
    {"val", "\"data/val_*.bin\""},
    {"path", "\"data/train.bin\""},
    {"format", "\"tokens\""},
    {"tokenizer", "\"tokenizer.json\""},
    {"shuffle", "true"},
    {"validation_path", "\"data/val.bin\""},
};
const KeySpec kEvalKeys[] = {
    {"every", "250"},
    {"steps", "20"},
};
const KeySpec kCheckpointKeys[] = {
    {"dir", "\"checkpoints\""},
    {"every", "1000"},
    {"keep", "2"},
};
const SectionSpec kSections[] = {
    {"model", kModelKeys},           {"train", kTrainKeys},
    {"precision", kPrecisionKeys},   {"parallel", kParallelKeys},
    {"memory", kMemoryKeys},         {"data", kDataKeys},
    {"eval", kEvalKeys},             {"checkpoint", kCheckpointKeys},
};

StringRef toStringRef(std::string_view text) {
  return StringRef(text.data(), text.size());
}

std::vector<StringRef> keyNames(const SectionSpec &spec) {
  std::vector<StringRef> names;
  for (const KeySpec &key : spec.keys)
    names.push_back(key.name);
  return names;
}

std::string sectionList() {
  std::string out;
  for (const SectionSpec &spec : kSections)
    out += (out.empty() ? "[" : ", [") + std::string(spec.name) + "]";
  return out;
}

/// The section other than `except` that has a key named `key`, if any.
const SectionSpec *homeOf(StringRef key, const SectionSpec *except) {
  for (const SectionSpec &spec : kSections)
    if (&spec != except && llvm::is_contained(keyNames(spec), key))
      return &spec;
  return nullptr;
}

/// A float as TOML writes it: 8.0, not 8 (which would read as an integer).
std::string floatLiteral(double value) {
  std::string text = formatNumber(value);
  if (std::isfinite(value) && text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

/// A value's TOML type and the value itself, for "got ..." messages.
std::string describe(const toml::node &node) {
  switch (node.type()) {
  case toml::node_type::string:
    return "a string \"" + std::string(*node.value<std::string_view>()) + "\"";
  case toml::node_type::integer:
    return "an integer " + std::to_string(*node.value<int64_t>());
  case toml::node_type::floating_point:
    return "a float " + floatLiteral(*node.value<double>());
  case toml::node_type::boolean:
    return std::string("a boolean ") + (*node.value<bool>() ? "true" : "false");
  case toml::node_type::table:
    return "a table";
  case toml::node_type::array:
    return "an array";
  case toml::node_type::date:
    return "a date";
  case toml::node_type::time:
    return "a time";
  case toml::node_type::date_time:
    return "a date-time";
  case toml::node_type::none:
    break;
  }
  return "nothing";
}

} // namespace

llvm::ArrayRef<SectionSpec> runDescriptionSections() { return kSections; }

const SectionSpec *findSection(StringRef name) {
  for (const SectionSpec &spec : kSections)
    if (name == spec.name)
      return &spec;
  return nullptr;
}

bool Bound::contains(double value) const {
  if (!std::isfinite(value))
    return false;
  switch (kind) {
  case Kind::Any:
    return true;
  case Kind::Above:
    return value > low;
  case Kind::AtLeast:
    return value >= low;
  case Kind::HalfOpen:
    return value >= low && value < high;
  case Kind::Closed:
    return value >= low && value <= high;
  }
  return false;
}

std::string Bound::text() const {
  switch (kind) {
  case Kind::Any:
    return "to be finite";
  case Kind::Above:
    return "> " + formatNumber(low);
  case Kind::AtLeast:
    return ">= " + formatNumber(low);
  case Kind::HalfOpen:
    return "in [" + formatNumber(low) + ", " + formatNumber(high) + ")";
  case Kind::Closed:
    return "in [" + formatNumber(low) + ", " + formatNumber(high) + "]";
  }
  return "";
}

void TomlDiagnostics::error(const SourceLocation &location,
                            const std::string &key, std::string message) {
  if (!key.empty() && !keysWithMessages.insert(key).second)
    return;
  diagnostics.push_back(makeError(location, std::move(message)));
}

SectionReader::SectionReader(TomlDiagnostics &diagnostics,
                             const SectionSpec &spec, const toml::table *table)
    : diagnostics(diagnostics), spec(spec), table(table) {
  if (!table)
    return;
  for (auto &&[key, value] : *table) {
    (void)value;
    if (!llvm::is_contained(keyNames(spec), toStringRef(key.str())))
      reportUnknownKey(key);
  }
}

void SectionReader::reportUnknownKey(const toml::key &key) {
  StringRef name = toStringRef(key.str());
  std::string message =
      "unknown key '" + name.str() + "' in [" + spec.name + "]; ";
  std::vector<StringRef> names = keyNames(spec);
  if (const SectionSpec *home = homeOf(name, &spec))
    message += "did you mean to put it in [" + std::string(home->name) + "]?";
  else if (StringRef close = closestMatch(name, names); !close.empty())
    message += "did you mean '" + close.str() + "'?";
  else
    message += "valid keys: " + joinList(names, "");
  diagnostics.error(diagnostics.locate(key.source().begin), qualified(name),
                    message);
}

const toml::node *SectionReader::node(StringRef key) const {
  if (!table)
    return nullptr;
  return table->get(std::string_view(key.data(), key.size()));
}

SourceLocation SectionReader::header() const {
  if (!table)
    return {diagnostics.file, 0, 0};
  return diagnostics.locate(table->source().begin);
}

SourceLocation SectionReader::at(StringRef key) const {
  if (const toml::node *value = node(key))
    return diagnostics.locate(value->source().begin);
  return header();
}

std::string SectionReader::literal(StringRef key) const {
  const toml::node *value = node(key);
  if (!value)
    return "";
  switch (value->type()) {
  case toml::node_type::string:
    return "\"" + std::string(*value->value<std::string_view>()) + "\"";
  case toml::node_type::integer:
    return std::to_string(*value->value<int64_t>());
  case toml::node_type::floating_point:
    return floatLiteral(*value->value<double>());
  case toml::node_type::boolean:
    return *value->value<bool>() ? "true" : "false";
  default:
    return describe(*value);
  }
}

std::string SectionReader::example(StringRef key) const {
  for (const KeySpec &spec : spec.keys)
    if (key == spec.name)
      return key.str() + " = " + spec.example;
  return key.str();
}

void SectionReader::error(StringRef key, std::string message) {
  diagnostics.error(at(key), qualified(key), std::move(message));
}

void SectionReader::missing(StringRef key, StringRef context, StringRef fix) {
  std::string message = "missing required key '" + key.str() + "' in [" +
                        spec.name + "]" + context.str() + "; " +
                        (fix.empty() ? "add e.g. " + example(key) : fix.str());
  diagnostics.error(header(), qualified(key), message);
}

void SectionReader::wrongType(StringRef key, StringRef expected) {
  error(key, "expected " + key.str() + " to be " + expected.str() + ", got " +
                 describe(*node(key)) + "; write e.g. " + example(key));
}

std::optional<int64_t> SectionReader::integer(StringRef key, Bound bound) {
  const toml::node *value = node(key);
  if (!value || failed(key))
    return std::nullopt;
  if (!value->is_integer()) {
    wrongType(key, "an integer");
    return std::nullopt;
  }
  std::optional<int64_t> number = value->value<int64_t>();
  if (!bound.contains(static_cast<double>(*number))) {
    error(key, "expected " + key.str() + " " + bound.text() + ", got " +
                   std::to_string(*number) + "; write e.g. " + example(key));
    return std::nullopt;
  }
  return number;
}

std::optional<std::vector<int64_t>>
SectionReader::integerList(StringRef key, Bound bound) {
  const toml::node *value = node(key);
  if (!value || failed(key))
    return std::nullopt;
  const toml::array *array = value->as_array();
  if (!array || !array->is_homogeneous<int64_t>()) {
    if (!array || !array->empty()) {
      wrongType(key, "an array of integers");
      return std::nullopt;
    }
  }
  std::vector<int64_t> numbers;
  for (const toml::node &element : *array) {
    int64_t number = *element.value<int64_t>();
    if (!bound.contains(static_cast<double>(number))) {
      error(key, "expected every element of " + key.str() + " " +
                     bound.text() + ", got " + std::to_string(number) +
                     "; write e.g. " + example(key));
      return std::nullopt;
    }
    numbers.push_back(number);
  }
  return numbers;
}

std::optional<double> SectionReader::number(StringRef key, Bound bound) {
  const toml::node *value = node(key);
  if (!value || failed(key))
    return std::nullopt;
  if (!value->is_number()) {
    wrongType(key, "a number");
    return std::nullopt;
  }
  double number = value->is_integer()
                      ? static_cast<double>(*value->value<int64_t>())
                      : *value->value<double>();
  if (!bound.contains(number)) {
    error(key, "expected " + key.str() + " " + bound.text() + ", got " +
                   formatNumber(number) + "; write e.g. " + example(key));
    return std::nullopt;
  }
  return number;
}

std::optional<bool> SectionReader::boolean(StringRef key) {
  const toml::node *value = node(key);
  if (!value || failed(key))
    return std::nullopt;
  if (!value->is_boolean()) {
    wrongType(key, "a boolean");
    return std::nullopt;
  }
  return *value->value<bool>();
}

std::optional<std::string> SectionReader::string(StringRef key) {
  const toml::node *value = node(key);
  if (!value || failed(key))
    return std::nullopt;
  if (!value->is_string()) {
    wrongType(key, "a string");
    return std::nullopt;
  }
  return std::string(*value->value<std::string_view>());
}

std::optional<std::vector<std::string>>
SectionReader::stringList(StringRef key) {
  const toml::node *value = node(key);
  if (!value || failed(key))
    return std::nullopt;
  std::vector<std::string> items;
  if (value->is_string()) {
    items.emplace_back(*value->value<std::string_view>());
  } else if (const toml::array *array = value->as_array();
             array && (array->empty() || array->is_homogeneous<std::string>())) {
    for (const toml::node &element : *array)
      items.emplace_back(*element.value<std::string_view>());
  } else {
    wrongType(key, "a string or an array of strings");
    return std::nullopt;
  }
  if (items.empty() ||
      std::any_of(items.begin(), items.end(),
                  [](const std::string &item) { return item.empty(); })) {
    error(key, "expected " + key.str() +
                   " to name files (paths or glob patterns), got an empty " +
                   (items.empty() ? "array" : "string") + "; write e.g. " +
                   example(key));
    return std::nullopt;
  }
  return items;
}

std::optional<size_t>
SectionReader::choiceIndex(StringRef key, llvm::ArrayRef<StringRef> names) {
  std::optional<std::string> text = string(key);
  if (!text)
    return std::nullopt;
  for (size_t i = 0; i < names.size(); ++i)
    if (*text == names[i])
      return i;
  std::string message = "expected " + key.str() + " to be one of " +
                        joinList(names, "\"") + ", got \"" + *text + "\"; ";
  if (StringRef close = closestMatch(*text, names); !close.empty())
    message += "did you mean \"" + close.str() + "\"?";
  else
    message += "write e.g. " + example(key);
  error(key, message);
  return std::nullopt;
}

void SectionReader::recordPending(std::vector<PendingField> &pending,
                                  StringRef key, StringRef issue) const {
  if (!given(key) || failed(key))
    return;
  pending.push_back({at(key), qualified(key), issue.str()});
}

std::vector<std::pair<std::string, const toml::table *>>
readSections(TomlDiagnostics &diagnostics, const toml::table &root) {
  std::vector<std::pair<std::string, const toml::table *>> sections;
  for (auto &&[key, value] : root) {
    std::string name(key.str());
    SourceLocation where = diagnostics.locate(value.source().begin);
    if (findSection(name)) {
      if (const toml::table *table = value.as_table()) {
        sections.emplace_back(name, table);
        continue;
      }
      diagnostics.error(where, name,
                        "expected [" + name + "] to be a table, got " +
                            describe(value) + "; write [" + name +
                            "] on a line of its own, followed by its keys");
      continue;
    }
    std::vector<StringRef> names;
    for (const SectionSpec &spec : kSections)
      names.push_back(spec.name);
    if (value.is_table() || value.is_array_of_tables()) {
      std::string message = "unknown section [" + name + "]; ";
      if (StringRef close = closestMatch(name, names); !close.empty())
        message += "did you mean [" + close.str() + "]?";
      else
        message += "valid sections: " + sectionList();
      diagnostics.error(where, name, message);
      continue;
    }
    // A key before the first header: usually one that belongs in a section.
    std::string message = "unknown key '" + name + "' outside any section; ";
    if (const SectionSpec *home = homeOf(name, nullptr))
      message += "move it under [" + std::string(home->name) + "]";
    else
      message += "keys belong in a section: " + sectionList();
    diagnostics.error(diagnostics.locate(key.source().begin), name, message);
  }
  return sections;
}

} // namespace config_detail
} // namespace llmc
