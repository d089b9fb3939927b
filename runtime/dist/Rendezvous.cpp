//===- Rendezvous.cpp - how the processes of a run find each other ---------===//
#include "runtime/dist/Rendezvous.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace llmc::rt {

namespace {

using Clock = std::chrono::steady_clock;

/// Every message starts with this header (native byte order: the processes
/// of one run share an architecture). `length` payload bytes follow.
struct Header {
  uint32_t magic;
  uint32_t kind;
  int32_t rank;
  int32_t worldSize;
  uint64_t length;
};
constexpr uint32_t kMagic = 0x4c4d4352; // "RCML"
enum MessageKind : uint32_t {
  kHello = 1,   ///< peer -> 0: rank and world size
  kWelcome = 2, ///< 0 -> peer: everyone arrived
  kReject = 3,  ///< 0 -> peer: refused; the payload says why
  kBlob = 4,    ///< 0 -> peer: broadcast payload
  kArrive = 5,  ///< peer -> 0: at the barrier
  kRelease = 6, ///< 0 -> peer: everyone is at the barrier
};

Status invalid(const std::string &message) {
  return Status::error(StatusCode::InvalidArgument, message);
}
Status unavailable(const std::string &message) {
  return Status::error(StatusCode::Unavailable, message);
}

std::string seconds(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", d.count() / 1000.0);
  return text;
}

int remainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - Clock::now())
                  .count();
  return left < 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

Status sendAll(int fd, const void *data, size_t bytes) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  while (bytes > 0) {
    ssize_t sent = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR)
        continue;
      return unavailable(std::string("send: ") + std::strerror(errno));
    }
    p += sent;
    bytes -= static_cast<size_t>(sent);
  }
  return Status::ok();
}

/// Receives exactly `bytes`, or fails at the deadline / when the peer closes.
Status recvAll(int fd, void *data, size_t bytes, Clock::time_point deadline,
               bool &timedOut) {
  timedOut = false;
  uint8_t *p = static_cast<uint8_t *>(data);
  while (bytes > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, remainingMs(deadline));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready < 0)
      return unavailable(std::string("poll: ") + std::strerror(errno));
    if (ready == 0) {
      timedOut = true;
      return unavailable("timed out");
    }
    ssize_t got = ::recv(fd, p, bytes, 0);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return unavailable(std::string("recv: ") + std::strerror(errno));
    if (got == 0)
      return unavailable("the connection was closed (the process exited?)");
    p += got;
    bytes -= static_cast<size_t>(got);
  }
  return Status::ok();
}

Status sendMessage(int fd, uint32_t kind, int rank, int worldSize,
                   const void *payload = nullptr, size_t length = 0) {
  Header header{kMagic, kind, rank, worldSize, length};
  LLMC_RETURN_IF_ERROR(sendAll(fd, &header, sizeof(header)));
  return length ? sendAll(fd, payload, length) : Status::ok();
}

Status recvHeader(int fd, Header &header, Clock::time_point deadline,
                  bool &timedOut) {
  LLMC_RETURN_IF_ERROR(recvAll(fd, &header, sizeof(header), deadline,
                               timedOut));
  if (header.magic != kMagic)
    return invalid("a connection that does not speak the llmc rendezvous "
                   "protocol (wrong magic)");
  return Status::ok();
}

/// "1, 3 and 4"
std::string listRanks(const std::vector<int> &ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i)
      text += i + 1 == ranks.size() ? " and " : ", ";
    text += std::to_string(ranks[i]);
  }
  return text;
}

Status resolve(const std::string &host, int port, bool passive,
               addrinfo *&result) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive)
    hints.ai_flags = AI_PASSIVE;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &result);
  if (rc != 0)
    return invalid("MASTER_ADDR '" + host + "' does not resolve: " +
                   ::gai_strerror(rc));
  return Status::ok();
}

void setNoDelay(int fd) {
  int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/// Parses a non-negative decimal int.
bool parseInt(const char *text, int &value) {
  if (!text || !*text)
    return false;
  char *end = nullptr;
  errno = 0;
  long parsed = std::strtol(text, &end, 10);
  if (errno || *end || parsed < 0 || parsed > (1L << 30))
    return false;
  value = static_cast<int>(parsed);
  return true;
}

} // namespace

EnvLookup processEnv() {
  return [](const char *name) -> const char * { return std::getenv(name); };
}

