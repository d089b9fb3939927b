//===- TraceTest.cpp - the trace recorder, its merge, the CPU session's trace -===//
//
// TraceRecorder's JSON (parsed back with nlohmann-json: the complete and
// metadata events Perfetto reads), mergeTraceFiles (pids kept apart), the
// step selection of --trace-steps, and a two-rank CPU session that records
// each command on its rank's track only while a recorder is set.
//
//===----------------------------------------------------------------------===//
#include "runtime/Session.h"
#include "runtime/TraceRecorder.h"
#include "runtime/train/TrainTrace.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>
#include <unistd.h>

namespace {

using namespace llmc::rt;
using nlohmann::json;

/// A fresh directory under /tmp, removed with the test.
class TraceFiles : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/llmc-trace-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir_ + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  static json read(const std::string &file) {
    std::ifstream in(file);
    return json::parse(in);
  }
  std::string dir_;
};

TraceEvent event(const std::string &name, int pid, int tid, double ts,
                 double dur) {
  TraceEvent e;
  e.name = name;
  e.category = "cpu";
  e.pid = pid;
  e.tid = tid;
  e.ts = ts;
  e.dur = dur;
  return e;
}

/// The events of `trace` with phase `ph` (and name `name` when given).
std::vector<json> eventsOf(const json &trace, const std::string &ph,
                           const std::string &name = "") {
  std::vector<json> found;
  for (const json &e : trace["traceEvents"])
    if (e["ph"] == ph && (name.empty() || e["name"] == name))
      found.push_back(e);
  return found;
}

TEST_F(TraceFiles, RecorderWritesCompleteAndMetadataEvents) {
  TraceRecorder recorder;
  recorder.nameProcess(0, "rank 0 (cpu)");
  recorder.nameTrack(0, kTraceHostTrack, "host phases");
  recorder.nameTrack(0, kTraceCommandTrack, "commands");
  recorder.setMetadata("traced_steps", "3-4");
  TraceEvent matmul = event("Matmul", 0, kTraceCommandTrack, 1000.25, 12.5);
  matmul.args = {TraceArg::of("part", "transformer.h.0.mlp.c_fc"),
                 TraceArg::of("command", 17.0)};
  recorder.add(matmul);
  recorder.add(event("step 3", 0, kTraceHostTrack, 999.0, 40.0));
  ASSERT_TRUE(recorder.write(path("t.json")));

  json trace = read(path("t.json"));
  EXPECT_EQ(trace["otherData"]["traced_steps"], "3-4");
  std::vector<json> complete = eventsOf(trace, "X");
  ASSERT_EQ(complete.size(), 2u);
  EXPECT_EQ(complete[0]["name"], "Matmul");
  EXPECT_EQ(complete[0]["tid"], kTraceCommandTrack);
  EXPECT_DOUBLE_EQ(complete[0]["ts"].get<double>(), 1000.25);
  EXPECT_DOUBLE_EQ(complete[0]["dur"].get<double>(), 12.5);
  EXPECT_EQ(complete[0]["args"]["part"], "transformer.h.0.mlp.c_fc");
  // An index is written as an integer, not 17.0.
  EXPECT_TRUE(complete[0]["args"]["command"].is_number_integer());
  std::vector<json> processes = eventsOf(trace, "M", "process_name");
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0]["args"]["name"], "rank 0 (cpu)");
  std::vector<json> tracks = eventsOf(trace, "M", "thread_name");
  ASSERT_EQ(tracks.size(), 2u);
  EXPECT_EQ(tracks[0]["tid"], kTraceHostTrack);
  EXPECT_EQ(tracks[0]["args"]["name"], "host phases");
  EXPECT_EQ(eventsOf(trace, "M", "thread_sort_index").size(), 2u);
}

TEST(TraceRecorder, AddsFromSeveralThreads) {
  TraceRecorder recorder;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&recorder, t] {
      for (int i = 0; i < 1000; ++i)
        recorder.add(event("k", t, kTraceCommandTrack, i, 1));
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(recorder.size(), 4000u);
  json trace = json::parse(recorder.toJson());
  EXPECT_EQ(eventsOf(trace, "X").size(), 4000u);
}

