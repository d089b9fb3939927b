//===- Sharding.cpp - global tensors and the ranks' local blocks ----------===//
#include "runtime/Sharding.h"

#include <cstdint>
#include <cstring>

namespace llmc::rt {

namespace {

/// How one dimension of a rank's block maps into the global tensor: local
/// index j goes to (j / chunk) * block + offset + j % chunk.
struct DimPlan {
  int64_t global = 0; ///< S
  int64_t local = 0;  ///< S / n
  int64_t chunk = 0;  ///< c = S / (groups * n)
  int64_t block = 0;  ///< S / groups
  int64_t offset = 0; ///< p * c
  /// Zigzag: the offset in odd-numbered blocks, (n - 1 - p) * c.
  int64_t oddOffset = 0;
  bool split = false;

  int64_t offsetOf(int64_t block) const {
    return block % 2 == 1 ? oddOffset : offset;
  }
};

Status invalidSharding(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, message);
}

Status checkFits(const TensorSharding &sharding, size_t rank,
                 const std::vector<MeshAxisInfo> &mesh) {
  if (sharding.dims.empty())
    return Status::ok();
  if (sharding.dims.size() != rank)
    return invalidSharding("a sharding of " +
                           std::to_string(sharding.dims.size()) +
                           " dimensions for a tensor of rank " +
                           std::to_string(rank));
  for (const DimSharding &dim : sharding.dims) {
    if (dim.groups < 1)
      return invalidSharding("a sharding with " + std::to_string(dim.groups) +
                             " groups, expected at least 1");
    for (int32_t axis : dim.axes)
      if (axis < 0 || static_cast<size_t>(axis) >= mesh.size())
        return invalidSharding("a sharding names mesh axis " +
                               std::to_string(axis) + " of a mesh of " +
                               std::to_string(mesh.size()) + " axes");
  }
  return Status::ok();
}

int64_t meshDevices(const std::vector<MeshAxisInfo> &mesh) {
  int64_t devices = 1;
  for (const MeshAxisInfo &axis : mesh)
    devices *= axis.size;
  return devices;
}

/// `rank`'s coordinates along the mesh axes (row-major, last fastest).
std::vector<int64_t> coordinatesOf(int64_t rank,
                                   const std::vector<MeshAxisInfo> &mesh) {
  std::vector<int64_t> coords(mesh.size());
  for (size_t a = mesh.size(); a-- > 0;) {
    coords[a] = rank % mesh[a].size;
    rank /= mesh[a].size;
  }
  return coords;
}

Status planShard(const Shape &globalShape, const TensorSharding &sharding,
                 const std::vector<MeshAxisInfo> &mesh, int rank,
                 std::vector<DimPlan> &plan) {
  LLMC_RETURN_IF_ERROR(checkFits(sharding, globalShape.size(), mesh));
  // Every rank holds all of a replicated tensor, mesh or not.
  if (!sharding.replicated() && (rank < 0 || rank >= meshDevices(mesh)))
    return invalidSharding("rank " + std::to_string(rank) +
                           " is not in the mesh " + formatMesh(mesh));
  std::vector<int64_t> coords = coordinatesOf(sharding.replicated() ? 0 : rank, mesh);
  plan.assign(globalShape.size(), DimPlan());
  for (size_t d = 0; d < globalShape.size(); ++d) {
    DimPlan &p = plan[d];
    p.global = p.local = p.chunk = p.block = globalShape[d];
    if (sharding.dims.empty() || sharding.dims[d].axes.empty())
      continue;
    const DimSharding &dim = sharding.dims[d];
    int64_t n = 1, position = 0;
    for (int32_t axis : dim.axes) {
      position = position * mesh[axis].size + coords[axis];
      n *= mesh[axis].size;
    }
    if (p.global % (dim.groups * n) != 0)
      return invalidSharding(
          "dimension " + std::to_string(d) + " of size " +
          std::to_string(p.global) + " does not split into " +
          std::to_string(dim.groups) + " group(s) of " + std::to_string(n) +
          " chunks");
    p.split = n > 1;
    p.local = p.global / n;
    p.chunk = p.global / (dim.groups * n);
    p.block = p.global / dim.groups;
    p.offset = position * p.chunk;
    p.oddOffset = dim.zigzag ? (n - 1 - position) * p.chunk : p.offset;
  }
  return Status::ok();
}

} // namespace

