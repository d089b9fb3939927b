//===- CudaSession.cpp - run a loaded Executable on one GPU ---------------===//
#include "runtime/cuda/session/CudaSession.h"
#include "runtime/Sharding.h"
#include "runtime/train/Init.h"

#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/KernelChoice.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorLaunch.h"
#include "runtime/cuda/libs/CollectiveBackend.h"
#include "runtime/cuda/session/CudaTiming.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <cstring>
#include <set>

namespace llmc::rt::cuda {

CudaSession::CudaSession(const Executable &executable,
                         const CudaSessionOptions &options)
    : executable_(executable), options_(options),
      bound_(executable.arguments.size(), false) {}

CudaSession::~CudaSession() {
  if (stream_)
    (void)cudaStreamSynchronize(stream_);
  if (profile_)
    printProfile();
  if (graphExec_)
    (void)cudaGraphExecDestroy(graphExec_);
  for (cudaEvent_t event : events_)
    (void)cudaEventDestroy(event);
  world_.reset(); // waits for its stream, destroys the communicators
  if (stopFlag_)
    (void)cudaFree(stopFlag_);
  for (cudaEvent_t event : collectiveDone_)
    if (event)
      (void)cudaEventDestroy(event);
  if (runDone_)
    (void)cudaEventDestroy(runDone_);
  multi_.reset(); // its launches use kernels_
  kernels_.reset();
  if (arena_)
    (void)cudaFree(arena_);
  if (stream_)
    (void)cudaStreamDestroy(stream_);
}

Status CudaSession::wrap(const Command &command, Status status) const {
  if (status)
    return status;
  return Status::error(status.code(),
                       "at " + command.origin + ": " + status.message());
}

const RankProgram &CudaSession::program() const {
  return executable_.ranks[options_.rank];
}

TensorRef CudaSession::slot(int32_t value) const {
  const ValueInfo &info = program().values[value];
  // No storage (an intermediate of a region that runs as one kernel): no
  // pointer, never launched on.
  if (!info.stored())
    return TensorRef{nullptr, info.dtype, info.shape};
  return TensorRef{arena_ + info.offset, info.dtype, info.shape};
}

uint64_t CudaSession::arenaBytes() const { return program().arenaBytes; }

std::string CudaSession::backendNotes() const {
  return kernels_->attentionPath();
}

std::string CudaSession::memorySummary() const {
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaSetDevice(options_.device) != cudaSuccess ||
      cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
    cudaGetLastError();
    return "device memory: cudaMemGetInfo failed on " + deviceName();
  }
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  char line[256];
  std::snprintf(line, sizeof(line),
                "device memory on %s: %.2f GiB planned (the arena), %.2f GiB "
                "in use (cudaMemGetInfo: the arena, scratch, library "
                "workspaces and the CUDA context), of %.1f GiB",
                deviceName().c_str(), arenaBytes() / GiB,
                (totalBytes - freeBytes) / GiB, totalBytes / GiB);
  return line;
}

void CudaSession::attachCollectives(
    std::unique_ptr<CollectiveBackend> world) {
  world_ = std::move(world);
}

size_t CudaSession::loadedUnits() const { return kernels_->loadedUnits(); }
size_t CudaSession::multiTensorGroups() const {
  return multi_ ? multi_->size() : 0;
}
size_t CudaSession::multiTensorCommands() const {
  size_t commands = 0;
  for (size_t g = 0; multi_ && g < multi_->size(); ++g)
    commands += multi_->group(static_cast<int>(g)).members.size();
  return commands;
}
double CudaSession::compileSeconds() const {
  return kernels_->compileSeconds();
}

int CudaSession::findArgument(const std::string &name) const {
  return executable_.findArgument(name);
}

