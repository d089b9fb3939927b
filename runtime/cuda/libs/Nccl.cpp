//===- Nccl.cpp - the collectives of a multi-process GPU run --------------===//
#include "runtime/cuda/libs/Nccl.h"

#include "runtime/cuda/libs/CudaModule.h"

#include <cstring>
#include <set>
#include <thread>

namespace llmc::rt::cuda {

namespace {

/// Checks the attrs of a Collective command and splits them.
Status decode(const Command &command, CollectiveKind &kind, bool &max,
              int &peer, std::vector<int> &ranks) {
  CollectiveCall call;
  LLMC_RETURN_IF_ERROR(decodeCollective(command, call));
  kind = call.kind;
  max = call.max;
  peer = call.peer;
  ranks = call.ranks;
  return Status::ok();
}

std::string formatRanks(const std::vector<int> &ranks) {
  return formatRankList(ranks);
}

Status ncclTypeOf(DType dtype, bool reduction, ncclDataType_t &type) {
  switch (dtype) {
  case DType::F32:
    type = ncclFloat32;
    return Status::ok();
  case DType::F64:
    type = ncclFloat64;
    return Status::ok();
  case DType::BF16:
    type = ncclBfloat16;
    return Status::ok();
  case DType::F16:
    type = ncclFloat16;
    return Status::ok();
  case DType::I32:
    type = ncclInt32;
    return Status::ok();
  case DType::I64:
    type = ncclInt64;
    return Status::ok();
  case DType::I1:
  case DType::F8E4M3FN: // moved as bytes, never reduced
  case DType::F8E5M2:
    if (reduction)
      break;
    type = ncclUint8;
    return Status::ok();
  }
  return Status::error(StatusCode::InvalidArgument,
                       std::string("NCCL cannot reduce ") + dtypeName(dtype));
}

} // namespace

Status ncclStatus(ncclResult_t result, const std::string &what) {
  if (result == ncclSuccess)
    return Status::ok();
  std::string message = what + ": " + ncclGetErrorString(result);
  // The last error names the cause NCCL saw (a peer's death, a bad
  // argument); NCCL_DEBUG=INFO has the rest.
  if (const char *last = ncclGetLastError(nullptr); last && *last)
    message += std::string(" (") + last + ")";
  message += " (NCCL_DEBUG=INFO prints NCCL's log)";
  return Status::error(StatusCode::Unavailable, message);
}

#define LLMC_NCCL_CHECK(call, what)                                            \
  LLMC_RETURN_IF_ERROR(::llmc::rt::cuda::ncclStatus((call), (what)))

Status ncclNewUniqueId(std::vector<uint8_t> &bytes) {
  ncclUniqueId id;
  LLMC_NCCL_CHECK(ncclGetUniqueId(&id), "ncclGetUniqueId");
  bytes.assign(reinterpret_cast<const uint8_t *>(&id),
               reinterpret_cast<const uint8_t *>(&id) + sizeof(id));
  return Status::ok();
}

Status NcclWorld::create(const Executable &executable, int rank,
                         int worldSize, const std::vector<uint8_t> &uniqueId,
                         const NcclWorldOptions &options,
                         std::unique_ptr<NcclWorld> &world) {
  const std::string who = "rank " + std::to_string(rank) + ": ";
  if (uniqueId.size() != sizeof(ncclUniqueId))
    return Status::error(StatusCode::InvalidArgument,
                         who + "the NCCL unique id has " +
                             std::to_string(uniqueId.size()) +
                             " bytes, expected " +
                             std::to_string(sizeof(ncclUniqueId)));
  if (executable.ranks.size() != static_cast<size_t>(worldSize))
    return Status::error(
        StatusCode::InvalidArgument,
        who + "the program has " + std::to_string(executable.ranks.size()) +
            " ranks, the world " + std::to_string(worldSize) +
            " processes; launch it with -n " +
            std::to_string(executable.ranks.size()));
  std::unique_ptr<NcclWorld> created(new NcclWorld());
  created->rank_ = rank;
  created->worldSize_ = worldSize;
  created->options_ = options;
  LLMC_CUDA_CHECK(
      cudaStreamCreateWithFlags(&created->stream_, cudaStreamNonBlocking),
      who + "creating the communication stream");
  LLMC_CUDA_CHECK(cudaEventCreateWithFlags(&created->computeReady_,
                                           cudaEventDisableTiming),
                  who + "cudaEventCreate");
  ncclUniqueId id;
  std::memcpy(&id, uniqueId.data(), sizeof(id));
  LLMC_NCCL_CHECK(ncclCommInitRank(&created->world_, worldSize, id, rank),
                  who + "ncclCommInitRank(world of " +
                      std::to_string(worldSize) + ")");

  // Every group of every rank's collectives, in one order on all ranks
  // (std::set of rank lists): each split is collective over the world.
  std::set<std::vector<int>> groups;
  for (const RankProgram &program : executable.ranks)
    for (const Command &command : program.commands) {
      if (command.kind != CommandKind::Collective)
        continue;
      CollectiveKind kind;
      bool max;
      int peer;
      std::vector<int> ranks;
      LLMC_RETURN_IF_ERROR(decode(command, kind, max, peer, ranks));
      if (isGroupCollective(kind))
        groups.insert(ranks);
    }
  std::vector<int> everyone(worldSize);
  for (int r = 0; r < worldSize; ++r)
    everyone[r] = r;
  for (const std::vector<int> &group : groups) {
    if (group == everyone) {
      created->groups_[group] = created->world_;
      continue;
    }
    int member = -1;
    for (size_t i = 0; i < group.size(); ++i)
      if (group[i] == rank)
        member = static_cast<int>(i);
    ncclComm_t comm = nullptr;
    // key = the member index: rank i of the new communicator is member i.
    LLMC_NCCL_CHECK(ncclCommSplit(created->world_,
                                  member >= 0 ? 0 : NCCL_SPLIT_NOCOLOR,
                                  member >= 0 ? member : 0, &comm, nullptr),
                    who + "ncclCommSplit for the group " + formatRanks(group));
    created->groups_[group] = member >= 0 ? comm : nullptr;
  }
  world = std::move(created);
  return Status::ok();
}

NcclWorld::~NcclWorld() {
  if (stream_ && !aborted_)
    (void)cudaStreamSynchronize(stream_);
  if (!aborted_) {
    for (auto &[ranks, comm] : groups_)
      if (comm && comm != world_)
        (void)ncclCommDestroy(comm);
    if (world_)
      (void)ncclCommDestroy(world_);
  }
  if (scratch_)
    (void)cudaFree(scratch_);
  for (cudaEvent_t event : watchEvents_)
    (void)cudaEventDestroy(event);
  if (computeReady_)
    (void)cudaEventDestroy(computeReady_);
  if (stream_)
    (void)cudaStreamDestroy(stream_);
}

void NcclWorld::abortAll() {
  if (aborted_)
    return;
  aborted_ = true;
  for (auto &[ranks, comm] : groups_)
    if (comm && comm != world_)
      (void)ncclCommAbort(comm);
  if (world_)
    (void)ncclCommAbort(world_);
}

Status NcclWorld::communicatorFor(const std::vector<int> &ranks,
                                  ncclComm_t &comm, int &member) const {
  auto it = groups_.find(ranks);
  member = -1;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] == rank_)
      member = static_cast<int>(i);
  if (it == groups_.end() || !it->second || member < 0)
    return Status::error(StatusCode::Internal,
                         "no communicator for the group " + formatRanks(ranks) +
                             " on rank " + std::to_string(rank_));
  comm = it->second;
  return Status::ok();
}

