//===- File.cpp - whole-file reads and atomic writes ----------------------===//
#include "runtime/io/File.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <new>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

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

/// The path a write to `path` lands on: `path` itself, or the file its
/// chain of symbolic links ends at (which may not exist yet). A link is
/// written through and kept, as shells and editors do.
std::string followLinks(const std::string &path) {
  std::string current = path;
  for (int hop = 0; hop < 40; ++hop) { // the kernel's own limit (ELOOP)
    struct stat info;
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode))
      return current;
    std::vector<char> target(static_cast<size_t>(info.st_size) + 256);
    ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
    if (n <= 0 || static_cast<size_t>(n) >= target.size())
      return current;
    std::string next(target.data(), static_cast<size_t>(n));
    current = next[0] == '/' ? next : parentDirectory(current) + "/" + next;
  }
  return current;
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
    if (!direct_)
      ::unlink(tmpPath_.c_str());
  }
}

Status AtomicFileWriter::open(const std::string &path) {
  abandon();
  direct_ = false;
  path_ = path;
  struct stat info;
  bool exists = ::stat(path.c_str(), &info) == 0;
  if (exists && S_ISREG(info.st_mode)) {
    // The link's target, so that the temporary is renamed over it.
    if (char *real = ::realpath(path.c_str(), nullptr)) {
      path_ = real;
      std::free(real);
    }
  } else if (!exists) {
    path_ = followLinks(path); // a dangling link creates its target
  }
  if (exists && !S_ISREG(info.st_mode)) {
    if (S_ISDIR(info.st_mode))
      return Status::error(StatusCode::InvalidArgument,
                           path + ": is a directory; give the path of a file");
    // A device, FIFO or socket (/dev/null, /dev/full, a pipe): written
    // through, never replaced by a regular file; its write errors are ours.
    direct_ = true;
    tmpPath_ = path_;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0)
      return openError(path_, "open", errno);
    return Status::ok();
  }
  tmpPath_ = path_ + ".tmp";
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
      if (direct_)
        return Status::error(StatusCode::Unavailable,
                             path_ + ": write failed after " +
                                 std::to_string(done) +
                                 " bytes: " + systemError(error));
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
  if (!direct_ && ::fsync(fd_) != 0) {
    int error = errno;
    abandon();
    return Status::error(StatusCode::Unavailable,
                         tmpPath_ + ": fsync failed: " + systemError(error) +
                             "; " + path_ + " was left as it was");
  }
  int fd = fd_;
  fd_ = -1;
  if (direct_) {
    // Nothing to rename; a device or pipe has no data to fsync (EINVAL).
    if (::close(fd) != 0)
      return Status::error(StatusCode::Unavailable,
                           path_ + ": close failed: " + systemError(errno));
    return Status::ok();
  }
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

bool sameFile(const std::string &a, const std::string &b) {
  if (a.empty() || b.empty())
    return false;
  struct stat infoA, infoB;
  bool hasA = ::stat(a.c_str(), &infoA) == 0;
  bool hasB = ::stat(b.c_str(), &infoB) == 0;
  if (hasA && hasB)
    return infoA.st_dev == infoB.st_dev && infoA.st_ino == infoB.st_ino;
  if (hasA != hasB)
    return false;
  std::error_code error;
  std::filesystem::path resolvedA =
      std::filesystem::weakly_canonical(followLinks(a), error);
  std::filesystem::path resolvedB =
      std::filesystem::weakly_canonical(followLinks(b), error);
  return !error && resolvedA == resolvedB;
}

Status checkNotAnInput(const std::string &outputFlag,
                       const std::string &output,
                       const std::string &inputFlag,
                       const std::string &input) {
  if (!sameFile(output, input))
    return Status::ok();
  return Status::error(StatusCode::InvalidArgument,
                       outputFlag + " '" + output + "' is the same file as " +
                           inputFlag + " '" + input +
                           "': writing it would destroy that input; give " +
                           outputFlag + " another path");
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
