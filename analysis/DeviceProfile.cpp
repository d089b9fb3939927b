//===- DeviceProfile.cpp - device profiles from TOML ----------------------===//
//
// Reads data/devices.toml (built in) and user profiles of the same form,
// checking every key where toml++ located it.
//
//===----------------------------------------------------------------------===//
#include "analysis/DeviceProfile.h"

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"


namespace llmc::planner {

namespace {
// data/devices.toml, written into a raw string by planner/CMakeLists.txt.
#include "analysis/DevicesToml.inc"

constexpr const char *kProfileKeys[] = {
    "description",   "memory_gb",        "hbm_gbs",    "launch_us",
    "vector_tflops", "matmul_tflops",    "devices_per_node",
    "intra_node",    "inter_node",       "calibration",
    "fused_kernels", "host_cores", "shared_idle", "shared_drain_idle",
    "shared_bubble_idle", "efficiency", "runtime_gib"};
constexpr const char *kLinkKeys[] = {"name", "bandwidth_gbs", "nominal_gbs",
                                     "latency_us", "call_latency_us"};
constexpr const char *kDtypes[] = {"bf16", "f16", "f32", "f64"};
constexpr const char *kCalibrationKeys[] = {"collective", "ranks", "bytes",
                                            "bus_gbs"};

/// Errors at a toml++ source position: "path:line:column: error: ...".
class Reader {
public:
  explicit Reader(llvm::StringRef path) : path(path.str()) {}

  llvm::Error error(const toml::source_region &where, const std::string &what) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("{0}:{1}:{2}: error: {3}", path, where.begin.line,
                      where.begin.column, what)
            .str());
  }

  /// Rejects keys of `table` not in `known`, naming the known ones.
  template <size_t N>
  llvm::Error checkKeys(const toml::table &table, const std::string &prefix,
                        const char *const (&known)[N]) {
    for (const auto &[key, node] : table) {
      if (llvm::is_contained(known, std::string(key.str())))
        continue;
      std::string list;
      for (const char *k : known)
        list += (list.empty() ? "" : ", ") + std::string(k);
      return error(key.source(), "unknown key '" + prefix +
                                     std::string(key.str()) +
                                     "'; the keys here are: " + list);
    }
    return llvm::Error::success();
  }

  /// A positive number (integer or float) at `table[key]`, times `scale`.
  llvm::Error positive(const toml::table &table, const std::string &prefix,
                       llvm::StringRef key, double scale, double &out,
                       bool required = true) {
    const toml::node *node = table.get(std::string_view(key.data(), key.size()));
    std::string name = prefix + key.str();
    if (!node) {
      if (!required)
        return llvm::Error::success();
      return error(table.source(), "missing key '" + name +
                                       "'; add it (a positive number, see "
                                       "data/devices.toml for the units)");
    }
    std::optional<double> value = node->value<double>();
    if (!value || !(*value > 0))
      return error(node->source(),
                   "key '" + name + "' must be a positive number; write e.g. " +
                       key.str() + " = 100");
    out = *value * scale;
    return llvm::Error::success();
  }

  llvm::Error link(const toml::table &profile, const std::string &prefix,
                   llvm::StringRef key, LinkClass &out) {
    std::string name = prefix + key.str();
    const toml::node *node = profile.get(std::string_view(key.data(), key.size()));
    if (!node)
      return error(profile.source(),
                   "missing table '" + name +
                       "'; add it with name, bandwidth_gbs and latency_us");
    const toml::table *table = node->as_table();
    if (!table)
      return error(node->source(), "'" + name +
                                       "' must be a table with name, "
                                       "bandwidth_gbs and latency_us");
    if (llvm::Error e = checkKeys(*table, name + ".", kLinkKeys))
      return e;
    const toml::node *linkName = table->get("name");
    if (!linkName || !linkName->is_string())
      return error(linkName ? linkName->source() : table->source(),
                   "key '" + name + ".name' must be a string; write e.g. "
                                    "name = \"nvlink\"");
    out.name = linkName->value<std::string>().value_or("");
    if (llvm::Error e =
            positive(*table, name + ".", "bandwidth_gbs", 1e9, out.bandwidth))
      return e;
    if (llvm::Error e = positive(*table, name + ".", "nominal_gbs", 1e9,
                                 out.nominal, /*required=*/false))
      return e;
    if (llvm::Error e = positive(*table, name + ".", "call_latency_us", 1e-6,
                                 out.callLatency, /*required=*/false))
      return e;
    return positive(*table, name + ".", "latency_us", 1e-6, out.latency);
  }

