// Tests of the CPU virtual devices' collectives (runtime/cpu/Collectives.h);
// the mesh itself is tested in MeshTest.cpp.
//
// Every collective runs on random inputs (fixed seeds, never zero: ±[0.5, 2)
// for floats, divided by 3 in f64 so that it uses its extra bits, and
// ±[1, 1000] for integers) and is compared against a serial computation
// here that reduces in group order, ((x0 + x1) + x2) + ..., with the same
// arithmetic: f32 and f64 in their own precision, bf16/f16 accumulated in
// f32 and rounded once. The tolerance is therefore zero for every dtype:
// results must match bit for bit, because both sides perform the same IEEE
// operations in the same order (adds cannot be contracted into FMAs). Any
// other order would show up as a mismatch in f32, which is how the tests pin
// the determinism the runtime promises.
#include "runtime/cpu/Collectives.h"
#include "runtime/Mesh.h"

#include "CollectivesTestSupport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace {

using namespace llmc::rt;
using namespace llmc::rt::collectivestest;
using namespace std::chrono_literals;

const DType kDTypes[] = {DType::F32, DType::F64, DType::BF16,
                         DType::F16, DType::I32, DType::I64};

DeviceGroup groupOf(std::vector<int> ranks) {
  DeviceGroup group;
  Status status = DeviceGroup::create(std::move(ranks), group);
  EXPECT_TRUE(status.isOk()) << status.toString();
  return group;
}

DeviceGroup firstRanks(int n) {
  std::vector<int> ranks;
  for (int i = 0; i < n; ++i)
    ranks.push_back(i);
  return groupOf(ranks);
}

//===----------------------------------------------------------------------===//
// Random buffers and the serial reference
//===----------------------------------------------------------------------===//

using Bytes = std::vector<uint8_t>;

template <typename T> void put(Bytes &bytes, int64_t i, T value) {
  std::memcpy(bytes.data() + i * sizeof(T), &value, sizeof(T));
}
template <typename T> T get(const Bytes &bytes, int64_t i) {
  T value;
  std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
  return value;
}

Bytes randomBytes(DType dtype, int64_t count, std::mt19937 &rng) {
  Bytes bytes(count * dtypeSize(dtype));
  std::uniform_real_distribution<float> magnitude(0.5f, 2.0f);
  std::uniform_int_distribution<int> integer(1, 1000);
  std::bernoulli_distribution negative(0.5);
  for (int64_t i = 0; i < count; ++i) {
    float sign = negative(rng) ? -1.0f : 1.0f;
    float value = sign * magnitude(rng);
    int64_t whole = static_cast<int64_t>(sign) * integer(rng);
    switch (dtype) {
    case DType::F32:
      put(bytes, i, value);
      break;
    case DType::F64:
      put(bytes, i, static_cast<double>(value) / 3.0);
      break;
    case DType::BF16:
      put(bytes, i, floatToBf16(value));
      break;
    case DType::F16:
      put(bytes, i, floatToF16(value));
      break;
    case DType::I32:
      put(bytes, i, static_cast<int32_t>(whole));
      break;
    case DType::I64:
      put(bytes, i, whole);
      break;
    case DType::I1:
      put(bytes, i, static_cast<uint8_t>(whole > 0));
      break;
    }
  }
  return bytes;
}

template <typename T> T same(T value) { return value; }

template <typename Storage, typename Acc, Acc (*Load)(Storage),
          Storage (*Store)(Acc)>
Bytes reduceAs(ReduceOp op, const std::vector<Bytes> &inputs, int64_t first,
               int64_t count) {
  Bytes result(count * sizeof(Storage));
  for (int64_t i = 0; i < count; ++i) {
    Acc acc = Load(get<Storage>(inputs[0], first + i));
    for (size_t j = 1; j < inputs.size(); ++j) {
      Acc value = Load(get<Storage>(inputs[j], first + i));
      acc = op == ReduceOp::Sum ? acc + value : (acc < value ? value : acc);
    }
    put(result, i, Store(acc));
  }
  return result;
}

