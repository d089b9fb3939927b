//===- Collectives.cpp - CPU virtual devices, collectives -----------------===//
//
// A group collective is a rendezvous on the group's channel, in rounds. Each
// round is one collective call by every member:
//   1. arrive: publish a description of the call (buffers, dtype, count);
//      the last member to arrive checks that the calls agree;
//   2. read: each member reads the peers' inputs directly (no copy in) and
//      writes its own output, or a staging buffer when its output overlaps
//      its input;
//   3. barrier: once every member has read, the channel starts the next
//      round and outputs (which may alias inputs) may be written;
//   4. write: members copy staged results out.
// A round lives in a shared_ptr so that members finishing step 4 never race
// with the next round, which may already be gathering on the channel.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Collectives.h"
#include "runtime/cpu/CollectiveSupport.h"

#include <thread>

namespace llmc::rt {

using Clock = std::chrono::steady_clock;

const char *reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Max:
    return "max";
  }
  return "?";
}

namespace {

enum class CollectiveKind : uint8_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll
};

const char *collectiveName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  }
  return "?";
}

bool isReduction(CollectiveKind kind) {
  return kind == CollectiveKind::AllReduce ||
         kind == CollectiveKind::ReduceScatter;
}

bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto begin = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
  return aBytes && bBytes && begin(a) < begin(b) + bBytes &&
         begin(b) < begin(a) + aBytes;
}

/// One member's side of a collective call, as its peers see it.
struct Contribution {
  bool arrived = false;
  CollectiveKind kind = CollectiveKind::AllReduce;
  ReduceOp op = ReduceOp::Sum;
  DType dtype = DType::F32;
  int64_t count = 0; ///< input elements
  const uint8_t *input = nullptr;
  Status error; ///< what is wrong with this member's own arguments, if any
};

} // namespace

struct CpuWorld::Call {
  CollectiveKind kind;
  int rank;
  const DeviceGroup &group;
  ReduceOp op;
  const TensorRef &input;
  const TensorRef &output;
};

struct CpuWorld::Round {
  explicit Round(int size) : members(size) {}
  std::vector<Contribution> members;
  int arrived = 0;
  bool settled = false; ///< all arrived and checked, or the round failed
  Status status;
  int doneReading = 0;
  /// all_reduce: the reduced result, each member writing one slice of it.
  std::unique_ptr<uint8_t[]> scratch;
};

struct CpuWorld::GroupChannel {
  explicit GroupChannel(int size) : round(std::make_shared<Round>(size)) {}
  std::mutex mutex;
  std::condition_variable changed;
  std::shared_ptr<Round> round; ///< the round that arrivals join
  Status broken; ///< set by a timeout: members no longer agree on the order
};

CpuWorld::CpuWorld(int numDevices, CpuWorldOptions options)
    : numDevices_(numDevices), options_(options) {}

CpuWorld::~CpuWorld() = default;

Status CpuWorld::checkRank(const std::string &where, int rank) const {
  if (rank < 0 || rank >= numDevices_)
    return invalidArgument(where + ": rank " + std::to_string(rank) +
                           " is outside the world of " +
                           std::to_string(numDevices_) + " devices");
  return Status::ok();
}

CpuWorld::GroupChannel &CpuWorld::channelFor(const DeviceGroup &group) {
  std::lock_guard<std::mutex> lock(channelsMutex_);
  std::unique_ptr<GroupChannel> &channel = channels_[group.ranks()];
  if (!channel)
    channel = std::make_unique<GroupChannel>(group.size());
  return *channel;
}

//===----------------------------------------------------------------------===//
// Group collectives
//===----------------------------------------------------------------------===//

