// Tests of the multi-process rendezvous (runtime/dist/Rendezvous.h): the
// launch variables, and the TCP meeting of N ranks as threads on 127.0.0.1.
#include "runtime/dist/Rendezvous.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <thread>

namespace {

using namespace llmc::rt;
using namespace std::chrono_literals;

EnvLookup mapEnv(const std::map<std::string, std::string> &vars) {
  return [vars](const char *name) -> const char * {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(LaunchEnv, NotLaunchedWithoutVariables) {
  LaunchEnv env;
  bool launched = true;
  ASSERT_TRUE(readLaunchEnv(mapEnv({}), env, launched).isOk());
  EXPECT_FALSE(launched);
  // A SLURM job of one task is an ordinary process too.
  ASSERT_TRUE(readLaunchEnv(mapEnv({{"SLURM_PROCID", "0"},
                                    {"SLURM_NTASKS", "1"},
                                    {"SLURM_LOCALID", "0"}}),
                            env, launched)
                  .isOk());
  EXPECT_FALSE(launched);
}

TEST(LaunchEnv, ReadsTorchrunVariables) {
  LaunchEnv env;
  bool launched = false;
  ASSERT_TRUE(readLaunchEnv(mapEnv({{"RANK", "3"},
                                    {"WORLD_SIZE", "8"},
                                    {"LOCAL_RANK", "1"},
                                    {"MASTER_ADDR", "10.0.0.2"},
                                    {"MASTER_PORT", "29500"}}),
                            env, launched)
                  .isOk());
  EXPECT_TRUE(launched);
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.worldSize, 8);
  EXPECT_EQ(env.localRank, 1);
  EXPECT_EQ(env.masterAddr, "10.0.0.2");
  EXPECT_EQ(env.masterPort, 29500);
  EXPECT_EQ(env.source, "torchrun");
}

TEST(LaunchEnv, ReadsSlurmVariables) {
  LaunchEnv env;
  bool launched = false;
  ASSERT_TRUE(readLaunchEnv(mapEnv({{"SLURM_PROCID", "5"},
                                    {"SLURM_NTASKS", "16"},
                                    {"SLURM_LOCALID", "5"},
                                    {"MASTER_ADDR", "node001"},
                                    {"MASTER_PORT", "12345"}}),
                            env, launched)
                  .isOk());
  EXPECT_TRUE(launched);
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.worldSize, 16);
  EXPECT_EQ(env.localRank, 5);
  EXPECT_EQ(env.source, "slurm");
}

/// The message of readLaunchEnv on `vars`, which must fail.
std::string envError(const std::map<std::string, std::string> &vars) {
  LaunchEnv env;
  bool launched = false;
  Status status = readLaunchEnv(mapEnv(vars), env, launched);
  EXPECT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), StatusCode::InvalidArgument);
  return status.message();
}

TEST(LaunchEnv, RejectsBadValuesNamingTheVariable) {
  std::map<std::string, std::string> good = {{"RANK", "1"},
                                             {"WORLD_SIZE", "2"},
                                             {"MASTER_ADDR", "127.0.0.1"},
                                             {"MASTER_PORT", "29500"}};
  auto with = [&](const std::string &key, const std::string &value) {
    auto vars = good;
    vars[key] = value;
    return vars;
  };
  EXPECT_EQ(envError(with("RANK", "one")),
            "RANK='one' is not a non-negative integer");
  EXPECT_EQ(envError(with("RANK", "-1")),
            "RANK='-1' is not a non-negative integer");
  EXPECT_EQ(envError(with("RANK", "2")),
            "RANK='2' is outside the world of 2 (WORLD_SIZE): ranks are 0..1");
  EXPECT_EQ(envError(with("WORLD_SIZE", "0")),
            "WORLD_SIZE='0': a world needs at least one process");
  EXPECT_EQ(envError(with("MASTER_PORT", "70000")),
            "MASTER_PORT='70000' is not a TCP port (1..65535)");
  EXPECT_EQ(envError(with("LOCAL_RANK", "x")),
            "LOCAL_RANK='x' is not a non-negative integer");
  auto noWorld = good;
  noWorld.erase("WORLD_SIZE");
  EXPECT_NE(envError(noWorld).find("WORLD_SIZE is not set"),
            std::string::npos);
  auto noAddr = good;
  noAddr.erase("MASTER_ADDR");
  EXPECT_NE(envError(noAddr).find("MASTER_ADDR is not set"),
            std::string::npos);
  // Under SLURM the message says how to set MASTER_ADDR in the job script.
  std::string slurm = envError({{"SLURM_PROCID", "0"},
                                {"SLURM_NTASKS", "4"},
                                {"SLURM_LOCALID", "0"}});
  EXPECT_NE(slurm.find("MASTER_ADDR is not set"), std::string::npos);
  EXPECT_NE(slurm.find("scontrol show hostnames"), std::string::npos);
}