Status CudaSession::setArgument(const std::string &name, DType dtype,
                                const Shape &shape, const void *data,
                                size_t bytes) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  const ArgumentInfo &info = executable_.arguments[index];
  TensorRef target = slot(info.value);
  // The caller binds the GLOBAL tensor; this rank keeps its block.
  TensorRef global = target;
  LLMC_RETURN_IF_ERROR(
      argumentGlobalShape(executable_, static_cast<size_t>(index),
                          global.shape));
  LLMC_RETURN_IF_ERROR(checkBinding(name, global, dtype, shape, bytes));
  if (skipsArgument(index))
    return Status::ok();
  if (!info.sharding.replicated()) {
    staging_.resize(target.bytes());
    LLMC_RETURN_IF_ERROR(extractShard(data, dtypeSize(dtype), global.shape,
                                      info.sharding, executable_.mesh,
                                      options_.rank, staging_.data()));
    data = staging_.data();
    bytes = staging_.size();
  }
  // Ordered after the previous run's kernels on the same stream; the host
  // buffer may be reused as soon as this returns.
  LLMC_CUDA_CHECK(cudaMemcpyAsync(target.data, data, bytes,
                                  cudaMemcpyHostToDevice, stream_),
                  "copying argument '" + name + "' to the device");
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "copying argument '" + name + "' to the device");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::setArgumentConverting(const std::string &name,
                                          DType dtype, const Shape &shape,
                                          const void *data, size_t bytes,
                                          ThreadPool *pool) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  const ArgumentInfo &info = executable_.arguments[index];
  if (skipsArgument(index))
    return Status::ok();
  TensorRef target = slot(info.value);
  const char *entry = dtype == DType::BF16 && target.dtype == DType::F32
                          ? "llmc_widen_bf16_f32"
                      : dtype == DType::F16 && target.dtype == DType::F32
                          ? "llmc_widen_f16_f32"
                      : dtype == DType::F32 && target.dtype == DType::BF16
                          ? "llmc_narrow_f32_bf16"
                          : nullptr;
  if (dtype == target.dtype || !entry || !info.sharding.replicated() ||
      shape != target.shape ||
      bytes != static_cast<size_t>(numElements(shape)) * dtypeSize(dtype))
    return DeviceSession::setArgumentConverting(name, dtype, shape, data,
                                                bytes, pool);
  // The file's bytes to a temporary device buffer, converted into the slot.
  void *staging = nullptr;
  LLMC_CUDA_CHECK(cudaMalloc(&staging, std::max<size_t>(bytes, 1)),
                  "allocating " + std::to_string(bytes) +
                      " bytes to convert argument '" + name + "'");
  struct Release {
    void *pointer;
    ~Release() { (void)cudaFree(pointer); }
  } release{staging};
  LLMC_CUDA_CHECK(cudaMemcpyAsync(staging, data, bytes, cudaMemcpyHostToDevice,
                                  stream_),
                  "copying argument '" + name + "' to the device");
  void *out = target.data;
  long long count = static_cast<long long>(numElements(shape));
  std::vector<void *> args = {&staging, &out, &count};
  unsigned blocks = static_cast<unsigned>(
      std::clamp<long long>((count + 255) / 256, 1, 65535));
  LLMC_RETURN_IF_ERROR(
      kernels_->launchDeviceEntry(entry, blocks, args, stream_));
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "converting argument '" + name + "' on the device");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::zeroArgument(const std::string &name) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  if (skipsArgument(index))
    return Status::ok();
  TensorRef target = slot(executable_.arguments[index].value);
  LLMC_CUDA_CHECK(cudaMemsetAsync(target.data, 0, target.bytes(), stream_),
                  "clearing argument '" + name + "'");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::drawArgument(size_t index, uint64_t seed, bool &drawn) {
  drawn = false;
  if (index >= executable_.arguments.size())
    return Status::error(StatusCode::InvalidArgument,
                         "no argument #" + std::to_string(index));
  const ArgumentInfo &info = executable_.arguments[index];
  if (skipsArgument(index)) {
    drawn = true; // nothing to draw here
    return Status::ok();
  }
  TensorRef target = slot(info.value);
  int type = target.dtype == DType::F32    ? 0
             : target.dtype == DType::F64  ? 1
             : target.dtype == DType::BF16 ? 2
                                           : -1;
  int kind = -1;
  double scale = info.init.scale;
  switch (info.init.kind) {
  case InitSpec::Kind::Normal:
    kind = 0;
    break;
  case InitSpec::Kind::Uniform:
    kind = 1;
    break;
  case InitSpec::Kind::Ones:
    kind = 2, scale = 1.0;
    break;
  case InitSpec::Kind::Constant:
    kind = 2;
    break;
  case InitSpec::Kind::Zeros:
    kind = 2, scale = 0.0;
    break;
  default:
    break;
  }
  // Optimizer state starts at zero unless its initializer is a constant
  // (initialArgumentBytes).
  if (info.role == ArgumentRole::OptimizerState &&
      info.init.kind != InitSpec::Kind::Constant)
    kind = 2, scale = 0.0;
  // A sharded argument's block would need the global positions of its
  // elements: the host draws it and setArgument splits it.
  if (type < 0 || kind < 0 || !info.sharding.replicated() ||
      info.role == ArgumentRole::Input)
    return Status::ok();
  void *out = target.data;
  long long n = static_cast<long long>(numElements(target.shape));
  unsigned long long stream = initialStream(seed, index);
  std::vector<void *> args = {&out, &type, &n, &stream, &kind, &scale};
  // Blocks of 256 threads, two pairs per thread (more beyond 65,535
  // blocks: the kernel strides over the grid).
  long long pairs = (n + 1) / 2;
  unsigned blocks = static_cast<unsigned>(
      std::clamp<long long>((pairs + 511) / 512, 1, 65535));
  LLMC_RETURN_IF_ERROR(
      kernels_->launchDeviceEntry("llmc_init_draw", blocks, args, stream_));
  bound_[index] = true;
  drawn = true;
  return Status::ok();
}