Status readLaunchEnv(const EnvLookup &lookup, LaunchEnv &env, bool &launched) {
  launched = false;
  auto integer = [&](const char *name, int &value) -> Status {
    const char *text = lookup(name);
    if (!text)
      return invalid(std::string(name) + " is not set; a launched process "
                                         "needs RANK, WORLD_SIZE, "
                                         "MASTER_ADDR and MASTER_PORT (or "
                                         "SLURM_PROCID and SLURM_NTASKS)");
    if (!parseInt(text, value))
      return invalid(std::string(name) + "='" + text +
                     "' is not a non-negative integer");
    return Status::ok();
  };
  LaunchEnv read;
  const char *slurmTasks = lookup("SLURM_NTASKS");
  int tasks = 0;
  if (lookup("RANK")) {
    read.source = "torchrun";
    LLMC_RETURN_IF_ERROR(integer("RANK", read.rank));
    LLMC_RETURN_IF_ERROR(integer("WORLD_SIZE", read.worldSize));
    read.localRank = read.rank;
    if (lookup("LOCAL_RANK"))
      LLMC_RETURN_IF_ERROR(integer("LOCAL_RANK", read.localRank));
  } else if (lookup("SLURM_PROCID") && slurmTasks &&
             (!parseInt(slurmTasks, tasks) || tasks > 1)) {
    // A SLURM job of one task is an ordinary process: nothing to meet.
    read.source = "slurm";
    LLMC_RETURN_IF_ERROR(integer("SLURM_PROCID", read.rank));
    LLMC_RETURN_IF_ERROR(integer("SLURM_NTASKS", read.worldSize));
    LLMC_RETURN_IF_ERROR(integer("SLURM_LOCALID", read.localRank));
  } else {
    return Status::ok();
  }
  const char *worldName = read.source == "slurm" ? "SLURM_NTASKS" : "WORLD_SIZE";
  const char *rankName = read.source == "slurm" ? "SLURM_PROCID" : "RANK";
  if (read.worldSize < 1)
    return invalid(std::string(worldName) + "='" + lookup(worldName) +
                   "': a world needs at least one process");
  if (read.rank >= read.worldSize)
    return invalid(std::string(rankName) + "='" + lookup(rankName) +
                   "' is outside the world of " +
                   std::to_string(read.worldSize) + " (" + worldName +
                   "): ranks are 0.." + std::to_string(read.worldSize - 1));
  const char *addr = lookup("MASTER_ADDR");
  if (!addr || !*addr)
    return invalid(
        std::string("MASTER_ADDR is not set; rank 0's host is needed for the "
                    "rendezvous") +
        (read.source == "slurm"
             ? " (in the job script: export MASTER_ADDR=$(scontrol show "
               "hostnames \"$SLURM_JOB_NODELIST\" | head -n 1) and "
               "MASTER_PORT=29500)"
             : " (e.g. MASTER_ADDR=127.0.0.1 on one node)"));
  read.masterAddr = addr;
  const char *port = lookup("MASTER_PORT");
  if (!port)
    return invalid("MASTER_PORT is not set; rank 0 listens on it for the "
                   "rendezvous (e.g. MASTER_PORT=29500)");
  if (!parseInt(port, read.masterPort) || read.masterPort < 1 ||
      read.masterPort > 65535)
    return invalid(std::string("MASTER_PORT='") + port +
                   "' is not a TCP port (1..65535)");
  env = read;
  launched = true;
  return Status::ok();
}

Rendezvous::~Rendezvous() {
  for (int fd : peers_)
    if (fd >= 0)
      ::close(fd);
  if (listenFd_ >= 0)
    ::close(listenFd_);
}

std::string Rendezvous::address() const {
  return host_ + ":" + std::to_string(port_);
}

Status Rendezvous::create(const LaunchEnv &env,
                          const RendezvousOptions &options,
                          std::unique_ptr<Rendezvous> &rendezvous) {
  if (env.worldSize < 1 || env.rank < 0 || env.rank >= env.worldSize)
    return invalid("rank " + std::to_string(env.rank) +
                   " is outside the world of " +
                   std::to_string(env.worldSize));
  std::unique_ptr<Rendezvous> created(new Rendezvous());
  created->rank_ = env.rank;
  created->worldSize_ = env.worldSize;
  created->host_ = env.masterAddr;
  created->port_ = env.masterPort;
  created->options_ = options;
  created->peers_.assign(env.rank == 0 ? env.worldSize : 1, -1);
  LLMC_RETURN_IF_ERROR(env.rank == 0 ? created->acceptPeers()
                                     : created->connectToRoot());
  rendezvous = std::move(created);
  return Status::ok();
}

