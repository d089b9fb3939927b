//===- Session.h - run a loaded Executable on the CPU ------------*- C++ -*-===//
//
// A Session owns the memory of one Executable's run: an arena laid out by
// the buffer plan, with the constants copied in. The caller binds every
// argument by name, runs the command list, and reads the outputs. Runs can
// be repeated with new arguments; bound arguments keep their values until
// bound again.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_SESSION_H
#define LLMC_RUNTIME_SESSION_H

#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace llmc::rt {

class ThreadPool;

struct SessionOptions {
  /// Threads for the CPU kernels; 0 uses every core.
  unsigned threads = 0;
};

class Session {
public:
  /// Prepares `executable` (which must outlive the session) for running.
  static Status create(const Executable &executable,
                       const SessionOptions &options,
                       std::unique_ptr<Session> &session);
  ~Session();

  const Executable &executable() const { return executable_; }

  /// Index of the argument called `name`, or -1.
  int findArgument(const std::string &name) const;

  /// Copies `data` into argument `name`; its dtype and shape must be the
  /// argument's (the message says which differs).
  Status setArgument(const std::string &name, DType dtype, const Shape &shape,
                     const void *data, size_t bytes);

  /// Runs the program. Fails, naming them, if arguments were never bound.
  Status run();

  /// A view of output `index` (valid until the next run or destruction).
  Status output(size_t index, TensorRef &tensor) const;
  /// A view of argument `index` as bound (for checkpointing, issue #5).
  Status argument(size_t index, TensorRef &tensor) const;

  /// Peak bytes of the arena (the buffer plan's total).
  uint64_t arenaBytes() const;

private:
  Session(const Executable &executable, const SessionOptions &options);
  TensorRef slot(int32_t value) const;

  const Executable &executable_;
  std::unique_ptr<ThreadPool> pool_;
  uint8_t *arena_ = nullptr;
  std::vector<bool> bound_;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_SESSION_H
