//===- VirtualRanks.cpp - every rank of a mesh on one GPU -----------------===//
//
// VirtualWorld: what the ranks share (the rendezvous, the world stream, the
// reduction kernels, scratch). VirtualRankBackend: one rank's side, the
// CollectiveBackend its CudaSession enqueues through. VirtualRankSession:
// the DeviceSession over all ranks.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/session/VirtualRanks.h"

#include "runtime/Sharding.h"
#include "runtime/dist/CollectiveRendezvous.h"
#include "runtime/cuda/kernels/collective/VirtualCollectivePlan.h"
#include "runtime/cuda/libs/CollectiveBackend.h"
#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/libs/Nvrtc.h"
#include "runtime/cuda/session/CudaSession.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace llmc::rt::cuda {

namespace {

constexpr const char *kUnitName = "llmc_virtual_collectives";

/// What a member's post carries for the world (CollectivePost::context).
struct MemberEvents {
  cudaEvent_t ready = nullptr;   ///< recorded on its compute stream
  cudaEvent_t done = nullptr;    ///< recorded here once the collective ends
  cudaEvent_t started = nullptr; ///< a trace's start, or null
};

} // namespace

//===----------------------------------------------------------------------===//
// VirtualWorld
//===----------------------------------------------------------------------===//

class VirtualWorld {
public:
  static Status create(const Executable &executable,
                       const VirtualRankOptions &options,
                       std::unique_ptr<VirtualWorld> &world);
  ~VirtualWorld();

  CollectiveRendezvous &rendezvous() { return rendezvous_; }
  cudaStream_t stream() const { return stream_; }

  /// Run by the last member of a collective to arrive (the rendezvous's
  /// action): the world stream waits for every member's ready event, runs
  /// the plan and records every member's done event.
  Status execute(CollectiveKind kind, ReduceOp op, DType dtype,
                 const std::vector<CollectivePost> &members);

private:
  VirtualWorld(int ranks, std::chrono::milliseconds timeout)
      : rendezvous_(ranks, timeout) {}
  Status kernel(const std::string &entry, cudaKernel_t &kernel);
  Status launch(const VirtualPlan &plan, const VirtualStep &step);

  CollectiveRendezvous rendezvous_;
  std::mutex mutex_; ///< one collective's enqueue at a time on the stream
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<CudaLibrary> library_;
  std::map<std::string, cudaKernel_t> kernels_;
  unsigned maxBlocks_ = 1;
  uint8_t *scratch_ = nullptr;
  uint64_t scratchBytes_ = 0;
};

Status VirtualWorld::create(const Executable &executable,
                            const VirtualRankOptions &options,
                            std::unique_ptr<VirtualWorld> &world) {
  const int ranks = static_cast<int>(executable.ranks.size());
  std::unique_ptr<VirtualWorld> created(
      new VirtualWorld(ranks, options.timeout));
  created->device_ = options.device;
  LLMC_CUDA_CHECK(cudaSetDevice(options.device),
                  "cudaSetDevice(" + std::to_string(options.device) + ")");
  cudaDeviceProp properties{};
  LLMC_CUDA_CHECK(cudaGetDeviceProperties(&properties, options.device),
                  "cudaGetDeviceProperties");
  created->maxBlocks_ =
      static_cast<unsigned>(std::max(1, properties.multiProcessorCount * 8));
  LLMC_CUDA_CHECK(
      cudaStreamCreateWithFlags(&created->stream_, cudaStreamNonBlocking),
      "creating the virtual ranks' stream");
  // The reductions' unit, which codegen carries in every program with
  // collectives (codegen/cuda/DeviceUnits.cpp).
  bool collectives = false;
  for (const RankProgram &program : executable.ranks)
    for (const Command &command : program.commands)
      collectives = collectives || command.kind == CommandKind::Collective;
  const CudaUnit *unit = nullptr;
  for (const CudaUnit &candidate : executable.ranks.front().cuda.units)
    if (candidate.name == kUnitName)
      unit = &candidate;
  if (collectives && !unit)
    return Status::error(
        StatusCode::InvalidArgument,
        (executable.source.empty() ? std::string("the program")
                                   : executable.source) +
            ": written by an llmc without the virtual ranks' kernels (the "
            "unit " + kUnitName + "): compile it again");
  if (unit) {
    std::string arch = "sm_" + std::to_string(properties.major) +
                       std::to_string(properties.minor);
    if (!unit->cubin.empty() && unit->arch == arch) {
      LLMC_RETURN_IF_ERROR(CudaLibrary::load(
          std::vector<char>(unit->cubin.begin(), unit->cubin.end()),
          created->library_));
    } else {
      NvrtcOptions nvrtc;
      nvrtc.arch = arch;
      CompiledCuda compiled;
      LLMC_RETURN_IF_ERROR(compileCuda(unit->source, unit->name + ".cu",
                                       nvrtc, compiled));
      LLMC_RETURN_IF_ERROR(CudaLibrary::load(compiled.cubin,
                                             created->library_));
    }
  }
  world = std::move(created);
  return Status::ok();
}