/// Elements [first, first + count) of op over `inputs`, in their order.
Bytes serialReduce(DType dtype, ReduceOp op, const std::vector<Bytes> &inputs,
                   int64_t first, int64_t count) {
  switch (dtype) {
  case DType::F32:
    return reduceAs<float, float, same, same>(op, inputs, first, count);
  case DType::F64:
    return reduceAs<double, double, same, same>(op, inputs, first, count);
  case DType::BF16:
    return reduceAs<uint16_t, float, bf16ToFloat, floatToBf16>(op, inputs,
                                                               first, count);
  case DType::F16:
    return reduceAs<uint16_t, float, f16ToFloat, floatToF16>(op, inputs, first,
                                                             count);
  case DType::I32:
    return reduceAs<int32_t, int32_t, same, same>(op, inputs, first, count);
  case DType::I64:
    return reduceAs<int64_t, int64_t, same, same>(op, inputs, first, count);
  case DType::I1:
    break;
  }
  ADD_FAILURE() << "no reference for " << dtypeName(dtype);
  return {};
}

Bytes slice(const Bytes &bytes, size_t begin, size_t size) {
  return Bytes(bytes.begin() + begin, bytes.begin() + begin + size);
}

//===----------------------------------------------------------------------===//
// One collective call by every member of a group, and what it must produce
//===----------------------------------------------------------------------===//

enum class Kind {
  AllReduceSum,
  AllReduceMax,
  AllGather,
  ReduceScatterSum,
  ReduceScatterMax,
  AllToAll
};

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::AllReduceSum:
    return "AllReduceSum";
  case Kind::AllReduceMax:
    return "AllReduceMax";
  case Kind::AllGather:
    return "AllGather";
  case Kind::ReduceScatterSum:
    return "ReduceScatterSum";
  case Kind::ReduceScatterMax:
    return "ReduceScatterMax";
  case Kind::AllToAll:
    return "AllToAll";
  }
  return "?";
}

void PrintTo(Kind kind, std::ostream *os) { *os << kindName(kind); }

enum class Placement { Separate, InPlace };

struct Case {
  Kind kind;
  DType dtype;
  DeviceGroup group;
  Placement placement = Placement::Separate;
  Shape inShape, outShape;
  std::vector<Bytes> inputs;  ///< per member, in group order
  std::vector<Bytes> outputs; ///< per member, what the collective wrote
};

/// `rows` rows of `cols` per member chunk: the leading dimension of the
/// split side is group size * rows.
Case makeCase(Kind kind, DType dtype, DeviceGroup group, int64_t rows,
              int64_t cols, uint32_t seed,
              Placement placement = Placement::Separate) {
  int64_t n = group.size();
  Case c{kind, dtype, std::move(group), placement, {}, {}, {}, {}};
  switch (kind) {
  case Kind::AllReduceSum:
  case Kind::AllReduceMax:
    c.inShape = c.outShape = {rows, cols};
    break;
  case Kind::AllGather:
    c.inShape = {rows, cols};
    c.outShape = {n * rows, cols};
    break;
  case Kind::ReduceScatterSum:
  case Kind::ReduceScatterMax:
    c.inShape = {n * rows, cols};
    c.outShape = {rows, cols};
    break;
  case Kind::AllToAll:
    c.inShape = c.outShape = {n * rows, cols};
    break;
  }
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    c.inputs.push_back(randomBytes(dtype, numElements(c.inShape), rng));
    // A pattern no result has, so unwritten bytes show.
    c.outputs.emplace_back(numElements(c.outShape) * dtypeSize(dtype), 0xA5);
  }
  return c;
}

Status call(CpuWorld &world, int rank, const Case &c, const TensorRef &in,
            const TensorRef &out) {
  switch (c.kind) {
  case Kind::AllReduceSum:
    return world.allReduce(rank, c.group, ReduceOp::Sum, in, out);
  case Kind::AllReduceMax:
    return world.allReduce(rank, c.group, ReduceOp::Max, in, out);
  case Kind::AllGather:
    return world.allGather(rank, c.group, in, out);
  case Kind::ReduceScatterSum:
    return world.reduceScatter(rank, c.group, ReduceOp::Sum, in, out);
  case Kind::ReduceScatterMax:
    return world.reduceScatter(rank, c.group, ReduceOp::Max, in, out);
  case Kind::AllToAll:
    return world.allToAll(rank, c.group, in, out);
  }
  return Status::error(StatusCode::Internal, "unknown kind");
}

