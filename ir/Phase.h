//===- Phase.h - which part of a training step an op belongs to --*- C++ -*-===//
//
// A training step has three parts: the forward program (traced by the
// frontend), the backward program (built by llmc-autodiff) and the update
// (built by llmc-optimizer). The passes that build the last two tag the
// locations of their ops — loc(fused<"backward">["transformer.h.0.attn"]) —
// so the model part stays readable in dumps and errors while the buffer
// planner can tell activations kept for backward from gradients, and later
// passes (remat) can tell where backward starts. Untagged ops are forward.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_IR_PHASE_H
#define LLMC_IR_PHASE_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace llmc {

enum class Phase { Forward, Backward, Optimizer };

/// "forward", "backward", "optimizer".
llvm::StringRef phaseName(Phase phase);

/// The phase a location is tagged with (Forward when untagged).
Phase phaseOf(mlir::Location loc);

/// `loc` tagged with `phase` (Forward: `loc` unchanged). A location that
/// already carries a tag keeps it.
mlir::Location withPhase(mlir::Location loc, Phase phase);

/// The model part a location names ("transformer.h.0.attn"), looking
/// through phase tags and fused locations; empty when it names none.
std::string modelPartOf(mlir::Location loc);

/// Copies the pipeline placement that llmc-split-pipeline gives every op of
/// a pipelined step (llmc.stage, llmc.chunk, llmc.microbatch) from `from`
/// to `to`. A pass after the split that creates an op in place of others
/// must call it: codegen and the buffer plan run an op without llmc.stage
/// on every stage, where its operands may not exist.
void copyPipelinePlacement(mlir::Operation *from, mlir::Operation *to);

} // namespace llmc

#endif // LLMC_IR_PHASE_H
