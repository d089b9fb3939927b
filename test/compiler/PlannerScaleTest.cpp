// The cost model at scale (docs/planning.md, "Planning at scale"):
// all-reduce as NCCL runs it (ring within a node; across nodes the cheapest
// of a flat ring, a double binary tree and the hierarchical form), closed
// forms on a made-up profile with round numbers; the H200's 2-rank
// calibration unchanged; and the two-stream simulation of a step.
#include "analysis/CostModel.h"
#include "analysis/DeviceProfile.h"

#include "PlannerTestSupport.h"

#include "analysis/BufferPlan.h"
#include "ir/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace llmc::planner;

namespace {

DeviceProfile profile() { return test::testProfile(); }

TEST(Collectives, TreeStepsAreTwiceTheDepth) {
  EXPECT_EQ(treeSteps(1), 0);
  EXPECT_EQ(treeSteps(2), 2);
  EXPECT_EQ(treeSteps(5), 6);
  EXPECT_EQ(treeSteps(8), 6);
  EXPECT_EQ(treeSteps(128), 14);
}

TEST(Collectives, RanksOfAGroupInANode) {
  llmc::Mesh mesh;
  mesh.names = {"dp", "tp"};
  mesh.sizes = {4, 2};
  EXPECT_EQ(ranksPerNode(mesh, {1}, 4), 2);    // tp: consecutive
  EXPECT_EQ(ranksPerNode(mesh, {0}, 4), 2);    // dp: stride 2, 2 per node
  EXPECT_EQ(ranksPerNode(mesh, {0, 1}, 4), 4); // the whole node
  mesh.sizes = {128, 8};                      // Megatron's dp x tp8
  EXPECT_EQ(ranksPerNode(mesh, {0}, 8), 1);   // one dp rank per node
  EXPECT_EQ(ranksPerNode(mesh, {1}, 8), 8);
  EXPECT_EQ(ranksPerNode(mesh, {0, 1}, 8), 8);
}

TEST(Collectives, WithinANodeARing) {
  DeviceProfile p = profile();
  const double s = 1 << 20;
  CollectiveCost c = allReduceCost(4, 4, s, p);
  EXPECT_STREQ(c.algorithm, "ring");
  EXPECT_NEAR(c.seconds, 6 * 2e-6 + 1.5 * s / 100e9, 1e-15);
  EXPECT_NEAR(c.latency, 6 * 2e-6, 1e-15);
}

TEST(Collectives, SmallAcrossNodesATree) {
  // 64 ranks, one a node, 1 KiB: the tree's 12 steps against the ring's
  // 126 (both on IB).
  DeviceProfile p = profile();
  const double s = 1024;
  CollectiveCost c = allReduceCost(64, 1, s, p);
  EXPECT_STREQ(c.algorithm, "tree");
  EXPECT_NEAR(c.seconds, 12 * 20e-6 + 2 * s / 10e9, 1e-15);
  double ring = 126 * 20e-6 + 2.0 * 63 / 64 * s / 10e9;
  EXPECT_LT(c.seconds, ring / 10);
}

TEST(Collectives, LargeAcrossFewNodesARing) {
  // 4 ranks one a node, 1 GiB: the ring sends 3/2 S, the tree 2 S; the
  // ring's 6 steps against the tree's 4 do not matter at this size.
  DeviceProfile p = profile();
  const double s = 1024.0 * 1024 * 1024;
  CollectiveCost c = allReduceCost(4, 1, s, p);
  EXPECT_STREQ(c.algorithm, "ring");
  EXPECT_NEAR(c.seconds, 6 * 20e-6 + 1.5 * s / 10e9, 1e-12);
}

TEST(Collectives, HierarchicalTree) {
  // 64 ranks, 4 a node (16 nodes), 64 MiB: reduce-scatter and all-gather
  // in the node (3 steps, 3/4 S each on NVLink), and between the 16 nodes
  // S/4: a tree (8 steps, S/2 sent) or a ring (30 steps, 15/8 * S/4). The
  // ring wins at 64 MiB (it sends less), the tree at 64 KiB.
  DeviceProfile p = profile();
  for (double s : {64.0 * 1024 * 1024, 64.0 * 1024}) {
    double inNode = 2 * (3 * 2e-6 + 0.75 * s / 100e9);
    double tree = 8 * 20e-6 + 2 * (s / 4) / 10e9;
    double ring = 30 * 20e-6 + 2.0 * 15 / 16 * (s / 4) / 10e9;
    CollectiveCost c = allReduceCost(64, 4, s, p);
    EXPECT_NEAR(c.seconds, inNode + std::min(tree, ring), 1e-12) << s;
    EXPECT_STREQ(c.algorithm,
                 tree < ring ? "hierarchical tree" : "hierarchical ring");
  }
}

TEST(Collectives, CpuThreadsKeepTheRing) {
  // The CPU backend's collectives are a rendezvous of threads (no NCCL):
  // a profile with host_cores keeps the calibrated ring formula.
  DeviceProfile p = profile();
  p.shared.hostCores = 2;
  const double s = 1024;
  CollectiveCost c = allReduceCost(64, 1, s, p);
  EXPECT_STREQ(c.algorithm, "ring");
  EXPECT_NEAR(c.seconds, 126 * 20e-6 + 2.0 * 63 / 64 * s / 10e9, 1e-15);
}

// The H200's NVLink class was fitted to 2-rank all-reduces as rings; with
// two ranks the ring is what the model still picks, within a node and
// across two nodes (the tree has as many steps and sends twice the
// bytes), so the calibration holds unchanged: the same seconds to 1e-15.
TEST(Collectives, TwoRanksUnchanged) {
  llvm::Expected<DeviceProfile> h200 = lookupDeviceProfile("h200");
  ASSERT_TRUE(static_cast<bool>(h200));
  for (const CalibrationPoint &c : h200->calibration) {
    double ring = collectiveSeconds(2, c.bytes, h200->intraNode);
    CollectiveCost model = allReduceCost(2, 2, c.bytes, *h200);
    EXPECT_STREQ(model.algorithm, "ring");
    EXPECT_NEAR(model.seconds, ring, 1e-15) << c.bytes;
    double across = collectiveSeconds(2, c.bytes, h200->interNode);
    EXPECT_NEAR(allReduceCost(2, 1, c.bytes, *h200).seconds, across, 1e-15);
  }
}

class StreamsTest : public test::DialectTest {
protected:
  StepCost estimate(StringRef body, const DeviceProfile &p) {
    std::string text =
        ("module attributes {llmc.mesh_axes = [\"dp\"]} {\n"
         "shard.grid @mesh(shape = 2)\n"
         "func.func @f(%x: tensor<1048576xf32>, %w: tensor<1048576xf32>) "
         "-> tensor<1048576xf32> {\n" +
         body + "\n}\n}\n")
            .str();
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    if (!module)
      return {};
    llmc::Mesh mesh;
    mesh.names = {"dp"};
    mesh.sizes = {2};
    return estimateStep(module->lookupSymbol<func::FuncOp>("f"), &mesh, p);
  }

