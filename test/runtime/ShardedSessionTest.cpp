// Tests of sessions of sharded programs: a hand-built program on a
// {dp=2, tp=2} mesh whose arguments and outputs are split over the ranks.
// The caller binds and reads GLOBAL tensors; the ranks' blocks and the
// collectives' results are checked against values computed here.
#include "runtime/Session.h"
#include "runtime/Sharding.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Init.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <unistd.h>

namespace {

using namespace llmc::rt;

constexpr int64_t kRows = 2, kCols = 12; // w: f32[2, 12]
constexpr int64_t kXRows = 4, kXCols = 3; // x: f32[4, 3]

Command collective(CollectiveKind kind, std::vector<int64_t> group,
                   int32_t input, int32_t output, const char *origin) {
  Command command;
  command.kind = CommandKind::Collective;
  command.attrs.ints = {static_cast<int64_t>(kind), 0, 0, 0,
                        static_cast<int64_t>(group.size())};
  command.attrs.ints.insert(command.attrs.ints.end(), group.begin(),
                            group.end());
  command.inputs = {input};
  command.outputs = {output};
  command.origin = origin;
  return command;
}

/// Rank (dp, tp) of {dp=2, tp=2}:
///   w [[], [tp x3]], local [2, 6]; x [[dp], []], local [2, 3]
///   g = all-gather of w over tp     (replicated f32[4, 6])
///   s = all-reduce-sum of w over dp (sharded like w: 2 * w)
///   r = reduce-scatter of x over tp ([[dp, tp], []], local [1, 3]: 2 * x)
Executable shardedProgram() {
  Executable exe;
  exe.source = "sharded";
  exe.mesh = {{"dp", 2}, {"tp", 2}};
  exe.arguments = {{"w", ArgumentRole::Parameter, 0, {}},
                   {"x", ArgumentRole::Input, 1, {}}};
  exe.arguments[0].sharding.dims = {{}, {{1}, 3}};
  exe.arguments[1].sharding.dims = {{{0}, 1}, {}};
  exe.outputs = {{"g", 2}, {"s", 3}, {"r", 4}};
  exe.outputs[1].sharding = exe.arguments[0].sharding;
  exe.outputs[2].sharding.dims = {{{0, 1}, 1}, {}};
  for (int64_t rank = 0; rank < 4; ++rank) {
    int64_t dp = rank / 2, tp = rank % 2;
    RankProgram &program = exe.ranks.emplace_back();
    program.values = {{DType::F32, {2, 6}, 0},
                      {DType::F32, {2, 3}, 64},
                      {DType::F32, {4, 6}, 128},
                      {DType::F32, {2, 6}, 256},
                      {DType::F32, {1, 3}, 320}};
    program.arenaBytes = 384;
    program.commands = {
        collective(CollectiveKind::AllGather, {2 * dp, 2 * dp + 1}, 0, 2,
                   "gather"),
        collective(CollectiveKind::AllReduce, {tp, tp + 2}, 0, 3, "sum"),
        collective(CollectiveKind::ReduceScatter, {2 * dp, 2 * dp + 1}, 1, 4,
                   "scatter")};
  }
  return exe;
}

std::vector<float> randomValues(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> values(static_cast<size_t>(n));
  for (float &v : values)
    v = dist(rng);
  return values;
}

/// w's block on tp position `p`, by the documented formula: S = 12,
/// 3 groups of 4, chunks of 2.
float wBlock(const std::vector<float> &w, int64_t p, int64_t i, int64_t j) {
  return w[i * kCols + (j / 2) * 4 + p * 2 + j % 2];
}

class ShardedSession : public ::testing::Test {
protected:
  void SetUp() override {
    exe = shardedProgram();
    Status status = Session::create(exe, SessionOptions(), session);
    ASSERT_TRUE(status) << status.message();
    w = randomValues(kRows * kCols, 1);
    x = randomValues(kXRows * kXCols, 2);
    ASSERT_TRUE(session->setArgument("w", DType::F32, {kRows, kCols},
                                     w.data(), w.size() * 4));
    ASSERT_TRUE(session->setArgument("x", DType::F32, {kXRows, kXCols},
                                     x.data(), x.size() * 4));
  }

