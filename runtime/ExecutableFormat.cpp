//===- ExecutableFormat.cpp - read, write and validate Executables --------===//
//
// The binary layout is documented in docs/executable.md. Every read is
// bounds-checked: a truncated or corrupt file is a DataLoss status naming
// the byte offset and what was being read, never a crash.
//
//===----------------------------------------------------------------------===//

#include "runtime/Executable.h"
#include "runtime/ExecutableIO.h"
#include "runtime/io/File.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace llmc::rt {

using format::kHeaderBytes;
using format::Reader;
using format::Writer;

namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'C', 'E', 'X', 'E', '\0'};
/// Header flags: bit 0, Executable::fusedKernels. Other bits are refused.
constexpr uint32_t kFlagFusedKernels = 1u << 0;
constexpr uint32_t kKnownFlags = kFlagFusedKernels;

/// FNV-1a, 64 bit: detects corruption (not tampering).
uint64_t fnv1a(const uint8_t *data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void writeProgram(Writer &w, const RankProgram &rank) {
  w.pod<uint64_t>(rank.arenaBytes);
  w.pod<uint32_t>(static_cast<uint32_t>(rank.values.size()));
  for (const ValueInfo &value : rank.values) {
    w.pod<uint8_t>(static_cast<uint8_t>(value.dtype));
    w.podVector<int64_t>(value.shape);
    w.pod<uint64_t>(value.offset);
  }
  w.pod<uint32_t>(static_cast<uint32_t>(rank.constants.size()));
  for (const ConstantData &constant : rank.constants) {
    w.pod<int32_t>(constant.value);
    w.pod<uint64_t>(constant.bytes.size());
    w.out.insert(w.out.end(), constant.bytes.begin(), constant.bytes.end());
  }
  w.pod<uint32_t>(static_cast<uint32_t>(rank.commands.size()));
  for (const Command &command : rank.commands) {
    w.pod<uint8_t>(static_cast<uint8_t>(command.kind));
    w.pod<uint16_t>(static_cast<uint16_t>(command.kernel));
    w.podVector<int32_t>(command.inputs);
    w.podVector<int32_t>(command.outputs);
    w.podVector<int64_t>(command.attrs.ints);
    w.podVector<double>(command.attrs.floats);
    w.str(command.origin);
  }
}

void writeProgram(Writer &w, const RankProgram &rank, uint32_t version) {
  writeProgram(w, rank);
  if (version >= 5)
    format::writeCudaPlan(w, rank.cuda);
}

bool readProgram(Reader &r, RankProgram &rank) {
  uint32_t n;
  if (!r.pod(rank.arenaBytes, "the arena size") ||
      !r.count(n, 13, "values"))
    return false;
  rank.values.resize(n);
  for (ValueInfo &value : rank.values) {
    uint8_t dtype;
    if (!r.pod(dtype, "a value's dtype") ||
        !r.podVector(value.shape, "a value's shape") ||
        !r.pod(value.offset, "a value's offset"))
      return false;
    value.dtype = static_cast<DType>(dtype);
  }
  if (!r.count(n, 12, "constants"))
    return false;
  rank.constants.resize(n);
  for (ConstantData &constant : rank.constants) {
    uint64_t size;
    if (!r.pod(constant.value, "a constant's value slot") ||
        !r.pod(size, "a constant's size") ||
        !r.bytes(constant.bytes, size, "a constant's data"))
      return false;
  }
  if (!r.count(n, 23, "commands"))
    return false;
  rank.commands.resize(n);
  for (Command &command : rank.commands) {
    uint8_t kind;
    uint16_t kernel;
    if (!r.pod(kind, "a command's kind") ||
        !r.pod(kernel, "a command's kernel") ||
        !r.podVector(command.inputs, "a command's inputs") ||
        !r.podVector(command.outputs, "a command's outputs") ||
        !r.podVector(command.attrs.ints, "a command's integer attributes") ||
        !r.podVector(command.attrs.floats, "a command's float attributes") ||
        !r.str(command.origin, "a command's origin"))
      return false;
    command.kind = static_cast<CommandKind>(kind);
    command.kernel = static_cast<KernelKind>(kernel);
  }
  return true;
}

Status invalid(const std::string &what, const std::string &message) {
  return Status::error(StatusCode::DataLoss, what + ": " + message);
}

/// Checks `sharding` of a tensor whose local shape is `local` against the
/// mesh; `who` is "argument 'x'" or "output 'y'".
Status validateSharding(const std::string &what, const std::string &who,
                        const TensorSharding &sharding, const Shape &local,
                        const std::vector<MeshAxisInfo> &mesh) {
  if (sharding.dims.empty())
    return Status::ok();
  if (sharding.dims.size() != local.size())
    return invalid(what, who + " has a sharding of " +
                             std::to_string(sharding.dims.size()) +
                             " dimensions for a value of rank " +
                             std::to_string(local.size()));
  std::vector<bool> used(mesh.size(), false);
  for (size_t d = 0; d < sharding.dims.size(); ++d) {
    const DimSharding &dim = sharding.dims[d];
    std::string at = who + " dimension " + std::to_string(d) + ": ";
    if (dim.groups < 1)
      return invalid(what, at + "expected at least 1 group, got " +
                               std::to_string(dim.groups));
    if (local[d] % dim.groups != 0)
      return invalid(what, at + "local size " + std::to_string(local[d]) +
                               " is not a multiple of its " +
                               std::to_string(dim.groups) + " groups");
    for (int32_t axis : dim.axes) {
      if (axis < 0 || static_cast<size_t>(axis) >= mesh.size())
        return invalid(what, at + "mesh axis " + std::to_string(axis) +
                                 " does not exist in a mesh of " +
                                 std::to_string(mesh.size()) + " axes");
      if (used[axis])
        return invalid(what, who + " uses mesh axis '" + mesh[axis].name +
                                 "' twice");
      used[axis] = true;
    }
  }
  return Status::ok();
}

/// The mesh and the shardings, and that every rank agrees on the type of
/// each argument and output.
Status validateMeshAndShardings(const Executable &exe,
                                const std::string &what) {
  if (!exe.mesh.empty()) {
    int64_t devices = 1;
    for (const MeshAxisInfo &axis : exe.mesh) {
      if (axis.name.empty() || axis.size < 1)
        return invalid(what, "mesh axis '" + axis.name + "' of size " +
                                 std::to_string(axis.size) +
                                 ": expected a name and a size of at least 1");
      devices *= axis.size;
      if (devices > (int64_t(1) << 30))
        return invalid(what, "the mesh has too many devices");
    }
    if (devices != static_cast<int64_t>(exe.ranks.size()))
      return invalid(what, "the mesh has " + std::to_string(devices) +
                               " devices, but the program has " +
                               std::to_string(exe.ranks.size()) +
                               " rank programs");
  }
  auto check = [&](const std::string &who, int32_t slot,
                   const TensorSharding &sharding) -> Status {
    const ValueInfo &first = exe.ranks.front().values[slot];
    for (size_t r = 1; r < exe.ranks.size(); ++r) {
      const ValueInfo &other = exe.ranks[r].values[slot];
      if (other.dtype != first.dtype || other.shape != first.shape)
        return invalid(what, who + " is " + dtypeName(first.dtype) +
                                 formatShape(first.shape) + " on rank 0 but " +
                                 dtypeName(other.dtype) +
                                 formatShape(other.shape) + " on rank " +
                                 std::to_string(r));
    }
    return validateSharding(what, who, sharding, first.shape, exe.mesh);
  };
  for (const ArgumentInfo &arg : exe.arguments)
    LLMC_RETURN_IF_ERROR(
        check("argument '" + arg.name + "'", arg.value, arg.sharding));
  int32_t stages = 0;
  for (const MeshAxisInfo &axis : exe.mesh)
    if (axis.name == "pp")
      stages = axis.size;
  auto checkStage = [&](const std::string &who, int32_t stage) -> Status {
    if (stage >= stages)
      return invalid(what, who + " is held by pipeline stage " +
                               std::to_string(stage) + ", but the mesh has " +
                               std::to_string(stages) + " pp positions");
    return Status::ok();
  };
  for (const ArgumentInfo &arg : exe.arguments)
    LLMC_RETURN_IF_ERROR(
        checkStage("argument '" + arg.name + "'", arg.pipelineStage));
  for (const OutputInfo &out : exe.outputs) {
    LLMC_RETURN_IF_ERROR(
        check("output '" + out.name + "'", out.value, out.sharding));
    LLMC_RETURN_IF_ERROR(
        checkStage("output '" + out.name + "'", out.pipelineStage));
    for (int32_t replica : out.replicaStages)
      LLMC_RETURN_IF_ERROR(checkStage("output '" + out.name + "'", replica));
  }
  return Status::ok();
}

void writeSharding(Writer &w, const TensorSharding &sharding) {
  w.pod<uint32_t>(static_cast<uint32_t>(sharding.dims.size()));
  for (const DimSharding &dim : sharding.dims) {
    w.podVector<int32_t>(dim.axes);
    // A zigzag split is written as its negated block count (format 3 has
    // no field for it, and a count is never negative otherwise).
    w.pod<int64_t>(dim.zigzag ? -dim.groups : dim.groups);
  }
}

bool readSharding(Reader &r, TensorSharding &sharding) {
  uint32_t n;
  if (!r.count(n, 12, "a sharding's dimensions"))
    return false;
  sharding.dims.resize(n);
  for (DimSharding &dim : sharding.dims)
    if (!r.podVector(dim.axes, "a sharding's mesh axes") ||
        !r.pod(dim.groups, "a sharding's groups"))
      return false;
  for (DimSharding &dim : sharding.dims)
    if (dim.groups < 0) {
      dim.groups = -dim.groups;
      dim.zigzag = true;
    }
  return true;
}

/// A value without storage exists only inside an elementwise region's
/// kernel: no argument, output or constant is one, and only commands
/// inside a FusedElementwise marker's span read or write one.
Status validateUnstored(const Executable &exe, const RankProgram &rank,
                        const std::string &what, const std::string &where) {
  auto unstored = [&](int32_t slot) { return !rank.values[slot].stored(); };
  for (const ArgumentInfo &arg : exe.arguments)
    if (unstored(arg.value))
      return invalid(what, where + "argument '" + arg.name +
                               "' has no storage");
  for (const OutputInfo &out : exe.outputs)
    if (unstored(out.value))
      return invalid(what, where + "output '" + out.name +
                               "' has no storage");
  for (const ConstantData &constant : rank.constants)
    if (unstored(constant.value))
      return invalid(what, where + "the constant of value " +
                               std::to_string(constant.value) +
                               " has no storage");
  // The commands inside some marker's span (markers may sit inside another
  // region's span).
  std::vector<bool> inside(rank.commands.size(), false);
  for (size_t c = 0; c < rank.commands.size(); ++c) {
    const Command &marker = rank.commands[c];
    if (marker.kind != CommandKind::Kernel ||
        marker.kernel != KernelKind::FusedElementwise ||
        marker.attrs.ints.size() != 1 || marker.attrs.ints[0] < 0)
      continue;
    size_t end = std::min(rank.commands.size(),
                          c + 1 + static_cast<size_t>(marker.attrs.ints[0]));
    for (size_t i = c + 1; i < end; ++i)
      inside[i] = true;
  }
  for (size_t c = 0; c < rank.commands.size(); ++c) {
    const Command &command = rank.commands[c];
    if (inside[c])
      continue;
    for (const std::vector<int32_t> *slots :
         {&command.inputs, &command.outputs})
      for (int32_t slot : *slots)
        if (unstored(slot))
          return invalid(what, where + "command " + std::to_string(c) + " (" +
                                   command.origin + ") uses value " +
                                   std::to_string(slot) +
                                   ", which has no storage, outside an "
                                   "elementwise fused region");
  }
  return Status::ok();
}

} // namespace