Status NcclWorld::enqueue(const Command &command,
                          const std::vector<TensorRef> &inputs,
                          const std::vector<TensorRef> &outputs,
                          cudaStream_t compute, cudaEvent_t done,
                          cudaEvent_t started) {
  CollectiveKind kind;
  bool max;
  int peer;
  std::vector<int> ranks;
  LLMC_RETURN_IF_ERROR(decode(command, kind, max, peer, ranks));
  CollectiveCall call;
  call.kind = kind;
  call.max = max;
  call.peer = peer;
  call.ranks = ranks;
  const std::string what = describeCollective(call, command.origin);
  const std::string where = "rank " + std::to_string(rank_) + ": " + what;
  auto fail = [&](const std::string &message) {
    return Status::error(StatusCode::InvalidArgument, where + ": " + message);
  };
  if (aborted_)
    return Status::error(StatusCode::Unavailable,
                         where + ": the communicators were aborted after an "
                                 "earlier failure");
  bool needsInput = kind != CollectiveKind::Recv;
  bool needsOutput = kind != CollectiveKind::Send;
  if (inputs.size() != (needsInput ? 1u : 0u) ||
      outputs.size() != (needsOutput ? 1u : 0u))
    return fail("expected " + std::to_string(needsInput ? 1 : 0) +
                " input(s) and " + std::to_string(needsOutput ? 1 : 0) +
                " output(s)");
  const TensorRef &tensor = needsInput ? inputs[0] : outputs[0];
  bool reduction = kind == CollectiveKind::AllReduce ||
                   kind == CollectiveKind::ReduceScatter;
  ncclDataType_t type;
  if (Status status = ncclTypeOf(tensor.dtype, reduction, type); !status)
    return fail(status.message());
  ncclRedOp_t op = max ? ncclMax : ncclSum;

  // The communication stream starts after the compute stream's work so far.
  LLMC_CUDA_CHECK(cudaEventRecord(computeReady_, compute),
                  where + ": cudaEventRecord");
  LLMC_CUDA_CHECK(cudaStreamWaitEvent(stream_, computeReady_, 0),
                  where + ": cudaStreamWaitEvent");
  if (started)
    LLMC_CUDA_CHECK(cudaEventRecord(started, stream_),
                    where + ": cudaEventRecord(trace)");
  Status status = Status::ok();
  if (isGroupCollective(kind)) {
    ncclComm_t comm;
    int member;
    LLMC_RETURN_IF_ERROR(communicatorFor(ranks, comm, member));
    const int64_t n = static_cast<int64_t>(ranks.size());
    const TensorRef &in = inputs[0];
    const TensorRef &out = outputs[0];
    switch (kind) {
    case CollectiveKind::AllReduce:
      if (in.numElements() != out.numElements())
        return fail("input and output sizes differ");
      status = ncclStatus(ncclAllReduce(in.data, out.data,
                                        static_cast<size_t>(in.numElements()),
                                        type, op, comm, stream_),
                          where + ": ncclAllReduce");
      break;
    case CollectiveKind::AllGather:
      if (out.numElements() != n * in.numElements())
        return fail("the output must hold " + std::to_string(n) +
                    " times the input's elements");
      status = ncclStatus(ncclAllGather(in.data, out.data,
                                        static_cast<size_t>(in.numElements()),
                                        type, comm, stream_),
                          where + ": ncclAllGather");
      break;
    case CollectiveKind::ReduceScatter:
      if (in.numElements() != n * out.numElements())
        return fail("the input must hold " + std::to_string(n) +
                    " times the output's elements");
      status = ncclStatus(
          ncclReduceScatter(in.data, out.data,
                            static_cast<size_t>(out.numElements()), type, op,
                            comm, stream_),
          where + ": ncclReduceScatter");
      break;
    default: { // all-to-all: chunk j of the input goes to member j
      if (in.numElements() != out.numElements() || in.numElements() % n)
        return fail("input and output must have the same size, a multiple "
                    "of the group size");
      size_t count = static_cast<size_t>(in.numElements() / n);
      size_t chunk = count * dtypeSize(in.dtype);
      status = ncclStatus(ncclGroupStart(), where + ": ncclGroupStart");
      for (int64_t j = 0; j < n && status; ++j) {
        status = ncclStatus(
            ncclSend(static_cast<const uint8_t *>(in.data) + j * chunk, count,
                     type, static_cast<int>(j), comm, stream_),
            where + ": ncclSend");
        if (status)
          status = ncclStatus(
              ncclRecv(static_cast<uint8_t *>(out.data) + j * chunk, count,
                       type, static_cast<int>(j), comm, stream_),
              where + ": ncclRecv");
      }
      Status end = ncclStatus(ncclGroupEnd(), where + ": ncclGroupEnd");
      if (status)
        status = end;
    }
    }
  } else if (peer < 0 || peer >= worldSize_ || peer == rank_) {
    return fail("peer " + std::to_string(peer) + " is not another rank of "
                "the world of " + std::to_string(worldSize_));
  } else if (kind == CollectiveKind::Send) {
    // NCCL has no tags: sends and recvs between two ranks match in program
    // order, which the partitioner keeps.
    status = ncclStatus(ncclSend(inputs[0].data,
                                 static_cast<size_t>(inputs[0].numElements()),
                                 type, peer, world_, stream_),
                        where + ": ncclSend");
  } else {
    status = ncclStatus(ncclRecv(outputs[0].data,
                                 static_cast<size_t>(outputs[0].numElements()),
                                 type, peer, world_, stream_),
                        where + ": ncclRecv");
  }
  if (!status) {
    abortAll();
    return status;
  }
  if (!capturing_) {
    LLMC_CUDA_CHECK(cudaEventRecord(done, stream_),
                    where + ": cudaEventRecord");
    pending_.push_back({what, done});
    return Status::ok();
  }
  // Under capture: first an event the graph itself records, for the
  // watchdog, then `done`, which the compute stream joins (a node after
  // the last join would leave the capture unjoined).
  size_t index = captured_.size();
  if (index == watchEvents_.size()) {
    cudaEvent_t watch = nullptr;
    LLMC_CUDA_CHECK(cudaEventCreateWithFlags(&watch, cudaEventDisableTiming),
                    where + ": cudaEventCreate");
    watchEvents_.push_back(watch);
  }
  LLMC_CUDA_CHECK(cudaEventRecordWithFlags(watchEvents_[index], stream_,
                                           cudaEventRecordExternal),
                  where + ": cudaEventRecordWithFlags(external)");
  LLMC_CUDA_CHECK(cudaEventRecord(done, stream_), where + ": cudaEventRecord");
  captured_.push_back({what, watchEvents_[index]});
  pending_.push_back(captured_.back());
  return Status::ok();
}

