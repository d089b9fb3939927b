//===- CollectiveRendezvousTest.cpp - virtual ranks' host rendezvous ------===//
//
// runtime/dist/CollectiveRendezvous.h, the host side of virtual ranks on one
// GPU, with no GPU: the action runs once per collective with every post in
// group order, independent groups meet at the same time, send/recv pair by
// (source, destination, tag) in FIFO order, and every mistake is an error
// (disagreeing posts on every member, counts that do not fit, a timeout
// naming the missing ranks, abort() waking the waiters) instead of a hang.
// The actions here do host copies and sums with the CPU collectives' own
// reduction (reduceElements), so a rendezvous that delivered posts out of
// order would give wrong numbers.
//
//===----------------------------------------------------------------------===//
#include "runtime/dist/CollectiveRendezvous.h"
#include "runtime/cpu/CollectiveSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace llmc::rt;
using namespace std::chrono_literals;

DeviceGroup groupOf(std::vector<int> ranks) {
  DeviceGroup group;
  EXPECT_TRUE(DeviceGroup::create(std::move(ranks), group).isOk());
  return group;
}

CollectivePost post(CollectiveKind kind, const void *in, int64_t inCount,
                    void *out, int64_t outCount,
                    DType dtype = DType::F32) {
  CollectivePost p;
  p.kind = kind;
  p.dtype = dtype;
  p.input = in;
  p.inputCount = inCount;
  p.output = out;
  p.outputCount = outCount;
  return p;
}

/// An all-reduce (sum) action on host memory: group order, as the CPU.
Status sumAction(const std::vector<CollectivePost> &members) {
  std::vector<const uint8_t *> inputs;
  for (const CollectivePost &m : members)
    inputs.push_back(static_cast<const uint8_t *>(m.input));
  std::vector<uint8_t> result(members[0].inputCount * 4);
  reduceElements(members[0].dtype, ReduceOp::Sum, inputs, 0,
                 members[0].inputCount, result.data());
  for (const CollectivePost &m : members)
    std::memcpy(m.output, result.data(), result.size());
  return Status::ok();
}

TEST(CollectiveRendezvous, TheActionRunsOnceWithThePostsInGroupOrder) {
  // The group [2, 0, 1] in that order: member i is ranks()[i].
  CollectiveRendezvous hub(3, 10s);
  DeviceGroup group = groupOf({2, 0, 1});
  std::atomic<int> actions{0};
  std::vector<int> order;
  std::vector<std::vector<float>> in = {{1, 2}, {10, 20}, {100, 200}};
  std::vector<std::vector<float>> out(3, std::vector<float>(2, -1));
  std::vector<Status> results(3);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 3; ++rank)
    threads.emplace_back([&, rank] {
      // Arrive in the order 1, 2, 0 so that the last is not rank 2.
      std::this_thread::sleep_for(std::chrono::milliseconds(
          rank == 1 ? 0 : rank == 2 ? 30 : 60));
      CollectivePost p = post(CollectiveKind::AllReduce, in[rank].data(), 2,
                              out[rank].data(), 2);
      p.context = reinterpret_cast<void *>(static_cast<intptr_t>(rank + 1));
      results[rank] = hub.meet(rank, group, p,
                               [&](const std::vector<CollectivePost> &m) {
                                 ++actions;
                                 for (const CollectivePost &x : m)
                                   order.push_back(static_cast<int>(
                                       reinterpret_cast<intptr_t>(x.context) -
                                       1));
                                 return sumAction(m);
                               });
    });
  for (std::thread &t : threads)
    t.join();
  for (const Status &s : results)
    ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_EQ(actions.load(), 1);
  EXPECT_EQ(order, (std::vector<int>{2, 0, 1}));
  for (const std::vector<float> &o : out)
    EXPECT_EQ(o, (std::vector<float>{111, 222}));
}

TEST(CollectiveRendezvous, IndependentGroupsMeetAtTheSameTime) {
  // {dp=2, tp=2}: tp groups [0,1], [2,3], then dp groups [0,2], [1,3], many
  // times; a rendezvous that mixed up groups or rounds would deadlock (the
  // timeout fails the test) or sum the wrong members.
  CollectiveRendezvous hub(4, 10s);
  std::vector<DeviceGroup> tp = {groupOf({0, 1}), groupOf({2, 3})};
  std::vector<DeviceGroup> dp = {groupOf({0, 2}), groupOf({1, 3})};
  std::vector<Status> results(4);
  std::vector<float> finals(4);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 4; ++rank)
    threads.emplace_back([&, rank] {
      float value = static_cast<float>(rank + 1);
      for (int round = 0; round < 200; ++round) {
        float out = 0;
        for (const DeviceGroup *g : {&tp[rank / 2], &dp[rank % 2]}) {
          Status s = hub.meet(rank, *g,
                              post(CollectiveKind::AllReduce, &value, 1, &out,
                                   1),
                              sumAction);
          if (!s) {
            results[rank] = s;
            return;
          }
          value = out / 2; // stays the mean of everyone: 2.5
        }
      }
      finals[rank] = value;
    });
  for (std::thread &t : threads)
    t.join();
  for (const Status &s : results)
    ASSERT_TRUE(s.isOk()) << s.toString();
  for (float f : finals)
    EXPECT_EQ(f, 2.5f);
}

