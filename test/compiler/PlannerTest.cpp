// The cost model's closed forms on a made-up profile with round numbers
// (analysis/CostModel.h), the built-in profiles, the H200's link class
// against its measured all-reduces, and the profile loader's errors.
#include "analysis/CostModel.h"
#include "analysis/DeviceProfile.h"

#include "PlannerTestSupport.h"

#include "ir/LlmcOps.h"
#include "ir/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace llmc::planner;

namespace {

/// The loader's error for `text` ("" when it loads).
std::string loadError(llvm::StringRef text) {
  llvm::Expected<std::vector<DeviceProfile>> profiles =
      parseDeviceProfiles(text, "bad.toml");
  if (profiles)
    return "";
  return llvm::toString(profiles.takeError());
}

class PlannerTest : public test::DialectTest {
protected:
  /// The step cost of `body` in a function of `args` (one device, or a
  /// mesh of one axis "dp" of `ranks` when ranks > 1).
  StepCost estimate(StringRef args, StringRef body, int64_t ranks = 1) {
    std::string grid =
        ranks > 1 ? "shard.grid @mesh(shape = " + std::to_string(ranks) + ")\n"
                  : "";
    std::string text =
        ("module attributes {llmc.mesh_axes = [\"dp\"]} {\n" + grid +
         "func.func @f(" + args + ") {\n" + body + "\n  return\n}\n}\n")
            .str();
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    if (!module)
      return {};
    auto function = module->lookupSymbol<func::FuncOp>("f");
    llmc::Mesh mesh;
    mesh.names = {"dp"};
    mesh.sizes = {ranks};
    return estimateStep(function, ranks > 1 ? &mesh : nullptr, profile);
  }

  const GroupCost *group(const StepCost &step, StringRef name) {
    for (const GroupCost &g : step.groups)
      if (StringRef(g.group).starts_with(name))
        return &g;
    return nullptr;
  }

