//===- DeviceSession.h - what the training loop runs on ---------*- C++ -*-===//
//
// The part of a session's contract that rt::train (runtime/train/Trainer.h),
// the checkpoints and the sample use, so that one loop drives either the CPU
// rt::Session (runtime/Session.h) or the GPU cuda::CudaSession
// (runtime/cuda/session/CudaSession.h) while llmc_runtime itself links no CUDA: the
// GPU session reaches the loop through TrainOptions::cudaSession, a factory
// that only a tool linking llmc_runtime_cuda fills in.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DEVICESESSION_H
#define LLMC_RUNTIME_DEVICESESSION_H

#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llmc::rt {

class ThreadPool;
class TraceRecorder;

/// A tensor in host memory: `view` points either into the session's own host
/// memory (the CPU session: no copy) or into `storage` (a device session
/// copied it). Valid until the next run or bind, like the session's views.
struct HostTensor {
  TensorRef view;
  std::vector<uint8_t> storage;
};

class DeviceSession {
public:
  virtual ~DeviceSession();

  virtual const Executable &executable() const = 0;
  /// "cpu" or "cuda:N", for messages.
  virtual std::string deviceName() const = 0;
  /// The hardware: "cpu", or the GPU's product name ("NVIDIA H200"); the
  /// training loop picks the device profile of its MFU by it
  /// (runtime/train/Utilization.h).
  virtual std::string hardwareName() const { return "cpu"; }

  /// Copies the host GLOBAL tensor `data` into argument `name` (each rank
  /// gets its block of a sharded argument); its dtype and global shape must
  /// be the argument's (the message says which differs).
  virtual Status setArgument(const std::string &name, DType dtype,
                             const Shape &shape, const void *data,
                             size_t bytes) = 0;
  /// setArgument from a float tensor of another float type (a bf16 or f16
  /// checkpoint into f32 parameters): `data` holds the GLOBAL tensor in
  /// `dtype` (f32, f64, bf16, f16), converted to the argument's type
  /// (exactly when widening; to nearest even when narrowing). The default
  /// converts on the host, on `pool`'s threads when given, and binds; the
  /// CUDA session copies the narrower bytes and converts on the device.
  virtual Status setArgumentConverting(const std::string &name, DType dtype,
                                       const Shape &shape, const void *data,
                                       size_t bytes, ThreadPool *pool);
  /// Argument `name` becomes all zeros (the AdamW moments at the start).
  /// The default binds a host buffer of zeros; a device session clears its
  /// own memory instead.
  virtual Status zeroArgument(const std::string &name);
  /// Draws argument `index` from its initializer with `seed` where it
  /// lives, the values initialArgumentBytes (runtime/train/Init.h) would
  /// bind, and sets `drawn`. A session that cannot (the default; the CUDA
  /// session for a sharded argument or an f16 one) leaves `drawn` false and
  /// the caller draws on the host.
  virtual Status drawArgument(size_t index, uint64_t seed, bool &drawn) {
    (void)index, (void)seed;
    drawn = false;
    return Status::ok();
  }
  /// Output `output` of the last run becomes argument `name`'s value, without
  /// a trip through the host (the training loop's feedback of new parameters
  /// and optimizer state).
  virtual Status setArgumentFromOutput(const std::string &name,
                                       size_t output) = 0;
  /// Runs the program and waits for it.
  virtual Status run() = 0;

  /// Output `index` of the last run in host memory: the GLOBAL tensor
  /// (assembled from the ranks' blocks when sharded).
  virtual Status outputToHost(size_t index, HostTensor &tensor) const = 0;
  /// Argument `index` as bound, the GLOBAL tensor, in host memory.
  virtual Status argumentToHost(size_t index, HostTensor &tensor) const = 0;

  /// A multi-process run's agreement on a stop request (a signal's number,
  /// 0 for none): every process calls it after each step, and `signal`
  /// becomes the largest any of them passed, so that all stop after the
  /// same step. Collective under NCCL; the default (one process) keeps it.
  virtual Status agreeOnStop(int &signal) {
    (void)signal;
    return Status::ok();
  }

  /// --trace (runtime/TraceRecorder.h): from now on every run adds an
  /// event per command to `trace` (the session names its processes and
  /// tracks there) until it is set back to null. The recorder outlives the
  /// runs it is set for. The default records nothing.
  virtual void setTrace(TraceRecorder *trace) { (void)trace; }

  /// The ranks of the program this session runs in this process: all of
  /// them for the CPU session, one for a GPU's. The data loader reads the
  /// rows of the batch these ranks hold and no others.
  virtual std::vector<int> localRanks() const;

  /// One line on the device memory the session holds, measured now, next
  /// to the buffer plan's prediction; "" when the device has nothing to
  /// say (the CPU session).
  virtual std::string memorySummary() const { return {}; }
  /// Lines on which libraries or kernels run what (the CUDA session: which
  /// kernels run attention, and why); "" for the CPU session.
  virtual std::string backendNotes() const { return {}; }
};

/// Makes the session a training run uses on a device other than the CPU.
/// A std::function so that a multi-process run can carry its LaunchEnv.
using DeviceSessionFactory = std::function<Status(
    const Executable &executable, std::unique_ptr<DeviceSession> &session)>;
/// How many devices of that kind this machine has (0 when none, or when the
/// driver is missing).
using DeviceCountFn = int (*)();

/// The checks every session makes when binding: argument `name` takes
/// `dtype` `shape` (`bytes` bytes) where the program's slot is `target`.
/// The message names the argument and both types.
Status checkBinding(const std::string &name, const TensorRef &target,
                    DType dtype, const Shape &shape, size_t bytes);

/// NotFound naming `name` when `index` < 0 (findArgument's "none").
Status checkArgumentFound(const std::string &name, int index);

/// Fails, naming up to five of them, when an argument of `executable` was
/// never bound (`bound[i]` false): what run() checks first.
Status checkAllBound(const Executable &executable,
                     const std::vector<bool> &bound);

/// Pipelined programs (docs/sharding.md, "Pipeline parallelism"): the rank
/// whose slot holds, for `rank`, a value of pipeline stage `stage` -- the
/// rank with rank's coordinates but `stage` along the mesh axis "pp";
/// `rank` itself when stage < 0 (every rank holds it).
int stageHolder(const Executable &executable, int32_t stage, int rank);
/// The rank that holds output `index` for `rank`: `rank` itself when its
/// stage computes it (its own stage or one of the output's replica stages),
/// else stageHolder of the output's stage.
int outputHolder(const Executable &executable, size_t index, int rank);
/// Whether `rank` binds argument `index` (a pipelined program binds an
/// argument only on the stage that reads it; the other ranks' slot may hold
/// another value).
bool bindsArgument(const Executable &executable, size_t index, int rank);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DEVICESESSION_H
