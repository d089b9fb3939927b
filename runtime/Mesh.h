//===- Mesh.h - device meshes and groups of ranks ---------------*- C++ -*-===//
//
// The shape of the devices a sharded program runs on ({dp=2, tp=4}) and the
// groups of ranks a collective runs over. Device-independent: the CPU
// virtual devices (cpu/Collectives.h) use it today, NCCL communicators per
// mesh axis will use it too.
//
// Ranks are numbered row-major over the mesh axes: the last axis varies
// fastest, so in {dp=2, tp=4} rank 5 has coordinates (dp=1, tp=1).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_MESH_H
#define LLMC_RUNTIME_MESH_H

#include "runtime/Status.h"

#include <string>
#include <vector>

namespace llmc::rt {

/// An ordered list of distinct ranks that run a collective together. Member
/// i is ranks()[i]: that order decides which chunk is whose in all-gather,
/// reduce-scatter and all-to-all, and the order of the sums in reductions.
/// {7, 1} and {1, 7} are therefore different groups.
class DeviceGroup {
public:
  /// The empty group; no rank is a member of it.
  DeviceGroup() = default;

  /// Checks that `ranks` is non-empty and holds distinct non-negative ranks
  /// (in any order; the order is kept).
  static Status create(std::vector<int> ranks, DeviceGroup &group);

  const std::vector<int> &ranks() const { return ranks_; }
  int size() const { return static_cast<int>(ranks_.size()); }
  /// The position of `rank` in the group, or -1 when it is not a member.
  int memberIndex(int rank) const;
  bool contains(int rank) const { return memberIndex(rank) >= 0; }
  /// "[0, 2, 5]"
  std::string toString() const;

  bool operator==(const DeviceGroup &other) const {
    return ranks_ == other.ranks_;
  }
  bool operator!=(const DeviceGroup &other) const { return !(*this == other); }

private:
  std::vector<int> ranks_;
};

struct MeshAxis {
  std::string name; ///< "dp", "tp", ...
  int size = 1;
};

/// A device mesh: named axes with sizes, ranks numbered row-major.
class MeshShape {
public:
  /// A mesh with no axes: one device.
  MeshShape() = default;

  /// Checks that axis names are non-empty and distinct, that sizes are at
  /// least 1, and that the number of devices fits an int.
  static Status create(std::vector<MeshAxis> axes, MeshShape &mesh);

  const std::vector<MeshAxis> &axes() const { return axes_; }
  /// The product of the axis sizes.
  int numDevices() const { return numDevices_; }
  /// The position of axis `name`, or -1 when the mesh has no such axis.
  int axisIndex(const std::string &name) const;

  /// The coordinate of `rank` along every axis, in axis order.
  Status coordinates(int rank, std::vector<int> &coords) const;
  /// The inverse of coordinates().
  Status rankAt(const std::vector<int> &coords, int &rank) const;

  /// Every group of ranks that differ only in their coordinates along
  /// `axisNames`. Within a group, members are ordered row-major over
  /// `axisNames` in the order they are listed (the first listed axis varies
  /// slowest); groups are ordered row-major over the remaining axes, i.e. by
  /// their smallest rank. In {dp=2, tp=4}: along {"tp"} the groups are
  /// [0, 1, 2, 3] and [4, 5, 6, 7]; along {"dp"} they are [0, 4], [1, 5],
  /// [2, 6] and [3, 7]. An unknown or repeated axis is InvalidArgument.
  Status groupsAlong(const std::vector<std::string> &axisNames,
                     std::vector<DeviceGroup> &groups) const;
  /// The one group of groupsAlong(axisNames) that contains `rank`.
  Status groupAlong(int rank, const std::vector<std::string> &axisNames,
                    DeviceGroup &group) const;

  /// "{dp=2, tp=4}"
  std::string toString() const;

private:
  Status resolveAxes(const std::vector<std::string> &axisNames,
                     std::vector<int> &indices) const;
  /// The group along axes `indices` through the device at `coords`.
  DeviceGroup groupThrough(std::vector<int> coords,
                           const std::vector<int> &indices) const;

  std::vector<MeshAxis> axes_;
  int numDevices_ = 1;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_MESH_H