  DeviceProfile profile = test::testProfile();
};

TEST_F(PlannerTest, BuiltinProfilesLoad) {
  for (const char *name : {"h100", "h200", "a100", "cpu"}) {
    llvm::Expected<DeviceProfile> p = lookupDeviceProfile(name);
    ASSERT_TRUE(static_cast<bool>(p)) << llvm::toString(p.takeError());
    EXPECT_EQ(p->name, name);
  }
  // The datasheet figures the brief of issue #11 names.
  llvm::Expected<DeviceProfile> h200 = lookupDeviceProfile("h200");
  ASSERT_TRUE(static_cast<bool>(h200));
  EXPECT_DOUBLE_EQ(h200->matmulPeak("bf16"), 989e12);
  EXPECT_DOUBLE_EQ(h200->memoryBandwidth, 4800e9);
  EXPECT_DOUBLE_EQ(h200->memoryBytes, 141e9);
  EXPECT_DOUBLE_EQ(h200->intraNode.nominal, 450e9);
  llvm::Expected<DeviceProfile> a100 = lookupDeviceProfile("a100");
  ASSERT_TRUE(static_cast<bool>(a100));
  EXPECT_DOUBLE_EQ(a100->matmulPeak("bf16"), 312e12);
  EXPECT_DOUBLE_EQ(a100->intraNode.bandwidth, 300e9);
}

TEST_F(PlannerTest, ComputeBoundMatmul) {
  // 2 * 8192^3 flops at 100 TFLOP/s = 11.0 ms; its 8192^2 * (2 + 2 + 4)
  // bytes at 100 GB/s = 5.4 ms: the flops bound it.
  StepCost step = estimate(
      "%a: tensor<8192x8192xbf16>, %b: tensor<8192x8192xbf16>",
      "%c = llmc.matmul %a, %b : tensor<8192x8192xbf16>, "
      "tensor<8192x8192xbf16> -> tensor<8192x8192xf32>");
  const GroupCost *mm = group(step, "matmul");
  ASSERT_TRUE(mm);
  double n = 8192;
  EXPECT_DOUBLE_EQ(mm->flops, 2 * n * n * n);
  EXPECT_NEAR(mm->seconds, 2 * n * n * n / 100e12 + 5e-6, 1e-12);
  EXPECT_NEAR(step.compute, mm->seconds, 1e-12);
  EXPECT_EQ(step.communication, 0.0);
}

TEST_F(PlannerTest, F32MatmulUsesTheF32Peak) {
  // 2 * 1024^3 flops at 10 TFLOP/s = 215 us; 12 MiB at 100 GB/s = 126 us.
  StepCost step = estimate(
      "%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>",
      "%c = llmc.matmul %a, %b : tensor<1024x1024xf32>, "
      "tensor<1024x1024xf32> -> tensor<1024x1024xf32>");
  double n = 1024;
  EXPECT_NEAR(step.compute, 2 * n * n * n / 10e12 + 5e-6, 1e-12);
}

TEST_F(PlannerTest, MemoryBoundElementwise) {
  // 2^20 adds (1 us at 1 TFLOP/s) move 3 * 4 MiB (126 us at 100 GB/s).
  StepCost step = estimate("%a: tensor<1048576xf32>, %b: tensor<1048576xf32>",
                           "%c = llmc.add %a, %b : tensor<1048576xf32>");
  const GroupCost *add = group(step, "elementwise");
  ASSERT_TRUE(add);
  EXPECT_DOUBLE_EQ(add->bytes, 3.0 * 4 * 1048576);
  EXPECT_NEAR(add->seconds, 3.0 * 4 * 1048576 / 100e9 + 5e-6, 1e-12);
}

TEST_F(PlannerTest, LaunchCostFloor) {
  // Four adds of 4 floats: 48 bytes each, 0.48 ns; the launch dominates.
  StepCost step = estimate("%a: tensor<4xf32>",
                           "%b = llmc.add %a, %a : tensor<4xf32>\n"
                           "%c = llmc.add %b, %a : tensor<4xf32>\n"
                           "%d = llmc.add %c, %b : tensor<4xf32>\n"
                           "%e = llmc.add %d, %c : tensor<4xf32>");
  EXPECT_EQ(step.groups.size(), 1u);
  EXPECT_EQ(step.groups[0].kernels, 4);
  EXPECT_NEAR(step.compute, 4 * (5e-6 + 48 / 100e9), 1e-15);
  // A reshape is a view: no kernel, no launch.
  StepCost view = estimate("%a: tensor<4xf32>",
                           "%b = llmc.reshape %a : tensor<4xf32> -> "
                           "tensor<2x2xf32>");
  EXPECT_EQ(view.compute, 0.0);
}

TEST_F(PlannerTest, FusedRegions) {
  // An elementwise region of two adds over 2^20 floats: one kernel that
  // reads a and b and writes the result once (3 * 4 MiB), not the 6 * 4 MiB
  // of its ops one by one; a row-reduction region runs op by op.
  const char *region =
      "%f = llmc.fused elementwise (%a, %b) : (tensor<1048576xf32>, "
      "tensor<1048576xf32>) -> tensor<1048576xf32> {\n"
      "^bb0(%x: tensor<1048576xf32>, %y: tensor<1048576xf32>):\n"
      "  %s = llmc.add %x, %y : tensor<1048576xf32>\n"
      "  %t = llmc.add %s, %y : tensor<1048576xf32>\n"
      "  llmc.yield %t : tensor<1048576xf32>\n}";
  const char *args = "%a: tensor<1048576xf32>, %b: tensor<1048576xf32>";
  const double mib4 = 4.0 * 1048576;
  StepCost fused = estimate(args, region);
  const GroupCost *one = group(fused, "fused regions");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->kernels, 1);
  EXPECT_NEAR(fused.compute, 3 * mib4 / 100e9 + 5e-6, 1e-12);
  // The same region on a backend without fused kernels (the CPU): two.
  profile.fusedKernels = false;
  StepCost opByOp = estimate(args, region);
  const GroupCost *two = group(opByOp, "elementwise");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->kernels, 2);
  EXPECT_NEAR(opByOp.compute, 2 * (3 * mib4 / 100e9 + 5e-6), 1e-12);
  profile.fusedKernels = true;
  // A row-reduction region: its add and its reduce_sum, each a kernel.
  StepCost rows = estimate(
      "%a: tensor<8xf32>, %b: tensor<8xf32>",
      "%f:2 = llmc.fused row_reduction (%a, %b) : (tensor<8xf32>, "
      "tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>) {\n"
      "^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>):\n"
      "  %s = llmc.add %x, %y : tensor<8xf32>\n"
      "  %r = llmc.reduce_sum %s dims [0] : tensor<8xf32> -> tensor<f32>\n"
      "  llmc.yield %s, %r : tensor<8xf32>, tensor<f32>\n}");
  ASSERT_TRUE(group(rows, "elementwise"));
  ASSERT_TRUE(group(rows, "reductions"));
  EXPECT_EQ(group(rows, "fused"), nullptr);
}

//===----------------------------------------------------------------------===//
// What the CUDA runtime runs (profiles with fused_kernels; the CPU's keeps
// the op-by-op view its efficiencies were fitted on)
//===----------------------------------------------------------------------===//

const GroupCost *byOp(const StepCost &step, StringRef name) {
  for (const GroupCost &g : step.byOp)
    if (g.group == name)
      return &g;
  return nullptr;
}

