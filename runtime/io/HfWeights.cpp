//===- HfWeights.cpp - Hugging Face weight files and their names ----------===//
//
// 1. WeightFiles::open resolves the files (one, or an index's shards),
//    maps each and joins their names.
// 2. planWeights finds each parameter's tensors (names with and without
//    prefix, Mixtral's per-expert or fused experts), checks shapes and
//    types, checks a tied head saved twice, and reports what is missing or
//    unused in one message.
// 3. convertElements / assembleWeight make a parameter's bytes in its own
//    type.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/HfWeights.h"

#include "runtime/cpu/ThreadPool.h"
#include "runtime/io/File.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace llmc::rt {

namespace {

using Json = nlohmann::json;

constexpr const char *kSingleFile = "model.safetensors";
constexpr const char *kIndexFile = "model.safetensors.index.json";

Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, message);
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// "a, b, c" with at most `limit` items, then "and N more".
std::string listSome(const std::vector<std::string> &items,
                     size_t limit = 8) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i)
    out += (i ? ", " : "") + items[i];
  if (items.size() > limit)
    out += " and " + std::to_string(items.size() - limit) + " more";
  return out;
}

std::string typeText(const SafetensorsTensor &t) {
  return std::string(dtypeName(t.dtype)) + formatShape(t.shape);
}

} // namespace

//===----------------------------------------------------------------------===//
// 1. The files
//===----------------------------------------------------------------------===//

const SafetensorsTensor *WeightFiles::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.tensor;
}

const std::string &WeightFiles::fileOf(const std::string &name) const {
  static const std::string kNone;
  auto it = tensors_.find(name);
  return it == tensors_.end() ? kNone : paths_[it->second.file];
}

