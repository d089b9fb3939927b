//===- StopSignal.h - a clean stop on SIGINT and SIGTERM --------*- C++ -*-===//
//
// Ctrl-C (SIGINT) or a scheduler's SIGTERM asks a training run to stop:
// the loop finishes the step it is in, writes a checkpoint when
// checkpoints are on, says where, and the tool exits 130 or 143 (128 + the
// signal, the shell's convention). A second signal ends the process at once.
// The runtime library never installs handlers by itself: the tools call
// installStopHandlers(), and an embedding program may, or may set the
// request itself (requestStop) from its own handler or thread.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_STOPSIGNAL_H
#define LLMC_RUNTIME_TRAIN_STOPSIGNAL_H

namespace llmc::rt {

/// Installs handlers for SIGINT and SIGTERM: the first records the signal
/// (stopRequested), a second one _exits with 128 + its number.
void installStopHandlers();
/// Restores the default handlers (for tests).
void removeStopHandlers();

/// The signal number asking to stop (SIGINT, SIGTERM), or 0.
int stopRequested();
/// Records a stop request as if `signal` had arrived (0 clears it).
void requestStop(int signal);

/// 128 + the signal: the exit status a stopped run ends with.
inline int stopExitCode(int signal) { return 128 + signal; }

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_STOPSIGNAL_H