TEST(CollectiveRendezvous, DisagreeingPostsFailEveryMember) {
  CollectiveRendezvous hub(2, 10s);
  DeviceGroup group = groupOf({0, 1});
  float in[16] = {}, out[16] = {};
  std::vector<Status> results(2);
  bool ran = false;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      int64_t n = rank == 0 ? 16 : 12;
      results[rank] = hub.meet(
          rank, group, post(CollectiveKind::AllReduce, in, n, out, n),
          [&](const std::vector<CollectivePost> &) {
            ran = true;
            return Status::ok();
          });
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_FALSE(ran);
  for (const Status &s : results) {
    ASSERT_FALSE(s.isOk());
    EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
    EXPECT_EQ(s.message(), "all_reduce on group [0, 1]: rank 1 passed 12 "
                           "elements of f32 but rank 0 passed 16 elements "
                           "of f32");
  }
}

TEST(CollectiveRendezvous, OwnCountsAreCheckedPerKind) {
  CollectiveRendezvous hub(2, 1s);
  DeviceGroup group = groupOf({0, 1});
  float buffer[8] = {};
  auto alone = [&](CollectiveKind kind, int64_t in, int64_t out,
                   DType dtype = DType::F32) {
    // Rank 1 posts a correct call so that the round completes.
    Status mine, theirs;
    std::thread other([&] {
      int64_t okIn = kind == CollectiveKind::ReduceScatter ? 4 : 2;
      int64_t okOut = kind == CollectiveKind::AllGather   ? 4
                      : kind == CollectiveKind::ReduceScatter ? 2
                                                              : 2;
      theirs = hub.meet(1, group, post(kind, buffer, okIn, buffer, okOut, dtype),
                        sumAction);
    });
    mine = hub.meet(0, group, post(kind, buffer, in, buffer, out, dtype),
                    sumAction);
    other.join();
    EXPECT_EQ(mine.message(), theirs.message()); // every member fails alike
    return mine.message();
  };
  EXPECT_EQ(alone(CollectiveKind::AllGather, 2, 3),
            "all_gather on group [0, 1]: rank 0: the input has 2 elements and "
            "the output 3; an all_gather over 2 ranks needs 4 output elements");
  EXPECT_EQ(alone(CollectiveKind::ReduceScatter, 4, 4),
            "reduce_scatter on group [0, 1]: rank 0: the input has 4 elements "
            "and the output 4; a reduce_scatter over 2 ranks needs 8 input "
            "elements");
  EXPECT_EQ(alone(CollectiveKind::AllToAll, 3, 3),
            "all_to_all on group [0, 1]: rank 0: the input has 3 elements and "
            "the output 3; an all_to_all over 2 ranks needs them equal and "
            "divisible by 2");
  EXPECT_EQ(alone(CollectiveKind::AllReduce, 2, 2, DType::I1),
            "all_reduce on group [0, 1]: rank 0: cannot reduce i1");
  // Outside the group: the caller alone, at once.
  Status outside = hub.meet(1, groupOf({0}),
                            post(CollectiveKind::AllReduce, buffer, 1, buffer,
                                 1),
                            sumAction);
  EXPECT_EQ(outside.message(),
            "all_reduce on group [0]: rank 1 is not a member of the group");
  Status world = hub.meet(0, groupOf({0, 2}),
                          post(CollectiveKind::AllReduce, buffer, 1, buffer, 1),
                          sumAction);
  EXPECT_EQ(world.message(), "all_reduce on group [0, 2]: rank 2 is outside "
                             "the world of 2 ranks");
}

TEST(CollectiveRendezvous, AMissingRankTimesOutAndBreaksTheGroup) {
  CollectiveRendezvous hub(3, 200ms);
  DeviceGroup group = groupOf({0, 1, 2});
  float x = 1, y = 0;
  std::vector<Status> results(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      float mine = x, out = y;
      results[rank] = hub.meet(
          rank, group, post(CollectiveKind::AllReduce, &mine, 1, &out, 1),
          sumAction);
    });
  for (std::thread &t : threads)
    t.join();
  for (const Status &s : results) {
    EXPECT_EQ(s.code(), StatusCode::Unavailable);
    EXPECT_EQ(s.message(), "all_reduce on group [0, 1, 2] did not complete "
                           "within 0.2 s: ranks [2] never arrived");
  }
  Status late = hub.meet(2, group,
                         post(CollectiveKind::AllReduce, &x, 1, &y, 1),
                         sumAction);
  EXPECT_EQ(late.code(), StatusCode::Unavailable);
  EXPECT_NE(late.message().find("the group is unusable after an earlier "
                                "failure"),
            std::string::npos)
      << late.message();
}

