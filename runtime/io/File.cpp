//===- File.cpp - whole-file reads and atomic writes ----------------------===//
#include "runtime/io/File.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace llmc::rt {

namespace {

std::string systemError(int error) { return std::strerror(error); }

Status openError(const std::string &path, const char *verb, int error) {
  StatusCode code =
      error == ENOENT ? StatusCode::NotFound : StatusCode::InvalidArgument;
  std::string fix = error == ENOENT ? "; check the path" : "";
  return Status::error(code, path + ": cannot " + verb + ": " +
                                 systemError(error) + fix);
}

// The directory that holds `path`, for the fsync that makes a rename durable.
std::string parentDirectory(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

} // namespace

Status readFile(const std::string &path, std::vector<uint8_t> &bytes) {
  bytes.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return openError(path, "open", errno);
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    return openError(path, "stat", error);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error(StatusCode::InvalidArgument,
                         path + ": is not a regular file (a directory or a "
                                "device); give the path of a file");
  }
  // The one allocation that user input sizes: a file larger than the memory
  // is reported, not left to terminate the process.
  try {
    bytes.resize(static_cast<size_t>(info.st_size));
  } catch (const std::bad_alloc &) {
    ::close(fd);
    return Status::error(StatusCode::Unavailable,
                         path + ": file is " + std::to_string(info.st_size) +
                             " bytes, more than this process can allocate");
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      bytes.clear();
      return Status::error(StatusCode::DataLoss,
                           path + ": read failed after " +
                               std::to_string(done) +
                               " bytes: " + systemError(error));
    }
    if (n == 0) // the file shrank while we read it
      break;
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  ::close(fd);
  return Status::ok();
}

AtomicFileWriter::~AtomicFileWriter() { abandon(); }

void AtomicFileWriter::abandon() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(tmpPath_.c_str());
  }
}

Status AtomicFileWriter::open(const std::string &path) {
  abandon();
  path_ = path;
  tmpPath_ = path + ".tmp";
  fd_ =
      ::open(tmpPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    return openError(tmpPath_, "create", errno);
  return Status::ok();
}

Status AtomicFileWriter::write(const void *data, size_t size) {
  if (fd_ < 0)
    return Status::error(StatusCode::Internal,
                         path_ + ": write before open or after commit");
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd_, bytes + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int error = errno;
      abandon();
      return Status::error(StatusCode::Unavailable,
                           tmpPath_ + ": write failed: " + systemError(error) +
                               "; " + path_ + " was left as it was");
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

Status AtomicFileWriter::commit() {
  if (fd_ < 0)
    return Status::error(StatusCode::Internal,
                         path_ + ": commit before open or after commit");
  // 1. The data reaches the disk before the name points at it.
  if (::fsync(fd_) != 0) {
    int error = errno;
    abandon();
    return Status::error(StatusCode::Unavailable,
                         tmpPath_ + ": fsync failed: " + systemError(error) +
                             "; " + path_ + " was left as it was");
  }
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int error = errno;
    ::unlink(tmpPath_.c_str());
    return Status::error(StatusCode::Unavailable,
                         tmpPath_ + ": close failed: " + systemError(error) +
                             "; " + path_ + " was left as it was");
  }
  // 2. The rename replaces `path` in one step.
  if (::rename(tmpPath_.c_str(), path_.c_str()) != 0) {
    int error = errno;
    ::unlink(tmpPath_.c_str());
    return Status::error(StatusCode::Unavailable,
                         path_ + ": cannot rename " + tmpPath_ +
                             " over it: " + systemError(error));
  }
  // 3. The rename itself survives a crash once the directory is synced.
  // Filesystems that cannot fsync a directory (EINVAL) need not.
  std::string directory = parentDirectory(path_);
  int dirFd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    int rc = ::fsync(dirFd);
    int error = errno;
    ::close(dirFd);
    if (rc != 0 && error != EINVAL)
      return Status::error(StatusCode::Unavailable,
                           directory +
                               ": fsync of the directory failed after "
                               "renaming " +
                               path_ + ": " + systemError(error));
  }
  return Status::ok();
}

Status writeFileAtomically(const std::string &path, const void *data,
                           size_t size) {
  AtomicFileWriter writer;
  if (Status status = writer.open(path); !status)
    return status;
  if (Status status = writer.write(data, size); !status)
    return status;
  return writer.commit();
}

} // namespace llmc::rt
