//===- CudaSession.h - run a loaded Executable on one GPU -------*- C++ -*-===//
//
// The GPU counterpart of rt::Session (runtime/Session.h), with the same
// contract for a one-rank program: create from an Executable, bind every
// argument by name (a host-to-device copy), run the command list, read the
// outputs. One arena is cudaMalloc'd with the buffer plan's arenaBytes and
// the constants are uploaded into it once; every kernel the program needs
// is compiled with NVRTC (through the on-disk kernel cache) when the session
// is created, so that run() only launches. Commands run in order on one
// stream; run() waits for it and reports a failure. Errors name the model
// part (the command's origin) they come from; a failure inside a kernel
// surfaces asynchronously, at the end of the run, unless
// CudaSessionOptions::syncEachCommand pins it to its command.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_CUDASESSION_H
#define LLMC_RUNTIME_CUDA_CUDASESSION_H

#include "runtime/DeviceSession.h"
#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/dist/Rendezvous.h"
#include "runtime/cuda/kernels/KernelChoice.h"
#include "runtime/cuda/session/CpuCheck.h"

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <map>
#include <vector>

namespace llmc::rt::cuda {

class CudaKernels;
class CudaTiming;
class MultiTensorLaunches;
class StartupClock;
class CollectiveBackend;

/// How a session that runs one rank of a program of several reaches the
/// other ranks: not at all (a one-rank program), NCCL between processes, or
/// the virtual ranks of this process on one GPU (VirtualRanks.h).
enum class RankTransport { None, Nccl, Virtual };

struct CudaSessionOptions {
  /// The CUDA device to run on.
  int device = 0;
  /// Wait for every command and check it (slow; for locating a failing
  /// kernel by its model part).
  bool syncEachCommand = false;
  /// The rank of the program this session runs. A program of several ranks
  /// runs only with a transport: its Collective commands through the
  /// backend given to attachCollectives() (NCCL, or virtual ranks).
  int rank = 0;
  RankTransport transport = RankTransport::None;
};

class CudaSession : public DeviceSession {
public:
  /// Prepares `executable` (one rank; it must outlive the session): the
  /// arena, the constants, the stream, and every kernel compiled. Fails
  /// naming the model part of a command no CUDA kernel covers yet.
  static Status create(const Executable &executable,
                       const CudaSessionOptions &options,
                       std::unique_ptr<CudaSession> &session);
  ~CudaSession() override;

  /// Gives a session with a transport its collectives (NCCL's
  /// communicators after the rendezvous, see createMultiProcessSession; or
  /// the virtual ranks' backend). run() runs only with them.
  void attachCollectives(std::unique_ptr<CollectiveBackend> world);
  CudaSession(const CudaSession &) = delete;
  CudaSession &operator=(const CudaSession &) = delete;

  const Executable &executable() const override { return executable_; }
  std::string deviceName() const override;
  std::string hardwareName() const override;

  /// DeviceSession: the largest signal of the world's processes, through
  /// an all-gather of 4 bytes (a multi-process session; one process keeps
  /// its own).
  Status agreeOnStop(int &signal) override;
  /// DeviceSession: this session's rank only.
  std::vector<int> localRanks() const override { return {options_.rank}; }
  /// The rank of the program this session runs.
  int rank() const { return options_.rank; }

  /// Index of the argument called `name`, or -1.
  int findArgument(const std::string &name) const;

  /// Copies host `data` into argument `name`; its dtype and shape must be
  /// the argument's GLOBAL ones (the message says which differs). A rank of
  /// a multi-process run keeps its block of a sharded argument.
  Status setArgument(const std::string &name, DType dtype, const Shape &shape,
                     const void *data, size_t bytes) override;

  /// Device-to-device: output `output` becomes argument `name`'s value
  /// (nothing to copy when the plan placed the output in the argument's
  /// buffer). The training loop's feedback of new parameters and state.
  Status setArgumentFromOutput(const std::string &name, size_t output) override;
  /// DeviceSession: a replicated f32 argument from bf16 or f16 bytes (a
  /// released checkpoint) is copied at its own width and widened on the
  /// device (llmc_widen_bf16_f32, llmc_widen_f16_f32), a bf16 one from f32
  /// narrowed there (llmc_narrow_f32_bf16); anything else converts on the
  /// host (the default).
  Status setArgumentConverting(const std::string &name, DType dtype,
                               const Shape &shape, const void *data,
                               size_t bytes, ThreadPool *pool) override;
  /// cudaMemsetAsync of the argument's block (a zero tensor's blocks are
  /// zeros, sharded or not).
  Status zeroArgument(const std::string &name) override;
  /// llmc_init_draw (init/Init.cuh) into a replicated f32, f64 or
  /// bf16 argument; anything else is left to the host (`drawn` false).
  Status drawArgument(size_t index, uint64_t seed, bool &drawn) override;

  /// Runs the program and waits for it. Fails, naming them, if arguments
  /// were never bound.
  Status run() override;

