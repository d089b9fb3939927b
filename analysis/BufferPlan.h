//===- BufferPlan.h - where every value of a program lives -------*- C++ -*-===//
//
// The buffer planner of the compile pipeline's last step (docs/passes.md,
// step 9, llmc-plan-buffers): every tensor of a function gets
// a byte offset in one arena per device, from live ranges over the program
// order, so the peak memory is known before anything runs. Rules:
//   - arguments and constants live for the whole program; returned values
//     from their definition to the end;
//   - a reshape is a view of its operand (same bytes);
//   - in place: the result of an Elementwise op takes the buffer of an
//     operand that dies at that op and has its size (the kernels read and
//     write element i at the same position, so aliasing is safe);
//   - donation: a parameter or optimizer-state argument that the program
//     returns a new value of (same llmc.name, as llmc-optimizer names the
//     new parameters and moments) gives up its buffer after its last read;
//     in-place writes prefer such a buffer, so the update chain ends in it
//     and a training step updates its weights and moments in place. After a
//     run such an argument's buffer holds the new value, or a temporary when
//     the new value could not be placed there: the caller must feed the
//     outputs back (the training loop does), as it would anyway;
//   - first fit over live ranges, largest buffers first;
//   - for a backend that runs each elementwise llmc.fused region as one
//     kernel (RegionStorage::OneKernel, the function attribute
//     llmc.fused_kernels): the values such a region computes and does not
//     yield live in registers and get no storage (kNoStorage).
// The same plan is used by the llmc-plan-buffers pass (which writes it into
// the IR) and by codegen (which lays the Executable out with it).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_ANALYSIS_BUFFERPLAN_H
#define LLMC_ANALYSIS_BUFFERPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace llmc {

/// Buffers are aligned to this many bytes (a cache line, and enough for
/// vector loads on every backend).
constexpr uint64_t kBufferAlignment = 64;

/// What the memory at the peak holds. Each live buffer counts once, in the
/// first category that applies: weights (parameter arguments), optimizer
/// state (its arguments), inputs and constants, gradients (made by the
/// backward program and read last by the optimizer, or returned),
/// activations kept for backward (made by the forward program and read
/// last by backward), temporaries (the rest, returned forward values
/// included). Phases come from the location tags of ir/Phase.h.
struct MemoryBreakdown {
  uint64_t weights = 0;
  uint64_t optimizerState = 0;
  uint64_t inputs = 0;
  uint64_t gradients = 0;
  uint64_t activations = 0;
  uint64_t temporaries = 0;
  /// The sum of the above: the bytes live at the peak.
  uint64_t peakLive = 0;
  /// The op (index in program order, -1: before the first) at the peak.
  int64_t peakStep = -1;
  /// The most bytes of activations kept for backward live at once, at any
  /// op (not only at the peak): what a pipeline schedule changes.
  uint64_t mostActivations = 0;
};

/// The offset of a value that has no storage: an intermediate of an
/// elementwise region planned for one kernel (RegionStorage::OneKernel).
/// llmc-plan-buffers records it as -1; the Executable keeps the same bits
/// (rt::kNoStorage).
constexpr uint64_t kNoStorage = ~uint64_t(0);

/// How the values inside elementwise llmc.fused regions are stored.
enum class RegionStorage {
  /// As if the body were inlined: every value gets storage, so a backend
  /// may run the region's ops one by one (the CPU does).
  Inlined,
  /// The backend runs each elementwise region (the outermost, at any depth
  /// inside other regions) as one kernel: only what the region yields, and
  /// constants, get storage. The CUDA backend does this (devices = cuda).
  OneKernel,
};

/// The function attribute (a unit attribute) that records
/// RegionStorage::OneKernel; llmc-plan-buffers sets it with
/// `fused-kernels=true`, and codegen carries it into the Executable.
constexpr const char *kFusedKernelsAttrName = "llmc.fused_kernels";

/// The mode `function` is planned in: OneKernel when it carries
/// llmc.fused_kernels.
RegionStorage regionStorageOf(mlir::func::FuncOp function);

/// One buffer live at the peak (BufferPlan::peakBuffers).
struct PeakBuffer {
  uint64_t bytes = 0;
  /// Its MemoryBreakdown category: "weights", "optimizer state", "inputs
  /// and constants", "gradients", "activations", "temporaries".
  const char *kind = "";
  /// The op that makes its first value (null for an argument), and its
  /// last reader (null: returned, or read to the end).
  mlir::Operation *def = nullptr;
  mlir::Operation *lastUser = nullptr;
  /// Its live range in steps (program order, regions inlined).
  int64_t first = 0, last = 0;
};

struct BufferPlan {
  /// Bytes of the arena: the highest end of any buffer (peakLive plus the
  /// holes first fit leaves).
  uint64_t arenaBytes = 0;
  MemoryBreakdown memory;
  /// Every value of the function (arguments, op results, values inside
  /// regions) to its offset in the arena.
  llvm::DenseMap<mlir::Value, uint64_t> offsets;
  /// (result index, argument index) of each returned value written into its
  /// argument's buffer.
  std::vector<std::pair<unsigned, unsigned>> donations;
  /// Values whose op writes over an operand's buffer (in place).
  unsigned inPlace = 0;
  /// RegionStorage::OneKernel: the values without storage (offset
  /// kNoStorage) and the bytes they would have taken each on its own.
  unsigned unstored = 0;
  uint64_t unstoredBytes = 0;
  /// Every buffer live at the peak step, largest first (`llmc plan
  /// --peak-buffers`).
  std::vector<PeakBuffer> peakBuffers;

  uint64_t offsetOf(mlir::Value value) const { return offsets.lookup(value); }
};

/// Plans `function` (one block; ops with one-block regions, such as fused
/// regions, are planned as if their body were inlined, except that in
/// regionStorageOf(function) == OneKernel the values an elementwise region
/// does not yield get no storage). Fails, with an error
/// at the value, on a tensor without a static shape. With `stage` >= 0 (a
/// pipelined program, llmc-split-pipeline) it plans one pipeline stage's
/// ranks: only the ops whose llmc.stage is `stage` (and ops without one),
/// in program order; a returned value another stage computes gets the
/// buffer of the argument of its name (never written) or a placeholder.
mlir::FailureOr<BufferPlan> planBuffers(mlir::func::FuncOp function,
                                        int64_t stage = -1);

} // namespace llmc

#endif // LLMC_ANALYSIS_BUFFERPLAN_H
