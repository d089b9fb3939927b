//===- CollectiveRendezvous.h - ranks' threads meet at a collective -*- C++ -*-===//
//
// The host side of virtual ranks (docs/distributed.md, "Virtual ranks on one
// GPU"): N ranks of one SPMD program run in one process, each on its own
// thread, and meet here at every collective and send/recv. Each member posts
// what its call is (kind, reduce op, dtype, element counts, its buffers and
// an opaque context such as its CUDA events); the last member to arrive checks
// that the posts agree and then runs the caller's action once, with every
// member's post in group order, while the others wait; every member returns
// the action's status. The action does the data movement (on the GPU: it
// enqueues the copies and reduction kernels), so this file needs no device.
//
// Matching is that of the CPU collectives (runtime/cpu/Collectives.h): group
// collectives in call order per group, send/recv by (source, destination,
// tag) in FIFO order, both sides waiting for each other. A program that runs
// on CPU virtual devices therefore meets here in the same order and cannot
// deadlock here either. Nothing hangs: a member that never arrives fails the
// others after the timeout (naming the missing ranks), and abort() fails
// every waiting and later call at once (a rank that failed elsewhere).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DIST_COLLECTIVERENDEZVOUS_H
#define LLMC_RUNTIME_DIST_COLLECTIVERENDEZVOUS_H

#include "runtime/DType.h"
#include "runtime/Executable.h"
#include "runtime/Mesh.h"
#include "runtime/Status.h"
#include "runtime/cpu/Collectives.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace llmc::rt {

/// One member's side of a collective or of a send/recv.
struct CollectivePost {
  CollectiveKind kind = CollectiveKind::AllReduce;
  ReduceOp op = ReduceOp::Sum; ///< all-reduce and reduce-scatter only
  DType dtype = DType::F32;
  int64_t inputCount = 0;  ///< elements (0 for a recv)
  int64_t outputCount = 0; ///< elements (0 for a send)
  const void *input = nullptr;
  void *output = nullptr;
  /// The caller's own (the virtual-rank backend's CUDA events); never read.
  void *context = nullptr;
};

/// Run once per collective by the last member to arrive: `members` in group
/// order (for send/recv: the send's post, then the recv's).
using CollectiveAction =
    std::function<Status(const std::vector<CollectivePost> &members)>;

class CollectiveRendezvous {
public:
  /// Ranks 0..ranks-1; `timeout` is how long a member waits for its peers.
  CollectiveRendezvous(int ranks, std::chrono::milliseconds timeout);
  ~CollectiveRendezvous();
  CollectiveRendezvous(const CollectiveRendezvous &) = delete;
  CollectiveRendezvous &operator=(const CollectiveRendezvous &) = delete;

  int ranks() const { return ranks_; }

  /// A group collective (all-reduce, all-gather, reduce-scatter, all-to-all)
  /// of member `rank`. Checks its own post (counts that fit the kind and the
  /// group size; a dtype that can be reduced), then waits for the others;
  /// the last to arrive checks that all posts agree (kind, op, dtype,
  /// counts) and runs `action`. Errors: InvalidArgument (the caller alone
  /// when it is not a member; every member for a disagreement, naming both
  /// sides), Unavailable (a timeout naming the ranks that never arrived:
  /// the group stays unusable, since its members no longer agree on the
  /// next call; or after abort()), or the action's status.
  Status meet(int rank, const DeviceGroup &group, const CollectivePost &post,
              const CollectiveAction &action);

  /// A send (post.kind Send, to `peer`) or recv (Recv, from `peer`) of
  /// `rank` with `tag`. Both sides wait until paired; the second to arrive
  /// checks that dtype and counts match and runs `action` with {send, recv}.
  /// A side without a partner fails after the timeout and is withdrawn.
  Status meetPeer(int rank, int peer, int tag, const CollectivePost &post,
                  const CollectiveAction &action);

  /// Fails every call waiting now and every later one with Unavailable
  /// "... the run was stopped: <why>". For a rank that failed outside a
  /// collective, so that its peers stop at once instead of at the timeout.
  void abort(const std::string &why);

private:
  struct Round;
  struct Channel;
  struct PeerCall;
  using PeerKey = std::tuple<int, int, int>; ///< source, destination, tag

  Status checkRank(const std::string &where, int rank) const;

  int ranks_;
  std::chrono::milliseconds timeout_;
  // One lock for everything: the calls are few per step and short (the
  // action runs outside it).
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::vector<int>, std::unique_ptr<Channel>> channels_;
  std::map<PeerKey, std::deque<std::shared_ptr<PeerCall>>> sends_, recvs_;
  std::string aborted_; ///< why the run was stopped; empty while running
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DIST_COLLECTIVERENDEZVOUS_H