Status WeightFiles::open(const std::string &path, WeightFiles &files) {
  files = WeightFiles();
  WeightFiles result;
  result.source_ = path;
  std::error_code error;
  std::string single = path, index;
  if (fs::is_directory(path, error)) {
    single = (fs::path(path) / kSingleFile).string();
    index = (fs::path(path) / kIndexFile).string();
    if (fs::exists(single, error))
      index.clear();
    else if (!fs::exists(index, error))
      return Status::error(
          StatusCode::NotFound,
          path + ": no " + kSingleFile + " and no " + kIndexFile +
              (fs::exists(fs::path(path) / "pytorch_model.bin", error)
                   ? " (pytorch_model.bin is a pickle, which llmc does not "
                     "read: save the model with safe_serialization=True)"
                   : "") +
              "; give a folder or a file of safetensors weights");
  } else if (endsWith(path, ".json")) {
    index = path;
  }

  // The shards an index lists, in name order, and which tensor is where.
  std::vector<std::string> shardPaths;
  std::map<std::string, std::string> weightMap;
  if (!index.empty()) {
    std::vector<uint8_t> bytes;
    LLMC_RETURN_IF_ERROR(readFile(index, bytes));
    Json parsed = Json::parse(bytes.begin(), bytes.end(), nullptr,
                              /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object() ||
        !parsed.contains("weight_map") || !parsed["weight_map"].is_object())
      return Status::error(StatusCode::DataLoss,
                           index + ": expected a JSON object with "
                                   "\"weight_map\": {tensor name: shard "
                                   "file}, as transformers writes it; the "
                                   "index is damaged");
    std::set<std::string> seen;
    for (const auto &[name, file] : parsed["weight_map"].items()) {
      if (!file.is_string())
        return Status::error(StatusCode::DataLoss,
                             index + ": weight_map[\"" + name +
                                 "\"] must name a file, found " +
                                 file.type_name());
      std::string shard =
          (fs::path(index).parent_path() / file.get<std::string>()).string();
      weightMap[name] = shard;
      if (seen.insert(shard).second)
        shardPaths.push_back(shard);
    }
    std::sort(shardPaths.begin(), shardPaths.end());
  } else {
    shardPaths.push_back(single);
  }

  result.files_.resize(shardPaths.size());
  for (size_t f = 0; f < shardPaths.size(); ++f) {
    Status status = mapSafetensors(shardPaths[f], result.files_[f]);
    if (!status)
      return index.empty() ? status
                           : Status::error(status.code(),
                                           status.message() + " (a shard " +
                                               index + " lists)");
    result.paths_.push_back(shardPaths[f]);
    for (const auto &[name, tensor] : result.files_[f].tensors()) {
      auto [it, inserted] = result.tensors_.emplace(name, Entry{&tensor, f});
      if (!inserted)
        return Status::error(StatusCode::DataLoss,
                             "tensor '" + name + "' is in both " +
                                 result.paths_[it->second.file] + " and " +
                                 shardPaths[f] +
                                 "; the checkpoint's shards overlap");
    }
  }
  for (const auto &[name, shard] : weightMap) {
    const std::string &where = result.fileOf(name);
    if (where != shard)
      return Status::error(StatusCode::DataLoss,
                           index + " puts '" + name + "' in " + shard +
                               ", which has no such tensor" +
                               (where.empty() ? "" : " (it is in " + where +
                                                         ")") +
                               "; the index does not match its shards");
  }
  files = std::move(result);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// 2. The plan
//===----------------------------------------------------------------------===//

namespace {

/// What planWeights learns, and the messages it collects.
class Planner {
public:
  Planner(const WeightFiles &files) : files(files) {}

  /// The file's name for llmc's `name`: the same, or without the
  /// `transformer.` / `model.` prefix (GPT2Model and LlamaModel files).
  std::string lookup(const std::string &name) const {
    if (files.find(name))
      return name;
    for (const char *prefix : {"transformer.", "model."}) {
      size_t n = std::strlen(prefix);
      if (name.compare(0, n, prefix) == 0 && files.find(name.substr(n)))
        return name.substr(n);
    }
    return "";
  }

  /// Whether `file` can fill a run of `target`: a float tensor of `shape`.
  bool fits(const std::string &file, const WeightTarget &target,
            const Shape &shape) {
    const SafetensorsTensor &t = *files.find(file);
    used.insert(file);
    if (!isFloat(t.dtype) || t.dtype == DType::I1) {
      wrong.push_back("'" + file + "' is " + dtypeName(t.dtype) +
                      ", not a floating-point tensor, for '" + target.name +
                      "'");
      return false;
    }
    if (t.shape != shape) {
      wrong.push_back("'" + file + "' is " + typeText(t) + " where '" +
                      target.name + "' needs " + formatShape(shape));
      return false;
    }
    return true;
  }

  /// A whole tensor of the target's shape, or nothing.
  bool whole(const std::string &file, const WeightTarget &target,
             WeightSource &source) {
    if (file.empty())
      return false;
    if (fits(file, target, target.shape))
      source.pieces.push_back({file, 0, numElements(target.shape), 0});
    return true;
  }

  /// Mixtral's stacked experts `<prefix>block_sparse_moe.experts.wN.weight`
  /// [E, a, b] from per-expert or fused tensors.
  bool experts(const WeightTarget &target, WeightSource &source) {
    const std::string marker = "block_sparse_moe.experts.w";
    size_t at = target.name.find(marker);
    if (at == std::string::npos || target.shape.size() != 3 ||
        !endsWith(target.name, ".weight"))
      return false;
    std::string prefix = target.name.substr(0, at);
    std::string w = target.name.substr(at + marker.size() - 1, 2);
    int64_t experts = target.shape[0], a = target.shape[1],
            b = target.shape[2];
    // Per expert: experts.{j}.wN.weight [a, b].
    std::string first =
        lookup(prefix + "block_sparse_moe.experts.0." + w + ".weight");
    if (!first.empty()) {
      for (int64_t j = 0; j < experts; ++j) {
        std::string want = prefix + "block_sparse_moe.experts." +
                           std::to_string(j) + "." + w + ".weight";
        std::string file = lookup(want);
        if (file.empty()) {
          missing.push_back(want);
          continue;
        }
        if (fits(file, target, {a, b}))
          source.pieces.push_back({file, 0, a * b, j * a * b});
      }
      return true;
    }
    // transformers 5, fused: gate_up_proj [E, 2F, C] (w1 rows, then w3
    // rows, per expert) and down_proj [E, C, F].
    std::string fused =
        lookup(prefix + "mlp.experts." +
               (w == "w2" ? "down_proj" : "gate_up_proj"));
    if (fused.empty())
      return false;
    if (w == "w2")
      return whole(fused, target, source);
    if (!fits(fused, target, {experts, 2 * a, b}))
      return true;
    for (int64_t e = 0; e < experts; ++e)
      source.pieces.push_back(
          {fused, e * 2 * a * b + (w == "w3" ? a * b : 0), a * b, e * a * b});
    return true;
  }

  const WeightFiles &files;
  std::set<std::string> used;
  std::vector<std::string> missing, wrong;
};

/// Buffers transformers saves that are not parameters and ignores on load.
bool knownBuffer(const std::string &name) {
  return endsWith(name, ".attn.bias") || endsWith(name, ".attn.masked_bias") ||
         endsWith(name, "rotary_emb.inv_freq");
}

/// Whether two float tensors of `count` elements hold the same values.
bool sameValues(const SafetensorsTensor &a, const SafetensorsTensor &b,
                int64_t count) {
  if (a.dtype == b.dtype)
    return a.bytes == b.bytes && std::memcmp(a.data, b.data, a.bytes) == 0;
  std::vector<double> x(static_cast<size_t>(count)),
      y(static_cast<size_t>(count));
  if (!convertElements(a.dtype, a.data, DType::F64, x.data(), count, nullptr) ||
      !convertElements(b.dtype, b.data, DType::F64, y.data(), count, nullptr))
    return false;
  return x == y;
}

} // namespace

Status planWeights(const WeightFiles &files,
                   const std::vector<WeightTarget> &targets, bool strict,
                   WeightPlan &plan,
                   const std::vector<std::string> &otherArguments) {
  plan = WeightPlan();
  Planner p(files);
  p.used.insert(otherArguments.begin(), otherArguments.end());
  std::set<std::string> targetNames;
  for (const WeightTarget &target : targets) {
    targetNames.insert(target.name);
    WeightSource source;
    bool found = p.whole(p.lookup(target.name), target, source) ||
                 p.experts(target, source);
    // transformers 5 names Mixtral's router mlp.gate.
    const std::string router = "block_sparse_moe.gate.weight";
    if (!found && endsWith(target.name, router))
      found = p.whole(p.lookup(target.name.substr(
                                   0, target.name.size() - router.size()) +
                               "mlp.gate.weight"),
                      target, source);
    if (!found)
      p.missing.push_back(target.name);
    plan.sources.push_back(std::move(source));
  }

  // A tied head stored again (transformers writes lm_head.weight for some
  // tied models): accepted only when it is the embedding.
  if (!targetNames.count("lm_head.weight") && files.find("lm_head.weight")) {
    for (size_t i = 0; i < targets.size(); ++i) {
      const std::string &name = targets[i].name;
      if (name != "transformer.wte.weight" && name != "model.embed_tokens.weight")
        continue;
      const WeightPiece *embedding =
          plan.sources[i].whole(numElements(targets[i].shape));
      const SafetensorsTensor &head = *files.find("lm_head.weight");
      if (!embedding)
        break;
      const SafetensorsTensor &table = *files.find(embedding->tensor);
      if (head.shape != table.shape ||
          !sameValues(head, table, numElements(table.shape)))
        return invalid(
            files.source() + ": 'lm_head.weight' (" + typeText(head) +
            ") differs from the embedding '" + embedding->tensor + "' (" +
            typeText(table) +
            "), but the model ties them (tie_word_embeddings); set "
            "\"tie_word_embeddings\": false in config.json for a model with "
            "its own head");
      p.used.insert("lm_head.weight");
      plan.ignored.push_back("lm_head.weight");
      break;
    }
  }
  for (const auto &[name, entry] : files.tensors()) {
    if (p.used.count(name))
      continue;
    if (knownBuffer(name))
      plan.ignored.push_back(name);
    else
      plan.unused.push_back(name);
  }

  std::vector<std::string> parts;
  if (!p.wrong.empty())
    parts.push_back(std::to_string(p.wrong.size()) +
                    " tensor(s) of the wrong shape or type: " +
                    listSome(p.wrong, 4));
  if (!p.missing.empty())
    parts.push_back("missing " + std::to_string(p.missing.size()) +
                    " tensor(s) the model needs: " + listSome(p.missing));
  if (strict && !plan.unused.empty())
    parts.push_back(std::to_string(plan.unused.size()) +
                    " tensor(s) the model does not use: " +
                    listSome(plan.unused));
  if (parts.empty())
    return Status::ok();
  std::string message = files.source() + ": the weights do not fit the model: ";
  for (size_t i = 0; i < parts.size(); ++i)
    message += (i ? "; " : "") + parts[i];
  bool onlyUnused = p.wrong.empty() && p.missing.empty();
  message += onlyUnused
                 ? "; check that config.json belongs to these weights, or set "
                   "strict = false in [model] to load them anyway (unused "
                   "tensors become a warning)"
                 : "; check that config.json belongs to these weights";
  return invalid(message);
}

//===----------------------------------------------------------------------===//
// 3. Conversion
//===----------------------------------------------------------------------===//

namespace {

inline double loadAs(DType type, const uint8_t *p) {
  switch (type) {
  case DType::F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DType::F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case DType::BF16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return bf16ToFloat(v);
  }
  default: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return f16ToFloat(v);
  }
  }
}