  std::string path;
};

llvm::Expected<DeviceProfile> readProfile(Reader &reader,
                                          const std::string &name,
                                          const toml::table &table) {
  DeviceProfile p;
  p.name = name;
  p.origin = reader.path;
  std::string prefix = name + ".";
  if (llvm::Error e = reader.checkKeys(table, prefix, kProfileKeys))
    return std::move(e);
  if (const toml::node *d = table.get("description")) {
    if (!d->is_string())
      return reader.error(d->source(),
                          "key '" + prefix + "description' must be a string");
    p.description = d->value<std::string>().value_or("");
  }
  if (llvm::Error e =
          reader.positive(table, prefix, "memory_gb", 1e9, p.memoryBytes))
    return std::move(e);
  if (llvm::Error e =
          reader.positive(table, prefix, "hbm_gbs", 1e9, p.memoryBandwidth))
    return std::move(e);
  if (llvm::Error e =
          reader.positive(table, prefix, "launch_us", 1e-6, p.launchCost))
    return std::move(e);
  if (llvm::Error e =
          reader.positive(table, prefix, "vector_tflops", 1e12, p.vectorFlops))
    return std::move(e);
  if (const toml::node *f = table.get("fused_kernels")) {
    if (!f->is_boolean())
      return reader.error(f->source(), "key '" + prefix +
                                           "fused_kernels' must be true or "
                                           "false");
    p.fusedKernels = f->value<bool>().value_or(true);
  }
  double perNode = 0;
  if (llvm::Error e =
          reader.positive(table, prefix, "devices_per_node", 1, perNode))
    return std::move(e);
  p.devicesPerNode = static_cast<int64_t>(perNode);
  double cores = 0;
  if (llvm::Error e = reader.positive(table, prefix, "host_cores", 1, cores,
                                      /*required=*/false))
    return std::move(e);
  if (llvm::Error e = reader.positive(table, prefix, "runtime_gib",
                                      1024.0 * 1024.0 * 1024.0,
                                      p.runtimeBytes, /*required=*/false))
    return std::move(e);
  p.shared.hostCores = static_cast<int64_t>(cores);
  for (auto [key, value] :
       {std::pair{"shared_idle", &p.shared.idle},
        std::pair{"shared_drain_idle", &p.shared.drainIdle},
        std::pair{"shared_bubble_idle", &p.shared.bubbleIdle}}) {
    const toml::node *node = table.get(key);
    if (!node)
      continue;
    std::optional<double> share = node->value<double>();
    if (!share || *share < 0 || *share >= 1)
      return reader.error(node->source(), "key '" + prefix + key +
                                              "' must be a number in [0, 1)");
    *value = *share;
  }
  if (p.shared.idle + p.shared.drainIdle + p.shared.bubbleIdle >= 1)
    return reader.error(table.source(),
                        "keys '" + prefix + "shared_idle' + '" + prefix +
                            "shared_drain_idle' + '" + prefix +
                            "shared_bubble_idle' must stay below 1 (the "
                            "share of the cores idle in a step whose whole "
                            "schedule is bubble and whose collectives all "
                            "drain the cores)");

  const toml::node *mm = table.get("matmul_tflops");
  const toml::table *mmTable = mm ? mm->as_table() : nullptr;
  if (!mmTable)
    return reader.error(mm ? mm->source() : table.source(),
                        "key '" + prefix +
                            "matmul_tflops' must be a table of the dense "
                            "peaks; write e.g. matmul_tflops = { bf16 = 989, "
                            "f16 = 989, f32 = 67, f64 = 67 }");
  constexpr const char *kAllDtypes[] = {"bf16", "f16", "f32", "f64", "tf32"};
  if (llvm::Error e =
          reader.checkKeys(*mmTable, prefix + "matmul_tflops.", kAllDtypes))
    return std::move(e);
  for (const char *dtype : kAllDtypes) {
    double peak = 0;
    bool required = llvm::is_contained(kDtypes, std::string(dtype));
    if (llvm::Error e = reader.positive(*mmTable, prefix + "matmul_tflops.",
                                        dtype, 1e12, peak, required))
      return std::move(e);
    if (peak > 0)
      p.matmulFlops[dtype] = peak;
  }
  if (const toml::node *eff = table.get("efficiency")) {
    const toml::table *effTable = eff->as_table();
    if (!effTable)
      return reader.error(eff->source(),
                          "'" + prefix +
                              "efficiency' must be a table of op names and "
                              "positive factors; write e.g. efficiency = { "
                              "attention = 0.05 }");
    for (const auto &[op, node] : *effTable) {
      double factor = 0;
      if (llvm::Error e = reader.positive(*effTable, prefix + "efficiency.",
                                          std::string(op.str()), 1, factor))
        return std::move(e);
      p.efficiency[std::string(op.str())] = factor;
    }
  }
  if (llvm::Error e = reader.link(table, prefix, "intra_node", p.intraNode))
    return std::move(e);
  if (llvm::Error e = reader.link(table, prefix, "inter_node", p.interNode))
    return std::move(e);

  if (const toml::node *cal = table.get("calibration")) {
    const toml::array *points = cal->as_array();
    if (!points || !points->is_array_of_tables())
      return reader.error(cal->source(),
                          "'" + prefix +
                              "calibration' must be an array of tables "
                              "([[" + prefix + "calibration]])");
    for (const toml::node &node : *points) {
      const toml::table &t = *node.as_table();
      std::string at = prefix + "calibration.";
      if (llvm::Error e = reader.checkKeys(t, at, kCalibrationKeys))
        return std::move(e);
      CalibrationPoint c;
      const toml::node *kind = t.get("collective");
      if (!kind || kind->value<std::string>() != std::string("all-reduce"))
        return reader.error(kind ? kind->source() : t.source(),
                            "key '" + at +
                                "collective' must be \"all-reduce\" (the "
                                "only calibrated collective so far)");
      c.collective = "all-reduce";
      double ranks = 0;
      if (llvm::Error e = reader.positive(t, at, "ranks", 1, ranks))
        return std::move(e);
      c.ranks = static_cast<int64_t>(ranks);
      if (llvm::Error e = reader.positive(t, at, "bytes", 1, c.bytes))
        return std::move(e);
      if (llvm::Error e = reader.positive(t, at, "bus_gbs", 1e9, c.busBandwidth))
        return std::move(e);
      p.calibration.push_back(c);
    }
  }
  return p;
}
} // namespace

