//===- PipelineSchedule.h - pipeline chunk balance and stage orders -*- C++ -*-===//
//
// The schedule side of llmc-split-pipeline (passes/SplitPipeline.cpp),
// independent of the IR.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_PASSES_PIPELINESCHEDULE_H
#define LLMC_PASSES_PIPELINESCHEDULE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <tuple>
#include <vector>

namespace llmc::pipeline {

/// One unit of a pipeline schedule: the forward or backward of one model
/// chunk on one microbatch.
struct Unit {
  int64_t chunk = 0;
  bool backward = false;
  int64_t microbatch = 0;
  bool operator<(const Unit &other) const {
    return std::tie(chunk, backward, microbatch) <
           std::tie(other.chunk, other.backward, other.microbatch);
  }
};

/// The first layer of each of `chunks` contiguous chunks of the layers
/// whose costs are `layerCost`, with the least maximum chunk cost (dynamic
/// programming over the cuts). Needs at least `chunks` layers.
std::vector<int64_t> balancedChunkStarts(llvm::ArrayRef<double> layerCost,
                                         int64_t chunks);

/// Each stage's units in the order it runs them: "gpipe" (every forward,
/// then every backward), "1f1b" (pp - s - 1 warm-up forwards on stage s,
/// then a forward and a backward in turn) or "interleaved" (Megatron-LM's
/// order over the stage's `virtualStages` chunks; chunk k is on stage
/// k mod stages). Backwards of a chunk run in microbatch order.
std::vector<std::vector<Unit>> stageOrders(llvm::StringRef schedule,
                                           int64_t stages,
                                           int64_t virtualStages,
                                           int64_t microbatches);

/// A schedule run with unit costs: each stage runs its `orders` in turn,
/// and the stage whose next unit can start first runs it. A forward of
/// chunk k waits for chunk k - 1's forward of its microbatch, a backward
/// for chunk k + 1's backward (the last chunk's for its own forward).
struct Simulation {
  std::vector<Unit> global;   ///< the units in the order they started
  std::vector<double> freeAt; ///< when each stage finished
  double busy = 0;            ///< the summed unit costs
  bool stuck = false;         ///< some stage could not run all its units
  double makespan() const;
  /// The idle share of stages x makespan.
  double bubble() const;
};
Simulation simulate(const std::vector<std::vector<Unit>> &orders,
                    int64_t chunks,
                    llvm::function_ref<double(const Unit &)> cost);

} // namespace llmc::pipeline

#endif // LLMC_PASSES_PIPELINESCHEDULE_H