/// Runs `rank`'s side of `c`. In place, the input lives in the output
/// buffer as the collective's in-place rule says (NCCL's: the member's own
/// chunk for all-gather and reduce-scatter, the whole buffer otherwise).
Status runMember(CpuWorld &world, Case &c, int rank) {
  int member = c.group.memberIndex(rank);
  Bytes &input = c.inputs[member];
  Bytes &output = c.outputs[member];
  if (c.placement == Placement::Separate)
    return call(world, rank, c, {input.data(), c.dtype, c.inShape},
                {output.data(), c.dtype, c.outShape});
  Bytes buffer = input;
  size_t chunk = output.size();
  switch (c.kind) {
  case Kind::AllGather:
    // The output buffer, with the member's input already in its chunk.
    buffer.assign(output.size(), 0xA5);
    std::memcpy(buffer.data() + member * input.size(), input.data(),
                input.size());
    {
      Status status =
          call(world, rank, c,
               {buffer.data() + member * input.size(), c.dtype, c.inShape},
               {buffer.data(), c.dtype, c.outShape});
      output = buffer;
      return status;
    }
  case Kind::ReduceScatterSum:
  case Kind::ReduceScatterMax: {
    Status status = call(world, rank, c, {buffer.data(), c.dtype, c.inShape},
                         {buffer.data() + member * chunk, c.dtype, c.outShape});
    std::memcpy(output.data(), buffer.data() + member * chunk, chunk);
    return status;
  }
  default:
    // In == out; the original input stays in `input` for the reference.
    Status status = call(world, rank, c, {buffer.data(), c.dtype, c.inShape},
                         {buffer.data(), c.dtype, c.outShape});
    output = buffer;
    return status;
  }
}

std::vector<Bytes> expectedOutputs(const Case &c) {
  int64_t n = c.group.size();
  int64_t count = numElements(c.inShape);
  size_t elementBytes = dtypeSize(c.dtype);
  std::vector<Bytes> expected(n);
  for (int64_t i = 0; i < n; ++i) {
    switch (c.kind) {
    case Kind::AllReduceSum:
    case Kind::AllReduceMax:
      expected[i] = serialReduce(
          c.dtype, c.kind == Kind::AllReduceSum ? ReduceOp::Sum : ReduceOp::Max,
          c.inputs, 0, count);
      break;
    case Kind::AllGather:
      for (const Bytes &input : c.inputs)
        expected[i].insert(expected[i].end(), input.begin(), input.end());
      break;
    case Kind::ReduceScatterSum:
    case Kind::ReduceScatterMax:
      expected[i] = serialReduce(
          c.dtype,
          c.kind == Kind::ReduceScatterSum ? ReduceOp::Sum : ReduceOp::Max,
          c.inputs, i * (count / n), count / n);
      break;
    case Kind::AllToAll: {
      size_t chunkBytes = count / n * elementBytes;
      for (int64_t j = 0; j < n; ++j) {
        Bytes chunk = slice(c.inputs[j], i * chunkBytes, chunkBytes);
        expected[i].insert(expected[i].end(), chunk.begin(), chunk.end());
      }
      break;
    }
    }
  }
  return expected;
}

/// Bitwise equality with the serial reference (see the file comment).
void expectMatchesSerial(const Case &c) {
  std::vector<Bytes> expected = expectedOutputs(c);
  size_t elementBytes = dtypeSize(c.dtype);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(c.outputs[i].size(), expected[i].size());
    for (size_t b = 0; b < expected[i].size(); ++b)
      if (c.outputs[i][b] != expected[i][b]) {
        ADD_FAILURE() << kindName(c.kind) << " " << dtypeName(c.dtype)
                      << " on group " << c.group.toString() << ": rank "
                      << c.group.ranks()[i] << " differs at element "
                      << b / elementBytes;
        return;
      }
  }
}

//===----------------------------------------------------------------------===//
// Every collective for every group size 1..8 and every dtype
//===----------------------------------------------------------------------===//

class CollectiveSweep : public ::testing::TestWithParam<std::tuple<int, Kind>> {
};