TEST_F(PlannerTest, EpilogueGemmIsOneKernel) {
  // matmul + bias as one cuBLASLt GEMM: one matmul kernel that reads a, w
  // and the bias and writes the result: (64x128 + 128x256 + 256 + 64x256)
  // bf16 = 115,200 bytes, 1.15 us at 100 GB/s (the 4.2 Mflop product takes
  // 0.04 us at 100 TFLOP/s), plus one launch.
  const char *args = "%a: tensor<64x128xbf16>, %w: tensor<128x256xbf16>, "
                     "%b: tensor<256xbf16>";
  auto region = [](const char *epilogue) {
    return std::string(
               "%f = llmc.fused matmul_epilogue (%a, %w, %b) : "
               "(tensor<64x128xbf16>, tensor<128x256xbf16>, "
               "tensor<256xbf16>) -> tensor<64x256xbf16> {\n"
               "^bb0(%x: tensor<64x128xbf16>, %y: tensor<128x256xbf16>, "
               "%z: tensor<256xbf16>):\n"
               "  %m = llmc.matmul %x, %y : tensor<64x128xbf16>, "
               "tensor<128x256xbf16> -> tensor<64x256xbf16>\n"
               "  %e = llmc.fused elementwise (%z, %m) : (tensor<256xbf16>, "
               "tensor<64x256xbf16>) -> tensor<64x256xbf16> {\n"
               "  ^bb0(%p: tensor<256xbf16>, %q: tensor<64x256xbf16>):\n"
               "    %v = llmc.broadcast %p dims [1] : tensor<256xbf16> -> "
               "tensor<64x256xbf16>\n    %s = llmc.") +
           epilogue +
           " %q, %v : tensor<64x256xbf16>\n"
           "    llmc.yield %s : tensor<64x256xbf16>\n  }\n"
           "  llmc.yield %e : tensor<64x256xbf16>\n}";
  };
  StepCost gemm = estimate(args, region("add"));
  const GroupCost *mm = byOp(gemm, "matmul");
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->kernels, 1);
  EXPECT_EQ(mm->launches, 1);
  EXPECT_DOUBLE_EQ(mm->bytes, 115200.0);
  EXPECT_NEAR(gemm.compute, 115200 / 100e9 + 5e-6, 1e-12);
  EXPECT_EQ(group(gemm, "fused regions"), nullptr);
  // Not an epilogue cuBLASLt has (a product times the bias): the GEMM and
  // the elementwise region, two kernels.
  StepCost twoKernels = estimate(args, region("mul"));
  EXPECT_EQ(byOp(twoKernels, "matmul")->kernels, 1);
  ASSERT_TRUE(byOp(twoKernels, "fused"));
  EXPECT_EQ(byOp(twoKernels, "fused")->kernels, 1);
  // On the CPU profile's view: op by op (the matmul, the broadcast, the add).
  profile.fusedKernels = false;
  StepCost cpu = estimate(args, region("add"));
  EXPECT_EQ(cpu.byOp.size(), 3u);
  profile.fusedKernels = true;
}

TEST_F(PlannerTest, SumOfSquaresReadsOnce) {
  // The gradient norm's term: one SumSquares kernel that reads 2^20 floats
  // once (4 MiB, 41.9 us at 100 GB/s) and writes one, not a mul that writes
  // the squares and a reduce_sum that reads them again.
  const char *region =
      "%f = llmc.fused row_reduction (%g) : (tensor<1048576xf32>) -> "
      "tensor<f32> {\n"
      "^bb0(%x: tensor<1048576xf32>):\n"
      "  %s = llmc.mul %x, %x : tensor<1048576xf32>\n"
      "  %r = llmc.reduce_sum %s dims [0] : tensor<1048576xf32> -> "
      "tensor<f32>\n"
      "  llmc.yield %r : tensor<f32>\n}";
  StepCost step = estimate("%g: tensor<1048576xf32>", region);
  const GroupCost *sq = byOp(step, "sum_squares");
  ASSERT_TRUE(sq);
  EXPECT_EQ(sq->launches, 1);
  const double n = 1048576;
  EXPECT_DOUBLE_EQ(sq->bytes, 4 * n + 4);
  EXPECT_NEAR(step.compute, (4 * n + 4) / 100e9 + 5e-6, 1e-12);
  EXPECT_EQ(step.byOp.size(), 1u);
  profile.fusedKernels = false;
  EXPECT_EQ(estimate("%g: tensor<1048576xf32>", region).byOp.size(), 2u);
  profile.fusedKernels = true;
}

