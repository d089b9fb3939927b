//===- CollectiveRendezvous.cpp - ranks' threads meet at a collective -----===//
//
// A group collective is a round on the group's channel:
//   1. arrive: the member checks its own post and adds it to the round;
//   2. the last to arrive starts the next round on the channel (so that a
//      member returning early may already call the next collective), checks
//      that the posts agree and, outside the lock, runs the action;
//   3. it settles the round with the action's status and wakes the others.
// A member waits for step 3 with a deadline only while someone is missing:
// once everyone has arrived the action is bounded work and is waited for.
// Send/recv: each side queues a call under its (source, destination, tag);
// the second side takes the oldest call of the other queue and runs the
// action for the pair.
//
//===----------------------------------------------------------------------===//
#include "runtime/dist/CollectiveRendezvous.h"
#include "runtime/cpu/CollectiveSupport.h"

namespace llmc::rt {

using Clock = std::chrono::steady_clock;

struct CollectiveRendezvous::Round {
  explicit Round(int size) : posts(size), present(size, false) {}
  std::vector<CollectivePost> posts;
  std::vector<bool> present;
  std::vector<Status> ownErrors; ///< each member's own check, by arrival
  int arrived = 0;
  bool settled = false;
  Status status;
};

struct CollectiveRendezvous::Channel {
  explicit Channel(int size) : round(std::make_shared<Round>(size)) {}
  std::shared_ptr<Round> round; ///< the round that arrivals join
  Status broken; ///< set by a timeout: members no longer agree on the order
};

struct CollectiveRendezvous::PeerCall {
  CollectivePost post;
  bool settled = false;
  Status status;
};

namespace {

bool isReduction(CollectiveKind kind) {
  return kind == CollectiveKind::AllReduce ||
         kind == CollectiveKind::ReduceScatter;
}

/// The checks of one member's post that need no peer: its counts fit the
/// collective over `size` members, its dtype can be reduced.
Status checkOwnPost(const CollectivePost &post, int size,
                    const std::string &where) {
  auto fail = [&](const std::string &message) {
    return invalidArgument(where + ": " + message);
  };
  if (isReduction(post.kind) && !isReducible(post.dtype))
    return fail(std::string("cannot reduce ") + dtypeName(post.dtype));
  if (post.kind == CollectiveKind::Send || post.kind == CollectiveKind::Recv)
    return fail("send and recv meet through meetPeer");
  int64_t in = post.inputCount, out = post.outputCount;
  auto counts = [&]() {
    return "the input has " + std::to_string(in) +
           " elements and the output " + std::to_string(out);
  };
  switch (post.kind) {
  case CollectiveKind::AllReduce:
    if (in != out)
      return fail(counts() + "; an all_reduce needs them equal");
    break;
  case CollectiveKind::AllGather:
    if (out != in * size)
      return fail(counts() + "; an all_gather over " + std::to_string(size) +
                  " ranks needs " + std::to_string(in * size) +
                  " output elements");
    break;
  case CollectiveKind::ReduceScatter:
    if (in != out * size)
      return fail(counts() + "; a reduce_scatter over " +
                  std::to_string(size) + " ranks needs " +
                  std::to_string(out * size) + " input elements");
    break;
  case CollectiveKind::AllToAll:
    if (in != out || in % size != 0)
      return fail(counts() + "; an all_to_all over " + std::to_string(size) +
                  " ranks needs them equal and divisible by " +
                  std::to_string(size));
    break;
  default:
    break;
  }
  if ((in && !post.input) || (out && !post.output))
    return fail("a buffer with elements has no data");
  return Status::ok();
}

/// Run by the last member to arrive: do the posts agree?
Status checkAgreement(const std::vector<CollectivePost> &posts,
                      const DeviceGroup &group, const std::string &where) {
  const CollectivePost &first = posts[0];
  auto rankOf = [&](size_t i) { return std::to_string(group.ranks()[i]); };
  for (size_t i = 1; i < posts.size(); ++i) {
    const CollectivePost &other = posts[i];
    if (other.kind != first.kind)
      return invalidArgument(where + ": rank " + rankOf(i) + " called " +
                             collectiveKindName(other.kind) + " but rank " +
                             rankOf(0) + " called " +
                             collectiveKindName(first.kind) +
                             "; members must call collectives on a group in "
                             "the same order");
    if (isReduction(first.kind) && other.op != first.op)
      return invalidArgument(where + ": rank " + rankOf(i) + " reduces with " +
                             reduceOpName(other.op) + " but rank " +
                             rankOf(0) + " with " + reduceOpName(first.op));
    if (other.dtype != first.dtype || other.inputCount != first.inputCount)
      return invalidArgument(
          where + ": rank " + rankOf(i) + " passed " +
          describeElements(other.inputCount, other.dtype) + " but rank " +
          rankOf(0) + " passed " +
          describeElements(first.inputCount, first.dtype));
  }
  return Status::ok();
}

} // namespace

CollectiveRendezvous::CollectiveRendezvous(int ranks,
                                           std::chrono::milliseconds timeout)
    : ranks_(ranks), timeout_(timeout) {}

CollectiveRendezvous::~CollectiveRendezvous() = default;

Status CollectiveRendezvous::checkRank(const std::string &where,
                                       int rank) const {
  if (rank < 0 || rank >= ranks_)
    return invalidArgument(where + ": rank " + std::to_string(rank) +
                           " is outside the world of " +
                           std::to_string(ranks_) + " ranks");
  return Status::ok();
}

void CollectiveRendezvous::abort(const std::string &why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_.empty())
    aborted_ = why.empty() ? std::string("aborted") : why;
  changed_.notify_all();
}

