//===- MultiTensor.h - one launch for many tensors' independent work -*- C++ -*-===//
//
// A training step ends with the same small piece of work for every
// parameter: GPT-2 124M runs 148 sums of squares (the gradient norm), 148
// AdamW updates (one elementwise region each), and begins with 98 casts of
// the f32 weights to bf16. Launched one by one, most of them are a few
// microseconds of launch and tail for a [768] vector. This file finds the
// runs of such commands that one launch can do together (a multi-tensor
// launch, as apex's multi_tensor_apply): "members" of one kind
//
//   - elementwise: FusedElementwise regions whose generated bodies are the
//     same text (AdamW of every parameter of one decay class), or lone Cast
//     commands of one signature; the body must not depend on the element's
//     index (no iota, only broadcasts of one element), since a block runs a
//     chunk of kMultiTensorChunk elements of one member;
//   - SumSquares commands (f32).
//
// A group runs at the place of its first member: every later member moves
// up to it. Between two members of a group there may only be members of
// other groups (AdamW alternates between parameters with and without weight
// decay, two bodies); any other command ends every open group, and so do
// collectives and host steps. A member joins its group only if moving it up
// changes nothing: it reads no byte that a member of the group or a command
// it moves past writes, and writes no byte that one of them reads or writes
// (byte ranges in the arena, since the buffer plan reuses the bytes of dead
// values); otherwise it starts a new group. Each element is computed by the
// same code as in the member's own kernel, so an elementwise group gives
// the same bits; a SumSquares group cuts each tensor into the same chunks
// as the lone kernel (KernelSelection.h), so it does too.
//
// This file only plans (no device): CudaSession launches the groups
// (MultiTensorLaunch.h), and checkCudaCoverage compiles their kernels.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_MULTITENSOR_H
#define LLMC_RUNTIME_CUDA_MULTITENSOR_H

#include "runtime/Executable.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// Elements of one member that a block of an elementwise group runs (256
/// threads; a multiple of every packed width).
constexpr int64_t kMultiTensorChunk = 4096;

/// Consecutive commands that one launch runs together.
struct MultiTensorGroup {
  enum class Kind { Elementwise, SumSquares };
  Kind kind = Kind::Elementwise;
  /// Per member, in program order: its commands [members[m], ends[m]) (a
  /// FusedElementwise marker and its region's commands, or the one
  /// command), the value slots it reads and writes (the marker's or the
  /// command's), and its element count (of its region's shape; of the
  /// input for SumSquares). The group launches at members[0].
  std::vector<size_t> members, ends;
  std::vector<std::vector<int32_t>> inputs, outputs;
  std::vector<int64_t> elements;
  /// Elementwise: the generated unit (compiled with --fmad=false, as a
  /// fused region's) and its entry, (const Entry *table, int entries).
  std::string source, entry;
  /// For profiles: "FusedElementwise", "Cast -> bf16", "SumSquares".
  std::string label;
};

/// The groups of two or more members of `program`, in the order of their
/// first commands.
std::vector<MultiTensorGroup> planMultiTensorGroups(const RankProgram &program);

/// Blocks of an elementwise group's launch for a member of `elements`.
inline int64_t multiTensorBlocks(int64_t elements) {
  return (elements + kMultiTensorChunk - 1) / kMultiTensorChunk;
}

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_MULTITENSOR_H
