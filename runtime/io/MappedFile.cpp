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
  if (data_ && size_)
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
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return Status::error(StatusCode::InvalidArgument,
                         path + ": cannot stat: " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error(StatusCode::InvalidArgument,
                         path + ": is not a regular file (a directory or a "
                                "device); give the path of a file");
  }
  std::shared_ptr<MappedFile> mapped(new MappedFile());
  mapped->path_ = path;
  mapped->size_ = static_cast<size_t>(info.st_size);
  if (mapped->size_ > 0) {
    void *address =
        ::mmap(nullptr, mapped->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      mapped->size_ = 0;
      return Status::error(StatusCode::Unavailable,
                           path + ": cannot map its " +
                               std::to_string(info.st_size) +
                               " bytes: " + std::strerror(error));
    }
    // Tensors are read front to back, mostly once.
    (void)::madvise(address, mapped->size_, MADV_SEQUENTIAL);
    mapped->data_ = static_cast<const uint8_t *>(address);
  }
  ::close(fd); // the map keeps the file
  file = std::move(mapped);
  return Status::ok();
}

} // namespace llmc::rt