VirtualWorld::~VirtualWorld() {
  if (stream_)
    (void)cudaStreamSynchronize(stream_);
  if (scratch_)
    (void)cudaFree(scratch_);
  if (stream_)
    (void)cudaStreamDestroy(stream_);
}

Status VirtualWorld::kernel(const std::string &entry, cudaKernel_t &kernel) {
  auto found = kernels_.find(entry);
  if (found != kernels_.end()) {
    kernel = found->second;
    return Status::ok();
  }
  if (!library_)
    return Status::error(StatusCode::Internal,
                         "the virtual ranks' kernels are not loaded");
  LLMC_RETURN_IF_ERROR(library_->kernel(entry, kernel));
  kernels_[entry] = kernel;
  return Status::ok();
}

Status VirtualWorld::launch(const VirtualPlan &plan, const VirtualStep &step) {
  if (step.kind == VirtualStep::Kind::Copy) {
    LLMC_CUDA_CHECK(cudaMemcpyAsync(step.dst, step.src, step.bytes,
                                    cudaMemcpyDeviceToDevice, stream_),
                    "cudaMemcpyAsync(between virtual ranks)");
    return Status::ok();
  }
  cudaKernel_t reduce;
  LLMC_RETURN_IF_ERROR(kernel(plan.entry, reduce));
  constexpr unsigned kThreads = 256;
  int64_t blocks = (plan.reduceElements + kThreads - 1) / kThreads;
  unsigned grid = static_cast<unsigned>(
      std::clamp<int64_t>(blocks, 1, static_cast<int64_t>(maxBlocks_)));
  VirtualReduceArgs args = step.reduce;
  void *params[] = {&args};
  LLMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(reduce),
                                   dim3(grid), dim3(kThreads), params, 0,
                                   stream_),
                  "launching " + plan.entry);
  LLMC_CUDA_CHECK(cudaGetLastError(), "launching " + plan.entry);
  return Status::ok();
}

