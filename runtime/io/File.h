//===- File.h - whole-file reads and atomic writes --------------*- C++ -*-===//
//
// The file primitives under checkpoints, data and executables: read a whole
// file with a message that names it on any failure, and write one atomically
// (temporary file, fsync, rename) so a crash never leaves a partial file.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_IO_FILE_H
#define LLMC_RUNTIME_IO_FILE_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt {

/// Reads the whole regular file at `path` into `bytes`. A missing file is
/// NotFound; a directory, an unreadable file or a read error say so with the
/// path and the system's reason.
Status readFile(const std::string &path, std::vector<uint8_t> &bytes);

/// Writes `path` atomically: the bytes go to `path.tmp`, which commit()
/// fsyncs, renames over `path`, and makes durable by fsyncing the directory.
/// Until commit() succeeds `path` is untouched; a writer destroyed without a
/// successful commit removes `path.tmp`. A symbolic link is followed: its
/// target is written atomically and the link kept. A path that exists and is
/// not a regular file (a device such as /dev/null or /dev/full, a FIFO) is
/// written through, never replaced, and its write errors (ENOSPC) returned;
/// a directory is refused.
class AtomicFileWriter {
public:
  AtomicFileWriter() = default;
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  /// Creates (or truncates) `path.tmp`.
  Status open(const std::string &path);
  /// Appends `size` bytes.
  Status write(const void *data, size_t size);
  /// Makes the written bytes the contents of `path`.
  Status commit();

private:
  void abandon();

  std::string path_;
  std::string tmpPath_;
  int fd_ = -1;
  bool direct_ = false; ///< writing `path_` itself (not a regular file)
};

/// Whether `a` and `b` name the same file: the same device and inode when
/// both exist, else the same path once resolved (symbolic links, `.` and
/// `..`): what refuses an output that would overwrite an input.
bool sameFile(const std::string &a, const std::string &b);

/// Refuses an output that is one of the inputs (sameFile): "--metrics
/// 'run.toml' is the same file as the run description 'run.toml': writing it
/// would destroy that input; give --metrics another path". The flags name
/// how the user gave each path (a positional input by what it is).
Status checkNotAnInput(const std::string &outputFlag,
                       const std::string &output,
                       const std::string &inputFlag,
                       const std::string &input);

/// Writes `size` bytes as the whole contents of `path`, atomically.
Status writeFileAtomically(const std::string &path, const void *data,
                           size_t size);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_IO_FILE_H
