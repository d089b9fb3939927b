//===- MappedFile.cpp - a read-only memory map of a whole file ------------===//
#include "runtime/io/MappedFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace llmc::rt {

MappedFile::~MappedFile() {
  if (data_ && size_ > 0)
    ::munmap(const_cast<uint8_t *>(data_), size_);
}

Status MappedFile::open(const std::string &path,
                        std::shared_ptr<const MappedFile> &file) {
  file.reset();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    return Status::error(error == ENOENT ? StatusCode::NotFound
                                         : StatusCode::InvalidArgument,
                         path + ": cannot open: " + std::strerror(error) +
                             (error == ENOENT ? "; check the path" : ""));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return Status::error(StatusCode::InvalidArgument,
                         path + ": cannot stat: " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error(StatusCode::InvalidArgument,
                         path + ": not a regular file" +
                             (S_ISDIR(info.st_mode) ? " (a directory)" : ""));
  }
  std::shared_ptr<MappedFile> mapped(new MappedFile());
  mapped->path_ = path;
  mapped->size_ = static_cast<uint64_t>(info.st_size);
  if (mapped->size_ > 0) {
    void *at = ::mmap(nullptr, mapped->size_, PROT_READ, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      return Status::error(StatusCode::Unavailable,
                           path + ": cannot map " +
                               std::to_string(mapped->size_) +
                               " bytes: " + std::strerror(error));
    }
    mapped->data_ = static_cast<const uint8_t *>(at);
  }
  // The map keeps the file's pages; the descriptor is not needed.
  ::close(fd);
  file = std::move(mapped);
  return Status::ok();
}

void MappedFile::advise(AccessPattern pattern) const {
  if (!data_ || size_ == 0)
    return;
  int advice = pattern == AccessPattern::Sequential ? MADV_SEQUENTIAL
               : pattern == AccessPattern::Random   ? MADV_RANDOM
                                                    : MADV_NORMAL;
  (void)::madvise(const_cast<uint8_t *>(data_), size_, advice);
}

} // namespace llmc::rt