void NcclWorld::beginRun(RunMode mode) {
  capturing_ = mode == RunMode::Capture;
  if (capturing_)
    captured_.clear();
  pending_ = mode == RunMode::Replay ? captured_ : std::vector<Pending>();
}

Status NcclWorld::gatherToHost(const void *device, size_t bytes,
                               cudaStream_t compute,
                               std::vector<uint8_t> &gathered) {
  const std::string where =
      "rank " + std::to_string(rank_) + ": gathering a sharded tensor (" +
      std::to_string(bytes) + " bytes per rank) for the host";
  if (aborted_)
    return Status::error(StatusCode::Unavailable,
                         where + ": the communicators were aborted after an "
                                 "earlier failure");
  size_t total = bytes * static_cast<size_t>(worldSize_);
  if (total > scratchBytes_) {
    if (scratch_)
      LLMC_CUDA_CHECK(cudaFree(scratch_), where + ": cudaFree");
    scratch_ = nullptr;
    scratchBytes_ = 0;
    LLMC_CUDA_CHECK(cudaMalloc(&scratch_, total), where + ": cudaMalloc");
    scratchBytes_ = total;
  }
  LLMC_CUDA_CHECK(cudaEventRecord(computeReady_, compute),
                  where + ": cudaEventRecord");
  LLMC_CUDA_CHECK(cudaStreamWaitEvent(stream_, computeReady_, 0),
                  where + ": cudaStreamWaitEvent");
  Status status = ncclStatus(
      ncclAllGather(device, scratch_, bytes, ncclUint8, world_, stream_),
      where + ": ncclAllGather");
  if (!status) {
    abortAll();
    return status;
  }
  gathered.resize(total);
  LLMC_CUDA_CHECK(cudaMemcpyAsync(gathered.data(), scratch_, total,
                                  cudaMemcpyDeviceToHost, stream_),
                  where + ": cudaMemcpyAsync");
  cudaEvent_t done;
  LLMC_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
                  where + ": cudaEventCreate");
  Status recorded = cudaStatus(cudaEventRecord(done, stream_),
                               where + ": cudaEventRecord");
  if (recorded) {
    pending_.push_back({"the all-gather of a sharded tensor for the host",
                        done});
    recorded = synchronize(done);
    pending_.pop_back();
  }
  (void)cudaEventDestroy(done);
  return recorded;
}