/// The checks of one member's arguments that need no peer.
static Status checkOwnArguments(CollectiveKind kind, const TensorRef &input,
                                const TensorRef &output, int groupSize,
                                const std::string &where) {
  auto fail = [&](const std::string &message) {
    return invalidArgument(where + ": " + message);
  };
  if (input.dtype != output.dtype)
    return fail(std::string("the input is ") + dtypeName(input.dtype) +
                " but the output is " + dtypeName(output.dtype));
  if (isReduction(kind) && !isReducible(input.dtype))
    return fail(std::string("cannot reduce ") + dtypeName(input.dtype));
  if ((input.bytes() && !input.data) || (output.bytes() && !output.data))
    return fail("a buffer with elements has no data");
  if (kind == CollectiveKind::AllReduce) {
    if (input.numElements() != output.numElements())
      return fail("the input has " + std::to_string(input.numElements()) +
                  " elements but the output has " +
                  std::to_string(output.numElements()));
    return Status::ok();
  }
  if (input.rank() == 0)
    return fail("needs a tensor of rank at least 1 to split or concatenate "
                "along its leading dimension, got a scalar");
  // The leading dimension of `in`; "" when `out` is what the collective
  // makes of it, else why not.
  auto mismatch = [&](const Shape &in, const Shape &out) -> std::string {
    Shape expected = in;
    if (kind == CollectiveKind::AllGather) {
      expected[0] *= groupSize;
    } else {
      if (in[0] % groupSize != 0)
        return "the leading dimension " + std::to_string(in[0]) +
               " of input " + formatShape(in) +
               " is not divisible by the group size " +
               std::to_string(groupSize);
      if (kind == CollectiveKind::ReduceScatter)
        expected[0] /= groupSize;
    }
    if (out != expected)
      return "expected an output of shape " + formatShape(expected) +
             " for input " + formatShape(in) + ", got " + formatShape(out);
    return "";
  };
  std::string message = mismatch(input.shape, output.shape);
  if (message.empty())
    return Status::ok();
  // Leading dimensions of size 1 hold no data: a [1, 4] -> [1, 8] gather
  // concatenates along the 4 (the partitioner emits such collectives on a
  // dimension that only size-1 dimensions precede; BuildExecutable.cpp).
  auto strip = [](const Shape &shape) {
    size_t first = 0;
    while (first + 1 < shape.size() && shape[first] == 1)
      ++first;
    return Shape(shape.begin() + static_cast<std::ptrdiff_t>(first),
                 shape.end());
  };
  Shape in = strip(input.shape), out = strip(output.shape);
  if ((in != input.shape || out != output.shape) && mismatch(in, out).empty())
    return Status::ok();
  return fail(message);
}

/// Run by the last member to arrive: do the calls of all members agree?
static Status checkAgreement(const std::vector<Contribution> &members,
                             const DeviceGroup &group) {
  const Contribution &first = members[0];
  std::string where =
      std::string(collectiveName(first.kind)) + " on group " + group.toString();
  auto rankOf = [&](size_t i) { return std::to_string(group.ranks()[i]); };
  for (size_t i = 1; i < members.size(); ++i)
    if (members[i].kind != first.kind)
      return invalidArgument(
          where + ": rank " + rankOf(i) + " called " +
          collectiveName(members[i].kind) + " but rank " + rankOf(0) +
          " called " + collectiveName(first.kind) +
          "; members must call collectives on a group in the same "
          "order");
  for (const Contribution &member : members)
    if (!member.error.isOk())
      return member.error;
  for (size_t i = 1; i < members.size(); ++i) {
    const Contribution &other = members[i];
    if (isReduction(first.kind) && other.op != first.op)
      return invalidArgument(where + ": rank " + rankOf(i) + " reduces with " +
                             reduceOpName(other.op) + " but rank " + rankOf(0) +
                             " with " + reduceOpName(first.op));
    if (other.dtype != first.dtype || other.count != first.count)
      return invalidArgument(where + ": rank " + rankOf(i) + " passed " +
                             describeElements(other.count, other.dtype) +
                             " but rank " + rankOf(0) + " passed " +
                             describeElements(first.count, first.dtype));
  }
  return Status::ok();
}

static Status timeoutError(const std::vector<Contribution> &members,
                           const DeviceGroup &group, const std::string &where,
                           std::chrono::milliseconds timeout) {
  std::vector<int> missing;
  for (size_t i = 0; i < members.size(); ++i)
    if (!members[i].arrived)
      missing.push_back(group.ranks()[i]);
  DeviceGroup missingGroup;
  (void)DeviceGroup::create(missing, missingGroup); // non-empty, distinct
  return Status::error(StatusCode::Unavailable,
                       where + " did not complete within " +
                           formatSeconds(timeout) + ": ranks " +
                           missingGroup.toString() + " never arrived");
}