bool regionNeedsOneKernel(const RankProgram &program, size_t marker) {
  const Command &command = program.commands[marker];
  if (command.attrs.ints.size() != 1 || command.attrs.ints[0] < 0)
    return false;
  size_t end = std::min(program.commands.size(),
                        marker + 1 + static_cast<size_t>(command.attrs.ints[0]));
  for (size_t c = marker + 1; c < end; ++c)
    for (const std::vector<int32_t> *slots :
         {&program.commands[c].inputs, &program.commands[c].outputs})
      for (int32_t slot : *slots)
        if (slot >= 0 && static_cast<size_t>(slot) < program.values.size() &&
            !program.values[slot].stored())
          return true;
  return false;
}

std::vector<bool> commandsOfOneKernelRegions(const RankProgram &program) {
  std::vector<bool> inside(program.commands.size(), false);
  for (size_t c = 0; c < program.commands.size(); ++c) {
    const Command &marker = program.commands[c];
    if (marker.kind != CommandKind::Kernel ||
        marker.kernel != KernelKind::FusedElementwise ||
        !regionNeedsOneKernel(program, c))
      continue;
    size_t end = std::min(program.commands.size(),
                          c + 1 + static_cast<size_t>(marker.attrs.ints[0]));
    for (size_t i = c + 1; i < end; ++i)
      inside[i] = true;
  }
  return inside;
}