Status NcclWorld::synchronize(cudaEvent_t event) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline = Clock::now() + options_.timeout;
  auto firstUnfinished = [&]() -> std::string {
    for (const Pending &p : pending_)
      if (cudaEventQuery(p.done) != cudaSuccess)
        return p.what;
    return "a kernel or copy (no collective is unfinished)";
  };
  const std::string who = "rank " + std::to_string(rank_) + ": ";
  for (int polls = 0;; ++polls) {
    cudaError_t query = cudaEventQuery(event);
    if (query == cudaSuccess)
      return Status::ok();
    if (query != cudaErrorNotReady) {
      // A device error is sticky: every event reports it, so no collective
      // can be singled out; CudaSessionOptions::syncEachCommand can.
      abortAll();
      return cudaStatus(query, who + "running the program (a kernel or a "
                                     "collective failed; "
                                     "CudaSessionOptions::syncEachCommand "
                                     "names which)");
    }
    // An NCCL failure (a peer died, a network error) shows here, not in
    // the event, which would then never complete.
    std::vector<std::pair<std::vector<int>, ncclComm_t>> comms(
        groups_.begin(), groups_.end());
    comms.push_back({{}, world_}); // {} reads "[]": the world
    for (auto &[ranks, comm] : comms) {
      if (!comm)
        continue;
      ncclResult_t async = ncclSuccess;
      ncclResult_t result = ncclCommGetAsyncError(comm, &async);
      if (result == ncclSuccess && async != ncclSuccess &&
          async != ncclInProgress) {
        std::string unfinished = firstUnfinished();
        Status status = ncclStatus(async, who + unfinished +
                                              " failed on the communicator "
                                              "of " +
                                              (ranks.empty()
                                                   ? std::string("the world")
                                                   : formatRanks(ranks)));
        abortAll();
        return status;
      }
    }
    if (Clock::now() > deadline) {
      std::string unfinished = firstUnfinished();
      abortAll();
      return Status::error(
          StatusCode::Unavailable,
          who + unfinished + " did not complete within " +
              std::to_string(options_.timeout.count() / 1000) +
              " s (LLMC_COLLECTIVE_TIMEOUT_S); another rank may have died "
              "or be running a different program; the communicators were "
              "aborted");
    }
    // Spin briefly (a step's tail is short), then back off.
    if (polls > 100)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    else
      std::this_thread::yield();
  }
}

} // namespace llmc::rt::cuda