inline void storeAs(DType type, uint8_t *p, double value) {
  switch (type) {
  case DType::F32: {
    float v = static_cast<float>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case DType::F64:
    std::memcpy(p, &value, 8);
    return;
  case DType::BF16: {
    // One rounding from the source: every source but f64 is exact in f32.
    uint16_t v = floatToBf16(static_cast<float>(value));
    std::memcpy(p, &v, 2);
    return;
  }
  default: {
    uint16_t v = floatToF16(static_cast<float>(value));
    std::memcpy(p, &v, 2);
    return;
  }
  }
}

bool convertible(DType type) {
  return type == DType::F32 || type == DType::F64 || type == DType::BF16 ||
         type == DType::F16;
}

} // namespace

Status convertElements(DType from, const void *source, DType to, void *target,
                       int64_t count, ThreadPool *pool) {
  if (!convertible(from) || !convertible(to))
    return invalid(std::string("cannot convert ") + dtypeName(from) + " to " +
                   dtypeName(to) + ": weights convert between f32, f64, "
                                   "bf16 and f16");
  const uint8_t *in = static_cast<const uint8_t *>(source);
  uint8_t *out = static_cast<uint8_t *>(target);
  size_t inSize = dtypeSize(from), outSize = dtypeSize(to);
  auto body = [&](int64_t begin, int64_t end) {
    if (from == to) {
      std::memcpy(out + begin * outSize, in + begin * inSize,
                  static_cast<size_t>(end - begin) * inSize);
      return;
    }
    // The common case of released weights: bf16 into f32 master weights,
    // a shift of each element's bits.
    if (from == DType::BF16 && to == DType::F32) {
      for (int64_t i = begin; i < end; ++i) {
        uint16_t bits;
        std::memcpy(&bits, in + 2 * i, 2);
        uint32_t word = static_cast<uint32_t>(bits) << 16;
        std::memcpy(out + 4 * i, &word, 4);
      }
      return;
    }
    for (int64_t i = begin; i < end; ++i)
      storeAs(to, out + i * outSize, loadAs(from, in + i * inSize));
  };
  // Chunks of 1 Mi elements: a few ms each, many per thread for a large
  // tensor; a small one runs on the caller's thread.
  constexpr int64_t kGrain = 1 << 20;
  if (pool && count > kGrain)
    pool->parallelFor(count, kGrain, body);
  else
    body(0, count);
  return Status::ok();
}

Status assembleWeight(const WeightFiles &files, const WeightTarget &target,
                      const WeightSource &source, std::vector<uint8_t> &bytes,
                      ThreadPool *pool) {
  size_t outSize = dtypeSize(target.dtype);
  bytes.assign(static_cast<size_t>(numElements(target.shape)) * outSize, 0);
  for (const WeightPiece &piece : source.pieces) {
    const SafetensorsTensor *tensor = files.find(piece.tensor);
    if (!tensor)
      return invalid("no tensor '" + piece.tensor + "' in " + files.source());
    LLMC_RETURN_IF_ERROR(convertElements(
        tensor->dtype, tensor->data + piece.sourceOffset * dtypeSize(tensor->dtype),
        target.dtype, bytes.data() + piece.targetOffset * outSize, piece.count,
        pool));
  }
  return Status::ok();
}

} // namespace llmc::rt