TEST_P(CollectiveSweep, MatchesTheSerialResultBitwise) {
  auto [n, kind] = GetParam();
  CpuWorld world(n);
  std::vector<Case> cases;
  uint32_t seed = 1000 * n + static_cast<uint32_t>(kind) * 10;
  for (DType dtype : kDTypes) {
    // 3 x 700 elements per chunk: bf16/f16 cross the 1024-element
    // accumulation block, and all-reduce slices do not divide evenly.
    cases.push_back(makeCase(kind, dtype, firstRanks(n), 3, 700, seed++));
    cases.push_back(
        makeCase(kind, dtype, firstRanks(n), 2, 3, seed++, Placement::InPlace));
  }
  Status status = runOnDevices(n, [&](int rank) {
    for (Case &c : cases)
      if (Status s = runMember(world, c, rank); !s)
        return s;
    return Status::ok();
  });
  ASSERT_TRUE(status.isOk()) << status.toString();
  for (const Case &c : cases)
    expectMatchesSerial(c);
}

INSTANTIATE_TEST_SUITE_P(
    GroupSizes, CollectiveSweep,
    ::testing::Combine(::testing::Range(1, 9),
                       ::testing::Values(Kind::AllReduceSum, Kind::AllReduceMax,
                                         Kind::AllGather,
                                         Kind::ReduceScatterSum,
                                         Kind::ReduceScatterMax,
                                         Kind::AllToAll)),
    [](const auto &info) {
      return std::string(kindName(std::get<1>(info.param))) + "_" +
             std::to_string(std::get<0>(info.param));
    });

//===----------------------------------------------------------------------===//
// Groups along mesh axes, and uneven explicit groups
//===----------------------------------------------------------------------===//

/// Every rank runs `kinds` in turn, each on its own group along `axes`;
/// all groups of an axis run at once.
void runAlongMeshAxes(const MeshShape &mesh,
                      const std::vector<std::vector<std::string>> &axes,
                      DType dtype) {
  CpuWorld world(mesh.numDevices());
  const Kind kinds[] = {Kind::AllReduceSum, Kind::AllGather,
                        Kind::ReduceScatterSum, Kind::AllToAll};
  // cases[step][group], step = axis x kind.
  std::vector<std::vector<Case>> cases;
  uint32_t seed = 77;
  for (const std::vector<std::string> &axis : axes) {
    std::vector<DeviceGroup> groups;
    ASSERT_TRUE(mesh.groupsAlong(axis, groups).isOk());
    for (Kind kind : kinds) {
      cases.emplace_back();
      for (const DeviceGroup &group : groups)
        cases.back().push_back(makeCase(kind, dtype, group, 2, 5, seed++));
    }
  }
  Status status = runOnDevices(mesh.numDevices(), [&](int rank) {
    for (std::vector<Case> &step : cases)
      for (Case &c : step)
        if (c.group.contains(rank))
          if (Status s = runMember(world, c, rank); !s)
            return s;
    return Status::ok();
  });
  ASSERT_TRUE(status.isOk()) << status.toString();
  for (const std::vector<Case> &step : cases)
    for (const Case &c : step)
      expectMatchesSerial(c);
}

TEST(Collectives, GroupsAlongTheAxesOfA2x4Mesh) {
  MeshShape mesh;
  ASSERT_TRUE(MeshShape::create({{"dp", 2}, {"tp", 4}}, mesh).isOk());
  runAlongMeshAxes(mesh, {{"tp"}, {"dp"}, {"dp", "tp"}, {"tp", "dp"}},
                   DType::F32);
}

TEST(Collectives, GroupsAlongTheAxesOfA2x2x2Mesh) {
  MeshShape mesh;
  ASSERT_TRUE(MeshShape::create({{"x", 2}, {"y", 2}, {"z", 2}}, mesh).isOk());
  runAlongMeshAxes(mesh, {{"x"}, {"y"}, {"z"}, {"x", "z"}}, DType::BF16);
}

