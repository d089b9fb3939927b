//===- PointToPoint.cpp - send and recv between CPU virtual devices -------===//
//
// One mailbox per (source, destination, tag), FIFO. send posts a message
// that points at its own buffer and waits; recv takes the oldest message,
// copies straight from the sender's buffer and releases it. A message is
// Posted, then Claimed while the receiver copies (no lock held), then Done,
// or Failed when the receiver's dtype or count differ.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CollectiveSupport.h"
#include "runtime/cpu/Collectives.h"

#include <tuple>

namespace llmc::rt {

using Clock = std::chrono::steady_clock;

struct CpuWorld::Message {
  const uint8_t *data = nullptr;
  DType dtype = DType::F32;
  int64_t count = 0;
  enum class State : uint8_t { Posted, Claimed, Done, Failed };
  State state = State::Posted;
  Status status; ///< what send returns
};

bool CpuWorld::MessageKey::operator<(const MessageKey &other) const {
  return std::tie(source, destination, tag) <
         std::tie(other.source, other.destination, other.tag);
}

Status CpuWorld::send(int rank, int destination, int tag,
                      const TensorRef &input) {
  std::string where = "send from rank " + std::to_string(rank) + " to rank " +
                      std::to_string(destination) + " with tag " +
                      std::to_string(tag);
  if (Status status = checkRank(where, rank); !status)
    return status;
  if (Status status = checkRank(where, destination); !status)
    return status;
  if (destination == rank)
    return invalidArgument(where + ": a rank cannot send to itself");
  if (input.bytes() && !input.data)
    return invalidArgument(where + ": a buffer with elements has no data");

  auto message = std::make_shared<Message>();
  message->data = static_cast<const uint8_t *>(input.data);
  message->dtype = input.dtype;
  message->count = input.numElements();
  MessageKey key{rank, destination, tag};
  Clock::time_point deadline = Clock::now() + options_.timeout;

  std::unique_lock<std::mutex> lock(messagesMutex_);
  mailboxes_[key].push_back(message);
  messagesChanged_.notify_all();
  if (!messagesChanged_.wait_until(lock, deadline, [&] {
        return message->state != Message::State::Posted;
      })) {
    // Withdraw it, so that a late recv never reads a buffer we gave back.
    std::deque<std::shared_ptr<Message>> &queue = mailboxes_[key];
    for (auto it = queue.begin(); it != queue.end(); ++it)
      if (*it == message) {
        queue.erase(it);
        break;
      }
    if (queue.empty())
      mailboxes_.erase(key);
    return Status::error(StatusCode::Unavailable,
                         where + " did not complete within " +
                             formatSeconds(options_.timeout) + ": rank " +
                             std::to_string(destination) +
                             " never posted the matching recv");
  }
  // Claimed: the receiver is copying, which is bounded work.
  messagesChanged_.wait(lock, [&] {
    return message->state == Message::State::Done ||
           message->state == Message::State::Failed;
  });
  return message->status;
}

Status CpuWorld::recv(int rank, int source, int tag, const TensorRef &output) {
  std::string where = "recv on rank " + std::to_string(rank) + " from rank " +
                      std::to_string(source) + " with tag " +
                      std::to_string(tag);
  if (Status status = checkRank(where, rank); !status)
    return status;
  if (Status status = checkRank(where, source); !status)
    return status;
  if (source == rank)
    return invalidArgument(where + ": a rank cannot receive from itself");
  if (output.bytes() && !output.data)
    return invalidArgument(where + ": a buffer with elements has no data");

  MessageKey key{source, rank, tag};
  Clock::time_point deadline = Clock::now() + options_.timeout;
  std::unique_lock<std::mutex> lock(messagesMutex_);
  if (!messagesChanged_.wait_until(lock, deadline, [&] {
        auto it = mailboxes_.find(key);
        return it != mailboxes_.end() && !it->second.empty();
      }))
    return Status::error(StatusCode::Unavailable,
                         where + " did not complete within " +
                             formatSeconds(options_.timeout) + ": rank " +
                             std::to_string(source) +
                             " never sent a matching message");
  auto it = mailboxes_.find(key);
  std::shared_ptr<Message> message = it->second.front();
  it->second.pop_front();
  if (it->second.empty())
    mailboxes_.erase(it);

  if (message->dtype != output.dtype ||
      message->count != output.numElements()) {
    // Both sides fail with the same message.
    message->status = invalidArgument(
        "send/recv from rank " + std::to_string(source) + " to rank " +
        std::to_string(rank) + " with tag " + std::to_string(tag) + ": rank " +
        std::to_string(source) + " sent " +
        describeElements(message->count, message->dtype) + " but rank " +
        std::to_string(rank) + " expects " +
        describeElements(output.numElements(), output.dtype));
    message->state = Message::State::Failed;
    messagesChanged_.notify_all();
    return message->status;
  }
  message->state = Message::State::Claimed;
  lock.unlock();
  copyBytes(static_cast<uint8_t *>(output.data), message->data, output.bytes());
  lock.lock();
  message->state = Message::State::Done;
  messagesChanged_.notify_all();
  return Status::ok();
}

} // namespace llmc::rt
