//===- Safetensors.cpp - read and write .safetensors files ----------------===//
//
// The format (https://github.com/huggingface/safetensors, "Format"):
//   u64 little-endian N | N bytes of UTF-8 JSON header | data section
// The header maps each tensor name to {"dtype", "shape", "data_offsets":
// [begin, end]} (offsets relative to the data section) and may hold a
// "__metadata__" string-to-string map. The data section must be fully
// indexed: tensors are contiguous, without holes, overlaps or trailing bytes.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Safetensors.h"
#include "runtime/io/JsonSyntax.h"

#include "runtime/io/File.h"
#include "runtime/io/MappedFile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

namespace llmc::rt {

Status parseSafetensorsView(const uint8_t *base, uint64_t size,
                            const std::string &what, SafetensorsFile &result);

namespace {

using Json = nlohmann::json;

constexpr size_t kLengthBytes = 8;

Status dataLoss(const std::string &what, const std::string &message) {
  return Status::error(StatusCode::DataLoss, what + ": " + message);
}

Status invalid(const std::string &what, const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, what + ": " + message);
}

// "a JSON number", "a JSON array", ... for messages about the header.
std::string describe(const Json &value) {
  return std::string(value.is_array() || value.is_object() ? "an " : "a ") +
         value.type_name();
}

// Python's safetensors orders tensors by dtype, largest alignment first (the
// reverse of its Dtype enum: ... I64 > F64 > F32 > I32 > BF16 > F16 >
// F8_E4M3 > F8_E5M2 > BOOL),
// then by name. Doing the same makes our files byte-identical to its files
// and keeps every tensor aligned to its element size.
int dtypeOrder(DType dtype) {
  switch (dtype) {
  case DType::I64:
    return 8;
  case DType::F64:
    return 7;
  case DType::F32:
    return 6;
  case DType::I32:
    return 5;
  case DType::BF16:
    return 4;
  case DType::F16:
    return 3;
  case DType::F8E4M3FN:
    return 2;
  case DType::F8E5M2:
    return 1;
  case DType::I1:
    return 0;
  }
  return -1;
}

bool parseSafetensorsDType(const std::string &name, DType &dtype) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == safetensorsDTypeName(static_cast<DType>(i))) {
      dtype = static_cast<DType>(i);
      return true;
    }
  return false;
}

// Strict UTF-8 (no overlong forms, no surrogates, at most U+10FFFF): the
// header is JSON, which readers reject otherwise.
bool isValidUtf8(const std::string &text) {
  size_t i = 0, n = text.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length;
    uint32_t code;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      length = 2;
      code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      length = 3;
      code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      length = 4;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + length > n)
      return false;
    for (size_t k = 1; k < length; ++k) {
      unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80)
        return false;
      code = (code << 6) | (next & 0x3f);
    }
    static const uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[length] || code > 0x10ffff ||
        (code >= 0xd800 && code <= 0xdfff))
      return false;
    i += length;
  }
  return true;
}

// numElements(shape) * elementSize, false on a negative dimension or when the
// product does not fit in int64.
bool byteCount(const Shape &shape, size_t elementSize, uint64_t &bytes) {
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 ||
        __builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count))
      return false;
  }
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(elementSize), &bytes))
    return false;
  return bytes <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

// The value as compact JSON, for messages (never throws: parsed strings are
// UTF-8 already, and a stray byte would be replaced rather than thrown on).
std::string dumpJson(const Json &value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false,
                    Json::error_handler_t::replace);
}

