//===- MappedFile.h - a read-only memory map of a whole file ----*- C++ -*-===//
//
// Token shards and released models' weights are many GB: they are read
// through the page cache, not into the process, so a 20 GB corpus or a
// model's safetensors cost address space, not a second copy in memory. The
// map is held by a std::shared_ptr so that views of a file outlive the
// object that opened it. Used by TokenShard (runtime/data) and
// mapSafetensors (runtime/io/Safetensors.h).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_IO_MAPPEDFILE_H
#define LLMC_RUNTIME_IO_MAPPEDFILE_H

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace llmc::rt {

/// How the kernel should read ahead (madvise): sequential reads a lot ahead,
/// random reads only the pages asked for.
enum class AccessPattern { Normal, Sequential, Random };

class MappedFile {
public:
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// Maps the regular file at `path` read-only. A missing file is NotFound;
  /// a directory, an unreadable file or a failed map say so with the path
  /// and the system's reason. An empty file maps to size() 0.
  static Status open(const std::string &path,
                     std::shared_ptr<const MappedFile> &file);

  const std::string &path() const { return path_; }
  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }
  /// A hint only: errors are ignored.
  void advise(AccessPattern pattern) const;

private:
  MappedFile() = default;
  std::string path_;
  const uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_IO_MAPPEDFILE_H