Status CudaSession::setArgumentFromOutput(const std::string &name,
                                          size_t output) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  if (skipsArgument(index))
    return Status::ok();
  if (output < executable_.outputs.size() &&
      outputHolder(executable_, output, options_.rank) != options_.rank)
    return Status::error(
        StatusCode::InvalidArgument,
        "argument '" + name + "' is read on rank " +
            std::to_string(options_.rank) + ", whose pipeline stage does not "
            "compute its new value (output '" +
            executable_.outputs[output].name +
            "'): the program lacks the transfer between the processes (a "
            "tied parameter's update under ZeRO in a pipeline); run it on "
            "virtual ranks (llmc-run --virtual-ranks) or CPU devices, or "
            "without ZeRO (docs/distributed.md)");
  TensorRef source;
  LLMC_RETURN_IF_ERROR(this->output(output, source));
  TensorRef target = slot(executable_.arguments[index].value);
  if (source.dtype != target.dtype || source.shape != target.shape)
    return Status::error(
        StatusCode::InvalidArgument,
        "argument '" + name + "' is " + dtypeName(target.dtype) +
            formatShape(target.shape) + ", output #" + std::to_string(output) +
            " is " + dtypeName(source.dtype) + formatShape(source.shape));
  if (source.data != target.data)
    LLMC_CUDA_CHECK(cudaMemcpyAsync(target.data, source.data, target.bytes(),
                                    cudaMemcpyDeviceToDevice, stream_),
                    "copying output #" + std::to_string(output) +
                        " into argument '" + name + "'");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::setArgumentFromDevice(const std::string &name,
                                          const TensorRef &source) {
  int index = findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  TensorRef target = slot(executable_.arguments[index].value);
  if (source.dtype != target.dtype || source.shape != target.shape)
    return Status::error(StatusCode::InvalidArgument,
                         "argument '" + name + "' is " +
                             dtypeName(target.dtype) +
                             formatShape(target.shape) + ", the tensor is " +
                             dtypeName(source.dtype) +
                             formatShape(source.shape));
  LLMC_CUDA_CHECK(cudaMemcpyAsync(target.data, source.data, target.bytes(),
                                  cudaMemcpyDeviceToDevice, stream_),
                  "copying a tensor into argument '" + name + "'");
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "copying a tensor into argument '" + name + "'");
  bound_[index] = true;
  return Status::ok();
}

Status CudaSession::output(size_t index, TensorRef &tensor) const {
  if (index >= executable_.outputs.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.outputs.size()) +
                             " outputs, asked for #" + std::to_string(index));
  tensor = slot(executable_.outputs[index].value);
  return Status::ok();
}

Status CudaSession::argument(size_t index, TensorRef &tensor) const {
  if (index >= executable_.arguments.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.arguments.size()) +
                             " arguments, asked for #" + std::to_string(index));
  tensor = slot(executable_.arguments[index].value);
  return Status::ok();
}

Status CudaSession::copyToHost(const TensorRef &tensor,
                               std::vector<uint8_t> &bytes) const {
  bytes.resize(tensor.bytes());
  if (bytes.empty())
    return Status::ok();
  LLMC_CUDA_CHECK(cudaMemcpyAsync(bytes.data(), tensor.data, bytes.size(),
                                  cudaMemcpyDeviceToHost, stream_),
                  "copying a tensor to the host");
  LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                  "copying a tensor to the host");
  return Status::ok();
}

std::string CudaSession::deviceName() const {
  std::string name = "cuda:" + std::to_string(options_.device);
  if (options_.transport != RankTransport::None)
    name += " (rank " + std::to_string(options_.rank) + " of " +
            std::to_string(executable_.ranks.size()) + ", " +
            (world_ ? world_->transport()
             : options_.transport == RankTransport::Nccl ? "NCCL"
                                                         : "virtual") +
            ")";
  return name;
}

std::string CudaSession::hardwareName() const {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, options_.device) != cudaSuccess)
    return "unknown GPU";
  return properties.name;
}

