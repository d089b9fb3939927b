//===- Launched.cpp - training in a process started by a launcher ---------===//
#include "runtime/train/Launched.h"

#include "runtime/Sharding.h"

#include <cstdlib>

namespace llmc::rt {

Status prepareLaunchedTraining(const Executable &exe, bool forceNccl,
                               MultiProcessSessionFn makeSession,
                               DeviceCountFn deviceCount, TrainOptions &train) {
  LaunchEnv env;
  bool launched = false;
  LLMC_RETURN_IF_ERROR(readLaunchEnv(processEnv(), env, launched));
  if (!launched && !forceNccl)
    return Status::ok();
  if (!launched) { // --nccl alone: a world of one on this machine
    env = LaunchEnv();
    env.masterAddr = "127.0.0.1";
    env.masterPort = findFreePort();
    env.source = "--nccl";
  }
  if (env.worldSize == 1 && !forceNccl) {
    // Meet (nobody) at the rendezvous, which checks the address, then
    // train as without a launcher.
    std::unique_ptr<Rendezvous> rendezvous;
    LLMC_RETURN_IF_ERROR(Rendezvous::create(env, {}, rendezvous));
    return rendezvous->barrier();
  }

  // 1. What can be refused alone, before anyone waits for this process.
  const std::string who = "rank " + std::to_string(env.rank) + ": ";
  if (exe.ranks.size() != static_cast<size_t>(env.worldSize))
    return Status::error(
        StatusCode::InvalidArgument,
        who + "the artifact's mesh " + formatMesh(exe.mesh) + " has " +
            std::to_string(exe.ranks.size()) + " ranks and the world " +
            std::to_string(env.worldSize) + " processes; launch it with -n " +
            std::to_string(exe.ranks.size()));
  bool gpu = makeSession && deviceCount &&
             train.settings.devices.rfind("cpu", 0) != 0 && deviceCount() > 0;
  if (!gpu)
    return Status::error(
        StatusCode::Unimplemented,
        who + "multi-process runs need GPUs (NCCL); on the CPU use devices = "
              "\"cpu\" in one process, which runs every rank (llmc train "
              "RUN.toml, or llmc-run ARTIFACT without a launcher)");

  // 2. The loop's session: this rank, on GPU LOCAL_RANK, through NCCL. The
  //    lent machines need NVLink SHARP off (docs/distributed.md); a value
  //    the user set wins.
  ::setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  train.settings.devices = "cuda";
  train.cudaSession = [env, makeSession](
                          const Executable &executable,
                          std::unique_ptr<DeviceSession> &session) {
    return makeSession(executable, env, session);
  };
  train.cudaDeviceCount = deviceCount;
  // Rank 0 speaks for the run; the others print only their errors.
  train.primary = env.rank == 0;
  if (!train.primary)
    train.log = nullptr;
  return Status::ok();
}

} // namespace llmc::rt
