//===- Executable.h - the compiled program the runtime runs ------*- C++ -*-===//
//
// What `llmc compile` writes and the runtime loads: the program's argument
// and output tables, and per rank a buffer plan (every value's place in one
// arena) and a command list. The file format is documented in
// docs/executable.md; readExecutable rejects a wrong magic, a version this
// runtime does not know, and a corrupt or truncated file.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_EXECUTABLE_H
#define LLMC_RUNTIME_EXECUTABLE_H

#include "runtime/CudaPlan.h"
#include "runtime/DType.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llmc::rt {

/// The format version this runtime writes. It also reads version 4 (no
/// CUDA kernel plan), version 3 (no output stages) and version 2 (no mesh,
/// no shardings: one device).
constexpr uint32_t kExecutableVersion = 5;
constexpr uint32_t kOldestExecutableVersion = 2;

/// How a parameter is initialized (llmc.init), for training from scratch.
/// `Constant` fills every element with `scale` (e.g. the initial fp16 loss
/// scale, an optimizer-state argument).
struct InitSpec {
  enum class Kind : uint8_t { None, Normal, Uniform, Zeros, Ones, Constant };
  Kind kind = Kind::None;
  double scale = 0.0;
};

enum class ArgumentRole : uint8_t { Parameter, Input, OptimizerState };

/// One axis of the device mesh a program runs on; ranks are numbered
/// row-major over the axes (last fastest), as in runtime/Mesh.h.
struct MeshAxisInfo {
  std::string name;
  int32_t size = 1;
};

/// How one dimension of a global tensor is split. The dimension (size S) is
/// viewed as `groups` equal blocks of S/groups elements; each block is split
/// into n contiguous chunks, n = product of the sizes of `axes` (mesh axis
/// indices, major to minor). Local index j (local size S/n) of the rank
/// whose mixed-radix position over `axes` is p maps to the global index
///   (j / c) * (S / groups) + p * c + (j % c), with c = S / (groups * n).
/// Empty `axes`: not split (groups is then 1).
/// `zigzag` (context parallelism): in odd-numbered blocks p is replaced by
/// n - 1 - p, so that with 2 groups rank p holds chunks p and 2n - 1 - p.
/// The file stores it as a negative `groups` (docs/executable.md).
struct DimSharding {
  std::vector<int32_t> axes;
  int64_t groups = 1;
  bool zigzag = false;
  bool operator==(const DimSharding &other) const {
    return axes == other.axes && groups == other.groups &&
           zigzag == other.zigzag;
  }
  bool operator!=(const DimSharding &other) const { return !(*this == other); }
};

/// A tensor's sharding: one DimSharding per dimension, or no dims at all for
/// a replicated tensor. runtime/Sharding.h splits and assembles tensors.
struct TensorSharding {
  std::vector<DimSharding> dims;
  /// True when no dimension is split (every rank holds the whole tensor).
  bool replicated() const;
  bool operator==(const TensorSharding &other) const {
    return dims == other.dims;
  }
  bool operator!=(const TensorSharding &other) const {
    return !(*this == other);
  }
};

/// A program argument: bound by name by the caller before running.
struct ArgumentInfo {
  std::string name;
  ArgumentRole role = ArgumentRole::Input;
  int32_t value = -1; ///< the value slot it fills, in every rank
  InitSpec init;
  /// How the global tensor the caller binds is split over the ranks; the
  /// value slot's shape is one rank's (local) block.
  TensorSharding sharding;
  /// A pipelined program: the position along the mesh axis "pp" of the
  /// only ranks that read it (the runtime binds it there and nowhere else;
  /// the other ranks' slot may share its bytes). -1: every rank.
  int32_t pipelineStage = -1;
};

/// A program result, read by the caller after running.
struct OutputInfo {
  std::string name;   ///< "loss", or "output<i>"
  int32_t value = -1; ///< the value slot holding it
  TensorSharding sharding; ///< as ArgumentInfo::sharding
  /// A pipelined program: the position along the mesh axis "pp" of the
  /// ranks that compute it; the other ranks' slot is never written, and
  /// the runtime reads the output there. -1: every rank holds it.
  int32_t pipelineStage = -1;
  /// Other stages that compute the same value themselves (a tied
  /// parameter's update runs on every stage that reads it): their ranks
  /// hold it too.
  std::vector<int32_t> replicaStages;
};

/// The offset of a value that has no place in the arena: an intermediate
/// of an elementwise fused region in a program compiled for fused kernels
/// (Executable::fusedKernels), which the region's one kernel keeps in
/// registers. Only commands inside such a region's span read or write one
/// (validateExecutable checks it).
constexpr uint64_t kNoStorage = ~uint64_t(0);

/// One value of a rank's program: its type and its place in the arena.
struct ValueInfo {
  DType dtype = DType::F32;
  Shape shape;
  uint64_t offset = 0; ///< bytes from the start of the arena, or kNoStorage
  uint64_t bytes() const {
    return static_cast<uint64_t>(numElements(shape)) * dtypeSize(dtype);
  }
  bool stored() const { return offset != kNoStorage; }
};