Status CollectiveRendezvous::meet(int rank, const DeviceGroup &group,
                                  const CollectivePost &post,
                                  const CollectiveAction &action) {
  const std::string where = std::string(collectiveKindName(post.kind)) +
                            " on group " + group.toString();
  // 1. What the caller alone can get wrong fails the caller alone.
  LLMC_RETURN_IF_ERROR(checkRank(where, rank));
  for (int member : group.ranks())
    LLMC_RETURN_IF_ERROR(checkRank(where, member));
  int member = group.memberIndex(rank);
  if (member < 0)
    return invalidArgument(where + ": rank " + std::to_string(rank) +
                           " is not a member of the group");
  const int size = group.size();
  Status own = checkOwnPost(post, size, where + ": rank " +
                                            std::to_string(rank));
  Clock::time_point deadline = Clock::now() + timeout_;

  std::unique_lock<std::mutex> lock(mutex_);
  auto stopped = [&]() {
    return Status::error(StatusCode::Unavailable,
                         where + ": the run was stopped: " + aborted_);
  };
  if (!aborted_.empty())
    return stopped();
  std::unique_ptr<Channel> &slot = channels_[group.ranks()];
  if (!slot)
    slot = std::make_unique<Channel>(size);
  Channel &channel = *slot;
  if (!channel.broken.isOk())
    return Status::error(StatusCode::Unavailable,
                         where + ": the group is unusable after an earlier "
                                 "failure: " +
                             channel.broken.message());
  std::shared_ptr<Round> round = channel.round;
  round->posts[member] = post;
  round->present[member] = true;
  if (!own.isOk())
    round->ownErrors.push_back(own);
  if (++round->arrived == size) {
    // 2. The last member: the next round, the checks, the action.
    channel.round = std::make_shared<Round>(size);
    Status status = round->ownErrors.empty() ? Status::ok()
                                             : round->ownErrors.front();
    if (status)
      status = checkAgreement(round->posts, group, where);
    if (status) {
      lock.unlock();
      status = action(round->posts);
      lock.lock();
    }
    // 3. Settle and wake the others.
    round->status = status;
    round->settled = true;
    changed_.notify_all();
    return status;
  }
  while (!round->settled) {
    if (!aborted_.empty() && round->arrived < size)
      return stopped();
    if (round->arrived == size) { // the action is running: bounded work
      changed_.wait(lock);
      continue;
    }
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        !round->settled && round->arrived < size) {
      std::vector<int> missing;
      for (int i = 0; i < size; ++i)
        if (!round->present[i])
          missing.push_back(group.ranks()[i]);
      DeviceGroup missingGroup;
      (void)DeviceGroup::create(missing, missingGroup); // distinct, non-empty
      round->status = Status::error(
          StatusCode::Unavailable,
          where + " did not complete within " + formatSeconds(timeout_) +
              ": ranks " + missingGroup.toString() + " never arrived");
      round->settled = true;
      channel.broken = round->status;
      channel.round = std::make_shared<Round>(size);
      changed_.notify_all();
    }
  }
  return round->status;
}

