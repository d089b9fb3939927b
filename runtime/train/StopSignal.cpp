//===- StopSignal.cpp - a clean stop on SIGINT and SIGTERM ----------------===//
#include "runtime/train/StopSignal.h"

#include <atomic>
#include <csignal>
#include <unistd.h>

namespace llmc::rt {

namespace {

std::atomic<int> requested{0};

extern "C" void onStopSignal(int signal) {
  // Only async-signal-safe calls here: an atomic, write(2) and _exit(2).
  int expected = 0;
  if (!requested.compare_exchange_strong(expected, signal)) {
    static const char message[] = "\nsecond signal: stopping now, without a "
                                  "checkpoint\n";
    ssize_t ignored = ::write(STDERR_FILENO, message, sizeof(message) - 1);
    (void)ignored;
    ::_exit(128 + signal);
  }
  static const char message[] =
      "\nstopping after this step (a second Ctrl-C stops at once)\n";
  ssize_t ignored = ::write(STDERR_FILENO, message, sizeof(message) - 1);
  (void)ignored;
}

void install(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

} // namespace

void installStopHandlers() { install(onStopSignal); }
void removeStopHandlers() { install(SIG_DFL); }

int stopRequested() { return requested.load(); }
void requestStop(int signal) { requested.store(signal); }

} // namespace llmc::rt