bool TensorSharding::replicated() const {
  for (const DimSharding &dim : dims)
    if (!dim.axes.empty())
      return false;
  return true;
}

Status validateExecutable(const Executable &exe) {
  const std::string what = exe.source.empty() ? "executable" : exe.source;
  if (exe.ranks.empty())
    return invalid(what, "expected at least one rank program, got none");
  for (size_t r = 0; r < exe.ranks.size(); ++r) {
    const RankProgram &rank = exe.ranks[r];
    std::string where = "rank " + std::to_string(r) + ": ";
    auto slotOk = [&](int32_t slot) {
      return slot >= 0 && static_cast<size_t>(slot) < rank.values.size();
    };
    for (size_t v = 0; v < rank.values.size(); ++v) {
      const ValueInfo &value = rank.values[v];
      if (static_cast<int>(value.dtype) >= kNumDTypes)
        return invalid(what, where + "value " + std::to_string(v) +
                                 " has an unknown dtype");
      for (int64_t d : value.shape)
        if (d < 0)
          return invalid(what, where + "value " + std::to_string(v) +
                                   " has a negative dimension");
      if (!value.stored()) {
        if (!exe.fusedKernels)
          return invalid(what, where + "value " + std::to_string(v) +
                                   " has no storage, but the program is not "
                                   "compiled for fused kernels");
        continue;
      }
      if (value.offset > rank.arenaBytes ||
          value.bytes() > rank.arenaBytes - value.offset)
        return invalid(what, where + "value " + std::to_string(v) +
                                 " lies outside the arena of " +
                                 std::to_string(rank.arenaBytes) + " bytes");
    }
    for (const ConstantData &constant : rank.constants) {
      if (!slotOk(constant.value))
        return invalid(what, where + "a constant names value slot " +
                                 std::to_string(constant.value) +
                                 " that does not exist");
      if (constant.bytes.size() != rank.values[constant.value].bytes())
        return invalid(what, where + "constant for value " +
                                 std::to_string(constant.value) + " has " +
                                 std::to_string(constant.bytes.size()) +
                                 " bytes, expected " +
                                 std::to_string(
                                     rank.values[constant.value].bytes()));
    }
    for (size_t c = 0; c < rank.commands.size(); ++c) {
      const Command &command = rank.commands[c];
      std::string at = where + "command " + std::to_string(c) + " (" +
                       command.origin + "): ";
      if (command.kind > CommandKind::HostStep)
        return invalid(what, at + "unknown command kind");
      if ((command.kind == CommandKind::Kernel ||
           command.kind == CommandKind::Gemm) &&
          command.kernel >= KernelKind::Count)
        return invalid(what, at + "unknown kernel id " +
                                 std::to_string(static_cast<int>(command.kernel)));
      for (int32_t slot : command.inputs)
        if (!slotOk(slot))
          return invalid(what, at + "reads value slot " + std::to_string(slot) +
                                   " that does not exist");
      for (int32_t slot : command.outputs)
        if (!slotOk(slot))
          return invalid(what, at + "writes value slot " +
                                   std::to_string(slot) +
                                   " that does not exist");
    }
    for (const ArgumentInfo &arg : exe.arguments)
      if (!slotOk(arg.value) || arg.role > ArgumentRole::OptimizerState ||
          arg.init.kind > InitSpec::Kind::Constant)
        return invalid(what, where + "argument '" + arg.name +
                                 "' has an unknown role, initializer or value slot");
    for (const OutputInfo &out : exe.outputs)
      if (!slotOk(out.value))
        return invalid(what, where + "output '" + out.name +
                                 "' names a value slot that does not exist");
    if (exe.fusedKernels)
      LLMC_RETURN_IF_ERROR(validateUnstored(exe, rank, what, where));
    LLMC_RETURN_IF_ERROR(format::validateCudaPlan(rank, what, where));
  }
  return validateMeshAndShardings(exe, what);
}

