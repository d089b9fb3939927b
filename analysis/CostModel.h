//===- CostModel.h - predicted step time of a compiled program ---*- C++ -*-===//
//
// The analytical cost model of issue #11 (docs/planning.md):
//   kernel time     = max(flops / peak(dtype), bytes / memory bandwidth)
//                     + launch cost
//   collective time = steps * latency + sent bytes per rank / link bandwidth
// with the op's flops and bytes from CostOpInterface (an elementwise fused
// region is one kernel that reads its operands and writes its results once,
// where the profile has fused_kernels; other regions run op by op, as the
// backends run them today; on such a profile also the CUDA runtime's own
// forms: a GEMM with its epilogue, a sum of squares, multi-tensor launches,
// residual adds folded into norm gradients), the sent
// bytes from sharding/Communication.h (ring algorithms: all-reduce 2(N-1)/N S,
// all-gather, reduce-scatter, all-to-all (N-1)/N S, shift and send S) and
// the ring steps 2(N-1), N-1, N-1, N-1 and 1. The step is the sum of its
// kernels and collectives (no overlap) or, as a lower bound, the larger of
// the two (perfect overlap).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_ANALYSIS_COSTMODEL_H
#define LLMC_ANALYSIS_COSTMODEL_H

#include "analysis/DeviceProfile.h"

#include "sharding/Communication.h"
#include "sharding/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace llmc {
struct BufferPlan;
}