Status CudaSession::toHost(TensorRef device, HostTensor &tensor) const {
  LLMC_RETURN_IF_ERROR(copyToHost(device, tensor.storage));
  tensor.view = device;
  tensor.view.data = tensor.storage.data();
  return Status::ok();
}

bool CudaSession::skipsArgument(int index) {
  if (bindsArgument(executable_, static_cast<size_t>(index), options_.rank))
    return false;
  bound_[index] = true; // another stage's ranks hold it
  return true;
}

Status CudaSession::globalToHost(TensorRef device,
                                 const TensorSharding &sharding,
                                 const std::vector<int> &holders,
                                 HostTensor &tensor) const {
  // Every rank's own copy is the value (no pipeline stage holds it alone):
  // the same decision on every process, so that all or none gather.
  bool everyRankHolds = true;
  for (size_t r = 0; r < holders.size(); ++r)
    everyRankHolds = everyRankHolds && holders[r] == static_cast<int>(r);
  if (executable_.ranks.size() == 1 ||
      (sharding.replicated() && everyRankHolds))
    return toHost(device, tensor); // every rank holds the whole tensor
  if (!world_)
    return Status::error(StatusCode::Internal,
                         "a sharded or stage-held tensor needs the other "
                         "ranks, and the session has no communicators");
  // Every rank's block (the same local shape on every rank; a rank off the
  // tensor's stage sends its unwritten slot), then the global tensor
  // assembled from the holders' blocks as the CPU session does.
  std::vector<uint8_t> gathered;
  size_t bytes = device.bytes();
  LLMC_RETURN_IF_ERROR(
      world_->gatherToHost(device.data, bytes, stream_, gathered));
  tensor.view = device;
  if (sharding.replicated()) {
    const uint8_t *held = gathered.data() + holders[options_.rank] * bytes;
    tensor.storage.assign(held, held + bytes);
    tensor.view.data = tensor.storage.data();
    return Status::ok();
  }
  std::vector<const void *> locals(executable_.ranks.size());
  for (size_t r = 0; r < locals.size(); ++r)
    locals[r] = gathered.data() + holders[r] * bytes;
  Shape global;
  LLMC_RETURN_IF_ERROR(globalShape(device.shape, sharding, executable_.mesh,
                                   global));
  tensor.view.shape = global;
  tensor.storage.resize(tensor.view.bytes());
  LLMC_RETURN_IF_ERROR(assembleShards(locals, dtypeSize(device.dtype), global,
                                      sharding, executable_.mesh,
                                      tensor.storage.data()));
  tensor.view.data = tensor.storage.data();
  return Status::ok();
}

Status CudaSession::outputToHost(size_t index, HostTensor &tensor) const {
  TensorRef device;
  LLMC_RETURN_IF_ERROR(output(index, device));
  std::vector<int> holders(executable_.ranks.size());
  for (size_t r = 0; r < holders.size(); ++r)
    holders[r] = outputHolder(executable_, index, static_cast<int>(r));
  return globalToHost(device, executable_.outputs[index].sharding, holders,
                      tensor);
}

Status CudaSession::agreeOnStop(int &signal) {
  if (!world_)
    return Status::ok();
  if (!stopFlag_)
    LLMC_CUDA_CHECK(cudaMalloc(&stopFlag_, sizeof(int32_t)),
                    "allocating the stop flag");
  int32_t local = signal;
  LLMC_CUDA_CHECK(cudaMemcpyAsync(stopFlag_, &local, sizeof(local),
                                  cudaMemcpyHostToDevice, stream_),
                  "copying the stop flag to the device");
  std::vector<uint8_t> gathered;
  LLMC_RETURN_IF_ERROR(
      world_->gatherToHost(stopFlag_, sizeof(int32_t), stream_, gathered));
  for (size_t r = 0; r + sizeof(int32_t) <= gathered.size();
       r += sizeof(int32_t)) {
    int32_t theirs = 0;
    std::memcpy(&theirs, gathered.data() + r, sizeof(theirs));
    signal = std::max<int>(signal, theirs);
  }
  return Status::ok();
}

Status CudaSession::argumentToHost(size_t index, HostTensor &tensor) const {
  TensorRef device;
  LLMC_RETURN_IF_ERROR(argument(index, device));
  const ArgumentInfo &arg = executable_.arguments[index];
  std::vector<int> holders(executable_.ranks.size());
  for (size_t r = 0; r < holders.size(); ++r)
    holders[r] = stageHolder(executable_, arg.pipelineStage,
                             static_cast<int>(r));
  return globalToHost(device, arg.sharding, holders, tensor);
}

} // namespace llmc::rt::cuda
