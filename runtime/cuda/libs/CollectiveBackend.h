//===- CollectiveBackend.h - how a CUDA session runs its collectives -*- C++ -*-===//
//
// A CudaSession that runs one rank of a program of several hands its
// Collective commands to a backend: NCCL between processes (Nccl.h,
// docs/distributed.md) or the virtual ranks of one process on one GPU
// (session/VirtualRanks.h). Both keep the session's stream contract: a
// collective starts after the work already on the compute stream, and its
// `done` event, recorded once it has finished, is what the compute stream
// waits for before the first later command that touches its bytes.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_LIBS_COLLECTIVEBACKEND_H
#define LLMC_RUNTIME_CUDA_LIBS_COLLECTIVEBACKEND_H

#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// A Collective command's attributes ([collective, reduce, peer, tag, n,
/// ranks...], Executable.h), decoded.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::AllReduce;
  bool max = false;   ///< the reduction is max (else sum)
  int peer = -1;      ///< send/recv: the other rank
  int tag = 0;        ///< send/recv
  std::vector<int> ranks; ///< group collectives: the group, in order
};

/// Checks the attrs of a Collective command and decodes them.
Status decodeCollective(const Command &command, CollectiveCall &call);

/// Whether `kind` runs over a group (not send/recv).
bool isGroupCollective(CollectiveKind kind);

/// "[0, 1, 2]"
std::string formatRankList(const std::vector<int> &ranks);

/// "all-reduce (sum) over [0, 1] at transformer.h.0.mlp", "send to 1 at
/// ...": how errors and the watchdog name a collective.
std::string describeCollective(const CollectiveCall &call,
                               const std::string &origin);

/// How a run enqueues its collectives (CollectiveBackend::beginRun).
enum class RunMode {
  Direct,  ///< enqueued on the streams, run once
  Capture, ///< enqueued under a CUDA graph capture of the compute stream
  Replay,  ///< nothing enqueued: the graph captured earlier is launched
};

class CollectiveBackend {
public:
  virtual ~CollectiveBackend();

  /// Enqueues Collective `command` after the work already on `compute`;
  /// `done` (created by the caller) is recorded once it has finished.
  /// `started` (when not null) is recorded just before it starts: where a
  /// trace's event of it begins. Fails naming the rank, the collective and
  /// the command's origin.
  virtual Status enqueue(const Command &command,
                         const std::vector<TensorRef> &inputs,
                         const std::vector<TensorRef> &outputs,
                         cudaStream_t compute, cudaEvent_t done,
                         cudaEvent_t started = nullptr) = 0;

  /// All-gathers `bytes` bytes from every rank of the world (after
  /// `compute`) into `gathered` on the host: rank r's bytes at r * bytes.
  /// Collective: for reading sharded tensors in a multi-process run.
  virtual Status gatherToHost(const void *device, size_t bytes,
                              cudaStream_t compute,
                              std::vector<uint8_t> &gathered) = 0;

  /// Waits until `event` (recorded after the last enqueued work) completes;
  /// fails naming the first unfinished collective of this run.
  virtual Status synchronize(cudaEvent_t event) = 0;

  /// Called at the start of a run. Direct and Capture forget the
  /// collectives enqueued so far (what synchronize() names); Replay names
  /// those of the run that was captured.
  virtual void beginRun(RunMode mode) = 0;

  /// Whether a run's collectives may be captured into the step's CUDA
  /// graph (RunMode::Capture) and replayed from it.
  virtual bool capturable() const = 0;

  /// The stream the collectives run on (where a trace's event of one ends).
  virtual cudaStream_t stream() const = 0;

  /// "NCCL" or "virtual", for the session's device name.
  virtual const char *transport() const = 0;
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_LIBS_COLLECTIVEBACKEND_H