std::string formatOffsets(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

// Reads a JSON array of non-negative integers (shape or data_offsets).
bool readUnsignedArray(const Json &value, std::vector<uint64_t> &numbers) {
  if (!value.is_array())
    return false;
  numbers.clear();
  for (const Json &item : value) {
    if (!item.is_number_unsigned())
      return false;
    numbers.push_back(item.get<uint64_t>());
  }
  return true;
}

struct Extent {
  uint64_t begin, end;
  const std::string *name;
};

// Step 3 of parsing: one header entry into a tensor view.
Status parseEntry(const std::string &what, const std::string &name,
                  const Json &entry, const uint8_t *data, uint64_t dataBytes,
                  SafetensorsTensor &tensor, Extent &extent) {
  std::string where = "tensor '" + name + "'";
  if (!entry.is_object())
    return dataLoss(what, where +
                              ": expected an object with \"dtype\", "
                              "\"shape\" and \"data_offsets\", found " +
                              describe(entry));
  for (const char *key : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(key))
      return dataLoss(what, where + ": missing \"" + key +
                                "\" (every tensor needs \"dtype\", \"shape\" "
                                "and \"data_offsets\")");

  const Json &dtype = entry["dtype"];
  if (!dtype.is_string())
    return dataLoss(what, where +
                              ": \"dtype\" must be a string such as "
                              "\"F32\", found " +
                              describe(dtype));
  std::string dtypeName = dtype.get<std::string>();
  if (!parseSafetensorsDType(dtypeName, tensor.dtype)) {
    // 8-bit floats and small integers are what quantized checkpoints
    // (fp8, GPTQ, bitsandbytes) store; say so.
    bool quantized = dtypeName.rfind("F8", 0) == 0 || dtypeName == "I8" ||
                     dtypeName == "U8" || dtypeName == "F4" ||
                     dtypeName.rfind("F6", 0) == 0;
    return invalid(what, where + " has dtype " + dtypeName +
                             (quantized ? " (a quantized checkpoint's)" : "") +
                             ", which llmc cannot load (it loads F32, F64, "
                             "BF16, F16, I32, I64 and BOOL); " +
                             (quantized ? "use the model's bf16, f16 or f32 "
                                          "release"
                                        : "convert the tensor to one of "
                                          "those"));
  }

  std::vector<uint64_t> dims;
  if (!readUnsignedArray(entry["shape"], dims))
    return dataLoss(what, where +
                              ": \"shape\" must be a list of "
                              "non-negative integers, found " +
                              dumpJson(entry["shape"]));
  tensor.shape.clear();
  for (uint64_t dim : dims) {
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return dataLoss(what, where + ": dimension " + std::to_string(dim) +
                                " of \"shape\" does not fit in 64 bits");
    tensor.shape.push_back(static_cast<int64_t>(dim));
  }
  uint64_t expected;
  if (!byteCount(tensor.shape, dtypeSize(tensor.dtype), expected))
    return dataLoss(what, where + ": shape " + formatShape(tensor.shape) +
                              " has more bytes than fit in 64 bits");

  std::vector<uint64_t> offsets;
  if (!readUnsignedArray(entry["data_offsets"], offsets) || offsets.size() != 2)
    return dataLoss(what, where +
                              ": \"data_offsets\" must be [begin, end] "
                              "with non-negative integers, found " +
                              dumpJson(entry["data_offsets"]));
  uint64_t begin = offsets[0], end = offsets[1];
  if (end < begin)
    return dataLoss(what, where + ": data_offsets " +
                              formatOffsets(begin, end) +
                              " end before they begin");
  if (end > dataBytes)
    return dataLoss(
        what, where + ": data_offsets " + formatOffsets(begin, end) +
                  " reach beyond the data section of " +
                  std::to_string(dataBytes) + " bytes; the file is truncated");
  if (end - begin != expected)
    return dataLoss(what,
                    where + ": data_offsets " + formatOffsets(begin, end) +
                        " span " + std::to_string(end - begin) +
                        " bytes, expected " + std::to_string(expected) +
                        " for " + dtypeName + " " + formatShape(tensor.shape));
  tensor.data = data + begin;
  tensor.bytes = expected;
  extent = {begin, end, &name};
  return Status::ok();
}

} // namespace

const char *safetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::BF16:
    return "BF16";
  case DType::F16:
    return "F16";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::I1:
    return "BOOL";
  case DType::F8E4M3FN: // FP8 values live only inside a step: never
  case DType::F8E5M2:    // stored, and quantized checkpoints are refused
    break;
  }
  return "?";
}

const SafetensorsTensor *SafetensorsFile::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

Status readSafetensors(const std::string &path, SafetensorsFile &file) {
  file = SafetensorsFile();
  std::vector<uint8_t> bytes;
  if (Status status = readFile(path, bytes); !status)
    return status;
  return parseSafetensors(std::move(bytes), path, file);
}