  /// DeviceSession: every launch of each run from now on (a kernel, a
  /// cuBLASLt GEMM, a copy, a fused region or multi-tensor group, a
  /// collective) timed by CUDA events around it on its stream, as an event
  /// on the track of that stream. A step that replays a CUDA graph runs
  /// ungraphed while traced (the trace's otherData says so). CudaTiming.cpp.
  void setTrace(TraceRecorder *trace) override;

  /// A view of output `index` in device memory (valid until the next run).
  Status output(size_t index, TensorRef &tensor) const;
  /// A view of argument `index` in device memory as bound.
  Status argument(size_t index, TensorRef &tensor) const;

  /// Copies device `tensor` (a view from output() or argument()) to the
  /// host; `bytes` becomes tensor.bytes() long.
  Status copyToHost(const TensorRef &tensor, std::vector<uint8_t> &bytes) const;
  /// Binds argument `name` to a copy of `source`, device memory of this
  /// GPU (another virtual rank's output: VirtualRankSession).
  Status setArgumentFromDevice(const std::string &name,
                               const TensorRef &source);
  /// DeviceSession: output()/argument() copied with copyToHost. In a
  /// multi-process run a sharded tensor is all-gathered from every rank
  /// (NCCL) and assembled: every rank must make the same calls.
  Status outputToHost(size_t index, HostTensor &tensor) const override;
  Status argumentToHost(size_t index, HostTensor &tensor) const override;

  /// Bytes of the arena (the buffer plan's total).
  uint64_t arenaBytes() const;
  /// DeviceSession: the arena (planned) against the device memory in use
  /// (cudaMemGetInfo: every allocation of this process, the CUDA context,
  /// loaded kernels and the libraries' workspaces). llmc allocates nothing
  /// after creation, so after a step this is the run's peak.
  std::string memorySummary() const override;
  /// DeviceSession: CudaKernels::attentionPath().
  std::string backendNotes() const override;
  /// NVRTC units loaded and the seconds spent compiling them at creation.
  size_t loadedUnits() const;
  /// Elementwise fused regions that run as one kernel, and the reasons of
  /// those that run op by op.
  size_t fusedRegions() const { return fused_.size(); }
  /// Multi-tensor launches (MultiTensorLaunch.h) and the commands they stand for.
  size_t multiTensorGroups() const;
  size_t multiTensorCommands() const;
  /// Residual adds folded into the norm gradient before them.
  size_t foldedAdds() const { return foldedAdds_.size(); }
  const std::vector<std::string> &unfusedRegions() const { return unfused_; }
  double compileSeconds() const;
  /// Whether run() now launches the step's captured CUDA graph.
  bool replaysGraph() const { return graphExec_ != nullptr; }

private:
  Status toHost(TensorRef device, HostTensor &tensor) const;
  CudaSession(const Executable &executable, const CudaSessionOptions &options);
  TensorRef slot(int32_t value) const;
  const RankProgram &program() const;
  Status wrap(const Command &command, Status status) const;
  /// Makes the compute stream wait for the unfinished collectives whose
  /// bytes overlap those `command` touches (all of them when null).
  Status joinCollectives(const Command *command);
  /// The GLOBAL tensor of `device` with `sharding`, rank r's block being
  /// that of rank holders[r] (a pipeline stage's; r itself when every rank
  /// holds its own): a gather when sharded or held by one stage over
  /// several processes.
  Status globalToHost(TensorRef device, const TensorSharding &sharding,
                      const std::vector<int> &holders,
                      HostTensor &tensor) const;
  /// True, marking it bound, when argument `index` is bound on another
  /// pipeline stage's ranks only (bindsArgument): nothing to write here.
  bool skipsArgument(int index);

  /// A collective on the communication stream that compute has not yet
  /// waited for: its done event and the arena bytes it reads and writes.
  struct InFlight {
    cudaEvent_t done;
    std::vector<std::pair<uint64_t, uint64_t>> ranges; ///< [begin, end)
  };

  /// LLMC_PROFILE=1: the GPU time of every command of every run after the
  /// first (cudaEvents around each), summed by kernel kind and output type;
  /// printed to stderr when the session ends. For finding where a step's
  /// time goes (bench/RESULTS.md), not for production.
  struct ProfileRow {
    double ms = 0;
    int64_t launches = 0;
  };
  void recordProfile();
  void printProfile() const;
  Status enqueueCommands();
  /// --trace (CudaTiming.cpp): the origin event of a traced run; the
  /// event before command `index`'s launch on `stream` (into `mark`);
  /// after it, the event that ends it and its record; after the run, the
  /// events read back into the recorder.
  Status traceRunBegin(bool graphed);
  Status traceBefore(size_t index, cudaStream_t stream, size_t &mark);
  Status traceAfter(size_t index, size_t mark);
  Status traceRunEnd();
  /// What command `index` launches in a traced run: its name, how many
  /// commands the launch does, and its kernel; false when it launches
  /// nothing (a later member of a multi-tensor group, a region's marker
  /// run op by op). Follows enqueueCommands' choice of branch.
  bool describeLaunch(size_t index, std::string &name, int64_t &commands,
                      std::string &kernel) const;
  /// create()'s steps 3 and 4 (CudaSessionCreate.cpp): the plan's units
  /// and each command's choice; the fused regions' kernels.
  Status loadKernels(const RankProgram &program, StartupClock &clock);
  Status loadFusedRegions(const RankProgram &program);

