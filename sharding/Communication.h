//===- Communication.h - the traffic of a collective ---------------*- C++ -*-===//
//
// What one upstream `shard` collective of a partitioned program moves: its
// kind, its mesh axes, the bytes of the tensor it works on, and the bytes
// each rank sends with the bandwidth-optimal (ring) algorithm:
//   all-reduce of S bytes over N ranks:      2 (N - 1) / N · S
//   all-gather to S bytes, reduce-scatter of S bytes: (N - 1) / N · S
//   shift (ring attention's point to point) of S bytes: S
//   all-to-all of S bytes (each rank keeps 1/N):      (N - 1) / N · S
// The partitioner tags each collective with it (llmc.bytes_per_rank) and
// `llmc plan` sums it per mesh axis and kind.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_SHARDING_COMMUNICATION_H
#define LLMC_SHARDING_COMMUNICATION_H

#include "sharding/Sharding.h"

#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace llmc {

struct CollectiveTraffic {
  std::string kind;                 ///< "all-reduce", "all-gather", ...
  llvm::SmallVector<int64_t> axes;  ///< mesh axes of the group
  int64_t ranks = 1;                ///< N
  int64_t payloadBytes = 0;         ///< S
  int64_t sentBytesPerRank = 0;     ///< by the formulas above
};

/// The traffic of `op` when it is a `shard` collective (all_slice moves
/// nothing and is reported with zero bytes); nullopt for any other op.
std::optional<CollectiveTraffic> collectiveTraffic(mlir::Operation *op,
                                                   const Mesh &mesh);

} // namespace llmc

#endif // LLMC_SHARDING_COMMUNICATION_H
