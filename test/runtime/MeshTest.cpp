// Tests of device meshes and groups of ranks (runtime/Mesh.h): row-major
// rank numbering, the groups along mesh axes, and the rejection of malformed
// meshes, axes and groups.
#include "runtime/Mesh.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace llmc::rt;

DeviceGroup groupOf(std::vector<int> ranks) {
  DeviceGroup group;
  Status status = DeviceGroup::create(std::move(ranks), group);
  EXPECT_TRUE(status.isOk()) << status.toString();
  return group;
}

std::vector<std::vector<int>> ranksOf(const std::vector<DeviceGroup> &groups) {
  std::vector<std::vector<int>> result;
  for (const DeviceGroup &group : groups)
    result.push_back(group.ranks());
  return result;
}

TEST(MeshShape, RanksAreRowMajorWithTheLastAxisFastest) {
  MeshShape mesh;
  ASSERT_TRUE(MeshShape::create({{"dp", 2}, {"tp", 4}}, mesh).isOk());
  EXPECT_EQ(mesh.numDevices(), 8);
  EXPECT_EQ(mesh.toString(), "{dp=2, tp=4}");
  EXPECT_EQ(mesh.axisIndex("tp"), 1);
  EXPECT_EQ(mesh.axisIndex("pp"), -1);
  std::vector<int> coords;
  ASSERT_TRUE(mesh.coordinates(5, coords).isOk());
  EXPECT_EQ(coords, (std::vector<int>{1, 1}));
  ASSERT_TRUE(mesh.coordinates(3, coords).isOk());
  EXPECT_EQ(coords, (std::vector<int>{0, 3}));
  for (int rank = 0; rank < 8; ++rank) {
    int back = -1;
    ASSERT_TRUE(mesh.coordinates(rank, coords).isOk());
    ASSERT_TRUE(mesh.rankAt(coords, back).isOk());
    EXPECT_EQ(back, rank);
  }
  Status outside = mesh.coordinates(8, coords);
  EXPECT_EQ(outside.code(), StatusCode::InvalidArgument);
  EXPECT_NE(outside.message().find("rank 8 is outside mesh {dp=2, tp=4}"),
            std::string::npos)
      << outside.message();
  int rank;
  EXPECT_EQ(mesh.rankAt({2, 0}, rank).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(mesh.rankAt({0}, rank).code(), StatusCode::InvalidArgument);
}

TEST(MeshShape, GroupsAlongTheAxesOfA2x4Mesh) {
  MeshShape mesh;
  ASSERT_TRUE(MeshShape::create({{"dp", 2}, {"tp", 4}}, mesh).isOk());
  std::vector<DeviceGroup> groups;
  ASSERT_TRUE(mesh.groupsAlong({"tp"}, groups).isOk());
  EXPECT_EQ(ranksOf(groups),
            (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  ASSERT_TRUE(mesh.groupsAlong({"dp"}, groups).isOk());
  EXPECT_EQ(ranksOf(groups),
            (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // Both axes: the first listed varies slowest.
  ASSERT_TRUE(mesh.groupsAlong({"dp", "tp"}, groups).isOk());
  EXPECT_EQ(ranksOf(groups),
            (std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  ASSERT_TRUE(mesh.groupsAlong({"tp", "dp"}, groups).isOk());
  EXPECT_EQ(ranksOf(groups),
            (std::vector<std::vector<int>>{{0, 4, 1, 5, 2, 6, 3, 7}}));
  ASSERT_TRUE(mesh.groupsAlong({}, groups).isOk());
  EXPECT_EQ(groups.size(), 8u);
  EXPECT_EQ(groups[6].ranks(), (std::vector<int>{6}));

  DeviceGroup group;
  ASSERT_TRUE(mesh.groupAlong(6, {"dp"}, group).isOk());
  EXPECT_EQ(group.ranks(), (std::vector<int>{2, 6}));
  EXPECT_EQ(group.memberIndex(6), 1);
  ASSERT_TRUE(mesh.groupAlong(6, {"tp"}, group).isOk());
  EXPECT_EQ(group.ranks(), (std::vector<int>{4, 5, 6, 7}));
}

TEST(MeshShape, GroupsAlongTheAxesOfA2x2x2Mesh) {
  MeshShape mesh;
  ASSERT_TRUE(MeshShape::create({{"x", 2}, {"y", 2}, {"z", 2}}, mesh).isOk());
  std::vector<DeviceGroup> groups;
  ASSERT_TRUE(mesh.groupsAlong({"x"}, groups).isOk());
  EXPECT_EQ(ranksOf(groups),
            (std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  ASSERT_TRUE(mesh.groupsAlong({"y"}, groups).isOk());
  EXPECT_EQ(ranksOf(groups),
            (std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  ASSERT_TRUE(mesh.groupsAlong({"z"}, groups).isOk());
  EXPECT_EQ(ranksOf(groups),
            (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  ASSERT_TRUE(mesh.groupsAlong({"x", "z"}, groups).isOk());
  EXPECT_EQ(ranksOf(groups),
            (std::vector<std::vector<int>>{{0, 1, 4, 5}, {2, 3, 6, 7}}));
}

TEST(MeshShape, RejectsMalformedMeshesAndAxes) {
  MeshShape mesh;
  Status zero = MeshShape::create({{"dp", 0}}, mesh);
  EXPECT_EQ(zero.code(), StatusCode::InvalidArgument);
  EXPECT_NE(zero.message().find("'dp' must have at least 1 device, got 0"),
            std::string::npos)
      << zero.message();
  EXPECT_EQ(MeshShape::create({{"dp", 2}, {"dp", 2}}, mesh).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(MeshShape::create({{"", 2}}, mesh).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(MeshShape::create({{"a", 1 << 16}, {"b", 1 << 16}}, mesh).code(),
            StatusCode::InvalidArgument);

  ASSERT_TRUE(MeshShape::create({{"dp", 2}, {"tp", 4}}, mesh).isOk());
  std::vector<DeviceGroup> groups;
  Status unknown = mesh.groupsAlong({"pp"}, groups);
  EXPECT_EQ(unknown.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(unknown.message(), "mesh {dp=2, tp=4} has no axis 'pp'");
  EXPECT_EQ(mesh.groupsAlong({"tp", "tp"}, groups).code(),
            StatusCode::InvalidArgument);
}

TEST(DeviceGroup, KeepsTheOrderAndRejectsRepeatsAndNegatives) {
  DeviceGroup group = groupOf({7, 1});
  EXPECT_EQ(group.memberIndex(7), 0);
  EXPECT_EQ(group.memberIndex(1), 1);
  EXPECT_EQ(group.memberIndex(3), -1);
  EXPECT_EQ(group.toString(), "[7, 1]");
  EXPECT_NE(group, groupOf({1, 7}));
  Status repeated = DeviceGroup::create({0, 2, 0}, group);
  EXPECT_EQ(repeated.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(repeated.message(), "device group [0, 2, 0] lists rank 0 twice");
  EXPECT_EQ(DeviceGroup::create({}, group).code(), StatusCode::InvalidArgument);
  EXPECT_EQ(DeviceGroup::create({-1}, group).code(),
            StatusCode::InvalidArgument);
}

} // namespace
