//===- Registration.h - the sharding rules as external models ----*- C++ -*-===//
//
// The dialect (ir/) promises ShardingRuleOpInterface for every llmc op but
// does not implement it: the rules belong to the partitioner, which sits
// above the dialect. registerShardingRuleModels attaches them, the MLIR way
// (an extension of the registry, applied when the llmc dialect loads).
// The partition pass adds it to its dependent dialects, so a pipeline that
// partitions never runs without the rules; tools register it up front.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_SHARDING_REGISTRATION_H
#define LLMC_SHARDING_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace llmc {

/// Attaches ShardingRuleOpInterface (partitionOp, the rule of the op's
/// family) to every op of the llmc dialect.
void registerShardingRuleModels(mlir::DialectRegistry &registry);

} // namespace llmc

#endif // LLMC_SHARDING_REGISTRATION_H
