//===- Status.cpp - error values returned by the runtime ------------------===//
#include "runtime/Status.h"

// LLMC_COMMIT, written at build time by cmake/WriteCommit.cmake.
#include "LlmcCommit.inc"

namespace llmc::rt {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok:
    return "ok";
  case StatusCode::InvalidArgument:
    return "invalid argument";
  case StatusCode::NotFound:
    return "not found";
  case StatusCode::DataLoss:
    return "data loss";
  case StatusCode::Unimplemented:
    return "unimplemented";
  case StatusCode::Unavailable:
    return "unavailable";
  case StatusCode::Internal:
    return "internal error";
  case StatusCode::Cancelled:
    return "cancelled";
  }
  return "unknown";
}

std::string Status::toString() const {
  if (isOk())
    return "ok";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

std::string formatCount(uint64_t value) {
  std::string digits = std::to_string(value), text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      text += ',';
    text += digits[i];
  }
  return text;
}

const char *runtimeVersion() { return LLMC_VERSION_STRING; }

const char *runtimeCommit() { return LLMC_COMMIT; }

std::string versionLine() {
  return std::string("llmc ") + runtimeVersion() + " (commit " +
         runtimeCommit() + ")";
}

} // namespace llmc::rt