Status VirtualWorld::execute(CollectiveKind kind, ReduceOp op, DType dtype,
                             const std::vector<CollectivePost> &members) {
  std::lock_guard<std::mutex> lock(mutex_);
  LLMC_CUDA_CHECK(cudaSetDevice(device_), "cudaSetDevice");
  // 1. After every member's earlier work.
  for (const CollectivePost &post : members)
    LLMC_CUDA_CHECK(
        cudaStreamWaitEvent(stream_,
                            static_cast<MemberEvents *>(post.context)->ready,
                            0),
        "cudaStreamWaitEvent(a virtual rank's compute stream)");
  for (const CollectivePost &post : members)
    if (cudaEvent_t started = static_cast<MemberEvents *>(post.context)->started)
      LLMC_CUDA_CHECK(cudaEventRecord(started, stream_),
                      "cudaEventRecord(trace)");
  // 2. The plan, with scratch for what must be staged.
  std::vector<VirtualMember> buffers(members.size());
  const size_t width = dtypeSize(dtype);
  for (size_t i = 0; i < members.size(); ++i) {
    buffers[i].input = static_cast<const uint8_t *>(members[i].input);
    buffers[i].inputBytes = static_cast<uint64_t>(members[i].inputCount) * width;
    buffers[i].output = static_cast<uint8_t *>(members[i].output);
    buffers[i].outputBytes =
        static_cast<uint64_t>(members[i].outputCount) * width;
  }
  uint64_t needed = virtualScratchBytes(kind, buffers);
  if (needed > scratchBytes_) {
    // Earlier collectives may still read the old scratch: they complete
    // (everything they wait for was recorded before they were enqueued).
    LLMC_CUDA_CHECK(cudaStreamSynchronize(stream_),
                    "waiting for the virtual ranks' stream");
    if (scratch_)
      LLMC_CUDA_CHECK(cudaFree(scratch_), "cudaFree(virtual ranks' scratch)");
    scratch_ = nullptr;
    scratchBytes_ = 0;
    LLMC_CUDA_CHECK(cudaMalloc(&scratch_, needed),
                    "cudaMalloc(" + std::to_string(needed) +
                        " bytes of the virtual ranks' scratch)");
    scratchBytes_ = needed;
  }
  VirtualPlan plan;
  LLMC_RETURN_IF_ERROR(planVirtualCollective(kind, op, dtype, buffers,
                                             scratch_, scratchBytes_, plan));
  for (const VirtualStep &step : plan.steps)
    LLMC_RETURN_IF_ERROR(launch(plan, step));
  // 3. Every member's end.
  for (const CollectivePost &post : members)
    LLMC_CUDA_CHECK(
        cudaEventRecord(static_cast<MemberEvents *>(post.context)->done,
                        stream_),
        "cudaEventRecord(a virtual collective's end)");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// VirtualRankBackend: one rank's side
//===----------------------------------------------------------------------===//

namespace {

class VirtualRankBackend : public CollectiveBackend {
public:
  VirtualRankBackend(int rank, VirtualWorld &world)
      : rank_(rank), world_(world) {}
  ~VirtualRankBackend() override {
    if (ready_)
      (void)cudaEventDestroy(ready_);
  }

  Status create() {
    LLMC_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming),
                    "cudaEventCreate");
    return Status::ok();
  }

  Status enqueue(const Command &command, const std::vector<TensorRef> &inputs,
                 const std::vector<TensorRef> &outputs, cudaStream_t compute,
                 cudaEvent_t done, cudaEvent_t started) override;

  Status gatherToHost(const void *, size_t, cudaStream_t,
                      std::vector<uint8_t> &) override {
    // VirtualRankSession reads every rank's block itself; nothing asks a
    // rank's session to gather (its outputToHost is never called).
    return Status::error(StatusCode::Internal,
                         "rank " + std::to_string(rank_) +
                             ": a virtual rank's sharded tensors are read "
                             "through VirtualRankSession, not gathered");
  }

  Status synchronize(cudaEvent_t event) override {
    // No peer can hang the device here: the rendezvous, with its timeout,
    // was the only wait on the other ranks.
    cudaError_t error = cudaEventSynchronize(event);
    if (error == cudaSuccess)
      return Status::ok();
    std::string unfinished = "a kernel or copy";
    for (const auto &[what, doneEvent] : pending_)
      if (cudaEventQuery(doneEvent) != cudaSuccess) {
        unfinished = what;
        break;
      }
    return cudaStatus(error, "rank " + std::to_string(rank_) +
                                 ": running the program (" + unfinished +
                                 " did not complete; "
                                 "CudaSessionOptions::syncEachCommand names "
                                 "a failing kernel)");
  }

  void beginRun(RunMode) override { pending_.clear(); }
  /// No: the ranks' threads meet at every collective on the host, which a
  /// graph replay would skip.
  bool capturable() const override { return false; }
  cudaStream_t stream() const override { return world_.stream(); }
  const char *transport() const override { return "virtual"; }

private:
  int rank_;
  VirtualWorld &world_;
  cudaEvent_t ready_ = nullptr;
  std::vector<std::pair<std::string, cudaEvent_t>> pending_;
};