Status shardIndices(const Shape &globalShape, const TensorSharding &sharding,
                    const std::vector<MeshAxisInfo> &mesh, int rank,
                    size_t dim, std::vector<int64_t> &indices) {
  indices.clear();
  if (dim >= globalShape.size())
    return invalidSharding("dimension " + std::to_string(dim) +
                           " of a tensor of rank " +
                           std::to_string(globalShape.size()));
  std::vector<DimPlan> plan;
  LLMC_RETURN_IF_ERROR(planShard(globalShape, sharding, mesh, rank, plan));
  const DimPlan &p = plan[dim];
  indices.reserve(static_cast<size_t>(p.local));
  for (int64_t j = 0; j < p.local; ++j) {
    int64_t block = j / p.chunk;
    indices.push_back(block * p.block + p.offsetOf(block) + j % p.chunk);
  }
  return Status::ok();
}

namespace {

/// Copies one rank's block between `global` and `local` (direction
/// `toLocal`), in runs of contiguous bytes.
class ShardCopier {
public:
  ShardCopier(const std::vector<DimPlan> &plan, size_t elementBytes)
      : plan_(plan) {
    // The innermost split dimension: below it both layouts are the same.
    for (size_t d = 0; d < plan.size(); ++d)
      if (plan[d].split)
        last_ = static_cast<int>(d);
    globalStride_.assign(plan.size(), elementBytes);
    localStride_.assign(plan.size(), elementBytes);
    for (size_t d = plan.size(); d-- > 1;) {
      globalStride_[d - 1] = globalStride_[d] * plan[d].global;
      localStride_[d - 1] = localStride_[d] * plan[d].local;
    }
    total_ = elementBytes;
    for (const DimPlan &p : plan)
      total_ *= p.local;
  }

  void copy(uint8_t *global, uint8_t *local, bool toLocal) const {
    if (total_ == 0)
      return;
    if (last_ < 0) {
      move(global, local, total_, toLocal);
      return;
    }
    walk(0, global, local, toLocal);
  }

private:
  static void move(uint8_t *global, uint8_t *local, size_t bytes,
                   bool toLocal) {
    if (toLocal)
      std::memcpy(local, global, bytes);
    else
      std::memcpy(global, local, bytes);
  }

  void walk(int d, uint8_t *global, uint8_t *local, bool toLocal) const {
    const DimPlan &p = plan_[d];
    if (d == last_) {
      // One run per group: `chunk` rows of the unsplit dimensions inside.
      size_t run = static_cast<size_t>(p.chunk) * localStride_[d];
      for (int64_t q = 0; q < p.local / p.chunk; ++q)
        move(global + (q * p.block + p.offsetOf(q)) * globalStride_[d],
             local + q * p.chunk * localStride_[d], run, toLocal);
      return;
    }
    for (int64_t j = 0; j < p.local; ++j) {
      int64_t g =
          (j / p.chunk) * p.block + p.offsetOf(j / p.chunk) + j % p.chunk;
      walk(d + 1, global + g * globalStride_[d], local + j * localStride_[d],
           toLocal);
    }
  }

  const std::vector<DimPlan> &plan_;
  int last_ = -1;
  std::vector<size_t> globalStride_, localStride_;
  size_t total_ = 0;
};

} // namespace

int64_t shardCount(const DimSharding &dim,
                   const std::vector<MeshAxisInfo> &mesh) {
  int64_t n = 1;
  for (int32_t axis : dim.axes)
    n *= mesh[axis].size;
  return n;
}

Status globalShape(const Shape &local, const TensorSharding &sharding,
                   const std::vector<MeshAxisInfo> &mesh, Shape &global) {
  LLMC_RETURN_IF_ERROR(checkFits(sharding, local.size(), mesh));
  global = local;
  for (size_t d = 0; d < sharding.dims.size(); ++d)
    global[d] *= shardCount(sharding.dims[d], mesh);
  return Status::ok();
}

Status argumentGlobalShape(const Executable &executable, size_t index,
                           Shape &global) {
  const ArgumentInfo &arg = executable.arguments.at(index);
  Status status = globalShape(executable.ranks.front().values[arg.value].shape,
                              arg.sharding, executable.mesh, global);
  if (!status)
    return Status::error(status.code(),
                         "argument '" + arg.name + "': " + status.message());
  return Status::ok();
}

