//===- VirtualCollectivePlan.h - a collective between virtual ranks -*- C++ -*-===//
//
// What one collective between virtual ranks on one GPU does, as steps: device
// copies (all-gather, all-to-all, send/recv, staged results) and launches of
// the reduction kernels (collective/VirtualCollectives.cuh: all-reduce,
// reduce-scatter). A pure function of the members' buffers, with no CUDA
// call, so that the session's backend (session/VirtualRanks.cpp) and the CPU
// emulation of the kernels (test/runtime/cuda/VirtualCollectiveEmulationTest
// .cpp) run the same plan, and the emulation checks it against the CPU
// collectives on every build.
//
// Semantics are the CPU collectives' and NCCL's (runtime/cpu/Collectives.h):
// chunks split the buffer into group-size parts, member i taking chunk i;
// in place is allowed as NCCL allows it (an output identical to the input;
// the all-gather input at the member's own chunk of its output; the
// reduce-scatter output at the member's own chunk of its input). Any other
// overlap of a member's output with its input is staged: the result goes to
// scratch first and is copied out after every read.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_COLLECTIVE_VIRTUALCOLLECTIVEPLAN_H
#define LLMC_RUNTIME_CUDA_KERNELS_COLLECTIVE_VIRTUALCOLLECTIVEPLAN_H

#include "runtime/DType.h"
#include "runtime/Executable.h"
#include "runtime/Status.h"
#include "runtime/cpu/Collectives.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// The most members of one collective (the kernel parameter's arrays).
constexpr int kVirtualMaxMembers = 64;

/// The reduction kernel's parameter, laid out as VirtualCollectives.cuh's.
struct VirtualReduceArgs {
  const void *inputs[kVirtualMaxMembers] = {};
  void *outputs[kVirtualMaxMembers] = {};
  int members = 0;
  int outputCount = 0;
  long long count = 0; ///< elements of each input
  long long chunk = 0; ///< 0: all-reduce; else reduce-scatter's chunk
};

/// One member's buffers (device addresses; host ones in the emulation). For
/// send/recv, member 0 is the sender (input only), member 1 the receiver.
struct VirtualMember {
  const uint8_t *input = nullptr;
  uint64_t inputBytes = 0;
  uint8_t *output = nullptr;
  uint64_t outputBytes = 0;
};

struct VirtualStep {
  enum class Kind : uint8_t { Copy, Reduce };
  Kind kind = Kind::Copy;
  uint8_t *dst = nullptr;       ///< Copy
  const uint8_t *src = nullptr; ///< Copy
  uint64_t bytes = 0;           ///< Copy
  VirtualReduceArgs reduce;     ///< Reduce: launched as `VirtualPlan::entry`
};

struct VirtualPlan {
  std::vector<VirtualStep> steps; ///< in order, on one stream
  /// The reduction kernel ("llmc_virtual_reduce_sum_bf16"); empty if none.
  std::string entry;
  /// Elements the reduction's grid covers (its inputs' count).
  int64_t reduceElements = 0;
};

/// Bytes of scratch the plan of this collective stages through (0 when no
/// member's output overlaps its input other than as NCCL allows).
uint64_t virtualScratchBytes(CollectiveKind kind,
                             const std::vector<VirtualMember> &members);

/// The steps of `kind` (with `op`, for reductions) over `members` in group
/// order, whose counts the rendezvous has checked (CollectiveRendezvous.h).
/// `scratch` holds at least virtualScratchBytes bytes. InvalidArgument for
/// more than kVirtualMaxMembers members, a dtype that cannot be reduced, or
/// sizes that are not what the collective makes.
Status planVirtualCollective(CollectiveKind kind, ReduceOp op, DType dtype,
                             const std::vector<VirtualMember> &members,
                             uint8_t *scratch, uint64_t scratchBytes,
                             VirtualPlan &plan);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_COLLECTIVE_VIRTUALCOLLECTIVEPLAN_H
