//===- CudaTraceTest.cpp - --trace on the CUDA session --------------------===//
//
// Needs a GPU (label `cuda`); without one every test skips.
//
// The training loop on the GPU with a trace of its default steps (3 and 4
// of 5) of GPT-2 tiny (gpt2-tiny.llmcx, compiled at build time): the file
// parses as a Chrome trace; the process names the GPU; every launch is an
// event on the compute stream's track with its model part, op and kernel,
// cuBLASLt GEMMs among them; each traced step has the same launches, all
// inside its host "run" phase (the events' host times come from an origin
// event on an idle stream: the tolerance of 1 ms covers its firing late),
// and they do not overlap on the one stream beyond 1 us of rounding. The
// graph note says the traced steps ran ungraphed. Tracing changes no
// result: the losses of a traced and an untraced run agree to 1e-5
// relative (the embedding gradient's f32 atomics add in no fixed order,
// so two GPU runs may differ in the last bits; TrainingLoopMatchesCpu...
// in CudaSessionTest.cpp uses the same bound).
//
//===----------------------------------------------------------------------===//
#include "CudaTestSupport.h"

#include "runtime/TraceRecorder.h"
#include "runtime/cuda/session/CudaSession.h"
#include "runtime/train/Trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

namespace llmc::rt::cuda {
namespace {

using namespace testing;
using nlohmann::json;

class CudaTraceTest : public GpuTest {
protected:
  CudaTraceTest() : GpuTest("the CUDA trace tests", SelectDevice::Leave) {}
};

/// 5 steps of GPT-2 tiny on the GPU, traced to `tracePath` unless empty.
void trainGpt2Tiny(const std::string &tracePath, TrainReport &report) {
  Executable exe;
  ASSERT_OK(readExecutable(binaryDir() + "/gpt2-tiny.llmcx", exe));
  TrainOptions options;
  ASSERT_OK(readTrainSettings(exe.metadata, options.settings));
  options.settings.devices = "cuda";
  options.settings.trainData.clear(); // the built-in corpus
  options.settings.sampleTokens = 0;
  options.settings.checkpointDir.clear();
  options.stopAfterStep = 5;
  options.log = nullptr;
  options.tracePath = tracePath;
  options.cudaSession = createCudaDeviceSession;
  options.cudaDeviceCount = cudaDeviceCount;
  ASSERT_OK(train(exe, options, report));
}

TEST_F(CudaTraceTest, TracesEveryLaunchOfTheChosenStepsOnItsStream) {
  char dir[] = "/tmp/llmc-cuda-trace-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/trace.json";
  TrainReport traced, plain;
  trainGpt2Tiny(path, traced);
  trainGpt2Tiny("", plain);
  ASSERT_EQ(traced.steps.size(), 5u);
  ASSERT_EQ(plain.steps.size(), 5u);
  for (size_t i = 0; i < 5; ++i)
    EXPECT_LT(std::fabs(traced.steps[i].loss - plain.steps[i].loss) /
                  std::fabs(plain.steps[i].loss),
              1e-5)
        << "step " << i + 1;

  std::ifstream in(path);
  json trace = json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(trace.is_discarded()) << path << " is not JSON";
  EXPECT_EQ(trace["otherData"]["traced_steps"], "3-4");
  const char *graphEnv = std::getenv("LLMC_CUDA_GRAPH");
  bool graphs = !(graphEnv && std::string(graphEnv) == "0");
  std::string graphNote = trace["otherData"].value("cuda_graph", "");
  EXPECT_EQ(graphNote.find("ungraphed") != std::string::npos, graphs)
      << graphNote;

  // 1. The names of the process and the stream's track.
  std::string process, stream;
  for (const json &e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 0)
      process = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0 &&
        e["tid"] == kTraceComputeStreamTrack)
      stream = e["args"]["name"];
  }
  EXPECT_NE(process.find("rank 0 (cuda:0"), std::string::npos) << process;
  EXPECT_NE(stream.find("GPU stream: compute"), std::string::npos) << stream;

