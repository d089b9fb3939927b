//===- FuzzCheckpoint.cpp - libFuzzer target: checkpoint metadata ---------===//
//
// loadCheckpoint of a checkpoint whose optimizer.safetensors (the file with
// the step, the seed, the data position and the optimizer's moments) is any
// bytes, into a CPU session of a hand-built program with one parameter `w`
// and its two moments (f32, [4]); model.safetensors is a valid file. The
// loader must refuse with a message or bind the tensors, never crash.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executable.h"
#include "runtime/Session.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/Checkpoint.h"
#include "test/fuzz/FuzzSupport.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

using namespace llmc::rt;

namespace {

Executable makeProgram() {
  Executable exe;
  exe.name = "train_step";
  RankProgram rank;
  rank.arenaBytes = 48;
  for (uint64_t i = 0; i < 3; ++i)
    rank.values.push_back({DType::F32, Shape{4}, 16 * i});
  exe.ranks.push_back(rank);
  const char *names[] = {"w", "optimizer.m.w", "optimizer.v.w"};
  for (int i = 0; i < 3; ++i) {
    ArgumentInfo arg;
    arg.name = names[i];
    arg.role = i == 0 ? ArgumentRole::Parameter : ArgumentRole::OptimizerState;
    arg.value = i;
    exe.arguments.push_back(arg);
  }
  return exe;
}

struct Fixture {
  Executable exe = makeProgram();
  std::unique_ptr<Session> session;
  std::string directory = llmc::fuzz::scratchDirectory() + "/step-00000001";

  Fixture() {
    if (Status status = Session::create(exe, SessionOptions{1}, session);
        !status)
      llmc::fuzz::fail("session: " + status.message());
    std::filesystem::create_directories(directory);
    float w[4] = {1, 2, 3, 4};
    std::map<std::string, SafetensorsTensor> tensors;
    tensors["w"] = {DType::F32, Shape{4},
                    reinterpret_cast<const uint8_t *>(w), sizeof(w)};
    std::vector<uint8_t> bytes;
    if (Status status = serializeSafetensors(tensors, {{"format", "pt"}}, bytes);
        !status)
      llmc::fuzz::fail("model file: " + status.message());
    llmc::fuzz::writeFile(directory + "/model.safetensors", bytes.data(),
                          bytes.size());
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Fixture fixture;
  llmc::fuzz::writeFile(fixture.directory + "/optimizer.safetensors", data,
                        size);
  CheckpointState state;
  (void)loadCheckpoint(fixture.directory, *fixture.session, state);
  return 0;
}
