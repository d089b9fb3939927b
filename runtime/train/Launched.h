//===- Launched.h - training in a process started by a launcher -*- C++ -*-===//
//
// What `llmc-run` and `llmc train` do before rt::train when a launcher
// (`llmc launch`, torchrun, srun) started them: read the launch variables
// (runtime/dist/Rendezvous.h) and, for a world of several processes, make
// the training loop run this process's rank on its GPU through the
// multi-process session. No CUDA here: the tool passes the session's maker
// when it links the CUDA backend. docs/distributed.md.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_LAUNCHED_H
#define LLMC_RUNTIME_TRAIN_LAUNCHED_H

#include "runtime/DeviceSession.h"
#include "runtime/Executable.h"
#include "runtime/Status.h"
#include "runtime/dist/Rendezvous.h"
#include "runtime/train/Trainer.h"

#include <memory>

namespace llmc::rt {

/// Makes process env.rank's session (cuda::createMultiProcessSession).
using MultiProcessSessionFn = Status (*)(
    const Executable &executable, const LaunchEnv &env,
    std::unique_ptr<DeviceSession> &session);

/// Prepares `train` (its settings already final) for this process:
///   - not launched, `forceNccl` false: nothing changes;
///   - a world of one, `forceNccl` false: the rendezvous of one (it checks
///     MASTER_ADDR/MASTER_PORT), then training as without a launcher;
///   - a world of several, or `forceNccl` (without a launcher: a world of
///     one on 127.0.0.1): the artifact must have WORLD_SIZE ranks, and the
///     machine a GPU and `makeSession` (null in a build without CUDA);
///     otherwise an error that says where the run can go, before meeting
///     anyone. Then the loop trains rank RANK through `makeSession`, on
///     devices "cuda"; ranks other than 0 print nothing but errors and
///     write no files (TrainOptions::primary). Sets NCCL_NVLS_ENABLE=0
///     unless it is set.
/// `deviceCount` counts this machine's GPUs (null: none).
Status prepareLaunchedTraining(const Executable &exe, bool forceNccl,
                               MultiProcessSessionFn makeSession,
                               DeviceCountFn deviceCount, TrainOptions &train);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_LAUNCHED_H
