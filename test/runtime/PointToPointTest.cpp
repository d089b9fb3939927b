// Tests of the CPU devices' point-to-point messages (send/recv: matching
// by source and tag, mismatches and timeouts as errors on both sides) and of
// runOnDevices (runtime/cpu/Collectives.h). The collectives themselves are
// tested in CollectivesTest.cpp.
#include "CollectivesTestSupport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

namespace {

using namespace llmc::rt;
using namespace llmc::rt::collectivestest;
using namespace std::chrono_literals;

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

TEST(SendRecv, PingPong) {
  CpuWorld world(2);
  constexpr int kRounds = 100;
  std::vector<int64_t> ball(32);
  for (size_t i = 0; i < ball.size(); ++i)
    ball[i] = 1000 + static_cast<int64_t>(i);
  std::vector<int64_t> original = ball;
  Status status = runOnDevices(2, [&](int rank) {
    std::vector<int64_t> mine = rank == 0 ? ball : std::vector<int64_t>(32);
    TensorRef ref{mine.data(), DType::I64, {32}};
    for (int round = 0; round < kRounds; ++round) {
      if (rank == 0) {
        if (Status s = world.send(0, 1, /*tag=*/round, ref); !s)
          return s;
        if (Status s = world.recv(0, 1, round, ref); !s)
          return s;
      } else {
        if (Status s = world.recv(1, 0, round, ref); !s)
          return s;
        for (int64_t &value : mine)
          value += 1;
        if (Status s = world.send(1, 0, round, ref); !s)
          return s;
      }
    }
    if (rank == 0)
      ball = mine;
    return Status::ok();
  });
  ASSERT_TRUE(status.isOk()) << status.toString();
  for (size_t i = 0; i < ball.size(); ++i)
    EXPECT_EQ(ball[i], original[i] + kRounds);
}

TEST(SendRecv, MessagesMatchBySourceAndTag) {
  CpuWorld world(3);
  float fromZero = 1.5f, fromOne = -2.5f, tagged = 7.0f;
  float got[3] = {0, 0, 0};
  Status status = runOnDevices(3, [&](int rank) {
    if (rank == 0)
      return world.send(0, 2, 4, {&fromZero, DType::F32, {1}});
    if (rank == 1) {
      if (Status s = world.send(1, 2, 9, {&tagged, DType::F32, {1}}); !s)
        return s;
      return world.send(1, 2, 4, {&fromOne, DType::F32, {1}});
    }
    // Receive in another order than anyone sent.
    if (Status s = world.recv(2, 1, 9, {&got[0], DType::F32, {1}}); !s)
      return s;
    if (Status s = world.recv(2, 1, 4, {&got[1], DType::F32, {1}}); !s)
      return s;
    return world.recv(2, 0, 4, {&got[2], DType::F32, {1}});
  });
  ASSERT_TRUE(status.isOk()) << status.toString();
  EXPECT_EQ(got[0], tagged);
  EXPECT_EQ(got[1], fromOne);
  EXPECT_EQ(got[2], fromZero);
}

TEST(SendRecv, MismatchAndTimeoutAreErrorsOnBothSides) {
  CpuWorld world(2);
  std::vector<float> buffer(8, 1.0f);
  auto mismatch = statusesOf(2, [&](int rank) {
    if (rank == 0)
      return world.send(0, 1, 3, {buffer.data(), DType::F32, {8}});
    return world.recv(1, 0, 3, {buffer.data(), DType::F32, {4}});
  });
  for (const Status &status : mismatch)
    EXPECT_EQ(status.message(), "send/recv from rank 0 to rank 1 with tag 3: "
                                "rank 0 sent 8 elements of f32 but rank 1 "
                                "expects 4 elements of f32");
  CpuWorld impatient(2, CpuWorldOptions{std::chrono::milliseconds(100)});
  Status send = impatient.send(0, 1, 5, {buffer.data(), DType::F32, {8}});
  EXPECT_EQ(send.code(), StatusCode::Unavailable);
  EXPECT_EQ(send.message(), "send from rank 0 to rank 1 with tag 5 did not "
                            "complete within 0.1 s: rank 1 never posted the "
                            "matching recv");
  // The timed-out send was withdrawn: a later recv does not see it.
  Status recv = impatient.recv(1, 0, 5, {buffer.data(), DType::F32, {8}});
  EXPECT_EQ(recv.code(), StatusCode::Unavailable);
  EXPECT_EQ(recv.message(), "recv on rank 1 from rank 0 with tag 5 did not "
                            "complete within 0.1 s: rank 0 never sent a "
                            "matching message");
}

//===----------------------------------------------------------------------===//
// runOnDevices
//===----------------------------------------------------------------------===//

TEST(RunOnDevices, RunsEveryRankOnItsOwnThread) {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::vector<int> seen(6, 0);
  Status status = runOnDevices(6, [&](int rank) {
    std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
    ++seen[rank];
    return Status::ok();
  });
  EXPECT_TRUE(status.isOk());
  EXPECT_EQ(threads.size(), 6u);
  EXPECT_EQ(seen, std::vector<int>(6, 1));
}

TEST(RunOnDevices, ReturnsTheFirstFailureWithItsRank) {
  Status status = runOnDevices(4, [&](int rank) {
    if (rank == 3)
      return Status::error(StatusCode::NotFound, "no shard 3");
    return Status::ok();
  });
  EXPECT_EQ(status.code(), StatusCode::NotFound);
  EXPECT_EQ(status.message(), "device 3: no shard 3");
  EXPECT_EQ(runOnDevices(0, [](int) { return Status::ok(); }).code(),
            StatusCode::InvalidArgument);
}

} // namespace
