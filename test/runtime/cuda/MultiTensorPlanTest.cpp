//===- MultiTensorPlanTest.cpp - which commands share a launch (no GPU) ---===//
//
// The ctest `cuda-multi-tensor-plan`: planMultiTensorGroups on hand-built
// programs (which runs group, and which must not: a member reading what an
// earlier one writes, writing what another reads, an unrelated command in
// between, a body that depends on the element index), and every generated
// unit through NVRTC for sm_90. Needs the CUDA toolkit, no GPU.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/optimizer/MultiTensor.h"
#include "runtime/cuda/libs/Nvrtc.h"

#include <gtest/gtest.h>

namespace llmc::rt::cuda {
namespace {

/// A one-rank program built command by command; values are laid out one
/// after another (64-byte aligned) unless placed explicitly.
struct Program {
  RankProgram rank;
  uint64_t next = 0;

  int32_t value(DType dtype, Shape shape) {
    uint64_t offset = (next + 63) / 64 * 64;
    return valueAt(dtype, std::move(shape), offset);
  }
  int32_t valueAt(DType dtype, Shape shape, uint64_t offset) {
    ValueInfo info{dtype, std::move(shape), offset};
    next = std::max(next, offset + info.bytes());
    rank.arenaBytes = (next + 63) / 64 * 64;
    rank.values.push_back(info);
    return static_cast<int32_t>(rank.values.size() - 1);
  }
  void command(KernelKind kind, std::vector<int32_t> inputs,
               std::vector<int32_t> outputs, std::vector<int64_t> ints = {}) {
    Command c;
    c.kind = CommandKind::Kernel;
    c.kernel = kind;
    c.inputs = std::move(inputs);
    c.outputs = std::move(outputs);
    c.attrs.ints = std::move(ints);
    c.origin = "part" + std::to_string(rank.commands.size());
    rank.commands.push_back(std::move(c));
  }
  /// A FusedElementwise marker for the `count` commands that follow.
  void marker(std::vector<int32_t> inputs, std::vector<int32_t> outputs,
              int64_t count) {
    command(KernelKind::FusedElementwise, std::move(inputs),
            std::move(outputs), {count});
  }
  /// x -> bf16 copy.
  void cast(int64_t n) {
    int32_t x = value(DType::F32, {n});
    command(KernelKind::Cast, {x}, {value(DType::BF16, {n})});
  }
  /// out = x * broadcast(s): a region of two commands.
  void scaleRegion(Shape shape) {
    int32_t s = value(DType::F32, {});
    int32_t x = value(DType::F32, shape);
    int32_t wide = value(DType::F32, shape);
    int32_t out = value(DType::F32, shape);
    marker({s, x}, {out}, 2);
    command(KernelKind::Broadcast, {s}, {wide}, {});
    command(KernelKind::Mul, {x, wide}, {out});
  }
};

/// Every elementwise group's unit compiles and defines its entry.
void expectCompiles(const std::vector<MultiTensorGroup> &groups) {
  NvrtcOptions options;
  options.extraOptions.push_back("--fmad=false");
  for (const MultiTensorGroup &group : groups) {
    if (group.kind != MultiTensorGroup::Kind::Elementwise)
      continue;
    CompiledCuda compiled;
    Status status =
        compileCuda(group.source, group.entry + ".cu", options, compiled);
    ASSERT_TRUE(status.isOk()) << status.toString() << "\n" << group.source;
    EXPECT_NE(compiled.ptx.find(".entry " + group.entry + "("),
              std::string::npos);
  }
}

TEST(MultiTensorPlan, ConsecutiveCastsAreOneLaunch) {
  Program p;
  p.cast(1000);
  p.cast(768);
  p.cast(5);
  std::vector<MultiTensorGroup> groups = planMultiTensorGroups(p.rank);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].label, "Cast -> bf16");
  EXPECT_EQ(groups[0].members, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(groups[0].ends, (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(groups[0].elements, (std::vector<int64_t>{1000, 768, 5}));
  expectCompiles(groups);
}

// A member that reads bytes an earlier member writes would read them
// before they are written (the group runs at its first member's place):
// it starts the next group.
TEST(MultiTensorPlan, ReadAfterWriteStartsANewGroup) {
  Program p;
  int32_t x0 = p.value(DType::F32, {100});
  int32_t y0 = p.value(DType::BF16, {100});
  p.command(KernelKind::Cast, {x0}, {y0});
  // x1 lies over y0's bytes (as a buffer plan may place a later value).
  int32_t x1 = p.valueAt(DType::F32, {50}, p.rank.values[y0].offset);
  p.command(KernelKind::Cast, {x1}, {p.value(DType::BF16, {50})});
  p.cast(70);
  std::vector<MultiTensorGroup> groups = planMultiTensorGroups(p.rank);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members, (std::vector<size_t>{1, 2}));
}

// A member writing over an earlier member's input, or over its output.
TEST(MultiTensorPlan, WritesOverAnotherMembersBytesSplit) {
  Program p;
  int32_t x0 = p.value(DType::F32, {100});
  p.command(KernelKind::Cast, {x0}, {p.value(DType::BF16, {100})});
  int32_t x1 = p.value(DType::F32, {100});
  int32_t overX0 = p.valueAt(DType::BF16, {100}, p.rank.values[x0].offset);
  p.command(KernelKind::Cast, {x1}, {overX0});
  int32_t x2 = p.value(DType::F32, {100});
  int32_t overY1 = p.valueAt(DType::BF16, {100}, p.rank.values[overX0].offset);
  p.command(KernelKind::Cast, {x2}, {overY1});
  EXPECT_TRUE(planMultiTensorGroups(p.rank).empty());
}

TEST(MultiTensorPlan, AnotherCommandInBetweenSplits) {
  Program p;
  p.cast(10);
  p.cast(20);
  int32_t t = p.value(DType::F32, {4, 8});
  p.command(KernelKind::Transpose, {t}, {p.value(DType::F32, {8, 4})}, {1, 0});
  p.cast(30);
  p.cast(40);
  p.cast(50);
  std::vector<MultiTensorGroup> groups = planMultiTensorGroups(p.rank);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members.size(), 2u);
  EXPECT_EQ(groups[1].members.size(), 3u);
  EXPECT_EQ(groups[1].members.front(), 3u);
}

TEST(MultiTensorPlan, SumsOfSquaresOfF32OnlyGroup) {
  Program p;
  for (int64_t n : {768, 5000, 3}) {
    int32_t x = p.value(DType::F32, {n});
    p.command(KernelKind::SumSquares, {x}, {p.value(DType::F32, {})});
  }
  int32_t wide = p.value(DType::BF16, {8});
  p.command(KernelKind::SumSquares, {wide}, {p.value(DType::F32, {})});
  std::vector<MultiTensorGroup> groups = planMultiTensorGroups(p.rank);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].kind, MultiTensorGroup::Kind::SumSquares);
  EXPECT_EQ(groups[0].members, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(groups[0].elements, (std::vector<int64_t>{768, 5000, 3}));
}