// Three uneven groups of a world of 8 run together while ranks 4 and 6 idle;
// {7, 1} puts rank 7 first, so its chunk comes first.
TEST(Collectives, UnevenGroupsRunSideBySide) {
  CpuWorld world(8);
  std::vector<DeviceGroup> groups = {groupOf({0, 2, 5}), groupOf({3}),
                                     groupOf({7, 1})};
  std::vector<Case> cases;
  uint32_t seed = 5;
  for (Kind kind : {Kind::AllReduceSum, Kind::AllReduceMax, Kind::AllGather,
                    Kind::ReduceScatterSum, Kind::AllToAll})
    for (DType dtype : {DType::F32, DType::I64, DType::F16})
      for (const DeviceGroup &group : groups)
        cases.push_back(makeCase(kind, dtype, group, 2, 3, seed++));
  Status status = runOnDevices(8, [&](int rank) {
    for (Case &c : cases)
      if (c.group.contains(rank))
        if (Status s = runMember(world, c, rank); !s)
          return s;
    return Status::ok();
  });
  ASSERT_TRUE(status.isOk()) << status.toString();
  for (const Case &c : cases)
    expectMatchesSerial(c);

  // Spelled out once: all-gather on {7, 1} is rank 7's input, then rank 1's.
  const Case &gather = cases[2 * 9 + 0 * 3 + 2];
  ASSERT_EQ(gather.kind, Kind::AllGather);
  ASSERT_EQ(gather.group.ranks(), (std::vector<int>{7, 1}));
  Bytes sevenThenOne = gather.inputs[0];
  sevenThenOne.insert(sevenThenOne.end(), gather.inputs[1].begin(),
                      gather.inputs[1].end());
  EXPECT_EQ(gather.outputs[1], sevenThenOne);
}

//===----------------------------------------------------------------------===//
// Numerics
//===----------------------------------------------------------------------===//

// 1 + 3 * 2^-9 in bf16 (8 significant bits, ulp 2^-7 at 1): rounding once
// gives 1 + 2^-7, while rounding after every add would stay at 1.
TEST(Collectives, Bf16AndF16AllReduceRoundOnce) {
  struct Expectation {
    DType dtype;
    float small, expected;
    uint16_t (*store)(float);
    float (*load)(uint16_t);
  };
  for (Expectation e : {Expectation{DType::BF16, 0x1p-9f, 1.0f + 0x1p-7f,
                                    floatToBf16, bf16ToFloat},
                        Expectation{DType::F16, 0x1p-12f, 1.0f + 0x1p-10f,
                                    floatToF16, f16ToFloat}}) {
    CpuWorld world(4);
    std::vector<uint16_t> values = {e.store(1.0f), e.store(e.small),
                                    e.store(e.small), e.store(e.small)};
    std::vector<uint16_t> results(4, 0);
    Status status = runOnDevices(4, [&](int rank) {
      return world.allReduce(rank, firstRanks(4), ReduceOp::Sum,
                             {&values[rank], e.dtype, {1}},
                             {&results[rank], e.dtype, {1}});
    });
    ASSERT_TRUE(status.isOk()) << status.toString();
    // Rounding after each add would give exactly 1.
    EXPECT_EQ(e.load(e.store(e.load(e.store(1.0f + e.small)) + e.small)), 1.0f);
    for (uint16_t result : results)
      EXPECT_EQ(e.load(result), e.expected) << dtypeName(e.dtype);
  }
}

// f32 sums depend on the order of the adds; every run must give the same bits.
TEST(Collectives, F32AllReduceIsReproducibleRunToRun) {
  Bytes first;
  for (int run = 0; run < 5; ++run) {
    CpuWorld world(7);
    Case c = makeCase(Kind::AllReduceSum, DType::F32, firstRanks(7), 64, 64,
                      /*seed=*/42);
    Status status =
        runOnDevices(7, [&](int rank) { return runMember(world, c, rank); });
    ASSERT_TRUE(status.isOk()) << status.toString();
    if (run == 0)
      first = c.outputs[3];
    EXPECT_EQ(c.outputs[3], first);
    EXPECT_EQ(c.outputs[6], first);
  }
}

//===----------------------------------------------------------------------===//
// Errors: every member fails, nobody hangs
//===----------------------------------------------------------------------===//

bool contains(const Status &status, const std::string &text) {
  return status.message().find(text) != std::string::npos;
}