LaunchEnv localEnv(int rank, int worldSize, int port) {
  LaunchEnv env;
  env.rank = rank;
  env.worldSize = worldSize;
  env.localRank = rank;
  env.masterAddr = "127.0.0.1";
  env.masterPort = port;
  return env;
}

TEST(Rendezvous, FourRanksReceiveTheBlobIntactAndMeetAtBarriers) {
  constexpr int kWorld = 4;
  int port = findFreePort();
  ASSERT_GT(port, 0);
  // 128 random bytes, like NCCL's unique id, zeros and 0xff included.
  std::vector<uint8_t> sent(128);
  std::mt19937 rng(20260);
  for (uint8_t &b : sent)
    b = static_cast<uint8_t>(rng());
  sent[0] = 0;
  sent[1] = 0xff;
  std::vector<std::vector<uint8_t>> got(kWorld);
  std::vector<Status> results(kWorld);
  std::vector<std::thread> threads;
  RendezvousOptions options;
  options.timeout = 20s;
  for (int rank = kWorld - 1; rank >= 0; --rank) // rank 0 last: peers retry
    threads.emplace_back([&, rank] {
      std::unique_ptr<Rendezvous> rendezvous;
      Status status =
          Rendezvous::create(localEnv(rank, kWorld, port), options, rendezvous);
      if (status) {
        std::vector<uint8_t> blob;
        if (rank == 0)
          blob = sent;
        status = rendezvous->broadcast(blob);
        got[rank] = blob;
      }
      for (int i = 0; i < 3 && status; ++i)
        status = rendezvous->barrier();
      results[rank] = status;
    });
  for (std::thread &t : threads)
    t.join();
  for (int rank = 0; rank < kWorld; ++rank) {
    EXPECT_TRUE(results[rank].isOk())
        << "rank " << rank << ": " << results[rank].message();
    EXPECT_EQ(got[rank], sent) << "rank " << rank;
  }
}