TEST_F(PlannerTest, MultiTensorLaunchesOnce) {
  // Three lone casts of one signature in a row: one multi-tensor launch
  // (their bytes, one launch cost); an add ends the run, so the cast after
  // it is a kernel of its own.
  const char *args = "%a: tensor<1000xf32>, %b: tensor<2000xf32>, "
                     "%c: tensor<3000xf32>";
  StepCost step = estimate(
      args, "%x = llmc.cast %a : tensor<1000xf32> -> tensor<1000xbf16>\n"
            "%y = llmc.cast %b : tensor<2000xf32> -> tensor<2000xbf16>\n"
            "%z = llmc.cast %c : tensor<3000xf32> -> tensor<3000xbf16>\n"
            "%s = llmc.add %a, %a : tensor<1000xf32>\n"
            "%w = llmc.cast %s : tensor<1000xf32> -> tensor<1000xbf16>");
  const GroupCost *multi = byOp(step, "multi_tensor_cast");
  ASSERT_TRUE(multi);
  EXPECT_EQ(multi->kernels, 3);
  EXPECT_EQ(multi->launches, 1);
  EXPECT_NEAR(multi->seconds, 6000 * 6 / 100e9 + 5e-6, 1e-12);
  const GroupCost *lone = byOp(step, "cast");
  ASSERT_TRUE(lone);
  EXPECT_EQ(lone->kernels, 1);
  EXPECT_EQ(lone->launches, 1);
  // A cast of another signature joins a group of its own: two launches.
  StepCost mixed = estimate(
      args, "%x = llmc.cast %a : tensor<1000xf32> -> tensor<1000xbf16>\n"
            "%y = llmc.cast %b : tensor<2000xf32> -> tensor<2000xf16>\n"
            "%z = llmc.cast %c : tensor<3000xf32> -> tensor<3000xbf16>");
  EXPECT_EQ(byOp(mixed, "multi_tensor_cast")->launches, 1);
  EXPECT_EQ(byOp(mixed, "cast")->launches, 1);
}

TEST_F(PlannerTest, ResidualAddFoldedIntoNormGradient) {
  // The add of the norm gradient's dx and the residual gradient r: the
  // norm's kernel reads r and stores dx + r, so the step costs the norm
  // gradient plus r's bytes (1024 x 64 floats, 2.6 us at 100 GB/s), one
  // launch and no elementwise kernel.
  const char *args = "%x: tensor<1024x64xf32>, %g: tensor<64xf32>, "
                     "%dy: tensor<1024x64xf32>, %r: tensor<1024x64xf32>";
  const char *norm =
      "%dx, %dg, %db = llmc.layer_norm_grad %x, %g, %dy epsilon 1.0e-05 : "
      "(tensor<1024x64xf32>, tensor<64xf32>, tensor<1024x64xf32>) -> "
      "(tensor<1024x64xf32>, tensor<64xf32>, tensor<64xf32>)\n";
  StepCost alone = estimate(args, norm);
  StepCost folded = estimate(
      args, std::string(norm) + "%s = llmc.add %dx, %r : tensor<1024x64xf32>");
  const GroupCost *grad = byOp(folded, "layer_norm_grad");
  ASSERT_TRUE(grad);
  EXPECT_EQ(grad->kernels, 1);
  EXPECT_EQ(grad->launches, 1);
  EXPECT_EQ(byOp(folded, "add"), nullptr);
  EXPECT_NEAR(folded.compute, alone.compute + 1024 * 64 * 4 / 100e9, 1e-12);
  // dx read again after the add: not folded (the runtime folds only an
  // in-place add, which needs dx to have no other reader).
  StepCost kept = estimate(
      args, std::string(norm) +
                "%s = llmc.add %dx, %r : tensor<1024x64xf32>\n"
                "%t = llmc.add %dx, %s : tensor<1024x64xf32>");
  EXPECT_EQ(byOp(kept, "add")->kernels, 2);
}

TEST_F(PlannerTest, RingAllReduce) {
  // 64 MiB of f32 over N ranks: 2(N-1) steps, 2(N-1)/N * S bytes sent.
  const double s = 64.0 * 1024 * 1024;
  for (int64_t n : {2, 8}) {
    StepCost step = estimate(
        "%x: tensor<16777216xf32>",
        "%y = shard.all_reduce %x on @mesh grid_axes = [0] : "
        "tensor<16777216xf32> -> tensor<16777216xf32>",
        n);
    const GroupCost *ar = group(step, "collectives dp");
    ASSERT_TRUE(ar) << n;
    double sent = 2.0 * (n - 1) / n * s;
    EXPECT_DOUBLE_EQ(ar->bytes, sent);
    // N = 2 fits a node of 4: a ring on NVLink (100 GB/s, 2 us). N = 8
    // spans two nodes of 4: hierarchical (analysis/Collectives.cpp), a
    // reduce-scatter and an all-gather in the node (3 steps, 3/4 S each)
    // and between the 2 nodes a ring all-reduce of S/4 (2 steps of 20 us,
    // S/4 sent at 10 GB/s; a tree of 2 nodes has as many steps and sends
    // twice the bytes), cheaper than the flat ring on the inter-node link
    // (14 steps, 7/4 S at 10 GB/s).
    double expected =
        n == 2 ? 2 * 2e-6 + sent / 100e9
               : 2 * (3 * 2e-6 + 0.75 * s / 100e9) + 2 * 20e-6 + s / 4 / 10e9;
    double flatRing = 2 * (n - 1) * 20e-6 + sent / 10e9;
    EXPECT_NEAR(ar->seconds, expected, 1e-12) << n;
    if (n == 8) {
      EXPECT_LT(ar->seconds, flatRing);
    }
    EXPECT_NEAR(step.communication, ar->seconds, 1e-12);
    EXPECT_EQ(step.compute, 0.0);
  }
  EXPECT_EQ(ringSteps("all-gather", 8), 7);
  EXPECT_EQ(ringSteps("reduce-scatter", 8), 7);
  EXPECT_EQ(ringSteps("all-to-all", 8), 7);
  EXPECT_EQ(ringSteps("shift", 8), 1);
  EXPECT_EQ(ringSteps("all-reduce", 1), 0);
}

