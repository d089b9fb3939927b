//===- Collectives.h - CPU virtual devices, collectives ---------*- C++ -*-===//
//
// N virtual devices in one process, each driven by its own thread, and the
// collectives they run over groups of ranks through shared memory (as XLA's
// host platform does). Every sharded program therefore runs, and is checked
// against the single-device run, without GPUs.
//
// Collectives are called from each participating device's thread and block
// until every member of the group has arrived. Reductions add in group
// order, ((x0 + x1) + x2) + ..., so results are bitwise reproducible; bf16 and
// f16 accumulate in f32 and round once on store. Nothing hangs: a mismatch
// between members fails all of them, and a peer that never arrives fails the
// others after a deadline.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CPU_COLLECTIVES_H
#define LLMC_RUNTIME_CPU_COLLECTIVES_H

#include "runtime/Kernel.h"
#include "runtime/Mesh.h"
#include "runtime/Status.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llmc::rt {

enum class ReduceOp : uint8_t { Sum, Max };

/// "sum", "max"
const char *reduceOpName(ReduceOp op);

struct CpuWorldOptions {
  /// How long a collective, a send or a recv waits for its peers before it
  /// returns Unavailable.
  std::chrono::milliseconds timeout{60000};
};

/// The communication state shared by the N virtual devices of one process.
/// Ranks are 0..numDevices-1; device `rank` calls the methods below from its
/// own thread, passing its rank. The methods are thread-safe.
///
/// Group collectives: every member passes the same DeviceGroup (the same
/// ranks in the same order) and members call collectives on a group in the
/// same order. Tensors are dense and row-major; "chunks" split the leading
/// dimension into group-size equal parts, chunk i going with member i.
/// Element types: f32, f64, bf16, f16, i32, i64 (gathers and all-to-all also
/// move i1). Input and output may be the same buffer (in place); for
/// all-gather in place means input == output's own chunk (NCCL's rule).
/// Buffers of different devices must not overlap.
///
/// Errors, returned by every member of the call alike:
///   - InvalidArgument when members disagree on the collective, the reduce
///     op, the dtype or the element count (naming both), when a member's
///     shapes do not fit the collective (e.g. a leading dimension that the
///     group size does not divide), or when `rank` is not in the group;
///   - Unavailable when some member did not arrive within the timeout
///     (naming the ranks that never arrived). A timed-out group is left
///     unusable, since its members no longer agree on which call is next:
///     later calls on it fail at once.
class CpuWorld {
public:
  explicit CpuWorld(int numDevices, CpuWorldOptions options = {});
  ~CpuWorld();
  CpuWorld(const CpuWorld &) = delete;
  CpuWorld &operator=(const CpuWorld &) = delete;

  int numDevices() const { return numDevices_; }
  const CpuWorldOptions &options() const { return options_; }

  /// output = op over the members' inputs, elementwise; same count and dtype.
  Status allReduce(int rank, const DeviceGroup &group, ReduceOp op,
                   const TensorRef &input, const TensorRef &output);

  /// output = the members' inputs concatenated along the leading dimension,
  /// in group order: output.shape[0] = group size * input.shape[0].
  Status allGather(int rank, const DeviceGroup &group, const TensorRef &input,
                   const TensorRef &output);

  /// Member i gets chunk i of op over the members' inputs:
  /// output.shape[0] = input.shape[0] / group size.
  Status reduceScatter(int rank, const DeviceGroup &group, ReduceOp op,
                       const TensorRef &input, const TensorRef &output);

  /// Member i's input chunk j lands in member j's output chunk i; input and
  /// output have the same shape.
  Status allToAll(int rank, const DeviceGroup &group, const TensorRef &input,
                  const TensorRef &output);

  /// Point to point, matched by (source, destination, tag); messages with
  /// the same key are received in the order they were sent. Synchronous:
  /// send returns once the receiver has copied the data (one copy, no
  /// buffering), so two ranks that both send before receiving time out.
  /// The receiver's dtype and element count must match the sender's.
  Status send(int rank, int destination, int tag, const TensorRef &input);
  Status recv(int rank, int source, int tag, const TensorRef &output);

private:
  struct Call;
  struct Round;
  struct GroupChannel;
  struct Message;
  struct MessageKey {
    int source, destination, tag;
    bool operator<(const MessageKey &other) const;
  };

  Status runCollective(const Call &call);
  GroupChannel &channelFor(const DeviceGroup &group);
  Status checkRank(const std::string &where, int rank) const;

  int numDevices_;
  CpuWorldOptions options_;

  std::mutex channelsMutex_;
  std::map<std::vector<int>, std::unique_ptr<GroupChannel>> channels_;

  // Point to point: one mailbox per (source, destination, tag).
  std::mutex messagesMutex_;
  std::condition_variable messagesChanged_;
  std::map<MessageKey, std::deque<std::shared_ptr<Message>>> mailboxes_;
};

/// Runs body(rank) for rank = 0..numDevices-1, each on its own thread, and
/// waits for all of them. Returns ok, or the first failure in time with
/// "device <rank>: " before its message.
Status runOnDevices(int numDevices,
                    const std::function<Status(int rank)> &body);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_CPU_COLLECTIVES_H
