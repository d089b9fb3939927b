//===- DeviceProfile.h - what a device and its links can do ------*- C++ -*-===//
//
// A device profile of the cost model (docs/planning.md): peak flops per
// element type, memory bandwidth and capacity, the fixed cost of a kernel,
// and two link classes (within a node, between nodes) for the alpha-beta
// model of collectives. The built-in profiles are data/devices.toml,
// compiled into the library; a user profile is a file of the same form.
// No MLIR here: only LLVM Support and toml++.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_ANALYSIS_DEVICEPROFILE_H
#define LLMC_ANALYSIS_DEVICEPROFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llmc::planner {

/// One link class: the alpha-beta model's beta (bandwidth) and alpha
/// (latency per ring step). SI units.
struct LinkClass {
  std::string name;        ///< "nvlink", "infiniband", "memory"
  double bandwidth = 0;    ///< bytes/s per rank and direction (model's)
  double nominal = 0;      ///< datasheet bytes/s (0: not given)
  double latency = 0;      ///< seconds per ring step
  /// Seconds per collective call on top of the ring steps (optional,
  /// call_latency_us): the CPU backend's collectives are one rendezvous of
  /// threads whatever the ring would do.
  double callLatency = 0;
};

/// A measured collective (NCCL's bus bandwidth = payload * bus factor /
/// time), kept to check the link class against.
struct CalibrationPoint {
  std::string collective;  ///< "all-reduce"
  int64_t ranks = 0;
  double bytes = 0;        ///< payload
  double busBandwidth = 0; ///< bytes/s
};

/// Cores shared by all the devices: the CPU backend's virtual devices are
/// threads of one process, so a step of R ranks does their summed work on
/// min(R, hostCores) cores (host_cores; 0: every device has its own
/// compute), of which a measured share stays idle while ranks wait on each
/// other (docs/planning.md, "Quality of choice"):
///   idle = shared_idle + shared_drain_idle x drain
///          + shared_bubble_idle x bubble
/// where `drain` is the share of a rank's collective time spent in groups
/// that drain the cores: groups of more than R / hostCores ranks, of which
/// fewer than hostCores exist, so that while each waits for its last
/// member fewer ranks than cores can run (dp8's collectives on 2 cores;
/// not tp2's pairs, which leave the other pairs' ranks runnable).
struct SharedCores {
  int64_t hostCores = 0;
  double idle = 0;
  double drainIdle = 0;
  double bubbleIdle = 0;
  /// Whether a collective whose one call synchronizes `groupRanks` of the
  /// program's `ranks` drains the cores: ranks > hostCores (they share
  /// them) and groupRanks x hostCores > ranks.
  bool drains(int64_t groupRanks, int64_t ranks) const;
  /// The share of `commSeconds` (seconds by group, e.g. by mesh axes) in
  /// groups that drain the cores (`groupRanks`: the ranks one call of the
  /// group synchronizes); 0 without communication.
  double drainShare(const std::map<std::string, double> &commSeconds,
                    const std::map<std::string, int64_t> &groupRanks,
                    int64_t ranks) const;
  /// totalBusy / min(ranks, hostCores) / (1 - idle - drainIdle * drain -
  /// bubbleIdle * bubble); 0 where no cores are shared.
  double seconds(double totalBusy, int64_t ranks, double bubble,
                 double drain = 0) const;
};

struct DeviceProfile {
  std::string name;        ///< the table name ("h200")
  std::string description;
  std::string origin;      ///< the file it came from
  double memoryBytes = 0;
  /// What a process uses beside its arena (the CUDA context, the libraries'
  /// handles and workspaces, the kernels' scratch), measured: `llmc plan`
  /// predicts the memory in use as arena + this. 0: not measured.
  double runtimeBytes = 0;
  double memoryBandwidth = 0;  ///< bytes/s
  double launchCost = 0;       ///< seconds per kernel
  double vectorFlops = 0;      ///< flop/s of the non-matmul ops
  /// Dense matmul/attention flop/s by element type name: bf16, f16, f32,
  /// f64 (always), tf32 (when given; not used by the model).
  std::map<std::string, double> matmulFlops;
  int64_t devicesPerNode = 1;
  /// Whether an elementwise fused region runs as one kernel (the CUDA
  /// backend's generated kernels) or op by op (the CPU backend).
  bool fusedKernels = true;
  /// Cores shared by all the devices (the CPU backend's threads).
  SharedCores shared;
  /// Measured speed of a kernel against its roofline, by op name as
  /// `llmc plan --by-op` prints it ("attention_grad"): the kernel takes
  /// roofline / efficiency + launch. Ops not listed: 1. (The CPU
  /// backend's reference kernels are far from its roofline: transcendental
  /// functions in f64, attention as scalar loops; docs/planning.md.)
  std::map<std::string, double> efficiency;
  /// The efficiency of op `name` (1 when the profile does not give one).
  double efficiencyOf(llvm::StringRef name) const;
  LinkClass intraNode, interNode;
  std::vector<CalibrationPoint> calibration;

  /// The matmul peak for inputs of `dtype` ("bf16", "f16", "f32", "f64");
  /// other types (integers) use the f32 peak.
  double matmulPeak(llvm::StringRef dtype) const;
};

/// Parses every profile (top-level table) of `text`; `path` names it in
/// errors, which read "path:line:column: error: ..." with the key and the
/// fix.
llvm::Expected<std::vector<DeviceProfile>>
parseDeviceProfiles(llvm::StringRef text, llvm::StringRef path);

/// The text of data/devices.toml, as built into the library.
llvm::StringRef builtinDeviceProfiles();

/// A built-in profile by name ("h200"), or the one profile of a .toml file
/// when `nameOrPath` contains '/' or ends in ".toml".
llvm::Expected<DeviceProfile> lookupDeviceProfile(llvm::StringRef nameOrPath);

} // namespace llmc::planner

#endif // LLMC_ANALYSIS_DEVICEPROFILE_H