const Executable *Executable::companion(const std::string &wanted) const {
  for (const Executable &other : companions)
    if (other.name == wanted)
      return &other;
  return nullptr;
}

int Executable::findArgument(const std::string &wanted) const {
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].name == wanted)
      return static_cast<int>(i);
  return -1;
}

int Executable::findOutput(const std::string &wanted) const {
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == wanted)
      return static_cast<int>(i);
  return -1;
}

std::vector<uint8_t> serializeExecutable(const Executable &exe) {
  Writer w;
  w.str(exe.producer);
  w.str(exe.source);
  w.str(exe.name);
  // Version 2 has no mesh and no shardings.
  const bool sharded = exe.version >= 3;
  if (sharded) {
    w.pod<uint32_t>(static_cast<uint32_t>(exe.mesh.size()));
    for (const MeshAxisInfo &axis : exe.mesh) {
      w.str(axis.name);
      w.pod<int32_t>(axis.size);
    }
  }
  w.pod<uint32_t>(static_cast<uint32_t>(exe.arguments.size()));
  for (const ArgumentInfo &arg : exe.arguments) {
    w.str(arg.name);
    w.pod<uint8_t>(static_cast<uint8_t>(arg.role));
    w.pod<int32_t>(arg.value);
    w.pod<uint8_t>(static_cast<uint8_t>(arg.init.kind));
    w.pod<double>(arg.init.scale);
    if (sharded)
      writeSharding(w, arg.sharding);
    if (exe.version >= 4)
      w.pod<int32_t>(arg.pipelineStage);
  }
  w.pod<uint32_t>(static_cast<uint32_t>(exe.outputs.size()));
  for (const OutputInfo &out : exe.outputs) {
    w.str(out.name);
    w.pod<int32_t>(out.value);
    if (sharded)
      writeSharding(w, out.sharding);
    // Version 4: the pipeline stage that holds it.
    if (exe.version >= 4) {
      w.pod<int32_t>(out.pipelineStage);
      w.podVector(out.replicaStages);
    }
  }
  w.pod<uint32_t>(static_cast<uint32_t>(exe.ranks.size()));
  for (const RankProgram &rank : exe.ranks)
    writeProgram(w, rank, exe.version);
  w.pod<uint32_t>(static_cast<uint32_t>(exe.metadata.size()));
  for (const auto &[key, value] : exe.metadata) {
    w.str(key);
    w.str(value);
  }
  // A companion is a whole serialized executable, header included.
  w.pod<uint32_t>(static_cast<uint32_t>(exe.companions.size()));
  for (const Executable &companion : exe.companions) {
    std::vector<uint8_t> bytes = serializeExecutable(companion);
    w.pod<uint64_t>(bytes.size());
    w.out.insert(w.out.end(), bytes.begin(), bytes.end());
  }

  std::vector<uint8_t> file(kHeaderBytes);
  std::memcpy(file.data(), kMagic, 8);
  uint32_t version = exe.version;
  uint32_t flags = exe.fusedKernels ? kFlagFusedKernels : 0;
  uint64_t payload = w.out.size(), hash = fnv1a(w.out.data(), w.out.size());
  std::memcpy(file.data() + 8, &version, 4);
  std::memcpy(file.data() + 12, &flags, 4);
  std::memcpy(file.data() + 16, &payload, 8);
  std::memcpy(file.data() + 24, &hash, 8);
  file.insert(file.end(), w.out.begin(), w.out.end());
  return file;
}