TEST_F(PlannerTest, LinkClassOfAnAxisGroup) {
  // Mesh {dp=4, tp=2} with 4 ranks a node: tp (2 consecutive ranks) stays
  // in a node, dp spans 8 ranks.
  llmc::Mesh mesh;
  mesh.names = {"dp", "tp"};
  mesh.sizes = {4, 2};
  EXPECT_EQ(linkFor(mesh, {1}, profile).name, "nvlink");
  EXPECT_EQ(linkFor(mesh, {0}, profile).name, "infiniband");
  mesh.sizes = {2, 2};
  EXPECT_EQ(linkFor(mesh, {0, 1}, profile).name, "nvlink");
}

TEST_F(PlannerTest, OverlapIsALowerBound) {
  StepCost step;
  step.compute = 3.0;
  step.communication = 1.0;
  EXPECT_EQ(step.noOverlap(), 4.0);
  EXPECT_EQ(step.overlapped(), 3.0);
}

// The H200's NVLink class (the alpha-beta fit in data/devices.toml) against
// every measured 2-rank all-reduce it was fitted to: the predicted bus
// bandwidth within 10% of the measured one: the minimax fit is within 5.7%
// of every point, and 10% leaves room for a refit with more points while
// still failing a wrong link class (the datasheet's 450 GB/s misses the
// 64 MiB point by 48%).
TEST_F(PlannerTest, H200LinkMatchesItsCalibration) {
  llvm::Expected<DeviceProfile> h200 = lookupDeviceProfile("h200");
  ASSERT_TRUE(static_cast<bool>(h200));
  ASSERT_EQ(h200->calibration.size(), 5u);
  for (const CalibrationPoint &c : h200->calibration) {
    double busFactor = 2.0 * (c.ranks - 1) / c.ranks;
    double t = collectiveSeconds(ringSteps("all-reduce", c.ranks),
                                 busFactor * c.bytes, h200->intraNode);
    double predictedBus = busFactor * c.bytes / t;
    EXPECT_NEAR(predictedBus / c.busBandwidth, 1.0, 0.10) << c.bytes;
  }
}

TEST(DeviceProfileTest, Errors) {
  std::string good = test::kTestProfile;
  EXPECT_EQ(loadError(good), "");
  // A negative bandwidth: the key, its line and column, and the fix.
  std::string negative = good;
  negative.replace(negative.find("hbm_gbs = 100"), 13, "hbm_gbs = -1");
  EXPECT_EQ(loadError(negative),
            "bad.toml:4:11: error: key 't.hbm_gbs' must be a positive number; "
            "write e.g. hbm_gbs = 100");
  // A misspelt key names the valid ones.
  std::string misspelt = good;
  misspelt.replace(misspelt.find("launch_us"), 9, "launch_ms");
  EXPECT_NE(loadError(misspelt).find("bad.toml:5:1: error: unknown key "
                                     "'t.launch_ms'; the keys here are: "
                                     "description, memory_gb"),
            std::string::npos)
      << loadError(misspelt);
  // A missing dtype of the matmul peaks.
  std::string noF64 = good;
  noF64.replace(noF64.find(", f64 = 5"), 9, "");
  EXPECT_NE(loadError(noF64).find("missing key 't.matmul_tflops.f64'"),
            std::string::npos)
      << loadError(noF64);
  // A missing link class.
  std::string noLink = good.substr(0, good.find("[t.inter_node]"));
  EXPECT_NE(loadError(noLink).find("missing table 't.inter_node'"),
            std::string::npos)
      << loadError(noLink);
  // Broken TOML.
  EXPECT_NE(loadError("[t\n").find("bad.toml:1:"), std::string::npos);
  // Unknown names and unreadable paths.
  llvm::Expected<DeviceProfile> unknown = lookupDeviceProfile("h300");
  ASSERT_FALSE(static_cast<bool>(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError())
                .find("unknown device profile 'h300'; the built-in ones are "
                      "a100, cpu, h100, h200"),
            std::string::npos);
  llvm::Expected<DeviceProfile> missing =
      lookupDeviceProfile("/nonexistent/gpu.toml");
  ASSERT_FALSE(static_cast<bool>(missing));
  EXPECT_NE(llvm::toString(missing.takeError())
                .find("cannot read the device profile"),
            std::string::npos);
}