/// Step 2: member `member` reads what it needs from every member's input
/// into `target` (its output, its staging buffer, or for all_reduce the
/// round's scratch).
static void readInputs(const std::vector<Contribution> &members, int member,
                       uint8_t *target) {
  const Contribution &self = members[member];
  int64_t size = static_cast<int64_t>(members.size());
  size_t elementBytes = dtypeSize(self.dtype);
  std::vector<const uint8_t *> inputs;
  for (const Contribution &contribution : members)
    inputs.push_back(contribution.input);
  switch (self.kind) {
  case CollectiveKind::AllReduce: {
    // Each member reduces one slice; the order within an element is always
    // the group order, whatever the slicing.
    int64_t begin = self.count * member / size;
    int64_t end = self.count * (member + 1) / size;
    reduceElements(self.dtype, self.op, inputs, begin, end - begin,
                   target + begin * elementBytes);
    return;
  }
  case CollectiveKind::ReduceScatter: {
    int64_t chunk = self.count / size;
    reduceElements(self.dtype, self.op, inputs, member * chunk, chunk, target);
    return;
  }
  case CollectiveKind::AllGather: {
    size_t chunkBytes = self.count * elementBytes;
    for (int64_t j = 0; j < size; ++j)
      copyBytes(target + j * chunkBytes, inputs[j], chunkBytes);
    return;
  }
  case CollectiveKind::AllToAll: {
    size_t chunkBytes = self.count / size * elementBytes;
    for (int64_t j = 0; j < size; ++j)
      copyBytes(target + j * chunkBytes, inputs[j] + member * chunkBytes,
                chunkBytes);
    return;
  }
  }
}

/// Whether a member must stage its result because writing its output during
/// step 2 could change an input that a peer is still reading.
static bool needsStaging(CollectiveKind kind, const TensorRef &input,
                         const TensorRef &output, int member) {
  if (!overlaps(input.data, input.bytes(), output.data, output.bytes()))
    return false;
  // In-place all_gather (the input is the member's own output chunk): peers
  // read that chunk while the member writes only the others.
  if (kind == CollectiveKind::AllGather)
    return static_cast<const uint8_t *>(input.data) !=
           static_cast<const uint8_t *>(output.data) + member * input.bytes();
  return true;
}