TEST(CollectiveErrors, ACountMismatchFailsEveryMember) {
  CpuWorld world(3);
  std::vector<std::vector<float>> data(3, std::vector<float>(16, 1.5f));
  auto statuses = statusesOf(3, [&](int rank) {
    int64_t count = rank == 2 ? 12 : 16;
    TensorRef ref{data[rank].data(), DType::F32, {count}};
    return world.allReduce(rank, firstRanks(3), ReduceOp::Sum, ref, ref);
  });
  for (const Status &status : statuses) {
    EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
    EXPECT_EQ(status.message(),
              "all_reduce on group [0, 1, 2]: rank 2 passed 12 elements of "
              "f32 but rank 0 passed 16 elements of f32");
  }
  // Nothing was read or written, so the group goes on.
  auto retry = statusesOf(3, [&](int rank) {
    TensorRef ref{data[rank].data(), DType::F32, {16}};
    return world.allReduce(rank, firstRanks(3), ReduceOp::Sum, ref, ref);
  });
  for (const Status &status : retry)
    EXPECT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(data[1][5], 4.5f);
}

TEST(CollectiveErrors, DTypeOpAndCollectiveMismatchesFailEveryMember) {
  CpuWorld world(2);
  std::vector<double> in(8, 1.0), out(16, 0.0);
  auto dtypes = statusesOf(2, [&](int rank) {
    DType dtype = rank == 1 ? DType::I64 : DType::F64;
    return world.allGather(rank, firstRanks(2), {in.data(), dtype, {8}},
                           {out.data(), dtype, {16}});
  });
  for (const Status &status : dtypes)
    EXPECT_EQ(status.message(),
              "all_gather on group [0, 1]: rank 1 passed 8 elements of i64 "
              "but rank 0 passed 8 elements of f64");
  std::vector<std::vector<double>> outs(2, std::vector<double>(8));
  auto ops = statusesOf(2, [&](int rank) {
    return world.allReduce(
        rank, firstRanks(2), rank == 0 ? ReduceOp::Sum : ReduceOp::Max,
        {in.data(), DType::F64, {8}}, {outs[rank].data(), DType::F64, {8}});
  });
  for (const Status &status : ops)
    EXPECT_EQ(status.message(), "all_reduce on group [0, 1]: rank 1 reduces "
                                "with max but rank 0 with sum");
  auto kinds = statusesOf(2, [&](int rank) {
    if (rank == 0)
      return world.allReduce(rank, firstRanks(2), ReduceOp::Sum,
                             {in.data(), DType::F64, {8}},
                             {outs[0].data(), DType::F64, {8}});
    return world.allToAll(rank, firstRanks(2), {in.data(), DType::F64, {8}},
                          {outs[1].data(), DType::F64, {8}});
  });
  for (const Status &status : kinds) {
    EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
    EXPECT_TRUE(contains(status, "all_reduce on group [0, 1]: rank 1 called "
                                 "all_to_all but rank 0 called all_reduce"))
        << status.message();
  }
}