double DeviceProfile::matmulPeak(llvm::StringRef dtype) const {
  auto it = matmulFlops.find(dtype.str());
  if (it != matmulFlops.end() && dtype != "tf32")
    return it->second;
  return matmulFlops.at("f32");
}

bool SharedCores::drains(int64_t groupRanks, int64_t ranks) const {
  // Ranks on cores of their own (ranks <= cores) wait for peers, never for
  // a core: their waits are the critical path's, nothing drains.
  return hostCores > 0 && ranks > hostCores && groupRanks * hostCores > ranks;
}

double SharedCores::drainShare(const std::map<std::string, double> &commSeconds,
                               const std::map<std::string, int64_t> &groupRanks,
                               int64_t ranks) const {
  double all = 0, draining = 0;
  for (const auto &[group, seconds] : commSeconds) {
    all += seconds;
    auto it = groupRanks.find(group);
    if (it != groupRanks.end() && drains(it->second, ranks))
      draining += seconds;
  }
  return all > 0 ? draining / all : 0.0;
}

double SharedCores::seconds(double totalBusy, int64_t ranks, double bubble,
                            double drain) const {
  if (hostCores <= 0)
    return 0;
  double cores = static_cast<double>(
      std::min<int64_t>(std::max<int64_t>(ranks, 1), hostCores));
  double idle = this->idle + drainIdle * std::clamp(drain, 0.0, 1.0) +
                bubbleIdle * std::clamp(bubble, 0.0, 1.0);
  return totalBusy / cores / (1.0 - idle);
}

