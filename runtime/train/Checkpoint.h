//===- Checkpoint.h - save and restore a training run -----------*- C++ -*-===//
//
// A checkpoint is a directory DIR/step-NNNNNNNN holding
//   model.safetensors      the parameters, under their Hugging Face names
//                          (loadable by transformers / safetensors as is);
//   optimizer.safetensors  the AdamW moments (optimizer.m.<name>,
//                          optimizer.v.<name>), and in its metadata the step,
//                          the data position and the seed;
//   config.json, ...       when the artifact carries them (hf.* metadata):
//                          the model's Hugging Face config, generation
//                          config and tokenizer files, for `llmc export`.
// DIR/latest names the newest complete checkpoint. Saving is atomic: the
// files are written and fsynced in DIR/.step-NNNNNNNN.partial, the
// directory is renamed into place, and only then is `latest` replaced
// (write, fsync, rename). A crash at any point leaves `latest` naming a
// complete checkpoint. See docs/training.md.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_CHECKPOINT_H
#define LLMC_RUNTIME_TRAIN_CHECKPOINT_H

#include "runtime/DeviceSession.h"
#include "runtime/Status.h"
#include "runtime/data/BatchOrder.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace llmc::rt {

/// What a checkpoint records besides the tensors.
struct CheckpointState {
  int64_t step = 0; ///< optimizer steps completed
  /// TokenLoader::position() for the next step.
  DataPosition data;
  /// The training corpus it was saved on: shards and tokens (0: not
  /// recorded, a checkpoint from before they were).
  uint64_t dataShards = 0, dataTokens = 0;
  uint64_t seed = 0;  ///< the run's seed
  /// The run's lineage: set when a run starts without --resume and
  /// carried on by every resume, so that rotation deletes only this run's
  /// checkpoints (16 hex digits; empty in checkpoints from before it).
  std::string lineage;
  std::string source; ///< the artifact's source, for messages
  /// Files saved beside the tensors (name -> contents), e.g. the run's
  /// tokenizer.json, so that a checkpoint can be sampled alone.
  std::map<std::string, std::string> files;
};

struct CheckpointOptions {
  /// Complete checkpoints kept; older ones are deleted after a save.
  int64_t keep = 2;
  /// For tests of atomicity: fail (as a crash would stop) after writing this
  /// many of the two files into the partial directory; -1 never.
  int failAfterFiles = -1;
  /// Where rotation says what it removed or left (null: silent).
  std::FILE *log = nullptr;
};

/// The lineage of a run that starts afresh: the XXH64 of the artifact's
/// source and the seed (16 hex digits). Deterministic, so that two runs of
/// one description and seed write the same bytes (the tests compare
/// checkpoints bitwise); two such runs never share a directory, since a
/// fresh run refuses one that holds a run.
std::string newCheckpointLineage(const std::string &source, uint64_t seed);

/// The lock of a checkpoint directory: one run at a time writes into it.
/// acquire() creates the directory (and so probes, before step 1, that it
/// can be created and written), takes an exclusive flock on DIR/.lock and
/// writes this process's id there; a second run is refused with the pid of
/// the holder. The lock is released when the object is destroyed (or the
/// process ends, however it ends).
class CheckpointLock {
public:
  CheckpointLock() = default;
  CheckpointLock(const CheckpointLock &) = delete;
  CheckpointLock &operator=(const CheckpointLock &) = delete;
  ~CheckpointLock();
  Status acquire(const std::string &directory);

private:
  int fd_ = -1;
};

/// The artifact metadata that carries a model's Hugging Face files into its
/// checkpoints (written by the llmc driver): config.json (the one llmc
/// writes for the model, complete for transformers' AutoConfig),
/// generation_config.json, and `hf.file.NAME` for the tokenizer's files.
constexpr const char *kHfConfigKey = "hf.config";
constexpr const char *kHfGenerationConfigKey = "hf.generation_config";
constexpr const char *kHfFilePrefix = "hf.file.";

/// The files those keys of `metadata` make (name -> contents). Fails on a
/// name that is not a plain file name.
Status checkpointHfFiles(const std::map<std::string, std::string> &metadata,
                         std::map<std::string, std::string> &files);

/// "step-00000042".
std::string checkpointName(int64_t step);

/// Saves the session's parameters and optimizer state (arguments by role,
/// as GLOBAL tensors: assembled from the ranks of a sharded program, copied
/// to the host first when they live on a device) into
/// `directory`/step-NNNNNNNN and points `latest` at it.
/// `path` receives the checkpoint's directory.
Status saveCheckpoint(const std::string &directory,
                      const DeviceSession &session,
                      const CheckpointState &state,
                      const CheckpointOptions &options, std::string &path);

/// Resolves what a user gave to --resume: a checkpoint directory, or a
/// checkpoint root holding `latest`.
Status resolveCheckpoint(const std::string &given, std::string &path);

/// Binds every parameter and optimizer-state argument of `session` from the
/// checkpoint at `path` (a step-NNNNNNNN directory) and reads its state.
/// The tensors are global: a checkpoint resumes on any mesh.
/// Fails, naming the file and tensor, when one is missing or its shape or
/// dtype differs from the program's, when a file holds tensors the program
/// does not use (a checkpoint of a larger model), when a tensor holds a NaN
/// or an infinity, when a file's tensors do not hash to the xxh64 the
/// checkpoint recorded, or when the two files are of different steps.
Status loadCheckpoint(const std::string &path, DeviceSession &session,
                      CheckpointState &state);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_CHECKPOINT_H
