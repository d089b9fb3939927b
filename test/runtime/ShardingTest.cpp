// Tests of the sharding math (runtime/Sharding.h): hand-computed blocks,
// extract against an element-by-element reference of the documented
// formula, and extract -> assemble round trips on a {dp=2, tp=2} mesh.
#include "runtime/Sharding.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>

namespace {

using namespace llmc::rt;

const std::vector<MeshAxisInfo> kMesh = {{"dp", 2}, {"tp", 2}};

std::vector<int32_t> iota(int64_t n) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  std::iota(values.begin(), values.end(), 0);
  return values;
}

TensorSharding oneDim(std::vector<int32_t> axes, int64_t groups) {
  TensorSharding sharding;
  sharding.dims = {{std::move(axes), groups}};
  return sharding;
}

std::vector<int32_t> extract(const std::vector<int32_t> &global,
                             const Shape &shape, const TensorSharding &sharding,
                             const std::vector<MeshAxisInfo> &mesh, int rank,
                             int64_t localElements) {
  std::vector<int32_t> local(static_cast<size_t>(localElements), -1);
  Status status = extractShard(global.data(), 4, shape, sharding, mesh, rank,
                               local.data());
  EXPECT_TRUE(status) << status.message();
  return local;
}

TEST(Sharding, GroupedSplitMatchesTheHandComputedBlocks) {
  // S = 12, groups = 3, n = 2: blocks of 4, chunks of c = 2.
  std::vector<int32_t> global = iota(12);
  TensorSharding sharding = oneDim({0}, 3);
  std::vector<MeshAxisInfo> mesh = {{"tp", 2}};
  EXPECT_EQ(extract(global, {12}, sharding, mesh, 0, 6),
            (std::vector<int32_t>{0, 1, 4, 5, 8, 9}));
  EXPECT_EQ(extract(global, {12}, sharding, mesh, 1, 6),
            (std::vector<int32_t>{2, 3, 6, 7, 10, 11}));

  // On {dp=2, tp=2}, split over tp only: dp=0 and dp=1 hold the same block.
  TensorSharding overTp = oneDim({1}, 3);
  for (int rank : {1, 3})
    EXPECT_EQ(extract(global, {12}, overTp, kMesh, rank, 6),
              (std::vector<int32_t>{2, 3, 6, 7, 10, 11}))
        << "rank " << rank;
}

TEST(Sharding, TwoAxesOnOneDimensionAreMixedRadixMajorToMinor) {
  std::vector<int32_t> global = iota(8);
  // [dp, tp]: position dp * 2 + tp, which is the rank itself.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(extract(global, {8}, oneDim({0, 1}, 1), kMesh, rank, 2),
              (std::vector<int32_t>{2 * rank, 2 * rank + 1}));
  // [tp, dp]: rank 1 is (dp=0, tp=1), position 1 * 2 + 0 = 2.
  EXPECT_EQ(extract(global, {8}, oneDim({1, 0}, 1), kMesh, 1, 2),
            (std::vector<int32_t>{4, 5}));
}

TEST(Sharding, ShapesAndFormatting) {
  TensorSharding sharding;
  sharding.dims = {{{0}, 1}, {}, {{1}, 3}};
  Shape global;
  ASSERT_TRUE(globalShape({2, 5, 6}, sharding, kMesh, global));
  EXPECT_EQ(global, (Shape{4, 5, 12}));
  EXPECT_EQ(formatSharding(sharding, kMesh), "[[dp], [], [tp x3]]");
  EXPECT_EQ(formatSharding(TensorSharding(), kMesh), "replicated");
  EXPECT_EQ(formatMesh(kMesh), "{dp=2, tp=2}");
  ASSERT_TRUE(globalShape({2, 5}, TensorSharding(), kMesh, global));
  EXPECT_EQ(global, (Shape{2, 5}));
  EXPECT_FALSE(globalShape({2, 5}, sharding, kMesh, global));
}