TEST(CollectiveRendezvous, AbortWakesTheWaitersAtOnce) {
  CollectiveRendezvous hub(2, 60s);
  float x = 1, y = 0;
  Status waiting;
  auto begin = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    waiting = hub.meet(0, groupOf({0, 1}),
                       post(CollectiveKind::AllReduce, &x, 1, &y, 1),
                       sumAction);
  });
  std::this_thread::sleep_for(50ms);
  hub.abort("rank 1 failed: at h.0.mlp: a kernel failed");
  waiter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 10s);
  EXPECT_EQ(waiting.code(), StatusCode::Unavailable);
  EXPECT_EQ(waiting.message(), "all_reduce on group [0, 1]: the run was "
                               "stopped: rank 1 failed: at h.0.mlp: a kernel "
                               "failed");
  Status peer = hub.meetPeer(0, 1, 0,
                             post(CollectiveKind::Send, &x, 1, nullptr, 0),
                             sumAction);
  EXPECT_EQ(peer.message(), "send from rank 0 to rank 1 with tag 0: the run "
                            "was stopped: rank 1 failed: at h.0.mlp: a kernel "
                            "failed");
}

/// Send/recv: a host copy from the send's input to the recv's output.
Status copyAction(const std::vector<CollectivePost> &pair) {
  std::memcpy(pair[1].output, pair[0].input,
              pair[0].inputCount * dtypeSize(pair[0].dtype));
  return Status::ok();
}

TEST(CollectiveRendezvous, SendAndRecvPairByTagInOrder) {
  // Rank 0 sends tag 1 (10), tag 0 (20), tag 1 (30), one after another from
  // three threads (a send waits for its recv); rank 1 then receives tag 0
  // first and the two of tag 1 in the order they were sent.
  CollectiveRendezvous hub(2, 10s);
  float values[3] = {10, 20, 30};
  int tags[3] = {1, 0, 1};
  std::vector<float> got(3, -1);
  std::vector<Status> sends(3);
  Status receiver;
  std::vector<std::thread> senders;
  for (int i = 0; i < 3; ++i)
    senders.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(10 * i));
      sends[i] = hub.meetPeer(0, 1, tags[i],
                              post(CollectiveKind::Send, &values[i], 1,
                                   nullptr, 0),
                              copyAction);
    });
  std::thread two([&] {
    std::this_thread::sleep_for(60ms);
    int order[3] = {0, 1, 1};
    for (int i = 0; i < 3 && receiver.isOk(); ++i)
      receiver = hub.meetPeer(1, 0, order[i],
                              post(CollectiveKind::Recv, nullptr, 0, &got[i],
                                   1),
                              copyAction);
  });
  for (std::thread &t : senders)
    t.join();
  two.join();
  for (const Status &s : sends)
    ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_TRUE(receiver.isOk()) << receiver.toString();
  EXPECT_EQ(got, (std::vector<float>{20, 10, 30}));
}

TEST(CollectiveRendezvous, SendRecvMismatchAndTimeout) {
  CollectiveRendezvous hub(2, 200ms);
  float a[4] = {}, b[4] = {};
  Status send, recv;
  std::thread s([&] {
    send = hub.meetPeer(0, 1, 7, post(CollectiveKind::Send, a, 4, nullptr, 0),
                        copyAction);
  });
  recv = hub.meetPeer(1, 0, 7, post(CollectiveKind::Recv, nullptr, 0, b, 3),
                      copyAction);
  s.join();
  const char *expected = "send from rank 0 to rank 1 with tag 7: the send "
                         "passed 4 elements of f32 but the recv expects 3 "
                         "elements of f32";
  EXPECT_EQ(send.message(), expected);
  EXPECT_EQ(recv.message(), expected);
  Status lonely = hub.meetPeer(1, 0, 3,
                               post(CollectiveKind::Recv, nullptr, 0, b, 4),
                               copyAction);
  EXPECT_EQ(lonely.code(), StatusCode::Unavailable);
  EXPECT_EQ(lonely.message(), "recv from rank 0 to rank 1 with tag 3 did not "
                              "complete within 0.2 s: rank 0 never posted the "
                              "matching send");
  // Withdrawn: a send posted now does not pair with the dead recv.
  Status unpaired = hub.meetPeer(0, 1, 3,
                                 post(CollectiveKind::Send, a, 4, nullptr, 0),
                                 copyAction);
  EXPECT_EQ(unpaired.code(), StatusCode::Unavailable);
  EXPECT_EQ(hub.meetPeer(0, 0, 0, post(CollectiveKind::Send, a, 1, nullptr, 0),
                         copyAction)
                .message(),
            "send from rank 0 to rank 0 with tag 0: a rank cannot send to "
            "itself");
}

TEST(CollectiveRendezvous, TheActionsErrorReachesEveryMember) {
  CollectiveRendezvous hub(2, 10s);
  float x = 1, y = 0;
  std::vector<Status> results(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      results[rank] = hub.meet(
          rank, groupOf({0, 1}), post(CollectiveKind::AllReduce, &x, 1, &y, 1),
          [](const std::vector<CollectivePost> &) {
            return Status::error(StatusCode::Internal, "the copy failed");
          });
    });
  for (std::thread &t : threads)
    t.join();
  for (const Status &s : results)
    EXPECT_EQ(s.message(), "the copy failed");
}

} // namespace