Status mapSafetensors(const std::string &path, SafetensorsFile &file) {
  file = SafetensorsFile();
  SafetensorsFile result;
  LLMC_RETURN_IF_ERROR(MappedFile::open(path, result.mapping_));
  LLMC_RETURN_IF_ERROR(parseSafetensorsView(
      result.mapping_->data(), result.mapping_->size(), path, result));
  file = std::move(result);
  return Status::ok();
}

Status parseSafetensors(std::vector<uint8_t> bytes, const std::string &what,
                        SafetensorsFile &file) {
  file = SafetensorsFile();
  SafetensorsFile result;
  result.buffer_ = std::move(bytes);
  LLMC_RETURN_IF_ERROR(parseSafetensorsView(
      result.buffer_.data(), result.buffer_.size(), what, result));
  file = std::move(result);
  return Status::ok();
}

/// The validation of parseSafetensors on bytes that `result` keeps alive
/// (its buffer or its map): fills its tensors and metadata.
Status parseSafetensorsView(const uint8_t *base, uint64_t size,
                            const std::string &what, SafetensorsFile &result) {

  // 1. The header length, and the header within the file.
  if (size < kLengthBytes)
    return dataLoss(what, "file is " + std::to_string(size) +
                              " bytes, shorter than the 8-byte header "
                              "length; the file is truncated or not a "
                              "safetensors file");
  uint64_t headerBytes = 0;
  for (size_t i = 0; i < kLengthBytes; ++i)
    headerBytes |= static_cast<uint64_t>(base[i]) << (8 * i);
  if (headerBytes > kMaxSafetensorsHeaderBytes)
    return dataLoss(what, "header length is " + std::to_string(headerBytes) +
                              " bytes, more than the limit of " +
                              std::to_string(kMaxSafetensorsHeaderBytes) +
                              "; the file is corrupt or not a safetensors "
                              "file");
  if (headerBytes > size - kLengthBytes)
    return dataLoss(what, "header length is " + std::to_string(headerBytes) +
                              " bytes but only " +
                              std::to_string(size - kLengthBytes) +
                              " bytes follow the 8-byte length; the file is "
                              "truncated or not a safetensors file");
  const uint8_t *headerBegin = base + kLengthBytes;
  const uint8_t *headerEnd = headerBegin + headerBytes;
  const uint8_t *data = headerEnd;
  uint64_t dataBytes = size - kLengthBytes - headerBytes;

  // 2. The header is one JSON object, without a name given twice (nlohmann
  // would keep the last silently).
  std::string duplicate;
  std::set<std::string> names;
  Json header = Json::parse(
      headerBegin, headerEnd,
      [&](int depth, Json::parse_event_t event, Json &parsed) {
        if (depth == 1 && event == Json::parse_event_t::key &&
            !names.insert(parsed.get<std::string>()).second &&
            duplicate.empty())
          duplicate = parsed.get<std::string>();
        return true;
      },
      /*allow_exceptions=*/false);
  if (header.is_discarded()) {
    std::string syntax = jsonSyntaxError(
        std::string_view(reinterpret_cast<const char *>(headerBegin),
                         static_cast<size_t>(headerEnd - headerBegin)));
    return dataLoss(what, "header is not valid JSON (" + syntax +
                              "); the file is corrupt or not a safetensors "
                              "file");
  }
  if (!header.is_object())
    return dataLoss(what, "header is " + describe(header) +
                              ", expected an object that maps tensor names "
                              "to {dtype, shape, data_offsets}");
  if (!duplicate.empty())
    return dataLoss(what, "header names '" + duplicate +
                              "' twice; the file is corrupt");

  // 3. Every entry: the metadata, or a tensor of a known dtype whose byte
  // range matches its shape.
  std::vector<Extent> extents;
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        return dataLoss(what, "\"__metadata__\" must map strings to "
                              "strings, found " +
                                  describe(entry));
      for (const auto &[key, value] : entry.items()) {
        if (!value.is_string())
          return dataLoss(what, "\"__metadata__\" must map strings to "
                                "strings, found " +
                                    describe(value) + " for key '" + key + "'");
        result.metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    SafetensorsTensor tensor;
    Extent extent;
    if (Status status =
            parseEntry(what, name, entry, data, dataBytes, tensor, extent);
        !status)
      return status;
    auto inserted = result.tensors_.emplace(name, std::move(tensor));
    extents.push_back({extent.begin, extent.end, &inserted.first->first});
  }

  // 4. The tensors tile the data section: no overlap, no hole, nothing after
  // the last one (the format forbids unindexed bytes, so that a file cannot
  // hide a second payload).
  std::sort(extents.begin(), extents.end(),
            [](const Extent &a, const Extent &b) {
              return std::tie(a.begin, a.end, *a.name) <
                     std::tie(b.begin, b.end, *b.name);
            });
  uint64_t covered = 0;
  const Extent *previous = nullptr;
  for (const Extent &extent : extents) {
    if (extent.begin < covered)
      return dataLoss(what, "tensors '" + *previous->name + "' " +
                                formatOffsets(previous->begin, previous->end) +
                                " and '" + *extent.name + "' " +
                                formatOffsets(extent.begin, extent.end) +
                                " overlap; the file is corrupt");
    if (extent.begin > covered)
      return dataLoss(what, "bytes [" + std::to_string(covered) + ", " +
                                std::to_string(extent.begin) +
                                ") of the data section belong to no tensor; "
                                "the format requires every byte to be "
                                "indexed (the file is corrupt)");
    covered = extent.end;
    previous = &extent;
  }
  if (covered != dataBytes)
    return dataLoss(what, "bytes [" + std::to_string(covered) + ", " +
                              std::to_string(dataBytes) +
                              ") of the data section belong to no tensor; "
                              "the format requires every byte to be indexed "
                              "(the file is corrupt)");
  return Status::ok();
}