TEST(Sharding, IndivisibleDimensionsAndUnknownRanksAreErrors) {
  std::vector<int32_t> global = iota(10), local(5);
  Status status = extractShard(global.data(), 4, {10}, oneDim({1}, 3), kMesh,
                               0, local.data());
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(), "dimension 0 of size 10 does not split into 3 "
                              "group(s) of 2 chunks");
  status = extractShard(global.data(), 4, {10}, oneDim({1}, 1), kMesh, 4,
                        local.data());
  EXPECT_EQ(status.message(), "rank 4 is not in the mesh {dp=2, tp=2}");
  status = assembleShards({global.data()}, 4, {10}, oneDim({1}, 1), kMesh,
                          local.data());
  EXPECT_EQ(status.message(), "expected a block from each of the 4 ranks of "
                              "the mesh {dp=2, tp=2}, got 1");
}

/// The documented formula, one element at a time: the reference.
std::vector<uint8_t> referenceBlock(const std::vector<uint8_t> &global,
                                    size_t elementBytes, const Shape &shape,
                                    const TensorSharding &sharding, int rank) {
  std::vector<int64_t> coords = {rank / 2, rank % 2};
  Shape local = shape;
  std::vector<int64_t> chunk(shape.size()), block(shape.size()),
      offset(shape.size(), 0);
  for (size_t d = 0; d < shape.size(); ++d) {
    const DimSharding &dim = sharding.dims[d];
    int64_t n = 1, p = 0;
    for (int32_t axis : dim.axes) {
      p = p * kMesh[axis].size + coords[axis];
      n *= kMesh[axis].size;
    }
    local[d] = shape[d] / n;
    chunk[d] = shape[d] / (dim.groups * n);
    block[d] = shape[d] / dim.groups;
    offset[d] = p * chunk[d];
  }
  std::vector<uint8_t> out(static_cast<size_t>(numElements(local)) *
                           elementBytes);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < numElements(local); ++flat) {
    int64_t rest = flat, globalFlat = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = rest % local[d];
      rest /= local[d];
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t j = index[d];
      int64_t g = (j / chunk[d]) * block[d] + offset[d] + j % chunk[d];
      globalFlat = globalFlat * shape[d] + g;
    }
    std::memcpy(out.data() + flat * elementBytes,
                global.data() + globalFlat * elementBytes, elementBytes);
  }
  return out;
}

TEST(Sharding, RandomShardingsMatchTheFormulaAndRoundTrip) {
  std::mt19937 rng(2024);
  const std::vector<std::vector<int32_t>> choices = {{}, {0}, {1}, {0, 1},
                                                     {1, 0}};
  for (int trial = 0; trial < 300; ++trial) {
    size_t rank = 1 + rng() % 4, elementBytes = size_t(1) << (rng() % 4);
    TensorSharding sharding;
    Shape local(rank), shape(rank);
    bool usedDp = false, usedTp = false;
    for (size_t d = 0; d < rank; ++d) {
      std::vector<int32_t> axes = choices[rng() % choices.size()];
      bool clash = false;
      for (int32_t axis : axes)
        clash = clash || (axis == 0 ? usedDp : usedTp);
      if (clash)
        axes.clear();
      int64_t n = 1;
      for (int32_t axis : axes) {
        (axis == 0 ? usedDp : usedTp) = true;
        n *= 2;
      }
      int64_t groups = axes.empty() ? 1 : 1 + rng() % 3;
      local[d] = groups * (1 + rng() % 3);
      shape[d] = local[d] * n;
      sharding.dims.push_back({axes, groups});
    }
    std::vector<uint8_t> global(static_cast<size_t>(numElements(shape)) *
                                elementBytes);
    for (uint8_t &byte : global)
      byte = static_cast<uint8_t>(rng());
    Shape computed;
    ASSERT_TRUE(globalShape(local, sharding, kMesh, computed));
    ASSERT_EQ(computed, shape);

    std::vector<std::vector<uint8_t>> blocks(4);
    std::vector<const void *> pointers;
    for (int r = 0; r < 4; ++r) {
      blocks[r].assign(static_cast<size_t>(numElements(local)) * elementBytes,
                       0);
      Status status = extractShard(global.data(), elementBytes, shape,
                                   sharding, kMesh, r, blocks[r].data());
      ASSERT_TRUE(status) << status.message();
      ASSERT_EQ(blocks[r],
                referenceBlock(global, elementBytes, shape, sharding, r))
          << "trial " << trial << " rank " << r << " sharding "
          << formatSharding(sharding, kMesh) << " shape " << formatShape(shape);
      pointers.push_back(blocks[r].data());
    }
    std::vector<uint8_t> back(global.size(), 0);
    Status status = assembleShards(pointers, elementBytes, shape, sharding,
                                   kMesh, back.data());
    ASSERT_TRUE(status) << status.message();
    EXPECT_EQ(back, global) << "trial " << trial << " sharding "
                            << formatSharding(sharding, kMesh) << " shape "
                            << formatShape(shape);
  }
}