  /// The buffer plan's offsets of the first `n` ops' results of @f (empty
  /// when it cannot be planned).
  std::vector<uint64_t> firstOffsets(size_t n) {
    auto f = module->lookupSymbol<func::FuncOp>("f");
    FailureOr<llmc::BufferPlan> plan = llmc::planBuffers(f);
    std::vector<uint64_t> offsets;
    if (failed(plan))
      return offsets;
    for (Operation &op : f.getBody().front())
      if (offsets.size() < n && op.getNumResults() == 1)
        offsets.push_back(plan->offsetOf(op.getResult(0)));
    return offsets;
  }

};

// 4 MiB f32 all-reduce over 2 ranks on NVLink: 4 us + 4 MiB / 100 GB/s =
// 46 us; an add of 2^20 floats: 3 x 4 MiB at 100 GB/s + 5 us = 131 us.
constexpr double kAllReduce = 2 * 2e-6 + 4.0 * 1048576 / 100e9;
constexpr double kAdd = 3 * 4.0 * 1048576 / 100e9 + 5e-6;

TEST_F(StreamsTest, AnIndependentKernelHidesTheCollective) {
  // The all-reduce of %x runs while the add of %w runs; the last add reads
  // the all-reduce's result and waits for it (it is done by then).
  StepCost step = estimate(
      "%y = shard.all_reduce %x on @mesh grid_axes = [0] : "
      "tensor<1048576xf32> -> tensor<1048576xf32>\n"
      "%z = llmc.add %w, %w : tensor<1048576xf32>\n"
      "%u = llmc.add %y, %z : tensor<1048576xf32>\n"
      "return %u : tensor<1048576xf32>",
      profile());
  EXPECT_NEAR(step.noOverlap(), kAllReduce + 2 * kAdd, 1e-12);
  EXPECT_NEAR(step.streams, std::max(kAllReduce, kAdd) + kAdd, 1e-12);
  EXPECT_NEAR(step.seconds(), step.streams, 0.0);
  // What overlaps (llmc plan's "communication beside kernels"): all of the
  // all-reduce runs beside the first add, and the hidden seconds are what
  // the two streams save.
  double hidden = 0;
  for (const GroupCost &g : step.groups)
    if (g.communication)
      hidden += g.hidden;
  EXPECT_NEAR(hidden, kAllReduce, 1e-12);
  EXPECT_NEAR(hidden, step.noOverlap() - step.seconds(), 1e-12);
}

TEST_F(StreamsTest, AReaderRightAfterWaits) {
  // The add reads the result at once: nothing to overlap.
  StepCost step = estimate(
      "%y = shard.all_reduce %x on @mesh grid_axes = [0] : "
      "tensor<1048576xf32> -> tensor<1048576xf32>\n"
      "%u = llmc.add %y, %w : tensor<1048576xf32>\n"
      "return %u : tensor<1048576xf32>",
      profile());
  EXPECT_NEAR(step.streams, kAllReduce + kAdd, 1e-12);
  for (const GroupCost &g : step.groups)
    EXPECT_EQ(g.hidden, 0.0) << g.group;
}

TEST_F(StreamsTest, ACollectiveWaitsForEveryEarlierKernel) {
  // The session records an event on the compute stream before each
  // collective: the all-reduce of the argument %x starts after the add.
  StepCost step = estimate(
      "%z = llmc.add %w, %w : tensor<1048576xf32>\n"
      "%y = shard.all_reduce %x on @mesh grid_axes = [0] : "
      "tensor<1048576xf32> -> tensor<1048576xf32>\n"
      "return %y : tensor<1048576xf32>",
      profile());
  EXPECT_NEAR(step.streams, kAdd + kAllReduce, 1e-12);
}

TEST_F(StreamsTest, AWriterReusingItsBufferWaits) {
  // %t dies at the all-to-all that reads it (an all-reduce would not do:
  // it runs in place, so its result keeps %t's bytes alive); the buffer
  // plan gives %z those bytes (checked below), so the add that writes %z
  // waits for the all-to-all although it reads nothing of it, and nothing
  // overlaps.
  StepCost step = estimate(
      "%t = llmc.add %w, %w : tensor<1048576xf32>\n"
      "%y = shard.all_to_all %t on @mesh grid_axes = [0] split_axis = 0 "
      "concat_axis = 0 : tensor<1048576xf32> -> tensor<1048576xf32>\n"
      "%z = llmc.add %w, %w : tensor<1048576xf32>\n"
      "%u = llmc.add %y, %z : tensor<1048576xf32>\n"
      "return %u : tensor<1048576xf32>",
      profile());
  std::vector<uint64_t> offsets = firstOffsets(3); // %t, %y, %z
  ASSERT_EQ(offsets.size(), 3u);
  ASSERT_EQ(offsets[0], offsets[2]);
  ASSERT_NE(offsets[0], offsets[1]);
  EXPECT_GT(step.noOverlap(), 3 * kAdd);
  EXPECT_NEAR(step.streams, step.noOverlap(), 1e-12);
}

TEST_F(StreamsTest, AnAllReduceInPlaceKeepsItsBytes) {
  // The all-reduce's result takes its input's bytes (NCCL in == out), so
  // %z gets other bytes and its add runs while the all-reduce does.
  StepCost step = estimate(
      "%t = llmc.add %w, %w : tensor<1048576xf32>\n"
      "%y = shard.all_reduce %t on @mesh grid_axes = [0] : "
      "tensor<1048576xf32> -> tensor<1048576xf32>\n"
      "%z = llmc.add %w, %w : tensor<1048576xf32>\n"
      "%u = llmc.add %y, %z : tensor<1048576xf32>\n"
      "return %u : tensor<1048576xf32>",
      profile());
  std::vector<uint64_t> offsets = firstOffsets(3); // %t, %y, %z
  ASSERT_EQ(offsets.size(), 3u);
  ASSERT_EQ(offsets[0], offsets[1]);
  ASSERT_NE(offsets[0], offsets[2]);
  EXPECT_NEAR(step.streams, kAdd + std::max(kAllReduce, kAdd) + kAdd, 1e-12);
}

TEST_F(StreamsTest, TheCpuHasNoStreams) {
  DeviceProfile p = profile();
  p.shared.hostCores = 2;
  StepCost step = estimate(
      "%y = shard.all_reduce %x on @mesh grid_axes = [0] : "
      "tensor<1048576xf32> -> tensor<1048576xf32>\n"
      "%z = llmc.add %w, %w : tensor<1048576xf32>\n"
      "%u = llmc.add %y, %z : tensor<1048576xf32>\n"
      "return %u : tensor<1048576xf32>",
      p);
  EXPECT_EQ(step.streams, 0.0);
  EXPECT_NEAR(step.seconds(), kAllReduce + 2 * kAdd, 1e-12);
}

} // namespace