Status writeExecutable(const Executable &exe, const std::string &path) {
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  // Through a temporary and a rename (a crash never leaves half a file); a
  // link is written through, a device or FIFO never replaced (File.h).
  return writeFileAtomically(path, bytes.data(), bytes.size());
}

Status parseExecutable(const uint8_t *data, size_t size,
                       const std::string &what, Executable &exe) {
  if (size < kHeaderBytes || std::memcmp(data, kMagic, 8) != 0)
    return Status::error(StatusCode::InvalidArgument,
                         what + ": not an llmc executable (no LLMCEXE magic); "
                                "write one with `llmc compile FILE -o "
                                "model.llmcx`");
  uint32_t version, flags;
  uint64_t payload, hash;
  std::memcpy(&version, data + 8, 4);
  std::memcpy(&flags, data + 12, 4);
  std::memcpy(&payload, data + 16, 8);
  std::memcpy(&hash, data + 24, 8);
  if (version < kOldestExecutableVersion || version > kExecutableVersion)
    return Status::error(
        StatusCode::InvalidArgument,
        what + ": written in executable format version " +
            std::to_string(version) + ", but this runtime reads versions " +
            std::to_string(kOldestExecutableVersion) + " to " +
            std::to_string(kExecutableVersion) +
            "; compile it again with the llmc that matches this runtime");
  if (flags & ~kKnownFlags)
    return Status::error(
        StatusCode::InvalidArgument,
        what + ": uses features this runtime does not know (header flags " +
            std::to_string(flags) +
            "); compile it again with the llmc that matches this runtime");
  if (payload != size - kHeaderBytes)
    return Status::error(
        StatusCode::DataLoss,
        what + ": expected " + std::to_string(payload) +
            " bytes after the header, found " +
            std::to_string(size - kHeaderBytes) +
            "; the file is truncated or damaged: compile it again");
  if (fnv1a(data + kHeaderBytes, payload) != hash)
    return Status::error(StatusCode::DataLoss,
                         what + ": checksum mismatch; the file is damaged: "
                                "compile it again");

  Reader r(data + kHeaderBytes, payload, what);
  exe = Executable();
  exe.version = version;
  exe.fusedKernels = (flags & kFlagFusedKernels) != 0;
  uint32_t n;
  const bool sharded = version >= 3;
  bool ok = r.str(exe.producer, "the producer") &&
            r.str(exe.source, "the source") && r.str(exe.name, "the name");
  if (ok && sharded) {
    ok = r.count(n, 8, "mesh axes");
    if (ok)
      exe.mesh.resize(n);
    for (MeshAxisInfo &axis : exe.mesh)
      ok = ok && r.str(axis.name, "a mesh axis's name") &&
           r.pod(axis.size, "a mesh axis's size");
  }
  ok = ok && r.count(n, 18, "arguments");
  if (ok) {
    exe.arguments.resize(n);
    for (ArgumentInfo &arg : exe.arguments) {
      uint8_t role = 0, init = 0;
      ok = ok && r.str(arg.name, "an argument's name") &&
           r.pod(role, "an argument's role") &&
           r.pod(arg.value, "an argument's value slot") &&
           r.pod(init, "an argument's initializer") &&
           r.pod(arg.init.scale, "an argument's initializer scale") &&
           (!sharded || readSharding(r, arg.sharding)) &&
           (version < 4 || r.pod(arg.pipelineStage, "an argument's stage"));
      arg.role = static_cast<ArgumentRole>(role);
      arg.init.kind = static_cast<InitSpec::Kind>(init);
    }
  }
  ok = ok && r.count(n, 8, "outputs");
  if (ok) {
    exe.outputs.resize(n);
    for (OutputInfo &out : exe.outputs)
      ok = ok && r.str(out.name, "an output's name") &&
           r.pod(out.value, "an output's value slot") &&
           (!sharded || readSharding(r, out.sharding)) &&
           (version < 4 ||
            (r.pod(out.pipelineStage, "an output's stage") &&
             r.podVector(out.replicaStages, "an output's replica stages")));
  }
  ok = ok && r.count(n, 20, "rank programs");
  if (ok) {
    exe.ranks.resize(n);
    for (RankProgram &rank : exe.ranks)
      ok = ok && readProgram(r, rank) &&
           (version < 5 || format::readCudaPlan(r, rank.cuda));
  }
  ok = ok && r.count(n, 8, "metadata entries");
  for (uint32_t i = 0; ok && i < n; ++i) {
    std::string key, value;
    ok = r.str(key, "a metadata key") && r.str(value, "a metadata value");
    exe.metadata[key] = value;
  }
  ok = ok && r.count(n, 8, "companion programs");
  std::vector<std::vector<uint8_t>> companions;
  for (uint32_t i = 0; ok && i < n; ++i) {
    uint64_t bytes = 0;
    companions.emplace_back();
    ok = r.pod(bytes, "a companion's size") &&
         r.bytes(companions.back(), bytes, "a companion program");
  }
  if (!ok)
    return r.status();
  for (const std::vector<uint8_t> &bytes : companions) {
    exe.companions.emplace_back();
    LLMC_RETURN_IF_ERROR(parseExecutable(bytes.data(), bytes.size(),
                                         what + " (companion program)",
                                         exe.companions.back()));
  }
  if (!r.atEnd())
    return Status::error(StatusCode::DataLoss,
                         what + ": unexpected bytes after the last "
                                "companion program; the file is damaged");
  exe.source = exe.source.empty() ? what : exe.source;
  return validateExecutable(exe);
}

Status readExecutable(const std::string &path, Executable &exe) {
  std::vector<uint8_t> bytes;
  if (Status status = readFile(path, bytes); !status) {
    if (status.code() == StatusCode::NotFound)
      return Status::error(StatusCode::NotFound,
                           "cannot open '" + path +
                               "': write it with `llmc compile FILE -o " +
                               path + "`");
    return status; // a directory, a device, unreadable: File.cpp says which
  }
  return parseExecutable(bytes.data(), bytes.size(), path, exe);
}

} // namespace llmc::rt