Status CpuWorld::runCollective(const Call &call) {
  const DeviceGroup &group = call.group;
  std::string where =
      std::string(collectiveName(call.kind)) + " on group " + group.toString();

  // Checks that need no peer. A caller outside the group cannot take part,
  // so it fails alone; any other mistake fails every member (step 1).
  if (Status status = checkRank(where, call.rank); !status)
    return status;
  for (int rank : group.ranks())
    if (Status status = checkRank(where, rank); !status)
      return status;
  int member = group.memberIndex(call.rank);
  if (member < 0)
    return invalidArgument(where + ": rank " + std::to_string(call.rank) +
                           " is not a member of the group");
  int size = group.size();
  Contribution mine;
  mine.arrived = true;
  mine.kind = call.kind;
  mine.op = call.op;
  mine.dtype = call.input.dtype;
  mine.count = call.input.numElements();
  mine.input = static_cast<const uint8_t *>(call.input.data);
  mine.error = checkOwnArguments(call.kind, call.input, call.output, size,
                                 where + ": rank " + std::to_string(call.rank));
  Clock::time_point deadline = Clock::now() + options_.timeout;
  GroupChannel &channel = channelFor(group);

  // 1. Arrive. The last member checks the calls and sets up the round.
  std::shared_ptr<Round> round;
  {
    std::unique_lock<std::mutex> lock(channel.mutex);
    if (!channel.broken.isOk())
      return Status::error(StatusCode::Unavailable,
                           where +
                               ": the group is unusable after an earlier "
                               "failure: " +
                               channel.broken.message());
    round = channel.round;
    round->members[member] = mine;
    if (++round->arrived == size) {
      round->status = checkAgreement(round->members, group);
      if (round->status && call.kind == CollectiveKind::AllReduce)
        round->scratch.reset(new uint8_t[call.input.bytes()]);
      // A failed check read no buffer: the group goes on with a new round.
      if (!round->status)
        channel.round = std::make_shared<Round>(size);
      round->settled = true;
      channel.changed.notify_all();
    } else if (!channel.changed.wait_until(lock, deadline,
                                           [&] { return round->settled; })) {
      // Whoever times out first fails the round for every member present.
      round->status =
          timeoutError(round->members, group, where, options_.timeout);
      round->settled = true;
      channel.broken = round->status;
      channel.round = std::make_shared<Round>(size);
      channel.changed.notify_all();
    }
    if (!round->status)
      return round->status;
  }

  // 2. Read the peers' inputs.
  bool staged = call.kind != CollectiveKind::AllReduce &&
                needsStaging(call.kind, call.input, call.output, member);
  std::vector<uint8_t> staging(staged ? call.output.bytes() : 0);
  uint8_t *target = call.kind == CollectiveKind::AllReduce
                        ? round->scratch.get()
                    : staged ? staging.data()
                             : static_cast<uint8_t *>(call.output.data);
  readInputs(round->members, member, target);

  // 3. Barrier. No deadline: every member is inside step 2, which is bounded
  // work that needs nobody else.
  {
    std::unique_lock<std::mutex> lock(channel.mutex);
    if (++round->doneReading == size) {
      channel.round = std::make_shared<Round>(size);
      channel.changed.notify_all();
    } else {
      channel.changed.wait(lock, [&] { return round->doneReading == size; });
    }
  }

  // 4. Write. The round's scratch stays alive while this member holds it.
  uint8_t *output = static_cast<uint8_t *>(call.output.data);
  if (call.kind == CollectiveKind::AllReduce)
    copyBytes(output, round->scratch.get(), call.output.bytes());
  else if (staged)
    copyBytes(output, staging.data(), staging.size());
  return Status::ok();
}

Status CpuWorld::allReduce(int rank, const DeviceGroup &group, ReduceOp op,
                           const TensorRef &input, const TensorRef &output) {
  return runCollective(
      {CollectiveKind::AllReduce, rank, group, op, input, output});
}

Status CpuWorld::allGather(int rank, const DeviceGroup &group,
                           const TensorRef &input, const TensorRef &output) {
  return runCollective(
      {CollectiveKind::AllGather, rank, group, ReduceOp::Sum, input, output});
}

Status CpuWorld::reduceScatter(int rank, const DeviceGroup &group, ReduceOp op,
                               const TensorRef &input,
                               const TensorRef &output) {
  return runCollective(
      {CollectiveKind::ReduceScatter, rank, group, op, input, output});
}

Status CpuWorld::allToAll(int rank, const DeviceGroup &group,
                          const TensorRef &input, const TensorRef &output) {
  return runCollective(
      {CollectiveKind::AllToAll, rank, group, ReduceOp::Sum, input, output});
}

//===----------------------------------------------------------------------===//
// Running the devices
//===----------------------------------------------------------------------===//

Status runOnDevices(int numDevices,
                    const std::function<Status(int rank)> &body) {
  if (numDevices < 1)
    return invalidArgument("runOnDevices needs at least one device, got " +
                           std::to_string(numDevices));
  std::mutex mutex;
  Status firstFailure;
  std::vector<std::thread> threads;
  threads.reserve(numDevices);
  for (int rank = 0; rank < numDevices; ++rank)
    threads.emplace_back([&, rank] {
      Status status = body(rank);
      if (status)
        return;
      std::lock_guard<std::mutex> lock(mutex);
      if (firstFailure)
        firstFailure =
            Status::error(status.code(), "device " + std::to_string(rank) +
                                             ": " + status.message());
    });
  for (std::thread &thread : threads)
    thread.join();
  return firstFailure;
}

} // namespace llmc::rt