Status VirtualRankBackend::enqueue(const Command &command,
                                   const std::vector<TensorRef> &inputs,
                                   const std::vector<TensorRef> &outputs,
                                   cudaStream_t compute, cudaEvent_t done,
                                   cudaEvent_t started) {
  CollectiveCall call;
  LLMC_RETURN_IF_ERROR(decodeCollective(command, call));
  const std::string what = describeCollective(call, command.origin);
  const std::string where = "rank " + std::to_string(rank_) + ": " + what;
  const bool needsInput = call.kind != CollectiveKind::Recv;
  const bool needsOutput = call.kind != CollectiveKind::Send;
  if (inputs.size() != (needsInput ? 1u : 0u) ||
      outputs.size() != (needsOutput ? 1u : 0u))
    return Status::error(StatusCode::InvalidArgument,
                         where + ": expected " +
                             std::to_string(needsInput ? 1 : 0) +
                             " input(s) and " +
                             std::to_string(needsOutput ? 1 : 0) +
                             " output(s)");
  const TensorRef &tensor = needsInput ? inputs[0] : outputs[0];
  if (needsInput && needsOutput && inputs[0].dtype != outputs[0].dtype)
    return Status::error(StatusCode::InvalidArgument,
                         where + ": the input is " +
                             dtypeName(inputs[0].dtype) + " and the output " +
                             dtypeName(outputs[0].dtype));
  // The collective starts after the compute stream's work so far.
  LLMC_CUDA_CHECK(cudaEventRecord(ready_, compute),
                  where + ": cudaEventRecord");
  MemberEvents events{ready_, done, started};
  CollectivePost post;
  post.kind = call.kind;
  post.op = call.max ? ReduceOp::Max : ReduceOp::Sum;
  post.dtype = tensor.dtype;
  post.inputCount = needsInput ? inputs[0].numElements() : 0;
  post.outputCount = needsOutput ? outputs[0].numElements() : 0;
  post.input = needsInput ? inputs[0].data : nullptr;
  post.output = needsOutput ? outputs[0].data : nullptr;
  post.context = &events;
  CollectiveKind kind = call.kind;
  DType dtype = tensor.dtype;
  ReduceOp op = post.op;
  auto action = [&](const std::vector<CollectivePost> &members) {
    return world_.execute(kind, op, dtype, members);
  };
  Status status = Status::ok();
  if (isGroupCollective(call.kind)) {
    DeviceGroup group;
    status = DeviceGroup::create(call.ranks, group);
    if (status)
      status = world_.rendezvous().meet(rank_, group, post, action);
  } else {
    status =
        world_.rendezvous().meetPeer(rank_, call.peer, call.tag, post, action);
  }
  if (!status)
    return Status::error(status.code(), where + ": " + status.message());
  pending_.push_back({what, done});
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// VirtualRankSession
//===----------------------------------------------------------------------===//

VirtualRankSession::VirtualRankSession(const Executable &executable,
                                       const VirtualRankOptions &options)
    : executable_(executable), options_(options) {}

VirtualRankSession::~VirtualRankSession() {
  ranks_.clear(); // their backends refer to the world
  world_.reset();
}

Status VirtualRankSession::create(const Executable &executable,
                                  const VirtualRankOptions &options,
                                  std::unique_ptr<VirtualRankSession> &session) {
  LLMC_RETURN_IF_ERROR(validateExecutable(executable));
  const size_t ranks = executable.ranks.size();
  if (ranks > static_cast<size_t>(kVirtualMaxMembers))
    return Status::error(StatusCode::InvalidArgument,
                         "the mesh " + formatMesh(executable.mesh) + " has " +
                             std::to_string(ranks) + " ranks; virtual ranks "
                             "run up to " +
                             std::to_string(kVirtualMaxMembers));
  std::unique_ptr<VirtualRankSession> created(
      new VirtualRankSession(executable, options));
  LLMC_RETURN_IF_ERROR(VirtualWorld::create(executable, options,
                                            created->world_));
  // Rank 0 first compiles whatever the kernel cache lacks; the others then
  // load from it.
  for (size_t r = 0; r < ranks; ++r) {
    CudaSessionOptions rankOptions;
    rankOptions.device = options.device;
    rankOptions.rank = static_cast<int>(r);
    rankOptions.transport = RankTransport::Virtual;
    rankOptions.syncEachCommand = options.syncEachCommand;
    std::unique_ptr<CudaSession> rank;
    if (Status status = CudaSession::create(executable, rankOptions, rank);
        !status)
      return Status::error(status.code(),
                           (ranks > 1 ? "rank " + std::to_string(r) + ": "
                                      : std::string()) +
                               status.message());
    auto backend =
        std::make_unique<VirtualRankBackend>(static_cast<int>(r),
                                             *created->world_);
    LLMC_RETURN_IF_ERROR(backend->create());
    rank->attachCollectives(std::move(backend));
    created->ranks_.push_back(std::move(rank));
  }
  session = std::move(created);
  return Status::ok();
}

std::string VirtualRankSession::deviceName() const {
  return "cuda:" + std::to_string(options_.device) + " (" +
         std::to_string(ranks_.size()) + " virtual ranks)";
}

std::string VirtualRankSession::hardwareName() const {
  return ranks_.front()->hardwareName();
}

Status VirtualRankSession::setArgument(const std::string &name, DType dtype,
                                       const Shape &shape, const void *data,
                                       size_t bytes) {
  for (std::unique_ptr<CudaSession> &rank : ranks_)
    LLMC_RETURN_IF_ERROR(rank->setArgument(name, dtype, shape, data, bytes));
  return Status::ok();
}

Status VirtualRankSession::setArgumentConverting(const std::string &name,
                                                 DType dtype,
                                                 const Shape &shape,
                                                 const void *data, size_t bytes,
                                                 ThreadPool *pool) {
  for (std::unique_ptr<CudaSession> &rank : ranks_)
    LLMC_RETURN_IF_ERROR(
        rank->setArgumentConverting(name, dtype, shape, data, bytes, pool));
  return Status::ok();
}

Status VirtualRankSession::zeroArgument(const std::string &name) {
  for (std::unique_ptr<CudaSession> &rank : ranks_)
    LLMC_RETURN_IF_ERROR(rank->zeroArgument(name));
  return Status::ok();
}

Status VirtualRankSession::drawArgument(size_t index, uint64_t seed,
                                        bool &drawn) {
  // Every rank decides alike (the argument's type, role and sharding).
  drawn = true;
  for (std::unique_ptr<CudaSession> &rank : ranks_) {
    bool mine = false;
    LLMC_RETURN_IF_ERROR(rank->drawArgument(index, seed, mine));
    if (!mine) {
      drawn = false;
      return Status::ok(); // the host draws it; setArgument binds everyone
    }
  }
  return Status::ok();
}

Status VirtualRankSession::setArgumentFromOutput(const std::string &name,
                                                 size_t output) {
  int index = executable_.findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  if (output >= executable_.outputs.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.outputs.size()) +
                             " outputs, asked for #" + std::to_string(output));
  for (size_t r = 0; r < ranks_.size(); ++r) {
    int rank = static_cast<int>(r);
    int holder = outputHolder(executable_, output, rank);
    if (holder == rank ||
        !bindsArgument(executable_, static_cast<size_t>(index), rank)) {
      LLMC_RETURN_IF_ERROR(ranks_[r]->setArgumentFromOutput(name, output));
      continue;
    }
    // A stage reads a parameter another stage updates (a tied parameter
    // under ZeRO in a pipeline): copied from the holder, as the CPU session
    // does; one process per GPU refuses it (CudaSession).
    TensorRef source;
    LLMC_RETURN_IF_ERROR(ranks_[holder]->output(output, source));
    LLMC_RETURN_IF_ERROR(ranks_[r]->setArgumentFromDevice(name, source));
  }
  return Status::ok();
}

