//===- CudaSessionCreate.cpp - set up a CudaSession -----------------------===//
//
// CudaSession::create: the checks, the arena, the constants and every
// kernel of the program compiled (or loaded from the kernel cache) before
// the first step. With LLMC_PROFILE set it says where the start-up went.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/session/CudaSession.h"

#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/elementwise/FusedKernels.h"
#include "runtime/cuda/kernels/KernelSelection.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorLaunch.h"

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
namespace {

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
        (dx.dtype == DType::F32 || dx.dtype == DType::BF16))
      folds[c] = r;
  }
  return folds;
}

} // namespace

Status CudaSession::create(const Executable &executable,
                           const CudaSessionOptions &options,
                           std::unique_ptr<CudaSession> &session) {
  LLMC_RETURN_IF_ERROR(validateExecutable(executable));
  // One process runs one rank; several ranks are one process each.
  if (!options.multiProcess)
    LLMC_RETURN_IF_ERROR(checkOneRank(executable));
  // Pipelined programs (outputs held by one stage) run on CPU devices only
  // for now: the multi-process loop reads every output on its own rank.
  for (const ArgumentInfo &arg : executable.arguments)
    if (arg.pipelineStage >= 0)
      return Status::error(StatusCode::Unimplemented,
                           "pipeline parallelism (pp) runs on CPU devices "
                           "only so far (issue #10); argument '" +
                               arg.name + "' is bound on pipeline stage " +
                               std::to_string(arg.pipelineStage) + " only");
  for (const OutputInfo &out : executable.outputs)
    if (out.pipelineStage >= 0)
      return Status::error(StatusCode::Unimplemented,
                           "pipeline parallelism (pp) runs on CPU devices "
                           "only so far (issue #10); output '" +
                               out.name + "' is held by pipeline stage " +
                               std::to_string(out.pipelineStage));
  if (options.rank < 0 ||
      static_cast<size_t>(options.rank) >= executable.ranks.size())
    return Status::error(StatusCode::InvalidArgument,
                         "rank " + std::to_string(options.rank) +
                             " is not a rank of the program (it has " +
                             std::to_string(executable.ranks.size()) + ")");
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
  // 3. Every kernel, compiled now so that run() only launches. The units
  //    (the device unit, each elementwise signature, each fused region)
  //    are first compiled side by side into the kernel cache (measured:
  //    GPT-2 124M's 48 units took 40 s one after another on the H200's
  //    host), then loaded in order below, where a failing compile is
  //    reported with its model part.
  {
    std::vector<ParallelUnit> units;
    std::set<std::string> seen;
    // The tensor-core flash units only where cuDNN will not run attention
    // (they compile on demand otherwise, should cuDNN refuse a problem).
    bool cudnn = cudnnAttentionLikely();
    for (const DeviceUnit &unit : deviceKernelUnits())
      if (!unit.onDemand || !cudnn)
        units.push_back({unit.source, unit.name + ".cu", false});
    for (size_t i = 0; i < program.commands.size(); ++i) {
      const Command &command = program.commands[i];
      KernelChoice choice;
      if (command.kind != CommandKind::Kernel)
        continue;
      if (command.kernel == KernelKind::FusedElementwise) {
        FusedSource source;
        if (generateFusedKernel(program, i, source) &&
            seen.insert(source.entry).second)
          units.push_back({source.source, source.entry + ".cu", true});
        continue;
      }
      ElementwiseSource source;
      if (selectCommand(program, command, choice) &&
          choice.route == KernelChoice::Route::Elementwise &&
          generateElementwiseKernel(choice.elementwise, source) &&
          seen.insert(source.entry).second)
        units.push_back({source.source, source.entry + ".cu", false});
    }
    if (multiTensorEnabled())
      for (const MultiTensorGroup &group : planMultiTensorGroups(program))
        if (group.kind == MultiTensorGroup::Kind::Elementwise &&
            seen.insert(group.entry).second)
          units.push_back({group.source, group.entry + ".cu", true});
    clock.lap("kernel sources");
    compileInParallel(units);
    clock.lap("parallel compile or cache check");
  }
  LLMC_RETURN_IF_ERROR(CudaKernels::create(created->kernels_));
  created->collectiveDone_.assign(program.commands.size(), nullptr);
  LLMC_CUDA_CHECK(cudaEventCreateWithFlags(&created->runDone_,
                                           cudaEventDisableTiming),
                  "cudaEventCreate");
  //    The choice is selectCommand's, as checkCudaCoverage makes it; in a
  //    multi-process run the collectives go to NCCL instead (an event each
  //    marks its end for the compute stream). The commands of a region that
  //    can only run as one kernel (step 4) never run on their own.
  std::vector<bool> oneKernel = commandsOfOneKernelRegions(program);
  for (size_t i = 0; i < program.commands.size(); ++i) {
    const Command &command = program.commands[i];
    if (oneKernel[i])
      continue;
    if (command.kind == CommandKind::Collective && options.multiProcess) {
      LLMC_CUDA_CHECK(cudaEventCreateWithFlags(&created->collectiveDone_[i],
                                               cudaEventDisableTiming),
                      "cudaEventCreate");
      continue;
    }
    KernelChoice choice;
    LLMC_RETURN_IF_ERROR(selectCommand(program, command, choice));
    if (command.kind != CommandKind::Kernel &&
        command.kind != CommandKind::Gemm)
      continue;
    std::vector<TensorRef> inputs, outputs;
    for (int32_t value : command.inputs)
      inputs.push_back(created->slot(value));
    for (int32_t value : command.outputs)
      outputs.push_back(created->slot(value));
    LLMC_RETURN_IF_ERROR(created->wrap(
        command, created->kernels_->prepare(command.kernel, command.attrs,
                                            inputs, outputs)));
  }
  clock.lap("kernels loaded and GEMMs planned");
  // 4. One kernel per elementwise fused region, where the generator covers
  //    it; the others run their commands.
  for (size_t c = 0; c < program.commands.size(); ++c) {
    const Command &command = program.commands[c];
    if (command.kind != CommandKind::Kernel ||
        command.kernel != KernelKind::FusedElementwise)
      continue;
    FusedSource source;
    if (Status status = generateFusedKernel(program, c, source); !status) {
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
                status.message() +
                "); compile with --fused-kernels=false (or devices = "
                "\"auto\") to run it op by op");
      created->unfused_.push_back(status.message());
      continue;
    }
    FusedLaunch launch;
    LLMC_RETURN_IF_ERROR(created->wrap(
        command,
        created->kernels_->fused(source.source, source.entry, launch.kernel)));
    launch.commands = static_cast<size_t>(command.attrs.ints[0]);
    launch.elements = source.elements;
    launch.needsOneKernel = regionNeedsOneKernel(program, c);
    created->fused_[c] = launch;
  }
  clock.lap("fused kernels loaded");
  // 5. The multi-tensor launches (MultiTensor.h): their kernels and their
  //    tables of arena pointers, once.
  if (multiTensorEnabled())
    LLMC_RETURN_IF_ERROR(MultiTensorLaunches::create(
        program, created->arena_, *created->kernels_, created->multi_));
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

} // namespace llmc::rt::cuda
