//===- MultiTensorGroup.h - a multi-tensor launch, as launched --*- C++ -*-===//
//
// One group of consecutive commands that one launch runs together (a
// multi-tensor launch, as apex's multi_tensor_apply): the members, their
// operands and sizes, and the generated unit of an elementwise group.
// Codegen plans the groups (codegen/cuda/optimizer/MultiTensor.h) and the
// plan carries them (runtime/CudaPlan.h, KernelPlan.h converts);
// MultiTensorLaunch.h launches them.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_OPTIMIZER_MULTITENSORGROUP_H
#define LLMC_RUNTIME_CUDA_KERNELS_OPTIMIZER_MULTITENSORGROUP_H

#include <cstddef>
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
  /// fused region's) and its entry, (const Entry *table, int entries); the
  /// source is empty in a group read from a carried plan (the plan's units
  /// hold it).
  std::string source, entry;
  /// For profiles: "FusedElementwise", "Cast -> bf16", "SumSquares".
  std::string label;
};

/// Blocks of an elementwise group's launch for a member of `elements`.
inline int64_t multiTensorBlocks(int64_t elements) {
  return (elements + kMultiTensorChunk - 1) / kMultiTensorChunk;
}

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_OPTIMIZER_MULTITENSORGROUP_H
