// Checkpoints that must not destroy or mix runs (issue #27): rotation
// deletes only complete checkpoints of the run's own lineage (a folder with
// a file llmc did not write, or of another run, is left and said so); a run
// resumed from an older step removes the newer checkpoints of its lineage
// at its first save; the lock refuses a second run naming the holder; a
// resume refuses tensors the program does not use, non-finite tensors, a
// file whose tensors do not hash to the recorded xxh64, and the files of
// two steps mixed.
#include "runtime/io/Safetensors.h"
#include "runtime/train/Checkpoint.h"

#include "TrainingTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

namespace {

using namespace llmc::test;

/// What `log` received (a tmpfile), as text.
std::string logged(std::FILE *log) {
  std::fflush(log);
  std::rewind(log);
  std::string text;
  char buffer[512];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), log))
    text.append(buffer, n);
  return text;
}

class CheckpointReliabilityTest : public CheckpointTest {
protected:
  /// Saves step `step` of `lineage` with `keep`; the checkpoint's path.
  std::string save(rt::Session &session, int64_t step,
                   const std::string &lineage, int64_t keep,
                   std::FILE *log = nullptr) {
    rt::CheckpointState state;
    state.step = step;
    state.lineage = lineage;
    rt::CheckpointOptions options;
    options.keep = keep;
    options.log = log;
    std::string path;
    rt::Status status =
        rt::saveCheckpoint(directory.string(), session, state, options, path);
    EXPECT_TRUE(status) << status.message();
    return path;
  }
  bool has(int64_t step) const {
    return fs::exists(directory / rt::checkpointName(step));
  }
};

TEST_F(CheckpointReliabilityTest, RotationDeletesOnlyThisRunsCheckpoints) {
  rt::Executable exe = compile(2, 1, /*optimizer=*/true);
  std::unique_ptr<rt::Session> session = start(exe);
  save(*session, 1, "aaaaaaaaaaaaaaaa", 5);
  save(*session, 2, "aaaaaaaaaaaaaaaa", 5);
  save(*session, 3, "bbbbbbbbbbbbbbbb", 5); // another run's
  std::ofstream(directory / "step-00000001" / "notes.txt") << "mine\n";
  // A folder llmc did not write at all.
  fs::create_directories(directory / "step-00000000");
  std::FILE *log = std::tmpfile();
  save(*session, 4, "aaaaaaaaaaaaaaaa", 1, log);
  EXPECT_TRUE(has(0));
  EXPECT_TRUE(has(1));
  EXPECT_TRUE(fs::exists(directory / "step-00000001" / "notes.txt"));
  EXPECT_FALSE(has(2));
  EXPECT_TRUE(has(3));
  EXPECT_TRUE(has(4));
  std::string text = logged(log);
  std::fclose(log);
  std::string dir = directory.string();
  EXPECT_NE(text.find("checkpoint rotation left " + dir +
                      "/step-00000001: it holds notes.txt, which llmc did "
                      "not write; delete it yourself if it is not needed"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("checkpoint rotation left " + dir +
                      "/step-00000003: it is of another run (lineage "
                      "bbbbbbbbbbbbbbbb)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("checkpoint rotation left " + dir +
                      "/step-00000000: it has no readable "
                      "optimizer.safetensors"),
            std::string::npos)
      << text;
}

TEST_F(CheckpointReliabilityTest, AResumeFromAnOlderStepDropsTheNewerOnes) {
  rt::Executable exe = compile(2, 1, /*optimizer=*/true);
  std::unique_ptr<rt::Session> session = start(exe);
  for (int64_t step : {2, 4, 6})
    save(*session, step, "cccccccccccccccc", 5);
  // Resumed from step 2: its first save is step 3.
  std::FILE *log = std::tmpfile();
  save(*session, 3, "cccccccccccccccc", 5, log);
  EXPECT_TRUE(has(2));
  EXPECT_TRUE(has(3));
  EXPECT_FALSE(has(4));
  EXPECT_FALSE(has(6));
  std::string text = logged(log);
  std::fclose(log);
  EXPECT_NE(text.find("removed " + directory.string() +
                      "/step-00000006: newer than step 3, from before this "
                      "run resumed an older checkpoint"),
            std::string::npos)
      << text;
}

TEST_F(CheckpointReliabilityTest, ASecondRunIsRefusedByTheLock) {
  rt::CheckpointLock first, second;
  ASSERT_TRUE(first.acquire(directory.string()));
  rt::Status status = second.acquire(directory.string());
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message(),
            "the checkpoint directory '" + directory.string() +
                "' is in use by another run (pid " +
                std::to_string(::getpid()) + " holds " + directory.string() +
                "/.lock); wait for it to end or choose another "
                "--checkpoint-dir");
  // An uncreatable directory is found before step 1.
  rt::CheckpointLock third;
  status = third.acquire("/proc/llmc-no-such/dir");
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message().rfind("cannot create the checkpoint directory "
                                   "'/proc/llmc-no-such/dir': ",
                                   0),
            0u)
      << status.message();
}