  // 2. The run phases of steps 3 and 4, and each GPU event in one of them.
  std::vector<std::pair<double, double>> runs;
  for (const json &e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "host" &&
        e["name"].get<std::string>().rfind("run", 0) == 0)
      runs.push_back({e["ts"].get<double>(),
                      e["ts"].get<double>() + e["dur"].get<double>()});
  ASSERT_EQ(runs.size(), 2u);
  std::map<size_t, std::vector<std::pair<double, double>>> byRun;
  std::map<size_t, std::vector<int64_t>> commandsByRun;
  size_t gemms = 0;
  for (const json &e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "gpu")
      continue;
    EXPECT_EQ(e["tid"], kTraceComputeStreamTrack) << e.dump();
    ASSERT_TRUE(e["args"].contains("part")) << e.dump();
    ASSERT_TRUE(e["args"].contains("op")) << e.dump();
    ASSERT_TRUE(e["args"]["command"].is_number_integer()) << e.dump();
    gemms += e["args"].value("kernel", "") == "cuBLASLt";
    double begin = e["ts"].get<double>(), end = begin + e["dur"].get<double>();
    // The GPU clock is anchored to the host's within a few microseconds;
    // a tiny model's steps are under a millisecond apart, so a wider
    // tolerance (1 ms once) counts the last launches of one run in the next
    // one too. Each event goes to one run.
    bool placed = false;
    for (size_t r = 0; r < runs.size() && !placed; ++r)
      if (begin >= runs[r].first - 50 && end <= runs[r].second + 50) {
        byRun[r].push_back({begin, end});
        commandsByRun[r].push_back(e["args"]["command"].get<int64_t>());
        placed = true;
      }
    EXPECT_TRUE(placed) << "outside the run phases: " << e.dump();
  }
  EXPECT_GT(gemms, 0u);
  ASSERT_EQ(byRun.size(), 2u);
  EXPECT_GT(byRun[0].size(), 50u);
  EXPECT_EQ(commandsByRun[0], commandsByRun[1]);
  // 3. One stream: its launches follow one another.
  for (auto &[run, spans] : byRun) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i)
      EXPECT_GE(spans[i].first, spans[i - 1].second - 1.0)
          << "launch " << i << " of traced run " << run;
  }
  std::string remove = std::string("rm -rf ") + dir;
  EXPECT_EQ(std::system(remove.c_str()), 0);
}

/// setTrace on the session itself: a traced run adds events, a run after
/// setTrace(nullptr) adds none.
TEST_F(CudaTraceTest, RecordsOnlyWhileARecorderIsSet) {
  Executable exe;
  ASSERT_OK(readExecutable(binaryDir() + "/gpt2-tiny.llmcx", exe));
  std::unique_ptr<CudaSession> session;
  ASSERT_OK(CudaSession::create(exe, CudaSessionOptions(), session));
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const ArgumentInfo &arg = exe.arguments[i];
    const ValueInfo &value = exe.ranks[0].values[arg.value];
    std::vector<uint8_t> bytes(value.bytes());
    // Small non-zero values (token ids 1, a step of 1.0f: any valid input).
    if (value.dtype == DType::I32)
      for (size_t k = 0; k + 4 <= bytes.size(); k += 4)
        bytes[k] = 1;
    else if (value.dtype == DType::F32)
      for (size_t k = 0; k + 4 <= bytes.size(); k += 4) {
        float one = 0.01f;
        std::memcpy(&bytes[k], &one, 4);
      }
    ASSERT_OK(session->setArgument(arg.name, value.dtype, value.shape,
                                   bytes.data(), bytes.size()));
  }
  TraceRecorder recorder;
  ASSERT_OK(session->run()); // the first run compiles and allocates
  session->setTrace(&recorder);
  ASSERT_OK(session->run());
  size_t once = recorder.size();
  EXPECT_GT(once, 50u);
  ASSERT_OK(session->run());
  EXPECT_EQ(recorder.size(), 2 * once); // the same launches again
  session->setTrace(nullptr);
  ASSERT_OK(session->run());
  ASSERT_OK(session->run());
  EXPECT_EQ(recorder.size(), 2 * once);
  for (const TraceEvent &e : recorder.events()) {
    EXPECT_EQ(e.category, "gpu");
    EXPECT_GE(e.dur, 0.0);
  }
}

} // namespace
} // namespace llmc::rt::cuda