Status outputGlobalShape(const Executable &executable, size_t index,
                         Shape &global) {
  const OutputInfo &out = executable.outputs.at(index);
  Status status = globalShape(executable.ranks.front().values[out.value].shape,
                              out.sharding, executable.mesh, global);
  if (!status)
    return Status::error(status.code(),
                         "output '" + out.name + "': " + status.message());
  return Status::ok();
}

Status extractShard(const void *global, size_t elementBytes,
                    const Shape &globalShape, const TensorSharding &sharding,
                    const std::vector<MeshAxisInfo> &mesh, int rank,
                    void *local) {
  std::vector<DimPlan> plan;
  LLMC_RETURN_IF_ERROR(planShard(globalShape, sharding, mesh, rank, plan));
  ShardCopier(plan, elementBytes)
      .copy(static_cast<uint8_t *>(const_cast<void *>(global)),
            static_cast<uint8_t *>(local), /*toLocal=*/true);
  return Status::ok();
}

Status assembleShards(const std::vector<const void *> &locals,
                      size_t elementBytes, const Shape &globalShape,
                      const TensorSharding &sharding,
                      const std::vector<MeshAxisInfo> &mesh, void *global) {
  if (sharding.replicated() && !locals.empty()) {
    std::vector<DimPlan> plan;
    LLMC_RETURN_IF_ERROR(planShard(globalShape, sharding, mesh, 0, plan));
    ShardCopier(plan, elementBytes)
        .copy(static_cast<uint8_t *>(global),
              static_cast<uint8_t *>(const_cast<void *>(locals[0])),
              /*toLocal=*/false);
    return Status::ok();
  }
  if (static_cast<int64_t>(locals.size()) != meshDevices(mesh))
    return invalidSharding("expected a block from each of the " +
                           std::to_string(meshDevices(mesh)) +
                           " ranks of the mesh " + formatMesh(mesh) +
                           ", got " + std::to_string(locals.size()));
  std::vector<bool> used(mesh.size(), false);
  for (const DimSharding &dim : sharding.dims)
    for (int32_t axis : dim.axes)
      if (axis >= 0 && static_cast<size_t>(axis) < mesh.size())
        used[axis] = true;
  std::vector<DimPlan> plan;
  for (size_t rank = 0; rank < locals.size(); ++rank) {
    std::vector<int64_t> coords = coordinatesOf(rank, mesh);
    bool holder = true;
    for (size_t a = 0; a < mesh.size(); ++a)
      holder = holder && (used[a] || coords[a] == 0);
    if (!holder)
      continue;
    LLMC_RETURN_IF_ERROR(planShard(globalShape, sharding, mesh,
                                   static_cast<int>(rank), plan));
    ShardCopier(plan, elementBytes)
        .copy(static_cast<uint8_t *>(global),
              static_cast<uint8_t *>(const_cast<void *>(locals[rank])),
              /*toLocal=*/false);
  }
  return Status::ok();
}

std::string formatSharding(const TensorSharding &sharding,
                           const std::vector<MeshAxisInfo> &mesh) {
  if (sharding.replicated())
    return "replicated";
  std::string text = "[";
  for (size_t d = 0; d < sharding.dims.size(); ++d) {
    const DimSharding &dim = sharding.dims[d];
    text += d ? ", [" : "[";
    for (size_t i = 0; i < dim.axes.size(); ++i) {
      int32_t axis = dim.axes[i];
      text += i ? ", " : "";
      text += axis >= 0 && static_cast<size_t>(axis) < mesh.size()
                  ? mesh[axis].name
                  : "#" + std::to_string(axis);
    }
    if (dim.groups > 1)
      text += " x" + std::to_string(dim.groups);
    if (dim.zigzag)
      text += " zigzag";
    text += "]";
  }
  return text + "]";
}

std::string formatMesh(const std::vector<MeshAxisInfo> &mesh) {
  std::string text = "{";
  for (size_t a = 0; a < mesh.size(); ++a)
    text += (a ? ", " : "") + mesh[a].name + "=" +
            std::to_string(mesh[a].size);
  return text + "}";
}

} // namespace llmc::rt
