//===- VirtualRanks.h - every rank of a mesh on one GPU ----------*- C++ -*-===//
//
// Virtual ranks (docs/distributed.md, "Virtual ranks on one GPU"): the SPMD
// program of N ranks that `llmc launch -n N` runs as N processes, run in one
// process on one GPU. Each rank is a CudaSession of its own (its arena, its
// streams, its kernels) driven by its own host thread; their Collective
// commands go to a VirtualRankBackend instead of NCCL. At each collective
// the members' threads meet (CollectiveRendezvous.h); the last to arrive
// enqueues the collective on the world's stream, which first waits for an
// event every member recorded on its compute stream, then runs the copies and
// reduction kernels of the plan (collective/VirtualCollectivePlan.h) between
// the ranks' arenas, and records every member's `done` event, which each
// rank's compute stream waits for before the first later command touching
// those bytes, as under NCCL. Reductions add in group order as the CPU
// collectives do, so a collective is bit for bit the CPU's.
//
// Why it cannot deadlock: the threads meet in the order of the CPU virtual
// devices, which run every program; on the device, each collective waits
// only for events its members recorded before they met, which depend only on
// collectives enqueued earlier on the one world stream.
//
// Selected only when asked (llmc-run --virtual-ranks, or this API), never in
// place of a missing GPU. Pipelined programs run too: each rank binds the
// arguments of its stage only, and a tensor one stage holds is read from
// that stage's rank (stageHolder, DeviceSession.h).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_SESSION_VIRTUALRANKS_H
#define LLMC_RUNTIME_CUDA_SESSION_VIRTUALRANKS_H

#include "runtime/DeviceSession.h"
#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

class CudaSession;
class VirtualWorld;

struct VirtualRankOptions {
  /// The GPU every rank runs on.
  int device = 0;
  /// How long a rank waits at a collective for the others;
  /// LLMC_COLLECTIVE_TIMEOUT_S overrides it in createVirtualRankDeviceSession.
  std::chrono::milliseconds timeout{std::chrono::seconds(600)};
  /// Every rank waits for each of its commands (CudaSessionOptions).
  bool syncEachCommand = false;
};

/// The DeviceSession of a program's every rank on one GPU. Callers bind and
/// read GLOBAL tensors, as on the CPU: a sharded argument is split into the
/// ranks' blocks, a sharded output assembled from them.
class VirtualRankSession : public DeviceSession {
public:
  /// A CudaSession per rank of `executable` (which must outlive the
  /// session) on options.device, their kernels loaded, and the world that
  /// connects them. Fails for more ranks than a collective may have (64),
  /// and for an artifact without the virtual ranks' kernels (compiled by an
  /// older llmc: compile it again).
  static Status create(const Executable &executable,
                       const VirtualRankOptions &options,
                       std::unique_ptr<VirtualRankSession> &session);
  ~VirtualRankSession() override;

  const Executable &executable() const override { return executable_; }
  /// "cuda:0 (4 virtual ranks)"
  std::string deviceName() const override;
  std::string hardwareName() const override;

  Status setArgument(const std::string &name, DType dtype, const Shape &shape,
                     const void *data, size_t bytes) override;
  Status setArgumentConverting(const std::string &name, DType dtype,
                               const Shape &shape, const void *data,
                               size_t bytes, ThreadPool *pool) override;
  Status zeroArgument(const std::string &name) override;
  /// Drawn on the device when every rank can (a replicated argument).
  Status drawArgument(size_t index, uint64_t seed, bool &drawn) override;
  Status setArgumentFromOutput(const std::string &name,
                               size_t output) override;
  /// Runs every rank's program on its own thread and waits for all. A rank
  /// that fails stops the others at their next collective (the world is
  /// aborted, and the session is unusable after it); the first failure is
  /// returned, as "rank R: ...".
  Status run() override;
  Status outputToHost(size_t index, HostTensor &tensor) const override;
  Status argumentToHost(size_t index, HostTensor &tensor) const override;
  /// --trace: rank 0's commands only (its compute and collective events).
  void setTrace(TraceRecorder *trace) override;
  std::string memorySummary() const override;
  std::string backendNotes() const override;

  /// The session of rank `rank` (for tests and tools that look at one).
  CudaSession &rank(int rank) { return *ranks_[rank]; }
  int ranks() const { return static_cast<int>(ranks_.size()); }

private:
  VirtualRankSession(const Executable &executable,
                     const VirtualRankOptions &options);
  Status globalToHost(bool isOutput, size_t index, HostTensor &tensor) const;

  const Executable &executable_;
  VirtualRankOptions options_;
  std::unique_ptr<VirtualWorld> world_; ///< outlives the ranks' backends
  std::vector<std::unique_ptr<CudaSession>> ranks_;
};

/// The tools' factory (TrainOptions::cudaSession under --virtual-ranks): a
/// VirtualRankSession on GPU 0, LLMC_COLLECTIVE_TIMEOUT_S its timeout.
Status createVirtualRankDeviceSession(const Executable &executable,
                                      std::unique_ptr<DeviceSession> &session);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_SESSION_VIRTUALRANKS_H
