//===- CApi.cpp - the C API (llmc.h) over Executable and Session ----------===//
#include "runtime/llmc.h"

#include "runtime/Executable.h"
#include "runtime/Session.h"
#include "runtime/Sharding.h"

#include <cstring>
#include <memory>
#include <new>
#include <string>

struct llmc_executable {
  llmc::rt::Executable executable;
};

struct llmc_session {
  std::unique_ptr<llmc::rt::Session> session;
};

namespace {

thread_local std::string lastError;

llmc_status report(const llmc::rt::Status &status) {
  if (status.isOk()) {
    lastError.clear();
    return LLMC_OK;
  }
  lastError = status.message();
  return static_cast<llmc_status>(status.code());
}

llmc_status invalid(const std::string &message) {
  return report(llmc::rt::Status::error(
      llmc::rt::StatusCode::InvalidArgument, message));
}

/// Describes a tensor of the caller's view: `shape` is the GLOBAL shape.
llmc_status describe(llmc::rt::DType dtype, const llmc::rt::Shape &shape,
                     const char *name, llmc_role role, llmc_tensor_info *info) {
  if (!info)
    return invalid("info must not be NULL");
  if (shape.size() > LLMC_MAX_RANK)
    return invalid(std::string("'") + name + "' has rank " +
                   std::to_string(shape.size()) + ", more than LLMC_MAX_RANK");
  info->name = name;
  info->role = role;
  info->dtype = static_cast<llmc_dtype>(dtype);
  info->rank = static_cast<int>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    info->shape[i] = shape[i];
  info->bytes = static_cast<size_t>(llmc::rt::numElements(shape)) *
                llmc::rt::dtypeSize(dtype);
  return report(llmc::rt::Status::ok());
}

} // namespace

static_assert(static_cast<int>(llmc::rt::StatusCode::Cancelled) ==
                  LLMC_CANCELLED,
              "llmc_status mirrors StatusCode");
static_assert(static_cast<int>(llmc::rt::DType::I1) == LLMC_I1,
              "llmc_dtype mirrors DType");
static_assert(static_cast<int>(llmc::rt::ArgumentRole::OptimizerState) ==
                  LLMC_OPTIMIZER_STATE,
              "llmc_role must match ArgumentRole");

extern "C" {

const char *llmc_version(void) { return llmc::rt::runtimeVersion(); }

const char *llmc_last_error(void) { return lastError.c_str(); }

llmc_status llmc_executable_load(const char *path, llmc_executable **out) {
  if (!path || !out)
    return invalid("path and out must not be NULL");
  auto holder = std::unique_ptr<llmc_executable>(new (std::nothrow)
                                                     llmc_executable());
  if (!holder)
    return report(llmc::rt::Status::error(llmc::rt::StatusCode::Unavailable,
                                          "out of memory"));
  llmc::rt::Status status = llmc::rt::readExecutable(path, holder->executable);
  if (!status)
    return report(status);
  *out = holder.release();
  return report(status);
}

void llmc_executable_free(llmc_executable *executable) { delete executable; }

size_t llmc_executable_num_arguments(const llmc_executable *executable) {
  return executable ? executable->executable.arguments.size() : 0;
}

llmc_status llmc_executable_argument(const llmc_executable *executable,
                                     size_t index, llmc_tensor_info *info) {
  if (!executable || index >= executable->executable.arguments.size())
    return invalid("argument index " + std::to_string(index) +
                   " is out of range");
  const llmc::rt::Executable &exe = executable->executable;
  const llmc::rt::ArgumentInfo &arg = exe.arguments[index];
  llmc::rt::Shape shape;
  if (llmc::rt::Status status = argumentGlobalShape(exe, index, shape);
      !status)
    return report(status);
  return describe(exe.ranks.front().values[arg.value].dtype, shape,
                  arg.name.c_str(), static_cast<llmc_role>(arg.role), info);
}

size_t llmc_executable_num_outputs(const llmc_executable *executable) {
  return executable ? executable->executable.outputs.size() : 0;
}

llmc_status llmc_executable_output(const llmc_executable *executable,
                                   size_t index, llmc_tensor_info *info) {
  if (!executable || index >= executable->executable.outputs.size())
    return invalid("output index " + std::to_string(index) +
                   " is out of range");
  const llmc::rt::Executable &exe = executable->executable;
  const llmc::rt::OutputInfo &out = exe.outputs[index];
  llmc::rt::Shape shape;
  if (llmc::rt::Status status = outputGlobalShape(exe, index, shape); !status)
    return report(status);
  return describe(exe.ranks.front().values[out.value].dtype, shape,
                  out.name.c_str(), LLMC_INPUT, info);
}

llmc_status llmc_session_create(const llmc_executable *executable,
                                const llmc_session_options *options,
                                llmc_session **out) {
  if (!executable || !out)
    return invalid("executable and out must not be NULL");
  llmc::rt::SessionOptions sessionOptions;
  if (options)
    sessionOptions.threads = options->threads;
  auto holder = std::unique_ptr<llmc_session>(new (std::nothrow)
                                                  llmc_session());
  if (!holder)
    return report(llmc::rt::Status::error(llmc::rt::StatusCode::Unavailable,
                                          "out of memory"));
  llmc::rt::Status status = llmc::rt::Session::create(
      executable->executable, sessionOptions, holder->session);
  if (!status)
    return report(status);
  *out = holder.release();
  return report(status);
}

void llmc_session_free(llmc_session *session) { delete session; }

llmc_status llmc_session_set_argument(llmc_session *session, const char *name,
                                      llmc_dtype dtype, const int64_t *shape,
                                      int rank, const void *data,
                                      size_t bytes) {
  if (!session || !name || (!data && bytes) || (!shape && rank) || rank < 0)
    return invalid("session, name, data and shape must not be NULL");
  if (static_cast<int>(dtype) < 0 ||
      static_cast<int>(dtype) >= llmc::rt::kNumDTypes)
    return invalid("unknown dtype " + std::to_string(static_cast<int>(dtype)));
  llmc::rt::Shape dims(shape, shape + rank);
  return report(session->session->setArgument(
      name, static_cast<llmc::rt::DType>(dtype), dims, data, bytes));
}

llmc_status llmc_session_run(llmc_session *session) {
  if (!session)
    return invalid("session must not be NULL");
  return report(session->session->run());
}

llmc_status llmc_session_read_output(const llmc_session *session,
                                     size_t index, void *data, size_t bytes) {
  if (!session || !data)
    return invalid("session and data must not be NULL");
  llmc::rt::HostTensor host;
  llmc::rt::Status status = session->session->outputToHost(index, host);
  if (!status)
    return report(status);
  const llmc::rt::TensorRef &tensor = host.view;
  if (bytes != tensor.bytes())
    return invalid("output " + std::to_string(index) + " has " +
                   std::to_string(tensor.bytes()) + " bytes, the buffer " +
                   std::to_string(bytes));
  std::memcpy(data, tensor.data, bytes);
  return report(status);
}

} // extern "C"
