//===- Communication.cpp - the traffic of a collective --------------------===//

#include "sharding/Communication.h"
#include "ir/LlmcInterfaces.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace llmc {

std::optional<CollectiveTraffic> collectiveTraffic(Operation *op,
                                                   const Mesh &mesh) {
  auto make = [&](StringRef kind, ArrayRef<int16_t> axes, Type payload,
                  int64_t numerator) {
    CollectiveTraffic t;
    t.kind = kind.str();
    for (int16_t axis : axes)
      t.axes.push_back(axis);
    t.ranks = mesh.ways(t.axes);
    t.payloadBytes = tensorBytes(payload);
    // numerator = 2 for all-reduce, 1 for gather/scatter, 0 for a slice.
    t.sentBytesPerRank = numerator * (t.ranks - 1) * t.payloadBytes / t.ranks;
    return t;
  };
  return llvm::TypeSwitch<Operation *, std::optional<CollectiveTraffic>>(op)
      .Case([&](shard::AllReduceOp o) {
        return make("all-reduce", o.getGridAxes(), o.getInput().getType(), 2);
      })
      .Case([&](shard::AllGatherOp o) {
        return make("all-gather", o.getGridAxes(), o.getType(), 1);
      })
      .Case([&](shard::ReduceScatterOp o) {
        return make("reduce-scatter", o.getGridAxes(), o.getInput().getType(),
                    1);
      })
      .Case([&](shard::ShiftOp o) {
        // Point to point: every rank sends its whole tensor to one peer.
        CollectiveTraffic t = make("shift", o.getGridAxes(),
                                   o.getInput().getType(), 0);
        t.sentBytesPerRank = t.payloadBytes;
        return t;
      })
      .Case([&](shard::AllToAllOp o) {
        // Each rank keeps 1/N of its S bytes and sends the rest.
        return make("all-to-all", o.getGridAxes(), o.getInput().getType(), 1);
      })
      .Case([&](shard::AllSliceOp o) {
        return make("slice (local)", o.getGridAxes(), o.getType(), 0);
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace llmc