  std::vector<float> toHost(bool output, size_t index, Shape &shape) {
    HostTensor host;
    Status status = output ? session->outputToHost(index, host)
                           : session->argumentToHost(index, host);
    EXPECT_TRUE(status) << status.message();
    shape = host.view.shape;
    const float *data = static_cast<const float *>(host.view.data);
    return std::vector<float>(data, data + host.view.numElements());
  }

  Executable exe;
  std::unique_ptr<Session> session;
  std::vector<float> w, x;
};

TEST_F(ShardedSession, EachRankHoldsItsBlock) {
  for (int rank = 0; rank < 4; ++rank) {
    int64_t dp = rank / 2, tp = rank % 2;
    TensorRef local;
    ASSERT_TRUE(session->argument(0, local, rank));
    ASSERT_EQ(local.shape, (Shape{2, 6}));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 6; ++j)
        EXPECT_EQ(static_cast<const float *>(local.data)[i * 6 + j],
                  wBlock(w, tp, i, j))
            << "rank " << rank << " w[" << i << ", " << j << "]";
    ASSERT_TRUE(session->argument(1, local, rank));
    for (int64_t k = 0; k < 2 * kXCols; ++k)
      EXPECT_EQ(static_cast<const float *>(local.data)[k],
                x[dp * 2 * kXCols + k])
          << "rank " << rank << " x element " << k;
  }
}

TEST_F(ShardedSession, OutputsAreAssembledGlobally) {
  Status status = session->run();
  ASSERT_TRUE(status) << status.message();
  Shape shape;

  // g: replicated, tp 0's block of w over tp 1's.
  std::vector<float> g = toHost(true, 0, shape);
  ASSERT_EQ(shape, (Shape{4, 6}));
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 6; ++j)
        EXPECT_EQ(g[(p * 2 + i) * 6 + j], wBlock(w, p, i, j));

  // s = w + w over dp, in w's own sharding: the global tensor is 2 * w.
  std::vector<float> s = toHost(true, 1, shape);
  ASSERT_EQ(shape, (Shape{kRows, kCols}));
  for (size_t k = 0; k < w.size(); ++k)
    EXPECT_EQ(s[k], w[k] + w[k]) << "element " << k;

  // r: row 2 * dp + tp of x + x, each rank one row.
  std::vector<float> r = toHost(true, 2, shape);
  ASSERT_EQ(shape, (Shape{kXRows, kXCols}));
  for (size_t k = 0; k < x.size(); ++k)
    EXPECT_EQ(r[k], x[k] + x[k]) << "element " << k;
}

TEST_F(ShardedSession, BoundArgumentsReadBackGlobally) {
  Shape shape;
  EXPECT_EQ(toHost(false, 0, shape), w);
  EXPECT_EQ(shape, (Shape{kRows, kCols}));
  EXPECT_EQ(toHost(false, 1, shape), x);
  EXPECT_EQ(shape, (Shape{kXRows, kXCols}));
}

TEST_F(ShardedSession, BindingTakesTheGlobalShape) {
  std::vector<float> local(12);
  Status status = session->setArgument("w", DType::F32, {2, 6},
                                       local.data(), local.size() * 4);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(), "argument 'w' is f32[2, 12], got f32[2, 6]");
}

TEST_F(ShardedSession, FeedbackNeedsTheSameSharding) {
  ASSERT_TRUE(session->run());
  // s is sharded like w: rank by rank, w becomes 2 * w.
  Status status = session->setArgumentFromOutput("w", 1);
  ASSERT_TRUE(status) << status.message();
  Shape shape;
  std::vector<float> doubled = toHost(false, 0, shape);
  for (size_t k = 0; k < w.size(); ++k)
    EXPECT_EQ(doubled[k], w[k] + w[k]);
  // r holds one row per rank, x two rows per dp rank.
  status = session->setArgumentFromOutput("x", 2);
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  EXPECT_EQ(status.message(),
            "output 'r' is sharded [[dp, tp], []], argument 'x' [[dp], []]; "
            "feeding it back needs the same sharding");
}