enum class CommandKind : uint8_t {
  Kernel,     ///< run `kernel` (Kernels.def) on value slots
  Gemm,       ///< a matmul through the BLAS/cuBLASLt path (kernel = Matmul)
  Collective, ///< a collective over a mesh group (issue #8)
  Copy,       ///< copy inputs[0] into outputs[0] (same size)
  HostStep,   ///< work on the host between device steps (issue #5)
};

/// What a Collective command does. Its attrs.ints are
///   [collective, reduce (0 sum, 1 max), peer, tag, n, rank_0, ..., rank_n-1]:
/// the group is ranks 0..n-1 in that order (for all-reduce, all-gather,
/// reduce-scatter and all-to-all); peer and tag serve send and recv. Inputs
/// and outputs are one value slot each (send has no output, recv no input).
enum class CollectiveKind : uint8_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Send,
  Recv,
};

/// The collective's name as errors, profiles and traces spell it
/// ("all_reduce", "send").
inline const char *collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Send:
    return "send";
  case CollectiveKind::Recv:
    return "recv";
  }
  return "?";
}

struct Command {
  CommandKind kind = CommandKind::Kernel;
  KernelKind kernel = KernelKind::Count;
  std::vector<int32_t> inputs;  ///< value slots read
  std::vector<int32_t> outputs; ///< value slots written
  KernelAttrs attrs;
  std::string origin; ///< the model part (op location), for errors/profiles
};

/// A constant baked into the program: copied into its slot at load time.
struct ConstantData {
  int32_t value = -1;
  std::vector<uint8_t> bytes;
};

/// The program of one rank.
struct RankProgram {
  uint64_t arenaBytes = 0;
  std::vector<ValueInfo> values;
  std::vector<ConstantData> constants;
  std::vector<Command> commands;
  /// The CUDA kernels of these commands, as codegen chose them (CudaPlan.h).
  CudaPlan cuda;
};

struct Executable {
  uint32_t version = kExecutableVersion;
  std::string producer; ///< "llmc 0.1.0"
  std::string source;   ///< what it was compiled from (a path)
  std::string name;     ///< the function compiled: "loss", "train_step", ...
  std::vector<ArgumentInfo> arguments;
  std::vector<OutputInfo> outputs;
  /// The device mesh the ranks form; empty for one device. The product of
  /// the sizes is ranks.size().
  std::vector<MeshAxisInfo> mesh;
  std::vector<RankProgram> ranks; ///< one per rank
  /// Settings the program's user needs, as text: a training artifact holds
  /// its run's [train], [data] and [checkpoint] settings here (keys in
  /// docs/executable.md), so that the runtime alone can train from it.
  std::map<std::string, std::string> metadata;
  /// Programs shipped with this one, e.g. the "logits" program a training
  /// artifact uses to print a sample. Each is complete in itself.
  std::vector<Executable> companions;
  /// Compiled for a backend that runs each elementwise fused region (a
  /// FusedElementwise marker and its commands) as one kernel: the values
  /// such a region does not yield may have no storage (kNoStorage), so its
  /// commands cannot run one by one. The CPU session refuses such a
  /// program; the CUDA session refuses to run such a region op by op. In
  /// the file: bit 0 of the header's flags (docs/executable.md).
  bool fusedKernels = false;

  /// The companion called `name`, or null.
  const Executable *companion(const std::string &name) const;
  /// The index of the argument / output called `name`, or -1.
  int findArgument(const std::string &name) const;
  int findOutput(const std::string &name) const;
};

/// Whether a value that the commands of the FusedElementwise region whose
/// marker is command `marker` read or write has no storage: then only one
/// kernel for the whole region can run it.
bool regionNeedsOneKernel(const RankProgram &program, size_t marker);

/// For each command of `program`: whether it belongs to (follows the
/// marker of) a region for which regionNeedsOneKernel holds. Such commands
/// never run on their own.
std::vector<bool> commandsOfOneKernelRegions(const RankProgram &program);

/// Checks internal consistency: value slots in range, values inside the
/// arena, kernel ids known, constants of the right size, a mesh of
/// ranks.size() devices, shardings that fit the mesh and their value, and
/// arguments and outputs of one dtype and local shape in every rank, and
/// values without storage only in a fusedKernels program, read and written
/// only inside elementwise regions.
/// Loading runs it.
Status validateExecutable(const Executable &executable);

/// Serializes to the documented binary format, in `executable.version`
/// (version 2 drops the mesh and the shardings).
std::vector<uint8_t> serializeExecutable(const Executable &executable);
Status writeExecutable(const Executable &executable, const std::string &path);

/// Parses and validates; `what` names the source in messages.
Status parseExecutable(const uint8_t *data, size_t size,
                       const std::string &what, Executable &executable);
Status readExecutable(const std::string &path, Executable &executable);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_EXECUTABLE_H
