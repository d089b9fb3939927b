//===- CpuCheck.cpp - every GPU command against the CPU kernel ------------===//
#include "runtime/cuda/session/CpuCheck.h"

#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/KernelImpl.h"
#include "runtime/cpu/ThreadPool.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>

namespace llmc::rt::cuda {

namespace {

Status copyToHost(const TensorRef &t, std::vector<uint8_t> &bytes) {
  bytes.resize(t.bytes());
  if (bytes.empty())
    return Status::ok();
  cudaError_t status =
      cudaMemcpy(bytes.data(), t.data, bytes.size(), cudaMemcpyDeviceToHost);
  if (status != cudaSuccess)
    return Status::error(StatusCode::Internal,
                         std::string("LLMC_CHECK_CPU: cudaMemcpy: ") +
                             cudaGetErrorString(status));
  return Status::ok();
}

/// Element `i` of host bytes as a double (the CPU kernels' loadFloat).
double valueAt(const uint8_t *data, DType dtype, int64_t i) {
  return loadFloat(TensorRef{const_cast<uint8_t *>(data), dtype, {}}, i);
}

std::string shapeText(const TensorRef &t) {
  std::string text = dtypeName(t.dtype);
  text += "[";
  for (size_t d = 0; d < t.shape.size(); ++d)
    text += (d ? "x" : "") + std::to_string(t.shape[d]);
  return text + "]";
}

} // namespace

CpuCheck::CpuCheck() : pool_(std::make_unique<ThreadPool>()) {}
CpuCheck::~CpuCheck() = default;

Status CpuCheck::before(const std::vector<TensorRef> &inputs,
                        const std::vector<TensorRef> &outputs,
                        cudaStream_t stream) {
  if (cudaStreamSynchronize(stream) != cudaSuccess)
    return Status::error(StatusCode::Internal,
                         "LLMC_CHECK_CPU: an earlier kernel failed");
  inputs_.resize(inputs.size());
  outputs_.resize(outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    LLMC_RETURN_IF_ERROR(copyToHost(inputs[i], inputs_[i]));
  for (size_t i = 0; i < outputs.size(); ++i)
    LLMC_RETURN_IF_ERROR(copyToHost(outputs[i], outputs_[i]));
  return Status::ok();
}

Status CpuCheck::after(size_t index, const Command &command,
                       const std::vector<TensorRef> &inputs,
                       const std::vector<TensorRef> &outputs,
                       cudaStream_t stream) {
  if (cudaStreamSynchronize(stream) != cudaSuccess)
    return Status::error(StatusCode::Internal,
                         "LLMC_CHECK_CPU: the kernel failed");
  // The CPU's operands: the host copies, with the same dtypes and shapes.
  // An output that aliases an input on the GPU (in place) gets its own
  // host buffer here; the CPU kernels accept either.
  std::vector<TensorRef> cpuIn(inputs), cpuOut(outputs);
  for (size_t i = 0; i < inputs.size(); ++i)
    cpuIn[i].data = inputs_[i].data();
  for (size_t i = 0; i < outputs.size(); ++i)
    cpuOut[i].data = outputs_[i].data();
  LLMC_RETURN_IF_ERROR(
      runCpuKernel(command.kernel, command.attrs, cpuIn, cpuOut, *pool_));
  return compare(index, command, inputs, outputs, outputs_);
}

Status CpuCheck::afterRegion(size_t index, const RankProgram &program,
                             const std::vector<TensorRef> &inputs,
                             const std::vector<TensorRef> &outputs,
                             cudaStream_t stream) {
  if (cudaStreamSynchronize(stream) != cudaSuccess)
    return Status::error(StatusCode::Internal,
                         "LLMC_CHECK_CPU: the fused kernel failed");
  const Command &marker = program.commands[index];
  // Host bytes per value slot: the region's inputs (copied before the
  // launch), then every value its commands write.
  std::map<int32_t, std::vector<uint8_t>> host;
  for (size_t i = 0; i < marker.inputs.size(); ++i)
    host[marker.inputs[i]] = inputs_[i];
  auto ref = [&](int32_t slot) {
    const ValueInfo &info = program.values[slot];
    std::vector<uint8_t> &bytes = host[slot];
    bytes.resize(info.bytes());
    return TensorRef{bytes.data(), info.dtype, info.shape};
  };
  size_t count = static_cast<size_t>(marker.attrs.ints.at(0));
  for (size_t c = index + 1; c <= index + count; ++c) {
    const Command &command = program.commands[c];
    std::vector<TensorRef> cpuIn, cpuOut;
    for (int32_t slot : command.inputs)
      cpuIn.push_back(ref(slot));
    for (int32_t slot : command.outputs)
      cpuOut.push_back(ref(slot));
    LLMC_RETURN_IF_ERROR(
        runCpuKernel(command.kernel, command.attrs, cpuIn, cpuOut, *pool_));
  }
  std::vector<std::vector<uint8_t>> results;
  for (int32_t slot : marker.outputs)
    results.push_back(host[slot]);
  return compare(index, marker, inputs, outputs, results);
}

Status CpuCheck::compare(size_t index, const Command &command,
                         const std::vector<TensorRef> &inputs,
                         const std::vector<TensorRef> &outputs,
                         const std::vector<std::vector<uint8_t>> &cpu) {
  ++checked_;
  std::vector<uint8_t> gpu;
  for (size_t o = 0; o < outputs.size(); ++o) {
    LLMC_RETURN_IF_ERROR(copyToHost(outputs[o], gpu));
    DType dtype = outputs[o].dtype;
    bool exact = !isFloat(dtype);
    bool narrow = dtype == DType::BF16 || dtype == DType::F16;
    double rtol = exact ? 0.0 : narrow ? 2e-2 : 1e-3;
    double atol = exact ? 0.0 : narrow ? 1e-3 : 1e-5;
    int64_t n = outputs[o].numElements(), bad = 0, worst = -1;
    double worstExcess = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double g = valueAt(gpu.data(), dtype, i);
      double c = valueAt(cpu[o].data(), dtype, i);
      if (std::isnan(g) && std::isnan(c))
        continue;
      double excess = std::fabs(g - c) - (atol + rtol * std::fabs(c));
      if (!(excess <= 0.0)) { // NaN on one side counts
        ++bad;
        if (worst < 0 || !(excess <= worstExcess)) {
          worst = i;
          worstExcess = excess;
        }
      }
    }
    if (bad == 0)
      continue;
    std::ostringstream message;
    message << "command " << index << " (" << kernelName(command.kernel)
            << " at " << command.origin << ") output " << o << " "
            << shapeText(outputs[o]) << ": " << bad << " of " << n
            << " elements differ from the CPU kernel; worst at element "
            << worst << ": GPU " << valueAt(gpu.data(), dtype, worst)
            << ", CPU " << valueAt(cpu[o].data(), dtype, worst)
            << "; inputs";
    for (const TensorRef &t : inputs)
      message << " " << shapeText(t);
    std::fprintf(stderr, "LLMC_CHECK_CPU: %s\n", message.str().c_str());
    if (failed_++ == 0)
      first_ = message.str();
  }
  return Status::ok();
}

Status CpuCheck::result() const {
  if (failed_ == 0)
    return Status::ok();
  return Status::error(StatusCode::Internal,
                       "LLMC_CHECK_CPU: " + std::to_string(failed_) +
                           " outputs of " + std::to_string(checked_) +
                           " checked commands differ from the CPU; the "
                           "first: " + first_);
}

} // namespace llmc::rt::cuda