Status Rendezvous::acceptPeers() {
  const std::string where = "rendezvous at " + address();
  addrinfo *addrs = nullptr;
  LLMC_RETURN_IF_ERROR(resolve(host_, port_, /*passive=*/true, addrs));
  int lastErrno = 0;
  for (addrinfo *a = addrs; a && listenFd_ < 0; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
                      a->ai_protocol);
    if (fd < 0) {
      lastErrno = errno;
      continue;
    }
    int one = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::listen(fd, worldSize_) == 0) {
      listenFd_ = fd;
      break;
    }
    lastErrno = errno;
    ::close(fd);
  }
  ::freeaddrinfo(addrs);
  if (listenFd_ < 0)
    return unavailable(where + ": rank 0 cannot listen there: " +
                       std::strerror(lastErrno) +
                       " (is MASTER_PORT taken by another run?)");

  // 1. Everyone says hello; rank 0 checks who they are.
  Clock::time_point deadline = Clock::now() + options_.timeout;
  int arrived = 0;
  std::string refused;
  while (arrived < worldSize_ - 1) {
    pollfd pfd{listenFd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, remainingMs(deadline));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0) {
      std::vector<int> missing;
      for (int r = 1; r < worldSize_; ++r)
        if (peers_[r] < 0)
          missing.push_back(r);
      return unavailable(
          where + ": rank" + (missing.size() > 1 ? "s " : " ") +
          listRanks(missing) + " never arrived within " +
          seconds(options_.timeout) + " (" + std::to_string(arrived) + " of " +
          std::to_string(worldSize_ - 1) +
          " others did); every process needs the same MASTER_ADDR, "
          "MASTER_PORT and WORLD_SIZE=" +
          std::to_string(worldSize_) + refused);
    }
    int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    setNoDelay(fd);
    Header hello{};
    bool timedOut = false;
    Status status = recvHeader(fd, hello, deadline, timedOut);
    std::string why;
    if (!status || hello.kind != kHello)
      why = "a connection that sent no hello";
    else if (hello.worldSize != worldSize_)
      why = "rank " + std::to_string(hello.rank) + " has WORLD_SIZE=" +
            std::to_string(hello.worldSize) + ", rank 0 has " +
            std::to_string(worldSize_);
    else if (hello.rank < 1 || hello.rank >= worldSize_)
      why = "rank " + std::to_string(hello.rank) +
            " is outside the world of " + std::to_string(worldSize_) +
            " (or claims to be rank 0 as well)";
    else if (peers_[hello.rank] >= 0)
      why = "rank " + std::to_string(hello.rank) +
            " arrived twice (two processes with RANK=" +
            std::to_string(hello.rank) + ")";
    if (!why.empty()) {
      (void)sendMessage(fd, kReject, 0, worldSize_, why.data(), why.size());
      ::close(fd);
      refused += "; refused " + why;
      continue;
    }
    peers_[hello.rank] = fd;
    ++arrived;
  }
  // 2. Everyone is here: let them go on.
  for (int r = 1; r < worldSize_; ++r)
    if (Status status = sendMessage(peers_[r], kWelcome, 0, worldSize_);
        !status)
      return unavailable(where + ": rank " + std::to_string(r) + ": " +
                         status.message());
  return Status::ok();
}

Status Rendezvous::connectToRoot() {
  const std::string where = "rank " + std::to_string(rank_) +
                            ": rendezvous with rank 0 at " + address();
  Clock::time_point deadline = Clock::now() + options_.timeout;
  std::string lastError = "no address";
  int fd = -1;
  // Rank 0 may not listen yet: retry until the deadline.
  while (fd < 0) {
    addrinfo *addrs = nullptr;
    LLMC_RETURN_IF_ERROR(resolve(host_, port_, /*passive=*/false, addrs));
    for (addrinfo *a = addrs; a && fd < 0; a = a->ai_next) {
      int s = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
                       a->ai_protocol);
      if (s < 0) {
        lastError = std::strerror(errno);
        continue;
      }
      // Non-blocking connect with a bounded wait: an unreachable host must
      // not block past the deadline.
      int flags = ::fcntl(s, F_GETFL, 0);
      (void)::fcntl(s, F_SETFL, flags | O_NONBLOCK);
      int rc = ::connect(s, a->ai_addr, a->ai_addrlen);
      if (rc < 0 && errno == EINPROGRESS) {
        pollfd pfd{s, POLLOUT, 0};
        int wait = std::min(remainingMs(deadline), 1000);
        if (::poll(&pfd, 1, wait) == 1) {
          int error = 0;
          socklen_t length = sizeof(error);
          (void)::getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &length);
          rc = error ? -1 : 0;
          errno = error ? error : ETIMEDOUT;
        } else {
          rc = -1;
          errno = ETIMEDOUT;
        }
      }
      if (rc == 0) {
        (void)::fcntl(s, F_SETFL, flags);
        fd = s;
      } else {
        lastError = std::strerror(errno);
        ::close(s);
      }
    }
    ::freeaddrinfo(addrs);
    if (fd >= 0)
      break;
    if (Clock::now() >= deadline)
      return unavailable(where + ": could not connect within " +
                         seconds(options_.timeout) + " (" + lastError +
                         "); is rank 0 running, and do all ranks have the "
                         "same MASTER_ADDR and MASTER_PORT?");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  setNoDelay(fd);
  peers_[0] = fd;
  LLMC_RETURN_IF_ERROR(sendMessage(fd, kHello, rank_, worldSize_));
  // Wait until rank 0 has seen everyone (or refused us).
  Header reply{};
  bool timedOut = false;
  if (Status status = recvHeader(fd, reply, deadline, timedOut); !status)
    return unavailable(where + ": " +
                       (timedOut ? "rank 0 did not report everyone arrived "
                                   "within " +
                                       seconds(options_.timeout) +
                                       " (another rank is missing?)"
                                 : status.message()));
  if (reply.kind == kReject) {
    std::string why(reply.length, '\0');
    (void)recvAll(fd, why.data(), why.size(), deadline, timedOut);
    return invalid(where + ": refused by rank 0: " + why);
  }
  if (reply.kind != kWelcome)
    return invalid(where + ": unexpected message " +
                   std::to_string(reply.kind) + " from rank 0");
  return Status::ok();
}

