//===- Session.h - run a loaded Executable on CPU devices -------*- C++ -*-===//
//
// A Session owns the memory of one Executable's run: per rank an arena laid
// out by the buffer plan, with the constants copied in. The caller binds
// every argument by name, runs the command lists, and reads the outputs.
// Runs can be repeated; bound arguments keep their values until bound again.
//
// A program of N ranks runs on N virtual CPU devices in this process (one
// thread each), whose Collective commands go through CpuWorld
// (runtime/cpu/Collectives.h). Callers bind and read GLOBAL tensors: a
// sharded argument is split into the ranks' blocks, a sharded output is
// assembled from them (runtime/Sharding.h).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_SESSION_H
#define LLMC_RUNTIME_SESSION_H

#include "runtime/DeviceSession.h"
#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace llmc::rt {

class CpuProfile;
class CpuWorld;
class ThreadPool;

struct SessionOptions {
  /// Threads for the CPU kernels; 0 uses every core. With several ranks,
  /// each rank runs its kernels on its own device thread.
  unsigned threads = 0;
  /// How long a collective waits for the other ranks before it fails,
  /// naming the ranks that never arrived (a rank that failed earlier).
  /// The environment variable LLMC_COLLECTIVE_TIMEOUT_S (whole seconds, as
  /// for NCCL in docs/distributed.md) overrides it in Session::create.
  unsigned collectiveTimeoutMs = 60000;
  /// A test hook (fault injection, docs/testing.md): this rank stops
  /// answering at its first collective of each run: it waits the timeout
  /// and one more second before it joins, so that its peers time out. -1:
  /// none. The environment variable LLMC_TEST_STALL_RANK sets it.
  int stallRank = -1;
};

class Session : public DeviceSession {
public:
  /// Prepares `executable` (which must outlive the session) for running.
  static Status create(const Executable &executable,
                       const SessionOptions &options,
                       std::unique_ptr<Session> &session);
  ~Session() override;

  const Executable &executable() const override { return executable_; }
  std::string deviceName() const override { return "cpu"; }
  int numRanks() const { return static_cast<int>(arenas_.size()); }

  /// Index of the argument called `name`, or -1.
  int findArgument(const std::string &name) const;

  /// Copies the GLOBAL tensor `data` into argument `name`: every rank gets
  /// its block of a sharded argument, a copy of a replicated one. Its dtype
  /// and global shape must be the argument's (the message says which
  /// differs).
  Status setArgument(const std::string &name, DType dtype, const Shape &shape,
                     const void *data, size_t bytes) override;
  /// Copies output `output` of the last run into argument `name` (rank by
  /// rank): both must have the same sharding and local shape.
  Status setArgumentFromOutput(const std::string &name, size_t output) override;

  /// Runs the program (every rank). Fails, naming them, if arguments were
  /// never bound; a failing rank is named in the message.
  Status run() override;

  /// A view of output `index` on `rank`: that rank's LOCAL block (valid
  /// until the next run).
  Status output(size_t index, TensorRef &tensor, int rank = 0) const;
  /// A view of argument `index` on `rank` as bound (its local block).
  Status argument(size_t index, TensorRef &tensor, int rank = 0) const;
  /// DeviceSession: the GLOBAL tensor. Replicated: rank 0's view, nothing
  /// copied; sharded: assembled from every rank's block into `storage`.
  Status outputToHost(size_t index, HostTensor &tensor) const override;
  Status argumentToHost(size_t index, HostTensor &tensor) const override;

  /// DeviceSession: every command of every rank, timed on its thread, as
  /// an event on track kTraceCommandTrack of process `rank`.
  void setTrace(TraceRecorder *trace) override;

  /// Bytes of rank 0's arena (the buffer plan's total).
  uint64_t arenaBytes() const;
  /// The highest arena byte that binding, constants and commands have
  /// touched on `rank` so far (the measured high-water mark of its memory;
  /// equal to the arena when the plan is tight).
  uint64_t highWaterBytes(int rank = 0) const;

private:
  Session(const Executable &executable, const SessionOptions &options);
  TensorRef slot(int rank, int32_t value) const;
  void touch(int rank, int32_t value);
  Status runRank(int rank);
  void traceCommand(int rank, size_t index, double beginUs) const;
  /// The global tensor of `value`; `stage` >= 0: read on the ranks of that
  /// pipeline stage (a pipelined program's output).
  Status globalToHost(int32_t value, const TensorSharding &sharding,
                      HostTensor &tensor, int32_t stage = -1) const;
  /// The rank with `rank`'s coordinates but position `stage` along the
  /// mesh axis "pp" (`rank` itself when `stage` < 0).
  int holderOf(int32_t stage, int rank) const;

  const Executable &executable_;
  std::vector<std::unique_ptr<ThreadPool>> pools_;
  std::vector<uint8_t *> arenas_;
  std::unique_ptr<CpuWorld> world_;
  /// LLMC_PROFILE: thread CPU time per command kind (runtime/cpu/CpuProfile.h).
  std::unique_ptr<CpuProfile> profile_;
  /// --trace: the recorder of the traced step running now, else null.
  TraceRecorder *trace_ = nullptr;
  std::vector<bool> bound_;
  std::vector<uint64_t> highWater_;
  unsigned collectiveTimeoutMs_ = 0;
  int stallRank_ = -1;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_SESSION_H
