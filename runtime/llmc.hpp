//===- llmc.hpp - a thin C++ wrapper over the C API (llmc.h) ----*- C++ -*-===//
//
// RAII handles over llmc_executable and llmc_session. Errors come back as
// llmc::Error values (code + message) rather than exceptions, so the wrapper
// works in code built with -fno-exceptions.
//
//   llmc::Executable exe;
//   if (llmc::Error e = exe.load("model.llmcx")) { puts(e.message.c_str()); }
//   llmc::Session session;
//   session.create(exe);
//   session.setArgument("tokens", LLMC_I32, {8, 64}, tokens.data(), bytes);
//   session.run();
//   float loss; session.readOutput(0, &loss, sizeof loss);
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_HPP
#define LLMC_HPP

#include "llmc.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace llmc {

/// A failed call: `code` is LLMC_OK on success (then the Error is false).
struct Error {
  llmc_status code = LLMC_OK;
  std::string message;
  explicit operator bool() const { return code != LLMC_OK; }
};

inline Error check(llmc_status code) {
  if (code == LLMC_OK)
    return {};
  return {code, llmc_last_error()};
}

class Executable {
public:
  Executable() = default;
  ~Executable() { llmc_executable_free(handle_); }
  Executable(const Executable &) = delete;
  Executable &operator=(const Executable &) = delete;
  Executable(Executable &&other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)) {}

  [[nodiscard]] Error load(const std::string &path) {
    llmc_executable_free(handle_);
    handle_ = nullptr;
    return check(llmc_executable_load(path.c_str(), &handle_));
  }
  size_t numArguments() const { return llmc_executable_num_arguments(handle_); }
  size_t numOutputs() const { return llmc_executable_num_outputs(handle_); }
  [[nodiscard]] Error argument(size_t i, llmc_tensor_info &info) const {
    return check(llmc_executable_argument(handle_, i, &info));
  }
  [[nodiscard]] Error output(size_t i, llmc_tensor_info &info) const {
    return check(llmc_executable_output(handle_, i, &info));
  }
  const llmc_executable *handle() const { return handle_; }

private:
  llmc_executable *handle_ = nullptr;
};

class Session {
public:
  Session() = default;
  ~Session() { llmc_session_free(handle_); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  Session(Session &&other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)) {}

  [[nodiscard]] Error create(const Executable &executable,
                             unsigned threads = 0) {
    llmc_session_free(handle_);
    handle_ = nullptr;
    llmc_session_options options{threads};
    return check(llmc_session_create(executable.handle(), &options, &handle_));
  }
  [[nodiscard]] Error setArgument(const std::string &name, llmc_dtype dtype,
                                  const std::vector<int64_t> &shape,
                                  const void *data, size_t bytes) {
    return check(llmc_session_set_argument(handle_, name.c_str(), dtype,
                                           shape.data(),
                                           static_cast<int>(shape.size()),
                                           data, bytes));
  }
  [[nodiscard]] Error run() { return check(llmc_session_run(handle_)); }
  [[nodiscard]] Error readOutput(size_t index, void *data,
                                 size_t bytes) const {
    return check(llmc_session_read_output(handle_, index, data, bytes));
  }

private:
  llmc_session *handle_ = nullptr;
};

} // namespace llmc

#endif // LLMC_HPP