  const Executable &executable_;
  CudaSessionOptions options_;
  std::unique_ptr<CudaKernels> kernels_;
  /// Each command's kernel, as the plan carries it (Route::Nothing for the
  /// commands that never launch on their own).
  std::vector<KernelChoice> choices_;
  cudaStream_t stream_ = nullptr;
  uint8_t *arena_ = nullptr;
  std::vector<bool> bound_;
  /// Fused regions run as one kernel, by the index of their marker command
  /// (the plan's CudaFusedPlan); a region missing here runs its commands
  /// one by one.
  struct FusedLaunch {
    cudaKernel_t kernel = nullptr;
    size_t commands = 0;
    int64_t elements = 0;
    /// Its intermediates have no storage (regionNeedsOneKernel): it runs
    /// as this kernel even under LLMC_CHECK_CPU.
    bool needsOneKernel = false;
  };
  std::map<size_t, FusedLaunch> fused_;
  /// Runs of consecutive commands launched together (MultiTensorGroup.h): the
  /// weight casts, the AdamW regions, the gradient norm's sums of squares.
  /// Off with LLMC_MULTI_TENSOR=0, and under LLMC_CHECK_CPU (which checks
  /// every command on its own).
  std::unique_ptr<MultiTensorLaunches> multi_;
  /// A LayerNormGrad / RmsNormGrad command (by index) whose next command
  /// adds its dx to a residual gradient in place: the norm's kernel stores
  /// dx plus that addend (this slot) and the add is skipped, with the same
  /// bits (DeviceKernels.h). Off with LLMC_FOLD_ADDS=0 and under
  /// LLMC_CHECK_CPU.
  std::map<size_t, int32_t> foldedAdds_;
  std::vector<std::string> unfused_; ///< why a region runs op by op
  bool profile_ = false;
  bool profileShapes_ = false; ///< LLMC_PROFILE=shapes
  int64_t runs_ = 0; ///< completed runs
  /// The captured step (null until the second run, or when off).
  cudaGraphExec_t graphExec_ = nullptr;
  bool graphFailed_ = false; ///< capture failed once: no more attempts
  std::vector<cudaEvent_t> events_;
  std::map<std::string, ProfileRow> profileRows_;
  std::map<std::string, ProfileRow> profileCommands_;
  std::unique_ptr<CollectiveBackend> world_;
  std::vector<cudaEvent_t> collectiveDone_; ///< per command; null if none
  cudaEvent_t runDone_ = nullptr;
  std::vector<InFlight> inFlight_;
  std::vector<uint8_t> staging_; ///< a rank's block on its way in
  int32_t *stopFlag_ = nullptr;  ///< agreeOnStop's device word
  /// LLMC_CHECK_CPU=1: every kernel against the CPU's (CpuCheck.h).
  std::unique_ptr<CpuCheck> check_;
  /// --trace: the recorder while a traced step runs (else null), the
  /// event pool, and the launches of the run being traced.
  struct TracedLaunch {
    size_t command = 0;
    size_t begin = 0, end = 0; ///< events of timing_
    bool collective = false;   ///< on the NCCL stream
  };
  TraceRecorder *trace_ = nullptr;
  std::unique_ptr<CudaTiming> timing_;
  std::vector<TracedLaunch> traced_;
  size_t traceOrigin_ = 0;    ///< the origin event of the traced run
  double traceOriginUs_ = 0;  ///< its host time (TraceRecorder::nowUs)
};

/// The number of CUDA devices; 0 when there is none or no driver.
int cudaDeviceCount();

/// A CudaSession on device 0 behind the DeviceSession interface: what a tool
/// puts in TrainOptions::cudaSession.
Status createCudaDeviceSession(const Executable &executable,
                               std::unique_ptr<DeviceSession> &session);

/// Process `env.rank` of a multi-process run (docs/distributed.md): a
/// CudaSession of rank env.rank of `executable` on GPU env.localRank (its
/// kernels compiled first), then the rendezvous at env.masterAddr:
/// masterPort, NCCL's unique id from rank 0, and the communicators
/// (NcclWorld). The executable must have env.worldSize ranks. A world of
/// one goes through the same path (the NCCL check of issue #9).
Status createMultiProcessSession(const Executable &executable,
                                 const LaunchEnv &env,
                                 std::unique_ptr<DeviceSession> &session);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_CUDASESSION_H
