//===- MappedFile.h - a read-only memory map of a whole file ----*- C++ -*-===//
//
// Weights of released models are many GB: reading them into a buffer would
// hold a second copy beside the parameters. A read-only private map lets the
// kernel page them in as they are converted or copied, and drop them again
// (they are the page cache's, not the process's). Used by
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

/// The bytes of a regular file, mapped read-only until destruction.
class MappedFile {
public:
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// Maps `path`. A missing file is NotFound; a directory, an unreadable
  /// file or a failed map say so with the path and the system's reason.
  static Status open(const std::string &path,
                     std::shared_ptr<const MappedFile> &file);

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }

private:
  MappedFile() = default;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_IO_MAPPEDFILE_H