Status VirtualRankSession::run() {
  const size_t ranks = ranks_.size();
  std::vector<Status> results(ranks);
  std::vector<std::thread> threads;
  threads.reserve(ranks);
  for (size_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      Status status = cudaStatus(cudaSetDevice(options_.device),
                                 "cudaSetDevice");
      if (status)
        status = ranks_[r]->run();
      if (status)
        return;
      std::string message = status.message();
      if (message.rfind("rank ", 0) != 0)
        message = "rank " + std::to_string(r) + ": " + message;
      results[r] = Status::error(status.code(), message);
      // The peers would wait for this rank at their next collective.
      world_->rendezvous().abort(message);
    });
  for (std::thread &thread : threads)
    thread.join();
  // The first rank's own failure, rather than its peers' "stopped".
  for (const Status &status : results)
    if (!status && status.message().find("the run was stopped: ") ==
                       std::string::npos)
      return status;
  for (const Status &status : results)
    if (!status)
      return status;
  return Status::ok();
}

Status VirtualRankSession::globalToHost(bool isOutput, size_t index,
                                        HostTensor &tensor) const {
  const TensorSharding &sharding = isOutput
                                       ? executable_.outputs[index].sharding
                                       : executable_.arguments[index].sharding;
  // Rank r's block is its own, or in a pipelined program that of the rank
  // of its stage that holds the tensor.
  auto holder = [&](int r) {
    return isOutput ? outputHolder(executable_, index, r)
                    : stageHolder(executable_,
                                  executable_.arguments[index].pipelineStage,
                                  r);
  };
  auto blockOf = [&](int r, TensorRef &device, std::vector<uint8_t> &bytes) {
    CudaSession &session = *ranks_[holder(r)];
    LLMC_RETURN_IF_ERROR(isOutput ? session.output(index, device)
                                  : session.argument(index, device));
    return session.copyToHost(device, bytes);
  };
  TensorRef device;
  if (sharding.replicated()) {
    LLMC_RETURN_IF_ERROR(blockOf(0, device, tensor.storage));
    tensor.view = device;
    tensor.view.data = tensor.storage.data();
    return Status::ok();
  }
  // Every rank's block, assembled as the CPU session does.
  std::vector<std::vector<uint8_t>> blocks(ranks_.size());
  std::vector<const void *> locals(ranks_.size());
  for (size_t r = 0; r < ranks_.size(); ++r) {
    LLMC_RETURN_IF_ERROR(blockOf(static_cast<int>(r), device, blocks[r]));
    locals[r] = blocks[r].data();
  }
  Shape global;
  LLMC_RETURN_IF_ERROR(
      globalShape(device.shape, sharding, executable_.mesh, global));
  tensor.view = device;
  tensor.view.shape = global;
  tensor.storage.resize(tensor.view.bytes());
  LLMC_RETURN_IF_ERROR(assembleShards(locals, dtypeSize(device.dtype), global,
                                      sharding, executable_.mesh,
                                      tensor.storage.data()));
  tensor.view.data = tensor.storage.data();
  return Status::ok();
}