Status CollectiveRendezvous::meetPeer(int rank, int peer, int tag,
                                      const CollectivePost &post,
                                      const CollectiveAction &action) {
  const bool sending = post.kind == CollectiveKind::Send;
  const int source = sending ? rank : peer;
  const int destination = sending ? peer : rank;
  const std::string where =
      std::string(sending ? "send" : "recv") + " from rank " +
      std::to_string(source) + " to rank " + std::to_string(destination) +
      " with tag " + std::to_string(tag);
  if (!sending && post.kind != CollectiveKind::Recv)
    return invalidArgument(where + ": meetPeer takes a send or a recv, got " +
                           collectiveKindName(post.kind));
  LLMC_RETURN_IF_ERROR(checkRank(where, rank));
  LLMC_RETURN_IF_ERROR(checkRank(where, peer));
  if (peer == rank)
    return invalidArgument(where + ": a rank cannot send to itself");
  int64_t count = sending ? post.inputCount : post.outputCount;
  if (count && !(sending ? post.input : post.output))
    return invalidArgument(where + ": a buffer with elements has no data");
  PeerKey key{source, destination, tag};
  Clock::time_point deadline = Clock::now() + timeout_;

  std::unique_lock<std::mutex> lock(mutex_);
  if (!aborted_.empty())
    return Status::error(StatusCode::Unavailable,
                         where + ": the run was stopped: " + aborted_);
  auto &theirs = sending ? recvs_ : sends_;
  auto &mine = sending ? sends_ : recvs_;
  auto waiting = theirs.find(key);
  if (waiting != theirs.end() && !waiting->second.empty()) {
    // The second side: pair with the oldest call of the other.
    std::shared_ptr<PeerCall> other = waiting->second.front();
    waiting->second.pop_front();
    if (waiting->second.empty())
      theirs.erase(waiting);
    const CollectivePost &send = sending ? post : other->post;
    const CollectivePost &recv = sending ? other->post : post;
    Status status = Status::ok();
    if (send.dtype != recv.dtype || send.inputCount != recv.outputCount)
      status = invalidArgument(
          "send from rank " + std::to_string(source) + " to rank " +
          std::to_string(destination) + " with tag " + std::to_string(tag) +
          ": the send passed " + describeElements(send.inputCount, send.dtype) +
          " but the recv expects " +
          describeElements(recv.outputCount, recv.dtype));
    if (status) {
      lock.unlock();
      status = action({send, recv});
      lock.lock();
    }
    other->status = status;
    other->settled = true;
    changed_.notify_all();
    return status;
  }
  auto call = std::make_shared<PeerCall>();
  call->post = post;
  mine[key].push_back(call);
  changed_.notify_all();
  auto withdraw = [&]() {
    auto queue = mine.find(key);
    if (queue == mine.end())
      return false;
    for (auto it = queue->second.begin(); it != queue->second.end(); ++it)
      if (*it == call) {
        queue->second.erase(it);
        if (queue->second.empty())
          mine.erase(queue);
        return true;
      }
    return false; // taken: the partner is running the action
  };
  while (!call->settled) {
    bool late = changed_.wait_until(lock, deadline) == std::cv_status::timeout;
    if (call->settled)
      break;
    if (!aborted_.empty() && withdraw())
      return Status::error(StatusCode::Unavailable,
                           where + ": the run was stopped: " + aborted_);
    if (late && withdraw())
      return Status::error(
          StatusCode::Unavailable,
          where + " did not complete within " + formatSeconds(timeout_) +
              ": rank " + std::to_string(peer) + " never posted the matching " +
              (sending ? "recv" : "send"));
    if (late) // taken by the partner: its action is bounded work
      deadline = Clock::now() + timeout_;
  }
  return call->status;
}

} // namespace llmc::rt
