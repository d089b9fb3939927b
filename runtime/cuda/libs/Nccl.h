//===- Nccl.h - the collectives of a multi-process GPU run ------*- C++ -*-===//
//
// One process per GPU runs one rank of an SPMD Executable (docs/
// distributed.md). NcclWorld holds what its Collective commands need: the
// world communicator (ncclCommInitRank from the unique id rank 0 broadcast
// through the rendezvous), one communicator per distinct group of ranks the
// program's collectives use (ncclCommSplit of the world, member i of the
// group becoming rank i of its communicator, so that NCCL's chunk order is
// the group order of Executable.h), and a communication stream.
//
// Ordering against the compute stream uses events: before a collective the
// communication stream waits for an event recorded on the compute stream;
// after it, an event recorded on the communication stream is what the
// compute stream waits for before the first later command that touches the
// collective's bytes (CudaSession does that wait). A hang never blocks
// forever: synchronize() polls the events and ncclCommGetAsyncError with a
// deadline, aborts the communicators on failure and names the collective
// (its kind, group and model part) that did not complete.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_NCCL_H
#define LLMC_RUNTIME_CUDA_NCCL_H

#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/libs/CollectiveBackend.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// NCCL's unique id as the bytes the rendezvous broadcasts (128 of them).
Status ncclNewUniqueId(std::vector<uint8_t> &bytes);

/// "unhandled cuda error (run with NCCL_DEBUG=INFO for details)": NCCL's
/// message for `result` and its last error string.
Status ncclStatus(ncclResult_t result, const std::string &what);

struct NcclWorldOptions {
  /// How long synchronize() waits for the enqueued collectives before it
  /// aborts the communicators and fails naming the first unfinished one.
  /// LLMC_COLLECTIVE_TIMEOUT_S overrides it in llmc-run.
  std::chrono::milliseconds timeout{std::chrono::seconds(600)};
};

class NcclWorld : public CollectiveBackend {
public:
  /// Creates the world communicator of `worldSize` ranks from `uniqueId`
  /// (ncclNewUniqueId's bytes on rank 0, broadcast to the others) on the
  /// current CUDA device, then one communicator per distinct group found in
  /// the Collective commands of ALL ranks of `executable` (every rank must
  /// take part in every split, member or not). Collective: every rank calls
  /// it with the same executable.
  static Status create(const Executable &executable, int rank, int worldSize,
                       const std::vector<uint8_t> &uniqueId,
                       const NcclWorldOptions &options,
                       std::unique_ptr<NcclWorld> &world);
  ~NcclWorld() override;
  NcclWorld(const NcclWorld &) = delete;
  NcclWorld &operator=(const NcclWorld &) = delete;

  int rank() const { return rank_; }
  int worldSize() const { return worldSize_; }
  cudaStream_t stream() const override { return stream_; }

  /// Enqueues Collective `command` on the communication stream after the
  /// work already on `compute`; `done` (created by the caller) is recorded
  /// on the communication stream after it. Fails naming the collective,
  /// the rank and the command's origin. `started` (when not null) is
  /// recorded on the communication stream once it has waited for compute,
  /// just before the collective: where a trace's event of it begins.
  Status enqueue(const Command &command, const std::vector<TensorRef> &inputs,
                 const std::vector<TensorRef> &outputs, cudaStream_t compute,
                 cudaEvent_t done, cudaEvent_t started = nullptr) override;

  /// All-gathers `bytes` bytes from every rank of the world (on the
  /// communication stream, after `compute`) into `gathered` on the host:
  /// rank r's bytes at r * bytes. For reading sharded outputs; collective.
  Status gatherToHost(const void *device, size_t bytes, cudaStream_t compute,
                      std::vector<uint8_t> &gathered) override;

  /// Waits until `event` (recorded after the last enqueued work) completes,
  /// polling every communicator's asynchronous error; past the timeout, or
  /// on an NCCL error, aborts the communicators and fails naming the first
  /// collective of this run whose `done` event had not completed.
  Status synchronize(cudaEvent_t event) override;

  /// Direct and Capture forget the collectives enqueued so far (what
  /// synchronize() names); Replay names the captured run's, through the
  /// events the graph records (enqueue under Capture adds them).
  void beginRun(RunMode mode) override;

  /// Yes (NCCL 2.9 and later capture collectives into CUDA graphs).
  bool capturable() const override { return true; }

  const char *transport() const override { return "NCCL"; }

private:
  NcclWorld() = default;
  /// The communicator of `ranks` (the world's when it is 0..n-1 in order).
  Status communicatorFor(const std::vector<int> &ranks, ncclComm_t &comm,
                         int &member) const;
  void abortAll();

  struct Pending {
    std::string what; ///< "all-reduce over [0, 1] at blocks.0.mlp"
    cudaEvent_t done;
  };

  int rank_ = 0;
  int worldSize_ = 1;
  NcclWorldOptions options_;
  ncclComm_t world_ = nullptr;
  std::map<std::vector<int>, ncclComm_t> groups_; ///< null: not a member
  cudaStream_t stream_ = nullptr;
  cudaEvent_t computeReady_ = nullptr;
  void *scratch_ = nullptr; ///< gatherToHost's device buffer
  size_t scratchBytes_ = 0;
  std::vector<Pending> pending_;
  /// The captured run's collectives, each with an event of its own that
  /// the graph records (cudaEventRecordExternal) when it is done: the
  /// capture's `done` events order the graph's nodes but are not recorded
  /// by its replays, so the watchdog could not query them.
  std::vector<Pending> captured_;
  std::vector<cudaEvent_t> watchEvents_; ///< owned; captured_ uses a prefix
  bool capturing_ = false;
  bool aborted_ = false;
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_NCCL_H
