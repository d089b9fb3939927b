//===- Status.h - error values returned by the runtime -----------*- C++ -*-===//
//
// The runtime reports every failure as a Status with a message for the user;
// it never exits or throws (tools/ decide what to do with a failed Status).
// No MLIR or LLVM here: the runtime ships to machines without them.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_STATUS_H
#define LLMC_RUNTIME_STATUS_H

#include <cstdint>
#include <string>
#include <utility>

namespace llmc::rt {

enum class StatusCode {
  Ok = 0,
  InvalidArgument, ///< the caller passed something malformed
  NotFound,        ///< a file, parameter or device does not exist
  DataLoss,        ///< a file is truncated or corrupt
  Unimplemented,   ///< a feature that a later issue adds
  Unavailable,     ///< a device or peer cannot be reached
  Internal,        ///< a bug in llmc
  Cancelled,       ///< stopped on request (a signal) after a clean stop
};

/// The name of a code, as printed in messages ("invalid argument").
const char *statusCodeName(StatusCode code);

/// Success, or a code with a message that says what went wrong and how to
/// fix it.
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(StatusCode code, std::string message) {
    return Status(code, std::move(message));
  }

  bool isOk() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }

  /// "<code name>: <message>", or "ok".
  std::string toString() const;

private:
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

/// Returns the Status of `expr` from the enclosing function when it is an
/// error.
#define LLMC_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    if (::llmc::rt::Status status_ = (expr); !status_.isOk())                  \
      return status_;                                                          \
  } while (false)

/// 1234567 -> "1,234,567": counts of tokens, bytes and steps in messages.
std::string formatCount(uint64_t value);

/// The version of the runtime library, "MAJOR.MINOR.PATCH".
const char *runtimeVersion();
/// The commit it was built from: 12 hex digits, with "-modified" when
/// tracked files differed from it, or "unknown" outside a git checkout.
const char *runtimeCommit();
/// "llmc 0.1.0 (commit 0123456789ab)": what --version prints.
std::string versionLine();

} // namespace llmc::rt

#endif // LLMC_RUNTIME_STATUS_H