// A profile's measured efficiency of an op divides its roofline time (the
// launch cost stays): an add of 2^20 floats at efficiency 0.25 takes four
// times its 126 us of memory traffic; an op without an efficiency keeps
// its roofline.
TEST_F(PlannerTest, EfficiencyDividesTheRoofline) {
  profile.efficiency["add"] = 0.25;
  StepCost step = estimate("%a: tensor<1048576xf32>, %b: tensor<1048576xf32>",
                           "%c = llmc.add %a, %b : tensor<1048576xf32>\n"
                           "%d = llmc.sub %c, %b : tensor<1048576xf32>");
  double bytes = 3.0 * 4 * 1048576;
  ASSERT_EQ(step.byOp.size(), 2u);
  EXPECT_EQ(step.byOp[0].group, "add"); // most time first
  EXPECT_NEAR(step.byOp[0].seconds, bytes / 100e9 / 0.25 + 5e-6, 1e-12);
  EXPECT_NEAR(step.byOp[1].seconds, bytes / 100e9 + 5e-6, 1e-12);
  EXPECT_DOUBLE_EQ(profile.efficiencyOf("sub"), 1.0);
  EXPECT_NEAR(kernelSeconds(1e9, 1e12, 0, profile, 0.5), 2e-3 + 5e-6, 1e-15);
}

// A link's call latency is paid once per collective, on top of the ring
// steps: an all-reduce of 4 MiB over 2 ranks with 7 us per call, 2 us per
// step and 100 GB/s.
TEST_F(PlannerTest, CallLatencyOncePerCollective) {
  profile.intraNode.callLatency = 7e-6;
  StepCost step = estimate("%x: tensor<1048576xf32>",
                           "%y = shard.all_reduce %x on @mesh grid_axes = [0] "
                           ": tensor<1048576xf32> -> tensor<1048576xf32>",
                           2);
  double sent = 4.0 * 1048576; // 2(N-1)/N * S for N = 2
  EXPECT_NEAR(step.communication, 7e-6 + 2 * 2e-6 + sent / 100e9, 1e-12);
  EXPECT_EQ(collectiveSeconds(0, 1e6, profile.intraNode), 0.0);
}

// Devices that share cores (the CPU backend's threads): a step is the
// larger of the critical path (a rank's step, or the pipeline schedule) and
// the ranks' summed work over min(ranks, cores).
TEST_F(PlannerTest, RanksSharingCores) {
  // Own compute (hostCores = 0): the critical path only.
  ProgramStep own = programStep(1.0, 8.0, 8, 0.0, profile);
  EXPECT_EQ(own.sharedCores, 0.0);
  EXPECT_DOUBLE_EQ(own.seconds(), 1.0);
  profile.shared.hostCores = 2;
  // 8 ranks of 1 s on 2 cores: 4 s.
  ProgramStep shared = programStep(1.0, 8.0, 8, 0.0, profile);
  EXPECT_DOUBLE_EQ(shared.sharedCores, 4.0);
  EXPECT_DOUBLE_EQ(shared.seconds(), 4.0);
  // One rank uses one core: its own time.
  EXPECT_DOUBLE_EQ(programStep(1.0, 1.0, 1, 0.0, profile).seconds(), 1.0);
  // Two pipeline stages of 2 ranks, a schedule of 4 s (busiest stage 2 s,
  // half the schedule idle), 6 s of work in all: 4 s beats 6 / 2 = 3 s.
  ProgramStep pipelined = programStep(4.0, 6.0, 4, 0.5, profile);
  EXPECT_DOUBLE_EQ(pipelined.criticalPath, 4.0);
  EXPECT_DOUBLE_EQ(pipelined.sharedCores, 3.0);
  EXPECT_DOUBLE_EQ(pipelined.seconds(), 4.0);
  // The measured idle share of the cores: 10% in any step, plus 0.3 per
  // unit of bubble: 8 s of work on 2 cores take 4 / 0.9 s without a
  // pipeline, 4 / (1 - 0.1 - 0.3 * 0.5) s with half the schedule bubble.
  profile.shared.idle = 0.1;
  profile.shared.bubbleIdle = 0.3;
  EXPECT_DOUBLE_EQ(programStep(1.0, 8.0, 8, 0.0, profile).sharedCores,
                   4.0 / 0.9);
  EXPECT_DOUBLE_EQ(programStep(1.0, 8.0, 8, 0.5, profile).sharedCores,
                   4.0 / 0.75);
  // Collectives whose groups drain the cores add shared_drain_idle per
  // unit of their share of the collective time: all of it 0.05 more, half
  // of it 0.025, with the bubble's share on top.
  profile.shared.drainIdle = 0.05;
  EXPECT_DOUBLE_EQ(programStep(1.0, 8.0, 8, 0.0, profile).sharedCores,
                   4.0 / 0.9);
  EXPECT_DOUBLE_EQ(programStep(1.0, 8.0, 8, 0.0, profile, 1.0).sharedCores,
                   4.0 / 0.85);
  EXPECT_DOUBLE_EQ(programStep(1.0, 8.0, 8, 0.5, profile, 0.5).sharedCores,
                   4.0 / (1 - 0.1 - 0.025 - 0.15));
}