Status Rendezvous::broadcast(std::vector<uint8_t> &blob) {
  if (rank_ == 0) {
    for (int r = 1; r < worldSize_; ++r)
      if (Status status = sendMessage(peers_[r], kBlob, 0, worldSize_,
                                      blob.data(), blob.size());
          !status)
        return unavailable("rendezvous at " + address() +
                           ": broadcast to rank " + std::to_string(r) + ": " +
                           status.message());
    return Status::ok();
  }
  const std::string where = "rank " + std::to_string(rank_) +
                            ": broadcast from rank 0 at " + address();
  Clock::time_point deadline = Clock::now() + options_.timeout;
  Header header{};
  bool timedOut = false;
  if (Status status = recvHeader(peers_[0], header, deadline, timedOut);
      !status)
    return unavailable(where + ": " +
                       (timedOut ? "nothing arrived within " +
                                       seconds(options_.timeout)
                                 : status.message()));
  if (header.kind != kBlob)
    return invalid(where + ": expected the broadcast, got message " +
                   std::to_string(header.kind) +
                   " (do all ranks make the same calls?)");
  blob.assign(header.length, 0);
  if (Status status =
          recvAll(peers_[0], blob.data(), blob.size(), deadline, timedOut);
      !status)
    return unavailable(where + ": " + status.message());
  return Status::ok();
}

Status Rendezvous::barrier() {
  Clock::time_point deadline = Clock::now() + options_.timeout;
  bool timedOut = false;
  if (rank_ != 0) {
    const std::string where = "rank " + std::to_string(rank_) +
                              ": barrier at " + address();
    LLMC_RETURN_IF_ERROR(sendMessage(peers_[0], kArrive, rank_, worldSize_));
    Header header{};
    if (Status status = recvHeader(peers_[0], header, deadline, timedOut);
        !status)
      return unavailable(where + ": " +
                         (timedOut ? "not every rank arrived within " +
                                         seconds(options_.timeout)
                                   : status.message()));
    if (header.kind != kRelease)
      return invalid(where + ": unexpected message " +
                     std::to_string(header.kind) + " from rank 0");
    return Status::ok();
  }
  // Rank 0 waits for every other rank's arrival, in any order.
  std::vector<bool> here(worldSize_, false);
  here[0] = true;
  int waiting = worldSize_ - 1;
  while (waiting > 0) {
    std::vector<pollfd> fds;
    std::vector<int> ranks;
    for (int r = 1; r < worldSize_; ++r)
      if (!here[r]) {
        fds.push_back({peers_[r], POLLIN, 0});
        ranks.push_back(r);
      }
    int ready = ::poll(fds.data(), fds.size(), remainingMs(deadline));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready <= 0) {
      return unavailable("barrier at " + address() + ": rank" +
                         (ranks.size() > 1 ? "s " : " ") + listRanks(ranks) +
                         " did not arrive within " +
                         seconds(options_.timeout));
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents)
        continue;
      Header header{};
      if (Status status =
              recvHeader(fds[i].fd, header, deadline, timedOut);
          !status || header.kind != kArrive)
        return unavailable("barrier at " + address() + ": rank " +
                           std::to_string(ranks[i]) + ": " +
                           (status ? "unexpected message " +
                                         std::to_string(header.kind)
                                   : status.message()));
      here[ranks[i]] = true;
      --waiting;
    }
  }
  for (int r = 1; r < worldSize_; ++r)
    LLMC_RETURN_IF_ERROR(sendMessage(peers_[r], kRelease, 0, worldSize_));
  return Status::ok();
}

int findFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t length = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &length) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

} // namespace llmc::rt