namespace llmc::planner {

/// Seconds of one kernel: the roofline over the kernel's measured
/// efficiency (DeviceProfile::efficiency, 1 by default) plus the launch
/// cost.
double kernelSeconds(double flops, double peakFlops, double bytes,
                     const DeviceProfile &profile, double efficiency = 1.0);

/// Ring steps of a collective over `ranks` ranks (0 when there is nothing
/// to send).
int64_t ringSteps(llvm::StringRef kind, int64_t ranks);

/// Seconds of a collective that sends `sentBytesPerRank` in `steps` ring
/// steps over `link`: the link's call latency, steps x its latency, and
/// the bytes over its bandwidth.
double collectiveSeconds(int64_t steps, double sentBytesPerRank,
                         const LinkClass &link);

/// The link class a group over mesh `axes` uses: within a node when the
/// ranks it spans (the product of the sizes of its outermost axis and every
/// axis inside it, the ranks of a node being consecutive) fit in one node.
const LinkClass &linkFor(const Mesh &mesh, llvm::ArrayRef<int64_t> axes,
                         const DeviceProfile &profile);

/// A collective's predicted time, its latency part (call latency and
/// steps x link latency: what a split into microbatches repeats) and the
/// algorithm (analysis/Collectives.cpp): "ring", "tree", "hierarchical
/// ring", "hierarchical tree".
struct CollectiveCost {
  double seconds = 0;
  double latency = 0;
  const char *algorithm = "ring";
};

/// Steps of a double binary tree all-reduce over `ranks`: up and down a
/// tree of depth ceil(log2 ranks).
int64_t treeSteps(int64_t ranks);

/// How many ranks of a group over mesh `axes` one node of
/// `devicesPerNode` consecutive ranks holds.
int64_t ranksPerNode(const Mesh &mesh, llvm::ArrayRef<int64_t> axes,
                     int64_t devicesPerNode);

/// An all-reduce of `payload` bytes over `ranks` ranks, `local` of them per
/// node, as NCCL would run it: a ring within a node; across nodes the
/// cheapest of a flat ring on the inter-node link and a hierarchical one
/// (reduce-scatter in the node, ring or double binary tree of S / local
/// between nodes, all-gather in the node). A profile with host_cores (the
/// CPU backend, no NCCL) keeps the ring.
CollectiveCost allReduceCost(int64_t ranks, int64_t local, double payload,
                             const DeviceProfile &profile);

/// The cost of the collective `t` (sharding/Communication.h) on `mesh`: an
/// all-reduce as allReduceCost, every other kind a ring on linkFor's class.
CollectiveCost collectiveCost(const CollectiveTraffic &t, const Mesh &mesh,
                              const DeviceProfile &profile);

/// One row of the breakdown.
struct GroupCost {
  std::string group;
  int64_t kernels = 0;   ///< kernels or collectives
  /// Kernel launches: `kernels` less the members of multi-tensor launches
  /// after their first and the residual adds folded into a norm gradient
  /// (GPU profiles; docs/planning.md, "What the CUDA runtime runs").
  int64_t launches = 0;
  double flops = 0;
  double bytes = 0;      ///< memory bytes (kernels) or sent bytes (collectives)
  double seconds = 0;
  bool communication = false;
  /// Collectives: the ranks one call synchronizes (the product of the
  /// group's axis sizes; 2 for pipeline transfers, which pair two ranks),
  /// for SharedCores::drainShare.
  int64_t groupRanks = 0;
  /// Collectives, two-stream simulation: the seconds of them during which
  /// the compute stream runs a kernel (what overlaps). Over all groups it
  /// is StepCost::noOverlap() - StepCost::seconds(): one stream or the
  /// other is always busy.
  double hidden = 0;
};

struct StepCost {
  /// Kernel groups first, in a fixed order (matmul, attention, fused
  /// regions, elementwise, reductions and norms, data movement, optimizer),
  /// then the collectives by mesh axes; empty groups are left out.
  std::vector<GroupCost> groups;
  /// The kernels again, by op name ("matmul", "reduce_sum", "fused" for
  /// a region run as one kernel), most time first: what a profiler such
  /// as LLMC_PROFILE=1 reports, for calibration (docs/planning.md).
  std::vector<GroupCost> byOp;
  double compute = 0;
  double communication = 0;
  /// The two-stream simulation (simulateStreams): kernels in program order
  /// on the compute stream, collectives on the communication stream; 0 when
  /// not simulated (then the step is noOverlap()).
  double streams = 0;
  /// Seconds of the optimizer's kernels (run once per step, after the
  /// pipeline's last backward).
  double optimizer = 0;
  /// Kernel launches of the forward and backward ops (every phase but the
  /// optimizer's): what a split into microbatches launches again per
  /// microbatch (planner/Microbatches.cpp).
  int64_t forwardBackwardLaunches = 0;
  double noOverlap() const { return compute + communication; }
  /// The step of this rank: the two-stream simulation where there is one.
  double seconds() const { return streams > 0 ? streams : noOverlap(); }
  double overlapped() const {
    return compute > communication ? compute : communication;
  }
};

/// The kernel group of a top-level op ("" for ops that run no kernel:
/// reshapes, constants, the terminator, receives).
std::string kernelGroup(mlir::Operation *op);

/// Predicts one step of `function` on one rank: every top-level op once.
/// `mesh` is null for one device. With `stage` >= 0 (a pipelined program,
/// llmc-split-pipeline) only the ops of that stage (llmc.stage, and ops
/// without one) count: the busy time of that stage's ranks; the schedule's
/// idle time is not in it.
///
/// On a profile without host_cores (GPUs: NCCL on a communication stream)
/// the step is also simulated on two streams as the CUDA session runs it
/// (docs/distributed.md, "Streams and events"): a collective starts when
/// the communication stream is free and every earlier kernel has finished;
/// a kernel starts when the compute stream is free and, if its arena bytes
/// (operands, results, values inside its regions; from `plan`, the stage's
/// buffer plan, computed here when null) overlap those of a collective
/// still in flight, once that collective is done (a reader of its result or
/// a writer reusing its buffer). Without a buffer plan, only readers of a
/// collective's results wait. Pipeline sends and receives stay on the
/// critical path (the peer's side of the transfer is outside one stage's
/// simulation). The CPU backend's collectives block every thread (no
/// overlap): there `streams` stays 0.
StepCost estimateStep(mlir::func::FuncOp function, const Mesh *mesh,
                      const DeviceProfile &profile, int64_t stage = -1,
                      const BufferPlan *plan = nullptr);

/// One step of a whole program of `ranks` ranks (docs/planning.md, "CPU
/// meshes"): the critical path `criticalPath` (one rank's step, or the
/// pipeline's simulated schedule, whose idle share is `bubble`); and on a
/// profile whose devices share host cores (hostCores > 0: the CPU
/// backend's threads), at least the ranks' summed busy time `totalBusy`
/// spread over min(ranks, hostCores) cores, of which the profile's measured
/// idle share is lost (SharedCores::seconds, which grows with the
/// bubble and with `drain`, the share of the collective time in groups
/// that drain the cores: drainShare). A rank waiting
/// for a peer (a collective, a pipeline receive, the bubble) leaves its
/// core to the others, so that wait is not in `totalBusy`; the idle share
/// is what the others do not take up.
struct ProgramStep {
  double criticalPath = 0;
  double sharedCores = 0; ///< 0 where the devices do not share cores
  double seconds() const {
    return criticalPath > sharedCores ? criticalPath : sharedCores;
  }
};
ProgramStep programStep(double criticalPath, double totalBusy, int64_t ranks,
                        double bubble, const DeviceProfile &profile,
                        double drain = 0);

/// The share of the collective time of `steps` (one per pipeline stage,
/// or one) in groups that drain the shared cores
/// (SharedCores::drainShare over their collective rows).
double drainShare(llvm::ArrayRef<const StepCost *> steps, int64_t ranks,
                  const DeviceProfile &profile);

} // namespace llmc::planner

#endif // LLMC_ANALYSIS_COSTMODEL_H