namespace {

// The header (length, JSON, padding) and the tensors in file order.
Status buildHeader(const std::string &what,
                   const std::map<std::string, SafetensorsTensor> &tensors,
                   const SafetensorsMetadata &metadata, std::string &header,
                   std::vector<const SafetensorsTensor *> &order,
                   std::vector<const std::string *> *names = nullptr,
                   bool needData = true) {
  auto quote = [](const std::string &text) {
    return Json(text).dump(-1, ' ', /*ensure_ascii=*/false,
                           Json::error_handler_t::replace);
  };

  // 1. Validate what the caller gave.
  for (const auto &[key, value] : metadata)
    if (!isValidUtf8(key) || !isValidUtf8(value))
      return invalid(what, "metadata '" + key +
                               "' is not valid UTF-8; the header is JSON "
                               "and must be UTF-8");
  std::vector<std::pair<const std::string *, const SafetensorsTensor *>>
      entries;
  for (const auto &[name, tensor] : tensors) {
    if (name == "__metadata__")
      return invalid(what, "a tensor cannot be called '__metadata__' (the "
                           "header reserves that name); rename it");
    if (!isValidUtf8(name))
      return invalid(what, "tensor name '" + name +
                               "' is not valid UTF-8; the header is JSON "
                               "and must be UTF-8");
    uint64_t expected;
    if (!byteCount(tensor.shape, dtypeSize(tensor.dtype), expected))
      return invalid(what, "tensor '" + name + "' has shape " +
                               formatShape(tensor.shape) +
                               "; dimensions must be non-negative and the "
                               "size must fit in 64 bits");
    if (tensor.bytes != expected)
      return invalid(what, "tensor '" + name + "' has " +
                               std::to_string(tensor.bytes) +
                               " bytes, expected " + std::to_string(expected) +
                               " for " + safetensorsDTypeName(tensor.dtype) +
                               " " + formatShape(tensor.shape));
    if (needData && expected != 0 && !tensor.data)
      return invalid(what, "tensor '" + name + "' has no data");
    entries.push_back({&name, &tensor});
  }

  // 2. The reference library's order (see dtypeOrder).
  std::stable_sort(
      entries.begin(), entries.end(), [](const auto &a, const auto &b) {
        return dtypeOrder(a.second->dtype) > dtypeOrder(b.second->dtype);
      });

  // 3. Compact JSON as serde_json writes it: "__metadata__" first, then the
  // tensors with their keys in the order dtype, shape, data_offsets.
  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[key, value] : metadata) {
      json += (first ? "" : ",") + quote(key) + ":" + quote(value);
      first = false;
    }
    json += "}";
  }
  uint64_t offset = 0;
  order.clear();
  if (names)
    names->clear();
  // A comma before every entry but the first (metadata with no tensors,
  // e.g. an optimizer file of a program without state, stays valid JSON).
  bool separate = !metadata.empty();
  for (size_t i = 0; i < entries.size(); ++i) {
    const SafetensorsTensor &tensor = *entries[i].second;
    json += (separate ? "," : "") + quote(*entries[i].first) + ":{\"dtype\":\"" +
            safetensorsDTypeName(tensor.dtype) + "\",\"shape\":[";
    for (size_t d = 0; d < tensor.shape.size(); ++d)
      json += (d ? "," : "") + std::to_string(tensor.shape[d]);
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(offset + tensor.bytes) + "]}";
    offset += tensor.bytes;
    order.push_back(&tensor);
    if (names)
      names->push_back(entries[i].first);
    separate = true;
  }
  json += "}";

  // 4. Spaces (allowed after JSON) so the data section starts 8-byte aligned.
  json.append((kLengthBytes - json.size() % kLengthBytes) % kLengthBytes, ' ');
  header.assign(kLengthBytes, '\0');
  for (size_t i = 0; i < kLengthBytes; ++i)
    header[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  header += json;
  return Status::ok();
}

} // namespace

