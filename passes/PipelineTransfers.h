//===- PipelineTransfers.h - sends and receives between stages -*- C++ -*-===//
//
// The transfers of llmc-split-pipeline (passes/SplitPipeline.cpp, step 5d).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_PASSES_PIPELINETRANSFERS_H
#define LLMC_PASSES_PIPELINETRANSFERS_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

#include <cstdint>

namespace llmc {

/// The llmc.stage of an op, or -1.
int64_t pipelineStageOf(mlir::Operation *op);

/// Every value of `body` read on another stage than its op's is sent right
/// after it is made (llmc.send on its stage, llmc.recv on the reader's,
/// adjacent, over mesh axis `ppAxis`), once per value and reading stage,
/// each with its llmc.reason, llmc.bytes_per_rank, llmc.stage, and the
/// producer's llmc.microbatch and llmc.chunk. A scalar read stages away
/// is passed along the stages between, one hop at a time.
void insertPipelineTransfers(mlir::Block &body, int64_t ppAxis,
                             mlir::OpBuilder &builder);

} // namespace llmc

#endif // LLMC_PASSES_PIPELINETRANSFERS_H