// Leading size-1 dimensions hold no data: the partitioner gathers a [1, 4]
// ZeRO shard along its second dimension into [1, 8] (a layer's router
// statistics under dp x ep with ZeRO), which is the [4] -> [8] gather.
TEST(Collectives, LeadingSizeOneDimensionsAreSkipped) {
  CpuWorld world(2);
  std::vector<std::vector<float>> in = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  std::vector<std::vector<float>> out(2, std::vector<float>(8, -1.0f));
  auto statuses = statusesOf(2, [&](int rank) {
    return world.allGather(rank, firstRanks(2),
                           {in[rank].data(), DType::F32, {1, 4}},
                           {out[rank].data(), DType::F32, {1, 8}});
  });
  for (const Status &status : statuses)
    EXPECT_TRUE(status.isOk()) << status.message();
  for (const std::vector<float> &o : out)
    EXPECT_EQ(o, (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Other shapes of the same size are still wrong.
  auto misshapen = statusesOf(2, [&](int rank) {
    return world.allGather(rank, firstRanks(2),
                           {in[rank].data(), DType::F32, {1, 4}},
                           {out[rank].data(), DType::F32, {4, 2}});
  });
  for (const Status &status : misshapen)
    EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
}

// One member's bad shape fails every member at once, not after the timeout.
TEST(CollectiveErrors, IndivisibleAndMisshapenBuffersFailEveryMember) {
  CpuWorld world(3, CpuWorldOptions{std::chrono::milliseconds(20000)});
  std::vector<std::vector<float>> in(3, std::vector<float>(21, 1.0f));
  std::vector<std::vector<float>> out(3, std::vector<float>(21, 0.0f));
  auto start = std::chrono::steady_clock::now();
  auto indivisible = statusesOf(3, [&](int rank) {
    return world.reduceScatter(rank, firstRanks(3), ReduceOp::Sum,
                               {in[rank].data(), DType::F32, {7, 3}},
                               {out[rank].data(), DType::F32, {2, 3}});
  });
  for (const Status &status : indivisible) {
    EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
    EXPECT_TRUE(contains(status, "reduce_scatter on group [0, 1, 2]: rank 0: "
                                 "the leading dimension 7 of input [7, 3] is "
                                 "not divisible by the group size 3"))
        << status.message();
  }
  auto misshapen = statusesOf(3, [&](int rank) {
    Shape outShape = rank == 1 ? Shape{3, 7} : Shape{21};
    return world.allToAll(rank, firstRanks(3),
                          {in[rank].data(), DType::F32, {21}},
                          {out[rank].data(), DType::F32, outShape});
  });
  for (const Status &status : misshapen) {
    EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
    EXPECT_EQ(status.message(), "all_to_all on group [0, 1, 2]: rank 1: "
                                "expected an output of shape [21] for input "
                                "[21], got [3, 7]");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(CollectiveErrors, ARankOutsideTheGroupOrWorldIsRejected) {
  CpuWorld world(4);
  float value = 1.0f;
  TensorRef ref{&value, DType::F32, {1}};
  Status outsider =
      world.allReduce(3, groupOf({0, 1}), ReduceOp::Sum, ref, ref);
  EXPECT_EQ(outsider.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(outsider.message(),
            "all_reduce on group [0, 1]: rank 3 is not a member of the group");
  Status beyond = world.allGather(0, groupOf({0, 9}), ref, ref);
  EXPECT_EQ(beyond.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(beyond.message(), "all_gather on group [0, 9]: rank 9 is outside "
                              "the world of 4 devices");
  EXPECT_EQ(world.allReduce(0, DeviceGroup(), ReduceOp::Sum, ref, ref).code(),
            StatusCode::InvalidArgument);
  EXPECT_EQ(world.send(0, 0, 1, ref).code(), StatusCode::InvalidArgument);
}

TEST(CollectiveErrors, AMemberThatNeverArrivesTimesOutTheOthers) {
  // Long enough that two ranks that do call always meet, even on a loaded
  // machine (the last check below needs them to).
  CpuWorld world(3, CpuWorldOptions{std::chrono::milliseconds(1000)});
  std::vector<float> data(3, 2.0f);
  auto start = std::chrono::steady_clock::now();
  auto statuses = statusesOf(3, [&](int rank) {
    if (rank == 2)
      return Status::ok(); // never calls
    return world.allReduce(rank, firstRanks(3), ReduceOp::Sum,
                           {&data[rank], DType::F32, {1}},
                           {&data[rank], DType::F32, {1}});
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  for (int rank : {0, 1}) {
    EXPECT_EQ(statuses[rank].code(), StatusCode::Unavailable);
    EXPECT_EQ(statuses[rank].message(),
              "all_reduce on group [0, 1, 2] did not complete within 1 s: "
              "ranks [2] never arrived");
  }
  // The members no longer agree on which call is next: the group is closed.
  Status late =
      world.allReduce(2, firstRanks(3), ReduceOp::Sum,
                      {&data[2], DType::F32, {1}}, {&data[2], DType::F32, {1}});
  EXPECT_EQ(late.code(), StatusCode::Unavailable);
  EXPECT_TRUE(contains(late, "unusable after an earlier failure"))
      << late.message();
  // Other groups are unaffected.
  auto others = statusesOf(2, [&](int rank) {
    return world.allReduce(rank, firstRanks(2), ReduceOp::Sum,
                           {&data[rank], DType::F32, {1}},
                           {&data[rank], DType::F32, {1}});
  });
  EXPECT_TRUE(others[0].isOk() && others[1].isOk());
}

} // namespace
