//===- Mesh.cpp - device meshes and groups of ranks -----------------------===//
#include "runtime/Mesh.h"

#include <algorithm>
#include <climits>
#include <set>

namespace llmc::rt {

static Status invalid(std::string message) {
  return Status::error(StatusCode::InvalidArgument, std::move(message));
}

static std::string formatInts(const std::vector<int> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

//===----------------------------------------------------------------------===//
// DeviceGroup
//===----------------------------------------------------------------------===//

Status DeviceGroup::create(std::vector<int> ranks, DeviceGroup &group) {
  if (ranks.empty())
    return invalid("a device group needs at least one rank");
  std::set<int> seen;
  for (int rank : ranks) {
    if (rank < 0)
      return invalid("device group " + formatInts(ranks) +
                     " has a negative rank " + std::to_string(rank));
    if (!seen.insert(rank).second)
      return invalid("device group " + formatInts(ranks) + " lists rank " +
                     std::to_string(rank) + " twice");
  }
  group.ranks_ = std::move(ranks);
  return Status::ok();
}

int DeviceGroup::memberIndex(int rank) const {
  auto it = std::find(ranks_.begin(), ranks_.end(), rank);
  return it == ranks_.end() ? -1 : static_cast<int>(it - ranks_.begin());
}

std::string DeviceGroup::toString() const { return formatInts(ranks_); }

//===----------------------------------------------------------------------===//
// MeshShape
//===----------------------------------------------------------------------===//

Status MeshShape::create(std::vector<MeshAxis> axes, MeshShape &mesh) {
  std::set<std::string> names;
  int64_t devices = 1;
  for (const MeshAxis &axis : axes) {
    if (axis.name.empty())
      return invalid("mesh axis names must be non-empty");
    if (!names.insert(axis.name).second)
      return invalid("mesh axis '" + axis.name + "' appears twice");
    if (axis.size < 1)
      return invalid("mesh axis '" + axis.name +
                     "' must have at least 1 device, got " +
                     std::to_string(axis.size));
    devices *= axis.size;
    if (devices > INT_MAX)
      return invalid("a mesh of more than " + std::to_string(INT_MAX) +
                     " devices is not supported");
  }
  mesh.axes_ = std::move(axes);
  mesh.numDevices_ = static_cast<int>(devices);
  return Status::ok();
}

int MeshShape::axisIndex(const std::string &name) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].name == name)
      return static_cast<int>(i);
  return -1;
}

Status MeshShape::coordinates(int rank, std::vector<int> &coords) const {
  if (rank < 0 || rank >= numDevices_)
    return invalid("rank " + std::to_string(rank) + " is outside mesh " +
                   toString() + " of " + std::to_string(numDevices_) +
                   " devices");
  coords.assign(axes_.size(), 0);
  for (size_t i = axes_.size(); i-- > 0;) {
    coords[i] = rank % axes_[i].size;
    rank /= axes_[i].size;
  }
  return Status::ok();
}

Status MeshShape::rankAt(const std::vector<int> &coords, int &rank) const {
  if (coords.size() != axes_.size())
    return invalid("mesh " + toString() + " needs " +
                   std::to_string(axes_.size()) + " coordinates, got " +
                   std::to_string(coords.size()));
  int result = 0;
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (coords[i] < 0 || coords[i] >= axes_[i].size)
      return invalid("coordinate " + std::to_string(coords[i]) +
                     " is outside mesh axis '" + axes_[i].name + "' of size " +
                     std::to_string(axes_[i].size));
    result = result * axes_[i].size + coords[i];
  }
  rank = result;
  return Status::ok();
}

Status MeshShape::resolveAxes(const std::vector<std::string> &axisNames,
                              std::vector<int> &indices) const {
  indices.clear();
  for (const std::string &name : axisNames) {
    int index = axisIndex(name);
    if (index < 0)
      return invalid("mesh " + toString() + " has no axis '" + name + "'");
    if (std::find(indices.begin(), indices.end(), index) != indices.end())
      return invalid("mesh axis '" + name + "' is listed twice");
    indices.push_back(index);
  }
  return Status::ok();
}

/// Advances `coords` like an odometer over the axes `positions`
/// (the last listed position fastest); false after the last combination.
static bool advance(std::vector<int> &coords, const std::vector<int> &positions,
                    const std::vector<MeshAxis> &axes) {
  for (size_t i = positions.size(); i-- > 0;) {
    int axis = positions[i];
    if (++coords[axis] < axes[axis].size)
      return true;
    coords[axis] = 0;
  }
  return false;
}

DeviceGroup MeshShape::groupThrough(std::vector<int> coords,
                                    const std::vector<int> &indices) const {
  for (int axis : indices)
    coords[axis] = 0;
  std::vector<int> ranks;
  do {
    int rank = 0;
    for (size_t i = 0; i < axes_.size(); ++i)
      rank = rank * axes_[i].size + coords[i];
    ranks.push_back(rank);
  } while (advance(coords, indices, axes_));
  DeviceGroup group;
  // Distinct and non-negative by construction.
  (void)DeviceGroup::create(std::move(ranks), group);
  return group;
}

Status MeshShape::groupsAlong(const std::vector<std::string> &axisNames,
                              std::vector<DeviceGroup> &groups) const {
  std::vector<int> indices;
  if (Status status = resolveAxes(axisNames, indices); !status)
    return status;
  std::vector<int> others;
  for (int i = 0; i < static_cast<int>(axes_.size()); ++i)
    if (std::find(indices.begin(), indices.end(), i) == indices.end())
      others.push_back(i);
  groups.clear();
  std::vector<int> coords(axes_.size(), 0);
  do {
    groups.push_back(groupThrough(coords, indices));
  } while (advance(coords, others, axes_));
  return Status::ok();
}

Status MeshShape::groupAlong(int rank,
                             const std::vector<std::string> &axisNames,
                             DeviceGroup &group) const {
  std::vector<int> indices, coords;
  if (Status status = resolveAxes(axisNames, indices); !status)
    return status;
  if (Status status = coordinates(rank, coords); !status)
    return status;
  group = groupThrough(coords, indices);
  return Status::ok();
}

std::string MeshShape::toString() const {
  std::string text = "{";
  for (size_t i = 0; i < axes_.size(); ++i)
    text +=
        (i ? ", " : "") + axes_[i].name + "=" + std::to_string(axes_[i].size);
  return text + "}";
}

} // namespace llmc::rt