/// The one-device program with shardedProgram()'s arguments: w f32[2, 12]
/// and x f32[4, 3], whole.
Executable singleDeviceProgram() {
  Executable exe;
  exe.source = "single";
  exe.arguments = {{"w", ArgumentRole::Parameter, 0, {}},
                   {"x", ArgumentRole::Input, 1, {}}};
  RankProgram &program = exe.ranks.emplace_back();
  program.values = {{DType::F32, {kRows, kCols}, 0},
                    {DType::F32, {kXRows, kXCols}, 128}};
  program.arenaBytes = 192;
  return exe;
}

TEST(ShardedTraining, InitialValuesAreTheSingleDeviceOnes) {
  Executable sharded = shardedProgram(), single = singleDeviceProgram();
  sharded.arguments[0].init = single.arguments[0].init = {
      InitSpec::Kind::Normal, 0.02};
  std::vector<uint8_t> fromSharded, fromSingle;
  ASSERT_TRUE(initialArgumentBytes(sharded, 0, 42, fromSharded));
  ASSERT_TRUE(initialArgumentBytes(single, 0, 42, fromSingle));
  ASSERT_EQ(fromSharded.size(), size_t(kRows * kCols * 4));
  EXPECT_EQ(fromSharded, fromSingle);

  // Bound, each rank holds its block of the single-device tensor.
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(sharded, SessionOptions(), session));
  ASSERT_TRUE(session->setArgument("w", DType::F32, {kRows, kCols},
                                   fromSingle.data(), fromSingle.size()));
  std::vector<float> w(kRows * kCols);
  std::memcpy(w.data(), fromSingle.data(), fromSingle.size());
  for (int rank = 0; rank < 4; ++rank) {
    TensorRef local;
    ASSERT_TRUE(session->argument(0, local, rank));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 6; ++j)
        EXPECT_EQ(static_cast<const float *>(local.data)[i * 6 + j],
                  wBlock(w, rank % 2, i, j));
  }
}

TEST(ShardedTraining, CheckpointsHoldGlobalTensorsAndResumeAnywhere) {
  std::string root = std::filesystem::temp_directory_path() /
                     ("llmc-sharded-ckpt-" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  Executable sharded = shardedProgram(), single = singleDeviceProgram();
  std::vector<float> w = randomValues(kRows * kCols, 3);
  std::unique_ptr<Session> from;
  ASSERT_TRUE(Session::create(sharded, SessionOptions(), from));
  ASSERT_TRUE(
      from->setArgument("w", DType::F32, {kRows, kCols}, w.data(), w.size() * 4));
  CheckpointState state;
  state.step = 3;
  std::string path;
  Status status = saveCheckpoint(root, *from, state, CheckpointOptions(), path);
  ASSERT_TRUE(status) << status.message();

  // Resumed on one device, and on the mesh again: the same global w.
  for (const Executable *exe : {&single, &sharded}) {
    std::unique_ptr<Session> to;
    ASSERT_TRUE(Session::create(*exe, SessionOptions(), to));
    CheckpointState loaded;
    status = loadCheckpoint(path, *to, loaded);
    ASSERT_TRUE(status) << status.message();
    EXPECT_EQ(loaded.step, 3);
    HostTensor host;
    ASSERT_TRUE(to->argumentToHost(0, host));
    ASSERT_EQ(host.view.shape, (Shape{kRows, kCols}));
    const float *data = static_cast<const float *>(host.view.data);
    EXPECT_EQ(std::vector<float>(data, data + w.size()), w) << exe->source;
  }
  std::filesystem::remove_all(root);
}

TEST(ShardedSessionFormat, SurvivesTheFileFormat) {
  Executable exe = shardedProgram();
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  Executable back;
  Status status = parseExecutable(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(status) << status.message();
  Shape shape;
  ASSERT_TRUE(argumentGlobalShape(back, 0, shape));
  EXPECT_EQ(shape, (Shape{kRows, kCols}));
  ASSERT_TRUE(outputGlobalShape(back, 2, shape));
  EXPECT_EQ(shape, (Shape{kXRows, kXCols}));
}

} // namespace