// A group drains shared cores when fewer groups than cores exist (more
// than ranks / cores ranks each): while each waits for its last member
// fewer ranks than cores can run.
TEST_F(PlannerTest, GroupsThatDrainSharedCores) {
  SharedCores shared;
  EXPECT_FALSE(shared.drains(8, 8)); // devices with their own compute
  shared.hostCores = 2;
  EXPECT_TRUE(shared.drains(8, 8));   // dp8: one group for 2 cores
  EXPECT_TRUE(shared.drains(5, 8));
  EXPECT_FALSE(shared.drains(4, 8));  // dp4 x tp2's dp: two groups
  EXPECT_FALSE(shared.drains(2, 8));  // tp2: four pairs
  EXPECT_TRUE(shared.drains(4, 4));
  EXPECT_FALSE(shared.drains(2, 4));
  // Ranks with a core each do not share them: nothing drains.
  EXPECT_FALSE(shared.drains(2, 2));
  // The share of the collective time in draining groups, by group.
  std::map<std::string, double> seconds = {{"dp", 3.0}, {"tp", 1.0}};
  std::map<std::string, int64_t> dp8 = {{"dp", 8}, {"tp", 2}};
  std::map<std::string, int64_t> dp4 = {{"dp", 4}, {"tp", 2}};
  EXPECT_DOUBLE_EQ(shared.drainShare(seconds, dp8, 16), 0.0);
  EXPECT_DOUBLE_EQ(shared.drainShare(seconds, dp8, 8), 0.75);
  EXPECT_DOUBLE_EQ(shared.drainShare(seconds, dp4, 8), 0.0);
  EXPECT_DOUBLE_EQ(shared.drainShare({}, dp8, 8), 0.0);
}

// estimateStep records the ranks one call of each collective row
// synchronizes: the group's for a collective, 2 for a pipeline transfer.
TEST_F(PlannerTest, CollectiveRowsKnowTheirGroup) {
  profile.shared.hostCores = 2;
  StepCost step = estimate("%x: tensor<1024xf32>",
                           "%y = shard.all_reduce %x on @mesh grid_axes = [0] "
                           ": tensor<1024xf32> -> tensor<1024xf32>",
                           8);
  const GroupCost *ar = group(step, "collectives dp");
  ASSERT_TRUE(ar);
  EXPECT_EQ(ar->groupRanks, 8);
  EXPECT_DOUBLE_EQ(drainShare({&step}, 8, profile), 1.0);
  // The same all-reduce among 16 ranks on 2 cores: two groups of 8 for
  // two cores.
  EXPECT_DOUBLE_EQ(drainShare({&step}, 16, profile), 0.0);
  StepCost pipe = estimate("%x: tensor<1024xf32>",
                           "llmc.send %x axis 0 from 0 to 1 : tensor<1024xf32>",
                           8);
  const GroupCost *send = group(pipe, "collectives dp");
  ASSERT_TRUE(send);
  EXPECT_EQ(send->groupRanks, 2);
  EXPECT_DOUBLE_EQ(drainShare({&pipe}, 8, profile), 0.0);
}

// A pipeline transfer costs both sides: the send its stage's ranks, the
// receive the other stage's (1 step of 2 us and 1 MiB at 100 GB/s each);
// the whole program counts both.
TEST_F(PlannerTest, PipelineReceiveCostsLikeTheSend) {
  StepCost both = estimate(
      "%x: tensor<262144xf32>",
      "llmc.send %x axis 0 from 0 to 1 {llmc.stage = 0 : i64} : "
      "tensor<262144xf32>\n"
      "%r = llmc.recv axis 0 from 0 to 1 {llmc.stage = 1 : i64} : "
      "tensor<262144xf32>",
      2);
  double one = 2e-6 + 4.0 * 262144 / 100e9;
  EXPECT_NEAR(both.communication, 2 * one, 1e-12);
  ASSERT_TRUE(module);
  auto function = module->lookupSymbol<func::FuncOp>("f");
  llmc::Mesh mesh;
  mesh.names = {"dp"};
  mesh.sizes = {2};
  for (int64_t stage : {0, 1})
    EXPECT_NEAR(estimateStep(function, &mesh, profile, stage).communication,
                one, 1e-12)
        << stage;
}