TEST(Sharding, ZigzagSplitGivesEachRankAnEarlyAndALateChunk) {
  // Context parallelism: S = 8 in 2 groups over n ranks; in the odd block
  // the chunks go to the ranks in reverse order, so rank p holds chunks p
  // and 2n - 1 - p.
  std::vector<int32_t> global = iota(8);
  TensorSharding zigzag = oneDim({0}, 2);
  zigzag.dims[0].zigzag = true;
  std::vector<MeshAxisInfo> cp2 = {{"cp", 2}}, cp4 = {{"cp", 4}};
  EXPECT_EQ(extract(global, {8}, zigzag, cp2, 0, 4),
            (std::vector<int32_t>{0, 1, 6, 7}));
  EXPECT_EQ(extract(global, {8}, zigzag, cp2, 1, 4),
            (std::vector<int32_t>{2, 3, 4, 5}));
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_EQ(extract(global, {8}, zigzag, cp4, rank, 2),
              (std::vector<int32_t>{rank, 7 - rank}))
        << "rank " << rank;
  EXPECT_EQ(formatSharding(zigzag, cp2), "[[cp x2 zigzag]]");

  // [B, T] tokens on {dp=2, cp=2}: the batch over dp, the sequence zigzag
  // over cp; assembling the four blocks gives the tensor back.
  std::vector<MeshAxisInfo> mesh = {{"dp", 2}, {"cp", 2}};
  TensorSharding tokens;
  tokens.dims = {{{0}, 1}, {{1}, 2, true}};
  global = iota(16);
  std::vector<std::vector<int32_t>> blocks;
  for (int rank = 0; rank < 4; ++rank)
    blocks.push_back(extract(global, {2, 8}, tokens, mesh, rank, 4));
  EXPECT_EQ(blocks[1], (std::vector<int32_t>{2, 3, 4, 5}));    // dp 0, cp 1
  EXPECT_EQ(blocks[2], (std::vector<int32_t>{8, 9, 14, 15}));  // dp 1, cp 0
  std::vector<int32_t> back(16, -1);
  ASSERT_TRUE(assembleShards({blocks[0].data(), blocks[1].data(),
                              blocks[2].data(), blocks[3].data()},
                             4, {2, 8}, tokens, mesh, back.data()));
  EXPECT_EQ(back, global);
}

TEST(Sharding, ReplicatedTensorsCopyWhole) {
  std::vector<int32_t> global = iota(6), local(6, -1);
  ASSERT_TRUE(extractShard(global.data(), 4, {2, 3}, TensorSharding(), {}, 3,
                           local.data()));
  EXPECT_EQ(local, global);
  std::vector<int32_t> back(6, -1);
  ASSERT_TRUE(assembleShards({local.data(), nullptr}, 4, {2, 3},
                             TensorSharding(), {}, back.data()));
  EXPECT_EQ(back, global);
}

} // namespace