// Regions with the same body over different shapes share one unit; a
// region whose body uses the element index (an iota, a broadcast of a
// vector) is no member, and its commands are never taken for lone ones.
TEST(MultiTensorPlan, RegionsOfOneBodyGroupAndIndexUsersDoNot) {
  Program p;
  p.scaleRegion({3, 5});
  p.scaleRegion({4096 * 2 + 1});
  p.scaleRegion({7});
  {
    int32_t row = p.value(DType::F32, {5});
    int32_t x = p.value(DType::F32, {3, 5});
    int32_t wide = p.value(DType::F32, {3, 5});
    int32_t out = p.value(DType::F32, {3, 5});
    p.marker({row, x}, {out}, 2);
    p.command(KernelKind::Broadcast, {row}, {wide}, {1});
    p.command(KernelKind::Mul, {x, wide}, {out});
  }
  {
    int32_t index = p.value(DType::F32, {6});
    int32_t x = p.value(DType::F32, {6});
    int32_t out = p.value(DType::F32, {6});
    p.marker({x}, {out}, 2);
    p.command(KernelKind::Iota, {}, {index}, {0});
    p.command(KernelKind::Add, {x, index}, {out});
  }
  p.scaleRegion({9});
  std::vector<MultiTensorGroup> groups = planMultiTensorGroups(p.rank);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].label, "FusedElementwise");
  EXPECT_EQ(groups[0].members, (std::vector<size_t>{0, 3, 6}));
  EXPECT_EQ(groups[0].ends, (std::vector<size_t>{3, 6, 9}));
  expectCompiles(groups);
}

// Members of two groups may alternate (AdamW with and without weight
// decay): each group's later members move up past the other's.
TEST(MultiTensorPlan, AlternatingGroupsInterleave) {
  Program p;
  for (int k = 0; k < 3; ++k) {
    p.scaleRegion({100 + k});
    p.cast(50 + k);
  }
  std::vector<MultiTensorGroup> groups = planMultiTensorGroups(p.rank);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members, (std::vector<size_t>{0, 4, 8}));
  EXPECT_EQ(groups[1].members, (std::vector<size_t>{3, 7, 11}));
}

// A member may not move up past another group's member whose result it
// reads: it starts a new group of its own.
TEST(MultiTensorPlan, NoMovingPastAWriterOfAnInput) {
  Program p;
  p.scaleRegion({64});
  int32_t x = p.value(DType::F32, {32});
  int32_t y = p.value(DType::BF16, {32});
  p.command(KernelKind::Cast, {x}, {y});
  // A region whose x lies on the cast's result.
  int32_t s = p.value(DType::F32, {});
  int32_t overY = p.valueAt(DType::F32, {16}, p.rank.values[y].offset);
  int32_t wide = p.value(DType::F32, {16});
  int32_t out = p.value(DType::F32, {16});
  p.marker({s, overY}, {out}, 2);
  p.command(KernelKind::Broadcast, {s}, {wide}, {});
  p.command(KernelKind::Mul, {overY, wide}, {out});
  p.cast(40);
  std::vector<MultiTensorGroup> groups = planMultiTensorGroups(p.rank);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].label, "Cast -> bf16");
  EXPECT_EQ(groups[0].members, (std::vector<size_t>{3, 7}));
}

} // namespace
} // namespace llmc::rt::cuda