TEST(TraceRecorder, ClockIsMonotonicMicroseconds) {
  double a = TraceRecorder::nowUs();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  double b = TraceRecorder::nowUs();
  EXPECT_GE(b - a, 2000.0);
  EXPECT_LT(b - a, 2.0e6);
}

TEST_F(TraceFiles, MergeRenumbersACollidingProcess) {
  // Two traces of one-rank runs: both pid 0.
  for (const char *name : {"a.json", "b.json"}) {
    TraceRecorder recorder;
    recorder.nameProcess(0, "rank 0 (cpu)");
    recorder.add(event(name, 0, kTraceCommandTrack, 5, 1));
    ASSERT_TRUE(recorder.write(path(name)));
  }
  ASSERT_TRUE(mergeTraceFiles({path("a.json"), path("b.json")},
                              path("merged.json")));
  json merged = read(path("merged.json"));
  std::vector<json> complete = eventsOf(merged, "X");
  ASSERT_EQ(complete.size(), 2u);
  EXPECT_EQ(complete[0]["name"], "a.json");
  EXPECT_EQ(complete[0]["pid"], 0);
  EXPECT_EQ(complete[1]["name"], "b.json");
  EXPECT_EQ(complete[1]["pid"], 1);
  std::vector<json> processes = eventsOf(merged, "M", "process_name");
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0]["args"]["name"], "rank 0 (cpu)");
  EXPECT_EQ(processes[1]["args"]["name"],
            "rank 0 (cpu) (" + path("b.json") + ")");
  EXPECT_EQ(merged["otherData"]["merged_from"].size(), 2u);
}

TEST_F(TraceFiles, MergeKeepsTheRanksOfOneRun) {
  for (int rank = 0; rank < 2; ++rank) {
    TraceRecorder recorder;
    recorder.nameProcess(rank, "rank " + std::to_string(rank));
    recorder.add(event("k", rank, kTraceComputeStreamTrack, 5, 1));
    ASSERT_TRUE(recorder.write(rankTracePath(path("run.json"), rank)));
  }
  ASSERT_TRUE(mergeTraceFiles({path("run.rank0.json"), path("run.rank1.json")},
                              path("run.json")));
  json merged = read(path("run.json"));
  std::set<int> pids;
  for (const json &e : eventsOf(merged, "X"))
    pids.insert(e["pid"].get<int>());
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  for (const json &e : eventsOf(merged, "M", "process_name"))
    EXPECT_EQ(e["args"]["name"], "rank " + std::to_string(e["pid"].get<int>()));
}

TEST_F(TraceFiles, MergeNamesAFileThatIsNoTrace) {
  std::ofstream(path("list.json")) << "[1, 2]";
  Status status = mergeTraceFiles({path("list.json")}, path("out.json"));
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find(path("list.json") +
                                  ": expected a Chrome trace"),
            std::string::npos)
      << status.message();
  status = mergeTraceFiles({path("missing.json")}, path("out.json"));
  EXPECT_EQ(status.code(), StatusCode::NotFound) << status.message();
}

TEST(TraceSteps, ParsesARangeOrOneStep) {
  TraceSteps steps;
  ASSERT_TRUE(parseTraceSteps("3:4", "--trace-steps", steps));
  EXPECT_EQ(steps.first, 3);
  EXPECT_EQ(steps.last, 4);
  ASSERT_TRUE(parseTraceSteps("7", "--trace-steps", steps));
  EXPECT_EQ(steps.first, 7);
  EXPECT_EQ(steps.last, 7);
  for (const char *bad : {"0:2", "4:3", "a", "3:", ":4", "-1:2", "2:x", ""}) {
    Status status = parseTraceSteps(bad, "LLMC_TRACE_STEPS", steps);
    ASSERT_FALSE(status) << bad;
    EXPECT_EQ(status.message(),
              std::string("LLMC_TRACE_STEPS expects A:B, the first and last "
                          "step to trace (1 <= A <= B), or one step A, got '") +
                  bad + "'");
  }
}