TEST(Rendezvous, WorldOfOneNeedsNobody) {
  int port = findFreePort();
  ASSERT_GT(port, 0);
  std::unique_ptr<Rendezvous> rendezvous;
  ASSERT_TRUE(Rendezvous::create(localEnv(0, 1, port), {}, rendezvous).isOk());
  std::vector<uint8_t> blob = {1, 2, 3};
  ASSERT_TRUE(rendezvous->broadcast(blob).isOk());
  EXPECT_EQ(blob, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_TRUE(rendezvous->barrier().isOk());
}

TEST(Rendezvous, MissingRankTimesOutNamingIt) {
  constexpr int kWorld = 4;
  int port = findFreePort();
  ASSERT_GT(port, 0);
  RendezvousOptions options;
  options.timeout = 1500ms;
  std::vector<Status> results(kWorld);
  std::vector<std::thread> threads;
  for (int rank : {0, 1, 3}) // rank 2 never starts
    threads.emplace_back([&, rank] {
      std::unique_ptr<Rendezvous> rendezvous;
      results[rank] =
          Rendezvous::create(localEnv(rank, kWorld, port), options, rendezvous);
    });
  for (std::thread &t : threads)
    t.join();
  ASSERT_FALSE(results[0].isOk());
  EXPECT_EQ(results[0].code(), StatusCode::Unavailable);
  EXPECT_NE(results[0].message().find("rendezvous at 127.0.0.1:" +
                                      std::to_string(port) +
                                      ": rank 2 never arrived within 1.5 s"),
            std::string::npos)
      << results[0].message();
  for (int rank : {1, 3}) {
    ASSERT_FALSE(results[rank].isOk());
    EXPECT_NE(results[rank].message().find("rank " + std::to_string(rank) +
                                           ": rendezvous with rank 0 at "
                                           "127.0.0.1:" +
                                           std::to_string(port)),
              std::string::npos)
        << results[rank].message();
  }
}

TEST(Rendezvous, NoRankZeroTimesOutNamingTheAddress) {
  int port = findFreePort();
  ASSERT_GT(port, 0);
  RendezvousOptions options;
  options.timeout = 500ms;
  std::unique_ptr<Rendezvous> rendezvous;
  Status status =
      Rendezvous::create(localEnv(1, 2, port), options, rendezvous);
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), StatusCode::Unavailable);
  EXPECT_NE(status.message().find("rank 1: rendezvous with rank 0 at "
                                  "127.0.0.1:" +
                                  std::to_string(port) +
                                  ": could not connect within 0.5 s"),
            std::string::npos)
      << status.message();
}

TEST(Rendezvous, DuplicateRankIsRefused) {
  int port = findFreePort();
  ASSERT_GT(port, 0);
  RendezvousOptions options;
  options.timeout = 1500ms;
  std::vector<Status> results(3);
  std::vector<std::thread> threads;
  // Two processes claim rank 1 of a world of 3; rank 2 never comes.
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      std::unique_ptr<Rendezvous> rendezvous;
      results[i] = Rendezvous::create(localEnv(i == 0 ? 0 : 1, 3, port),
                                      options, rendezvous);
    });
  for (std::thread &t : threads)
    t.join();
  ASSERT_FALSE(results[0].isOk());
  EXPECT_NE(results[0].message().find("rank 2 never arrived"),
            std::string::npos)
      << results[0].message();
  EXPECT_NE(results[0].message().find("rank 1 arrived twice"),
            std::string::npos)
      << results[0].message();
  // One of the two rank-1 processes was refused by name.
  bool refused = results[1].message().find("refused by rank 0") !=
                     std::string::npos ||
                 results[2].message().find("refused by rank 0") !=
                     std::string::npos;
  EXPECT_TRUE(refused) << results[1].message() << " / "
                       << results[2].message();
}

TEST(Rendezvous, BarrierTimesOutNamingTheAbsentRank) {
  int port = findFreePort();
  ASSERT_GT(port, 0);
  RendezvousOptions options;
  options.timeout = 1s;
  std::vector<std::unique_ptr<Rendezvous>> ranks(3);
  std::vector<Status> created(3);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 3; ++rank)
    threads.emplace_back([&, rank] {
      created[rank] = Rendezvous::create(localEnv(rank, 3, port), options,
                                         ranks[rank]);
    });
  for (std::thread &t : threads)
    t.join();
  threads.clear();
  for (int rank = 0; rank < 3; ++rank)
    ASSERT_TRUE(created[rank].isOk()) << created[rank].message();
  // Rank 1 never comes to the barrier (it stays connected).
  std::vector<Status> results(3);
  for (int rank : {0, 2})
    threads.emplace_back([&, rank] { results[rank] = ranks[rank]->barrier(); });
  for (std::thread &t : threads)
    t.join();
  ASSERT_FALSE(results[0].isOk());
  EXPECT_NE(results[0].message().find("rank 1 did not arrive within 1 s"),
            std::string::npos)
      << results[0].message();
  EXPECT_FALSE(results[2].isOk());
}

} // namespace
