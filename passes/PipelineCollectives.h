//===- PipelineCollectives.h - where a pipeline's ops go, and its update's collectives -*- C++ -*-===//
//
// The placement of llmc-split-pipeline (passes/SplitPipeline.cpp): which
// unit of the schedule each op runs in. And the step between placing the
// ops and scheduling them that issues the update's collectives early.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_PASSES_PIPELINECOLLECTIVES_H
#define LLMC_PASSES_PIPELINECOLLECTIVES_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace llmc::pipeline {

/// Where an op's unit sits in a stage's program: before every unit, in a
/// forward or backward unit, or after every unit (the update).
enum class Part : uint8_t { Head, Forward, Backward, Tail };

struct Placement {
  int64_t chunk = 0;
  Part part = Part::Head;
  int64_t microbatch = -1;
};

/// The update's collectives issued early: each all-reduce or reduce-scatter
/// placed in the Tail, with the tail's concats, reshapes and transposes and
/// the backward's adds (the sums over the microbatches) that feed only it,
/// moves right after the op that makes the last of its inputs (after its
/// residual add, for a norm gradient: ir/Matchers.h, foldableResidualAdd),
/// into that op's unit, when every input is made in a backward unit of one
/// chunk (the last: the latest microbatch, then `ops`' order). Anything else
/// (an argument, a forward or tail value, two chunks) leaves it in the
/// tail. Then the last microbatch's backward of layer l overlaps the sum
/// of layer l + 1's gradients, as Megatron's overlap_grad_reduce does.
/// `ops`: the body's ops in program order (not updated); `place`: every
/// op's placement (updated). Returns whether anything moved.
bool issueCollectivesEarly(
    llvm::ArrayRef<mlir::Operation *> ops,
    llvm::DenseMap<mlir::Operation *, Placement> &place);

} // namespace llmc::pipeline

#endif // LLMC_PASSES_PIPELINECOLLECTIVES_H