Status
serializeSafetensors(const std::map<std::string, SafetensorsTensor> &tensors,
                     const SafetensorsMetadata &metadata,
                     std::vector<uint8_t> &out) {
  out.clear();
  std::string header;
  std::vector<const SafetensorsTensor *> order;
  if (Status status =
          buildHeader("safetensors", tensors, metadata, header, order);
      !status)
    return status;
  out.assign(header.begin(), header.end());
  for (const SafetensorsTensor *tensor : order)
    out.insert(out.end(), tensor->data, tensor->data + tensor->bytes);
  return Status::ok();
}

Status writeSafetensors(const std::string &path,
                        const std::map<std::string, SafetensorsTensor> &tensors,
                        const SafetensorsMetadata &metadata) {
  std::string header;
  std::vector<const SafetensorsTensor *> order;
  if (Status status = buildHeader(path, tensors, metadata, header, order);
      !status)
    return status;
  // The tensors are written from where they are, not copied into one buffer:
  // a checkpoint can be as large as the memory.
  AtomicFileWriter writer;
  if (Status status = writer.open(path); !status)
    return status;
  if (Status status = writer.write(header.data(), header.size()); !status)
    return status;
  for (const SafetensorsTensor *tensor : order)
    if (Status status = writer.write(tensor->data, tensor->bytes); !status)
      return status;
  return writer.commit();
}

Status writeSafetensorsStreamed(
    const std::string &path,
    const std::map<std::string, SafetensorsTensor> &tensors,
    const SafetensorsMetadata &metadata,
    const std::function<Status(const std::string &name, const uint8_t *&data)>
        &produce) {
  std::string header;
  std::vector<const SafetensorsTensor *> order;
  std::vector<const std::string *> names;
  LLMC_RETURN_IF_ERROR(buildHeader(path, tensors, metadata, header, order,
                                   &names, /*needData=*/false));
  AtomicFileWriter writer;
  LLMC_RETURN_IF_ERROR(writer.open(path));
  LLMC_RETURN_IF_ERROR(writer.write(header.data(), header.size()));
  for (size_t i = 0; i < order.size(); ++i) {
    const uint8_t *data = nullptr;
    LLMC_RETURN_IF_ERROR(produce(*names[i], data));
    if (order[i]->bytes && !data)
      return Status::error(StatusCode::Internal,
                           path + ": no bytes for tensor '" + *names[i] + "'");
    LLMC_RETURN_IF_ERROR(writer.write(data, order[i]->bytes));
  }
  return writer.commit();
}

} // namespace llmc::rt