Status VirtualRankSession::outputToHost(size_t index,
                                        HostTensor &tensor) const {
  if (index >= executable_.outputs.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.outputs.size()) +
                             " outputs, asked for #" + std::to_string(index));
  return globalToHost(true, index, tensor);
}

Status VirtualRankSession::argumentToHost(size_t index,
                                          HostTensor &tensor) const {
  if (index >= executable_.arguments.size())
    return Status::error(StatusCode::NotFound,
                         "the program has " +
                             std::to_string(executable_.arguments.size()) +
                             " arguments, asked for #" + std::to_string(index));
  return globalToHost(false, index, tensor);
}

void VirtualRankSession::setTrace(TraceRecorder *trace) {
  ranks_.front()->setTrace(trace);
}

std::string VirtualRankSession::memorySummary() const {
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaSetDevice(options_.device) != cudaSuccess ||
      cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return "device memory: cudaMemGetInfo failed on " + deviceName();
  }
  uint64_t planned = 0;
  for (const std::unique_ptr<CudaSession> &rank : ranks_)
    planned += rank->arenaBytes();
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  char line[320];
  std::snprintf(line, sizeof(line),
                "device memory on %s: %.2f GiB planned (%zu arenas), %.2f GiB "
                "in use (cudaMemGetInfo: the arenas, every rank's scratch and "
                "library workspaces, and the CUDA context), of %.1f GiB",
                deviceName().c_str(), planned / GiB, ranks_.size(),
                (totalBytes - freeBytes) / GiB, totalBytes / GiB);
  return line;
}

std::string VirtualRankSession::backendNotes() const {
  return ranks_.front()->backendNotes();
}

Status createVirtualRankDeviceSession(const Executable &executable,
                                      std::unique_ptr<DeviceSession> &session) {
  VirtualRankOptions options;
  if (const char *text = std::getenv("LLMC_COLLECTIVE_TIMEOUT_S")) {
    char *end = nullptr;
    long seconds = std::strtol(text, &end, 10);
    if (!end || *end || seconds <= 0)
      return Status::error(StatusCode::InvalidArgument,
                           std::string("LLMC_COLLECTIVE_TIMEOUT_S='") + text +
                               "' is not a positive number of seconds");
    options.timeout = std::chrono::seconds(seconds);
  }
  std::unique_ptr<VirtualRankSession> created;
  LLMC_RETURN_IF_ERROR(VirtualRankSession::create(executable, options, created));
  session = std::move(created);
  return Status::ok();
}

} // namespace llmc::rt::cuda
