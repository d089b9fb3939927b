//===- Rendezvous.h - how the processes of a run find each other -*- C++ -*-===//
//
// A multi-process run starts one process per GPU (`llmc launch -n N`,
// torchrun, srun). Each learns its place from the environment (LaunchEnv)
// and meets the others over TCP before NCCL exists: rank 0 listens on
// MASTER_ADDR:MASTER_PORT, the others connect, rank 0 broadcasts an opaque
// blob (NCCL's unique id) and everyone can wait at a barrier. No MLIR, no
// CUDA: the CPU tests run it with threads on 127.0.0.1. The protocol is in
// docs/distributed.md.
//
// Nothing waits forever: every wait has a deadline, and a failure names the
// address and the ranks that never arrived.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DIST_RENDEZVOUS_H
#define LLMC_RUNTIME_DIST_RENDEZVOUS_H

#include "runtime/Status.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llmc::rt {

/// Where this process stands in a multi-process run.
struct LaunchEnv {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0; ///< the GPU of this node it drives
  std::string masterAddr;
  int masterPort = 0;
  /// "torchrun" (RANK, WORLD_SIZE, ...) or "slurm" (SLURM_PROCID, ...).
  std::string source;
};

/// Reads one environment variable; null when unset. The default reads the
/// process environment (std::getenv); tests pass a map.
using EnvLookup = std::function<const char *(const char *name)>;
EnvLookup processEnv();

/// Reads the launch variables. `launched` becomes false (and `env` stays as
/// it is) when the process was not started by a launcher: neither RANK nor a
/// SLURM job of more than one task. Otherwise every variable of the
/// convention must be present and valid:
///   torchrun: RANK, WORLD_SIZE, LOCAL_RANK (default: RANK), MASTER_ADDR,
///             MASTER_PORT
///   SLURM:    SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, and MASTER_ADDR /
///             MASTER_PORT from the job script
/// InvalidArgument naming the variable and its bad value (not an integer,
/// a rank outside [0, WORLD_SIZE), a port outside 1..65535, a missing
/// MASTER_ADDR with how to set it).
Status readLaunchEnv(const EnvLookup &lookup, LaunchEnv &env, bool &launched);

struct RendezvousOptions {
  /// How long any one wait lasts: connecting to rank 0, rank 0 waiting for
  /// everyone to arrive, a broadcast, a barrier.
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
};

/// The TCP meeting point of the processes of a run. Rank 0 keeps one
/// connection to every other rank; collectives here are tiny and happen a
/// few times per run (startup), so a star is enough.
class Rendezvous {
public:
  /// Rank 0 listens on env.masterAddr:env.masterPort and waits until the
  /// worldSize - 1 others have connected and said who they are; the others
  /// connect, retrying until the deadline (rank 0 may start later). Fails
  /// naming the address, and on rank 0 the ranks that never arrived; a
  /// duplicate rank or a different world size is refused by name.
  static Status create(const LaunchEnv &env, const RendezvousOptions &options,
                       std::unique_ptr<Rendezvous> &rendezvous);
  ~Rendezvous();
  Rendezvous(const Rendezvous &) = delete;
  Rendezvous &operator=(const Rendezvous &) = delete;

  int rank() const { return rank_; }
  int worldSize() const { return worldSize_; }

  /// Rank 0's `blob` becomes every rank's `blob` (any length; its bytes are
  /// not interpreted). Every rank calls it.
  Status broadcast(std::vector<uint8_t> &blob);

  /// Returns once every rank has called it; fails naming the ranks that did
  /// not arrive within the timeout (on rank 0) or rank 0's address (others).
  Status barrier();

  /// "127.0.0.1:29500"
  std::string address() const;

private:
  Rendezvous() = default;
  Status acceptPeers();
  Status connectToRoot();

  int rank_ = 0;
  int worldSize_ = 1;
  std::string host_;
  int port_ = 0;
  RendezvousOptions options_;
  int listenFd_ = -1;
  /// Rank 0: the socket of rank r at peers_[r] (peers_[0] unused, -1).
  /// Others: peers_[0] is the socket to rank 0.
  std::vector<int> peers_;
};

/// A TCP port on 127.0.0.1 that is free now (bound and released), for
/// `llmc launch` and tests. 0 when none could be had.
int findFreePort();

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DIST_RENDEZVOUS_H