double DeviceProfile::efficiencyOf(llvm::StringRef name) const {
  auto it = efficiency.find(name.str());
  return it == efficiency.end() ? 1.0 : it->second;
}

llvm::Expected<std::vector<DeviceProfile>>
parseDeviceProfiles(llvm::StringRef text, llvm::StringRef path) {
  Reader reader(path);
  toml::parse_result result = toml::parse(
      std::string_view(text.data(), text.size()), std::string_view(path.data(), path.size()));
  if (!result) {
    const toml::parse_error &e = result.error();
    return reader.error(e.source(), std::string(e.description()) +
                                        "; fix the syntax "
                                        "(https://toml.io/en/v1.0.0)");
  }
  std::vector<DeviceProfile> profiles;
  for (const auto &[key, node] : result.table()) {
    const toml::table *table = node.as_table();
    if (!table)
      return reader.error(key.source(),
                          "'" + std::string(key.str()) +
                              "' must be a table: each profile is a "
                              "[name] table (see data/devices.toml)");
    llvm::Expected<DeviceProfile> p =
        readProfile(reader, std::string(key.str()), *table);
    if (!p)
      return p.takeError();
    profiles.push_back(std::move(*p));
  }
  if (profiles.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        (path + ":1:1: error: no device profile; add a [name] table (see "
                "data/devices.toml)")
            .str());
  return profiles;
}

llvm::StringRef builtinDeviceProfiles() { return kDevicesToml; }

llvm::Expected<DeviceProfile> lookupDeviceProfile(llvm::StringRef nameOrPath) {
  if (nameOrPath.contains('/') || nameOrPath.ends_with(".toml")) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(nameOrPath);
    if (!file)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          (nameOrPath + ": error: cannot read the device profile: " +
           file.getError().message())
              .str());
    llvm::Expected<std::vector<DeviceProfile>> profiles =
        parseDeviceProfiles((*file)->getBuffer(), nameOrPath);
    if (!profiles)
      return profiles.takeError();
    if (profiles->size() != 1) {
      std::string names;
      for (const DeviceProfile &p : *profiles)
        names += (names.empty() ? "" : ", ") + p.name;
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          (nameOrPath + ":1:1: error: a profile file given by its path must "
                        "hold one profile, this one has " +
           llvm::Twine(profiles->size()) + " (" + names +
           "); keep one table per file")
              .str());
    }
    return std::move(profiles->front());
  }
  llvm::Expected<std::vector<DeviceProfile>> builtin =
      parseDeviceProfiles(builtinDeviceProfiles(), "data/devices.toml");
  if (!builtin)
    return builtin.takeError();
  std::string names;
  for (DeviceProfile &p : *builtin) {
    if (p.name == nameOrPath)
      return std::move(p);
    names += (names.empty() ? "" : ", ") + p.name;
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      ("unknown device profile '" + nameOrPath + "'; the built-in ones are " +
       names + ", or give the path of a .toml file with one profile (the "
               "form of data/devices.toml)")
          .str());
}

} // namespace llmc::planner