// The built-in cpu profile is the calibrated one (data/devices.toml): the
// virtual devices share 2 cores, its slow reference kernels carry an
// efficiency below 1, and its collectives a call latency.
TEST_F(PlannerTest, CpuProfileIsCalibrated) {
  llvm::Expected<DeviceProfile> cpu = lookupDeviceProfile("cpu");
  ASSERT_TRUE(static_cast<bool>(cpu)) << llvm::toString(cpu.takeError());
  EXPECT_EQ(cpu->shared.hostCores, 2);
  EXPECT_FALSE(cpu->fusedKernels);
  EXPECT_GT(cpu->intraNode.callLatency, 0.0);
  // The idle shares of shared cores, the drain's among them.
  EXPECT_GT(cpu->shared.idle, 0.0);
  EXPECT_GT(cpu->shared.drainIdle, 0.0);
  EXPECT_GT(cpu->shared.bubbleIdle, 0.0);
  for (const char *op : {"attention", "attention_grad", "gelu", "softmax",
                         "layer_norm_grad", "rms_norm_grad",
                         "cross_entropy_grad"}) {
    EXPECT_GT(cpu->efficiencyOf(op), 0.0) << op;
    EXPECT_LT(cpu->efficiencyOf(op), 0.2) << op;
  }
}

TEST(DeviceProfileTest, CpuKeysErrors) {
  std::string good = test::kTestProfile;
  std::string withCores = good;
  withCores.replace(withCores.find("devices_per_node"), 0,
                    "host_cores = 0\n");
  EXPECT_EQ(loadError(withCores),
            "bad.toml:7:14: error: key 't.host_cores' must be a positive "
            "number; write e.g. host_cores = 100");
  std::string effNotTable = good;
  effNotTable.replace(effNotTable.find("devices_per_node"), 0,
                      "efficiency = 0.5\n");
  EXPECT_NE(loadError(effNotTable)
                .find("bad.toml:7:14: error: 't.efficiency' must be a table of "
                      "op names and positive factors"),
            std::string::npos)
      << loadError(effNotTable);
  std::string effNegative =
      good.substr(0, good.find("[t.intra_node]")) +
      "[t.efficiency]\nattention = -1\n" +
      good.substr(good.find("[t.intra_node]"));
  EXPECT_NE(loadError(effNegative)
                .find("error: key 't.efficiency.attention' must be a positive "
                      "number"),
            std::string::npos)
      << loadError(effNegative);
  std::string callLatency = good;
  callLatency.replace(callLatency.find("latency_us = 2"), 14,
                      "latency_us = 2\ncall_latency_us = 7");
  llvm::Expected<std::vector<DeviceProfile>> parsed =
      parseDeviceProfiles(callLatency, "ok.toml");
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_DOUBLE_EQ(parsed->front().intraNode.callLatency, 7e-6);
  // The idle shares of shared cores: each in [0, 1), their sum below 1.
  std::string idle = good;
  idle.replace(idle.find("devices_per_node"), 0, "shared_idle = 1.5\n");
  EXPECT_NE(loadError(idle).find("error: key 't.shared_idle' must be a "
                                 "number in [0, 1)"),
            std::string::npos)
      << loadError(idle);
  std::string sum = good;
  sum.replace(sum.find("devices_per_node"), 0,
              "shared_idle = 0.6\nshared_bubble_idle = 0.5\n");
  EXPECT_NE(loadError(sum).find("must stay below 1"), std::string::npos)
      << loadError(sum);
  std::string sumDrain = good;
  sumDrain.replace(sumDrain.find("devices_per_node"), 0,
                   "shared_idle = 0.4\nshared_drain_idle = 0.3\n"
                   "shared_bubble_idle = 0.3\n");
  EXPECT_NE(loadError(sumDrain).find("'t.shared_drain_idle' + "
                                     "'t.shared_bubble_idle' must stay below 1"),
            std::string::npos)
      << loadError(sumDrain);
  std::string drain = good;
  drain.replace(drain.find("devices_per_node"), 0, "shared_drain_idle = -0.1\n");
  EXPECT_NE(loadError(drain).find("error: key 't.shared_drain_idle' must be a "
                                  "number in [0, 1)"),
            std::string::npos)
      << loadError(drain);
  std::string fine = good;
  fine.replace(fine.find("devices_per_node"), 0,
               "host_cores = 2\nshared_idle = 0.1\nshared_drain_idle = 0.05\n"
               "shared_bubble_idle = 0.3\n");
  llvm::Expected<std::vector<DeviceProfile>> withIdle =
      parseDeviceProfiles(fine, "ok.toml");
  ASSERT_TRUE(static_cast<bool>(withIdle))
      << llvm::toString(withIdle.takeError());
  EXPECT_EQ(withIdle->front().shared.hostCores, 2);
  EXPECT_DOUBLE_EQ(withIdle->front().shared.idle, 0.1);
  EXPECT_DOUBLE_EQ(withIdle->front().shared.drainIdle, 0.05);
  EXPECT_DOUBLE_EQ(withIdle->front().shared.bubbleIdle, 0.3);
}

} // namespace
