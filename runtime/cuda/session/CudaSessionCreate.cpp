//===- CudaSessionCreate.cpp - set up a CudaSession -----------------------===//
//
// CudaSession::create: the checks, the arena, the constants and every
// kernel of the program's carried plan loaded (from its cubin, or compiled
// through the kernel cache) before the first step. With LLMC_PROFILE set it
// says where the start-up went. And the sessions the tools create: on
// device 0, and one rank of a multi-process run (NCCL).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/session/CudaSession.h"
#include "runtime/cuda/session/PrecisionFit.h"
#include "runtime/Sharding.h"

#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/KernelPlan.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorLaunch.h"
#include "runtime/cuda/libs/Nccl.h"

#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <set>
#include <utility>
#include <vector>

namespace llmc::rt::cuda {

/// The phases of create() and their wall-clock seconds, printed on stderr
/// when LLMC_PROFILE is set.
class StartupClock {
public:
  using Clock = std::chrono::steady_clock;
  void lap(const char *phase) {
    Clock::time_point now = Clock::now();
    laps_.push_back({phase, std::chrono::duration<double>(now - last_).count()});
    last_ = now;
  }
  void print(size_t units) const {
    const char *env = std::getenv("LLMC_PROFILE");
    if (!env || !*env || *env == '0')
      return;
    double total = 0;
    for (const auto &lap : laps_)
      total += lap.second;
    std::fprintf(stderr, "cuda session created in %.3f s (%zu kernel units):",
                 total, units);
    for (const auto &lap : laps_)
      std::fprintf(stderr, " %s %.3f s;", lap.first, lap.second);
    std::fprintf(stderr, "\n");
  }

private:
  Clock::time_point last_ = Clock::now();
  std::vector<std::pair<const char *, double>> laps_;
};

namespace {

/// LLMC_MULTI_TENSOR=0 runs every command on its own (for measuring what
/// the multi-tensor launches save, or ruling them out).
bool multiTensorEnabled() {
  const char *env = std::getenv("LLMC_MULTI_TENSOR");
  return !(env && std::string(env) == "0");
}

/// The LayerNormGrad / RmsNormGrad commands whose next command is an Add of
/// their dx and another tensor r of its type and shape, written in place
/// over dx (the buffer plan's in-place add: so dx has no other reader):
/// command index -> r. The norm's kernel then stores dx + r itself.
std::map<size_t, int32_t> findFoldedAdds(const RankProgram &program) {
  std::map<size_t, int32_t> folds;
  const std::vector<Command> &commands = program.commands;
  for (size_t c = 0; c + 1 < commands.size(); ++c) {
    const Command &norm = commands[c], &add = commands[c + 1];
    if (norm.kind != CommandKind::Kernel ||
        (norm.kernel != KernelKind::LayerNormGrad &&
         norm.kernel != KernelKind::RmsNormGrad) ||
        norm.outputs.empty() || add.kind != CommandKind::Kernel ||
        add.kernel != KernelKind::Add || add.inputs.size() != 2 ||
        add.outputs.size() != 1)
      continue;
    int32_t dxSlot = norm.outputs[0];
    int32_t r = add.inputs[0] == dxSlot ? add.inputs[1] : add.inputs[0];
    if ((add.inputs[0] != dxSlot && add.inputs[1] != dxSlot) || r == dxSlot)
      continue;
    const ValueInfo &dx = program.values[dxSlot], &sum = program.values[add.outputs[0]],
                    &addend = program.values[r];
    bool inPlace = dx.stored() && sum.stored() && addend.stored() &&
                   sum.offset == dx.offset && sum.dtype == dx.dtype &&
                   sum.shape == dx.shape && addend.dtype == dx.dtype &&
                   addend.shape == dx.shape;
    bool apart = addend.offset + addend.bytes() <= dx.offset ||
                 dx.offset + dx.bytes() <= addend.offset;
    bool notOwnResult = std::find(norm.outputs.begin(), norm.outputs.end(),
                                  r) == norm.outputs.end();
    if (inPlace && apart && notOwnResult &&
        (dx.dtype == DType::F32 || dx.dtype == DType::BF16 ||
         dx.dtype == DType::F16))
      folds[c] = r;
  }
  return folds;
}

} // namespace

Status CudaSession::create(const Executable &executable,
                           const CudaSessionOptions &options,
                           std::unique_ptr<CudaSession> &session) {
  LLMC_RETURN_IF_ERROR(validateExecutable(executable));
  // Without a transport a session runs a one-rank program: several ranks
  // are one process per GPU (NCCL) or virtual ranks (VirtualRanks.h).
  if (options.transport == RankTransport::None)
    LLMC_RETURN_IF_ERROR(checkOneRank(executable, cudaDeviceCount()));
  if (options.rank < 0 ||
      static_cast<size_t>(options.rank) >= executable.ranks.size())
    return Status::error(StatusCode::InvalidArgument,
                         "rank " + std::to_string(options.rank) +
                             " is not a rank of the program (it has " +
                             std::to_string(executable.ranks.size()) + ")");
  // The kernels are codegen's (the plan); an artifact written before
  // codegen planned them is not planned here.
  if (!executable.ranks[options.rank].cuda.present)
    return Status::error(
        StatusCode::InvalidArgument,
        (executable.source.empty() ? std::string("the program")
                                   : executable.source) +
            ": written by an older llmc (executable format " +
            std::to_string(executable.version) +
            ", without the CUDA kernels): compile it again");
  // The program's types against the GPU's architecture (bf16 needs sm_80),
  // before anything is allocated.
  {
    cudaDeviceProp properties{};
    LLMC_CUDA_CHECK(cudaGetDeviceProperties(&properties, options.device),
                    "cudaGetDeviceProperties(" +
                        std::to_string(options.device) + ")");
    LLMC_RETURN_IF_ERROR(checkPrecisionFitsDevice(
        executable.ranks[options.rank], properties.major, properties.minor,
        properties.name));
  }
  StartupClock clock;
  std::unique_ptr<CudaSession> created(new CudaSession(executable, options));
  LLMC_CUDA_CHECK(cudaSetDevice(options.device),
                  "cudaSetDevice(" + std::to_string(options.device) + ")");
  LLMC_CUDA_CHECK(
      cudaStreamCreateWithFlags(&created->stream_, cudaStreamNonBlocking),
      "cudaStreamCreate");
  const RankProgram &program = executable.ranks[options.rank];
  clock.lap("device and stream");
  // 1. The arena, as the buffer plan lays it out (cudaMalloc aligns to 256
  //    bytes, more than the plan's 64).
  size_t bytes = program.arenaBytes ? program.arenaBytes : 64;
  LLMC_CUDA_CHECK(cudaMalloc(&created->arena_, bytes),
                  "cudaMalloc(an arena of " + std::to_string(bytes) +
                      " bytes)");
  // 2. The constants, once.
  for (const ConstantData &constant : program.constants)
    LLMC_CUDA_CHECK(
        cudaMemcpy(created->arena_ + program.values[constant.value].offset,
                   constant.bytes.data(), constant.bytes.size(),
                   cudaMemcpyHostToDevice),
        "uploading a constant");
  clock.lap("arena and constants");
  // 3. Every kernel of the carried plan (codegen's, runtime/CudaPlan.h),
  //    loaded now so that run() only launches.
  LLMC_RETURN_IF_ERROR(created->loadKernels(program, clock));
  // 4. One kernel per elementwise fused region, where codegen generated
  //    one; the others run their commands.
  LLMC_RETURN_IF_ERROR(created->loadFusedRegions(program));
  clock.lap("fused kernels loaded");
  // 5. The multi-tensor launches (MultiTensorLaunch.h): their kernels and their
  //    tables of arena pointers, once.
  if (multiTensorEnabled()) {
    std::vector<MultiTensorGroup> groups;
    for (const CudaMultiTensorPlan &group : program.cuda.multiTensor)
      groups.push_back(multiTensorGroup(group));
    LLMC_RETURN_IF_ERROR(MultiTensorLaunches::create(
        program, groups, created->arena_, *created->kernels_, created->multi_));
  }
  clock.lap("multi-tensor tables");
  // 6. Residual adds folded into the norm gradient just before them.
  if (const char *env = std::getenv("LLMC_FOLD_ADDS");
      !(env && std::string(env) == "0"))
    created->foldedAdds_ = findFoldedAdds(program);
  LLMC_CUDA_CHECK(cudaDeviceSynchronize(), "creating the CUDA session");
  clock.lap("synchronize");
  clock.print(created->loadedUnits());
  session = std::move(created);
  return Status::ok();
}

Status CudaSession::loadKernels(const RankProgram &program,
                                StartupClock &clock) {
  const CudaPlan &plan = program.cuda;
  // 1. The units, compiled side by side into the kernel cache first
  //    (measured: GPT-2 124M's 48 units took 40 s one after another on the
  //    H200's host), then loaded in order below, where a failing compile is
  //    reported with its model part. The tensor-core flash units only where
  //    cuDNN will not run attention (they compile on demand otherwise,
  //    should cuDNN refuse a problem); the multi-tensor kernels only where
  //    they run.
  {
    std::set<std::string> multiEntries;
    if (!multiTensorEnabled())
      for (const CudaMultiTensorPlan &group : plan.multiTensor)
        multiEntries.insert(group.entry);
    bool cudnn = cudnnAttentionLikely();
    std::vector<ParallelUnit> units;
    for (const CudaUnit &unit : plan.units) {
      bool multiOnly = (unit.flags & CudaUnit::kGenerated) &&
                       unit.entries.size() == 1 &&
                       multiEntries.count(unit.entries[0]);
      if ((unit.flags & CudaUnit::kOnDemand) && cudnn)
        continue;
      if (!multiOnly)
        units.push_back({unit.source, unit.name + ".cu",
                         (unit.flags & CudaUnit::kNoContraction) != 0,
                         unit.arch, !unit.cubin.empty()});
    }
    clock.lap("kernel sources");
    compileInParallel(units);
    clock.lap("parallel compile or cache check");
  }
  LLMC_RETURN_IF_ERROR(CudaKernels::create(plan.units, kernels_));
  collectiveDone_.assign(program.commands.size(), nullptr);
  choices_.assign(program.commands.size(), KernelChoice());
  LLMC_CUDA_CHECK(cudaEventCreateWithFlags(&runDone_, cudaEventDisableTiming),
                  "cudaEventCreate");
  // 2. Each command's carried choice, as checkCudaCoverage reads it; in a
  //    multi-process run the collectives go to NCCL instead (an event each
  //    marks its end for the compute stream). The commands of a region that
  //    can only run as one kernel (loadFusedRegions) never run on their own.
  std::vector<bool> oneKernel = commandsOfOneKernelRegions(program);
  for (size_t i = 0; i < program.commands.size(); ++i) {
    const Command &command = program.commands[i];
    if (oneKernel[i])
      continue;
    if (command.kind == CommandKind::Collective &&
        options_.transport != RankTransport::None) {
      LLMC_CUDA_CHECK(cudaEventCreateWithFlags(&collectiveDone_[i],
                                               cudaEventDisableTiming),
                      "cudaEventCreate");
      continue;
    }
    const CudaCommandPlan &carried = plan.commands[i];
    if (carried.code != StatusCode::Ok)
      return Status::error(carried.code, carried.error);
    choices_[i] = kernelChoice(carried);
    if (command.kind != CommandKind::Kernel &&
        command.kind != CommandKind::Gemm)
      continue;
    std::vector<TensorRef> inputs, outputs;
    for (int32_t value : command.inputs)
      inputs.push_back(slot(value));
    for (int32_t value : command.outputs)
      outputs.push_back(slot(value));
    LLMC_RETURN_IF_ERROR(wrap(command, kernels_->prepare(choices_[i],
                                                         command.kernel,
                                                         command.attrs, inputs,
                                                         outputs)));
  }
  clock.lap("kernels loaded and GEMMs planned");
  return Status::ok();
}

Status CudaSession::loadFusedRegions(const RankProgram &program) {
  for (const CudaFusedPlan &region : program.cuda.fused) {
    size_t c = static_cast<size_t>(region.marker);
    const Command &command = program.commands[c];
    if (region.entry.empty()) {
      // A program compiled for fused kernels gave this region's
      // intermediates no storage: its commands cannot run one by one.
      if (regionNeedsOneKernel(program, c))
        return Status::error(
            StatusCode::Unimplemented,
            "at " + command.origin +
                ": the program was compiled for fused kernels (devices = "
                "\"cuda\"): this elementwise region's intermediates have no "
                "storage, so it must run as one kernel, but the kernel "
                "generator refuses it (" +
                region.unfused +
                "); compile with --fused-kernels=false (or devices = "
                "\"auto\") to run it op by op");
      unfused_.push_back(region.unfused);
      continue;
    }
    FusedLaunch launch;
    LLMC_RETURN_IF_ERROR(
        wrap(command, kernels_->fused(region.entry, launch.kernel)));
    launch.commands = static_cast<size_t>(command.attrs.ints[0]);
    launch.elements = region.elements;
    launch.needsOneKernel = regionNeedsOneKernel(program, c);
    fused_[c] = launch;
  }
  return Status::ok();
}

int cudaDeviceCount() {
  int count = 0;
  // No driver or no device: both mean "run elsewhere"; clear the sticky
  // error so that later calls do not see it.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

Status createCudaDeviceSession(const Executable &executable,
                               std::unique_ptr<DeviceSession> &session) {
  std::unique_ptr<CudaSession> created;
  LLMC_RETURN_IF_ERROR(
      CudaSession::create(executable, CudaSessionOptions(), created));
  session = std::move(created);
  return Status::ok();
}

Status createMultiProcessSession(const Executable &executable,
                                 const LaunchEnv &env,
                                 std::unique_ptr<DeviceSession> &session) {
  const std::string who = "rank " + std::to_string(env.rank) + ": ";
  if (executable.ranks.size() != static_cast<size_t>(env.worldSize))
    return Status::error(
        StatusCode::InvalidArgument,
        who + "the program has " + std::to_string(executable.ranks.size()) +
            " ranks (mesh " + formatMesh(executable.mesh) + ") and the world " +
            std::to_string(env.worldSize) + " processes; launch it with -n " +
            std::to_string(executable.ranks.size()));
  int devices = cudaDeviceCount();
  if (env.localRank >= devices)
    return Status::error(StatusCode::NotFound,
                         who + "LOCAL_RANK=" + std::to_string(env.localRank) +
                             " but this node has " + std::to_string(devices) +
                             " CUDA device(s)");
  // 1. This rank's session, kernels compiled: the slow part, done before
  //    the others are waited for.
  CudaSessionOptions options;
  options.device = env.localRank;
  options.rank = env.rank;
  options.transport = RankTransport::Nccl;
  std::unique_ptr<CudaSession> created;
  if (Status status = CudaSession::create(executable, options, created);
      !status)
    return Status::error(status.code(), who + status.message());
  // 2. The rendezvous: rank 0's NCCL unique id to everyone.
  RendezvousOptions rendezvousOptions;
  std::unique_ptr<Rendezvous> rendezvous;
  LLMC_RETURN_IF_ERROR(Rendezvous::create(env, rendezvousOptions, rendezvous));
  std::vector<uint8_t> id;
  if (env.rank == 0)
    LLMC_RETURN_IF_ERROR(ncclNewUniqueId(id));
  LLMC_RETURN_IF_ERROR(rendezvous->broadcast(id));
  // 3. The communicators (collective over the world).
  NcclWorldOptions worldOptions;
  if (const char *text = std::getenv("LLMC_COLLECTIVE_TIMEOUT_S")) {
    char *end = nullptr;
    long seconds = std::strtol(text, &end, 10);
    if (!end || *end || seconds <= 0)
      return Status::error(StatusCode::InvalidArgument,
                           std::string("LLMC_COLLECTIVE_TIMEOUT_S='") + text +
                               "' is not a positive number of seconds");
    worldOptions.timeout = std::chrono::seconds(seconds);
  }
  std::unique_ptr<NcclWorld> world;
  LLMC_RETURN_IF_ERROR(NcclWorld::create(executable, env.rank, env.worldSize,
                                         id, worldOptions, world));
  created->attachCollectives(std::move(world));
  // 4. Everyone has its communicators before anyone runs.
  LLMC_RETURN_IF_ERROR(rendezvous->barrier());
  session = std::move(created);
  return Status::ok();
}

} // namespace llmc::rt::cuda