TEST(TraceSteps, DefaultsToTheThirdAndFourthStep) {
  auto is = [](TraceSteps s, int64_t a, int64_t b) {
    return s.first == a && s.last == b;
  };
  EXPECT_TRUE(is(defaultTraceSteps(1, 500), 3, 4));
  EXPECT_TRUE(is(defaultTraceSteps(11, 20), 13, 14)); // a resumed run
  EXPECT_TRUE(is(defaultTraceSteps(1, 3), 2, 3));     // its last two
  EXPECT_TRUE(is(defaultTraceSteps(1, 2), 1, 2));
  EXPECT_TRUE(is(defaultTraceSteps(5, 5), 5, 5));
}

TEST(TraceSteps, RankFilesSitBesideTheTrace) {
  EXPECT_EQ(rankTracePath("out/trace.json", 3), "out/trace.rank3.json");
  EXPECT_EQ(rankTracePath("trace", 0), "trace.rank0.json");
}

/// Rank r of `ranks`: y = x * x, then z = all-reduce-sum(y).
Executable squareSum(int ranks) {
  Executable exe;
  exe.source = "square-sum";
  exe.arguments = {{"x", ArgumentRole::Input, 0, {}}};
  exe.outputs = {{"z", 2}};
  for (int r = 0; r < ranks; ++r) {
    RankProgram &rank = exe.ranks.emplace_back();
    for (int v = 0; v < 3; ++v)
      rank.values.push_back({DType::F32, {4}, static_cast<uint64_t>(64 * v)});
    rank.arenaBytes = 192;
    Command mul;
    mul.kernel = KernelKind::Mul;
    mul.inputs = {0, 0};
    mul.outputs = {1};
    mul.origin = "h.0.square";
    rank.commands.push_back(mul);
    Command sum;
    sum.kind = CommandKind::Collective;
    sum.attrs.ints = {static_cast<int64_t>(CollectiveKind::AllReduce), 0, 0, 0,
                      ranks};
    for (int g = 0; g < ranks; ++g)
      sum.attrs.ints.push_back(g);
    sum.inputs = {1};
    sum.outputs = {2};
    sum.origin = "h.0.sum";
    rank.commands.push_back(sum);
  }
  return exe;
}

TEST(SessionTrace, RecordsEachCommandOnItsRanksTrackWhileSet) {
  Executable exe = squareSum(2);
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(exe, SessionOptions(), session));
  float x[4] = {1.5f, -2.0f, 0.25f, 3.0f};
  ASSERT_TRUE(session->setArgument("x", DType::F32, {4}, x, sizeof(x)));
  TraceRecorder recorder;
  session->setTrace(&recorder);
  double before = TraceRecorder::nowUs();
  ASSERT_TRUE(session->run());
  double after = TraceRecorder::nowUs();
  session->setTrace(nullptr);
  ASSERT_TRUE(session->run()); // not traced
  std::vector<TraceEvent> events = recorder.events();
  ASSERT_EQ(events.size(), 4u);
  std::set<std::pair<int, std::string>> seen;
  for (const TraceEvent &e : events) {
    EXPECT_EQ(e.tid, kTraceCommandTrack);
    EXPECT_EQ(e.category, "cpu");
    EXPECT_GE(e.ts, before);
    EXPECT_LE(e.ts + e.dur, after);
    ASSERT_GE(e.args.size(), 3u);
    EXPECT_EQ(e.args[0].key, "part");
    EXPECT_EQ(e.args[1].key, "op");
    EXPECT_EQ(e.args[1].text, e.name);
    EXPECT_EQ(e.args[0].text,
              e.name == "Mul" ? "h.0.square" : "h.0.sum");
    seen.insert({e.pid, e.name});
  }
  EXPECT_EQ(seen, (std::set<std::pair<int, std::string>>{{0, "Mul"},
                                                         {0, "all_reduce"},
                                                         {1, "Mul"},
                                                         {1, "all_reduce"}}));
  json trace = json::parse(recorder.toJson());
  std::vector<json> processes = eventsOf(trace, "M", "process_name");
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[1]["args"]["name"], "rank 1 (cpu)");
}

} // namespace