TEST_F(CheckpointReliabilityTest, UnusedTensorsAreAnError) {
  // A 2-layer checkpoint into the 1-layer program: layer 1 would be dropped.
  llmc::ModelConfig bigger = tinyGpt2();
  bigger.numLayers = 2;
  OwningOpRef<ModuleOp> module =
      llmc::buildLossModule(context, bigger, 2, kSeq);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  llmc::buildCompilePipeline(pm, llmc::CompilePipelineOptions());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  llmc::CodegenOptions codegen;
  codegen.function = "train_step";
  FailureOr<rt::Executable> big = llmc::buildExecutable(*module, codegen);
  ASSERT_TRUE(succeeded(big));
  std::unique_ptr<rt::Session> bigSession = start(*big);
  std::string path = save(*bigSession, 5, "dddddddddddddddd", 2);

  rt::Executable exe = compile(2, 1, /*optimizer=*/true);
  std::unique_ptr<rt::Session> session = start(exe);
  rt::CheckpointState loaded;
  rt::Status status = rt::loadCheckpoint(path, *session, loaded);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message().rfind(path + "/model.safetensors: ", 0), 0u)
      << status.message();
  EXPECT_NE(status.message().find(
                " tensor(s) the program does not use: transformer.h.1."),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("; the checkpoint is of another model "
                                  "(more layers or other sizes): resume it "
                                  "with the run description it was trained "
                                  "with"),
            std::string::npos)
      << status.message();
}

TEST_F(CheckpointReliabilityTest, ANonFiniteTensorIsNamedAtLoad) {
  rt::Executable exe = compile(2, 1, /*optimizer=*/true);
  std::unique_ptr<rt::Session> session = start(exe);
  const std::string weight = "transformer.h.0.mlp.c_fc.weight";
  fill(*session, weight, std::numeric_limits<float>::quiet_NaN());
  std::string path = save(*session, 1, "eeeeeeeeeeeeeeee", 2);
  rt::CheckpointState loaded;
  rt::Status status = rt::loadCheckpoint(path, *session, loaded);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message(),
            path + "/model.safetensors: tensor '" + weight +
                "' holds a NaN or an infinity (element 0); the run diverged "
                "before this save or the file is damaged: resume from an "
                "earlier checkpoint");
}

TEST_F(CheckpointReliabilityTest, AFlippedBitOrMixedFilesAreRefused) {
  rt::Executable exe = compile(2, 1, /*optimizer=*/true);
  std::unique_ptr<rt::Session> session = start(exe);
  std::string one = save(*session, 1, "ffffffffffffffff", 5);
  fill(*session, "transformer.wte.weight", 0.5f);
  std::string two = save(*session, 2, "ffffffffffffffff", 5);

  // The metadata: step, lineage, both hashes, in both files (the model
  // file stays loadable by any safetensors reader: string values only).
  rt::SafetensorsFile model;
  ASSERT_TRUE(rt::readSafetensors(two + "/model.safetensors", model));
  EXPECT_EQ(model.metadata().at("format"), "pt");
  EXPECT_EQ(model.metadata().at("llmc.step"), "2");
  EXPECT_EQ(model.metadata().at("llmc.lineage"), "ffffffffffffffff");
  EXPECT_EQ(model.metadata().at("llmc.model.xxh64").size(), 16u);

  // The model file of step 2 in step 1's folder.
  fs::path mixed = directory / "mixed";
  fs::copy(one, mixed, fs::copy_options::recursive);
  fs::copy_file(two + "/model.safetensors", mixed / "model.safetensors",
                fs::copy_options::overwrite_existing);
  rt::CheckpointState loaded;
  rt::Status status = rt::loadCheckpoint(mixed.string(), *session, loaded);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message(),
            (mixed / "model.safetensors").string() + " is of step 2 and " +
                (mixed / "optimizer.safetensors").string() +
                " of step 1: the files of two checkpoints were mixed; resume "
                "from a checkpoint folder as llmc wrote it");

  // One flipped bit in the last tensor byte of step 1's optimizer file.
  fs::path optimizer = fs::path(one) / "optimizer.safetensors";
  {
    std::fstream file(optimizer, std::ios::in | std::ios::out |
                                     std::ios::binary);
    file.seekg(-1, std::ios::end);
    char byte = 0;
    file.get(byte);
    file.seekp(-1, std::ios::end);
    file.put(static_cast<char>(byte ^ 0x01));
  }
  status = rt::loadCheckpoint(one, *session, loaded);
  EXPECT_FALSE(status);
  EXPECT_EQ(status.message().rfind(optimizer.string() +
                                       ": the tensors hash to xxh64 ",
                                   0),
            0u)
      << status.message();
  EXPECT_NE(status.message().find(": the file is damaged (a flipped bit, a "
                                  "partial copy); resume from another "
                                  "checkpoint"),
            std::string::npos)
      << status.message();
  // Step 2 is intact.
  status = rt::loadCheckpoint(two, *session, loaded);
  EXPECT_TRUE(status) << status.message();
  EXPECT_EQ(loaded.lineage, "ffffffffffffffff");
}

} // namespace
