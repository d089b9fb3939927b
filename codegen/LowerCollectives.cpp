//===- LowerCollectives.cpp - collectives and transfers as commands -------===//
//
// The shard dialect's collectives (all_reduce, all_gather, reduce_scatter,
// all_to_all, shift, all_slice), llmc.send / llmc.recv between pipeline
// stages, and the runtime form of an argument's sharding, for one rank
// (codegen/Lowering.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/Lowering.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "llvm/ADT/TypeSwitch.h"

namespace llmc::codegen {

void Lowering::addCollective(Operation *op, rt::CollectiveKind kind,
                             shard::ReductionKind reduction,
                             ArrayRef<int64_t> axes) {
  int position = 0;
  std::vector<int> group = groupOf(mesh, rankIndex, axes, position);
  std::vector<int64_t> ints = {
      static_cast<int64_t>(kind),
      reduction == shard::ReductionKind::Max ? 1 : 0, /*peer=*/0, /*tag=*/0,
      static_cast<int64_t>(group.size())};
  ints.insert(ints.end(), group.begin(), group.end());
  addCommand(op, rt::KernelKind::Count, {ints, {}},
             rt::CommandKind::Collective);
}

/// llmc.send / llmc.recv: the peer is the rank at the other end's position
/// along the axis, with this rank's coordinates on every other axis.
LogicalResult Lowering::lowerTransfer(Operation *op) {
  if (mesh.names.empty())
    return op->emitOpError() << "needs a mesh (shard.grid @mesh)";
  bool isSend = isa<SendOp>(op);
  int64_t axis = isSend ? cast<SendOp>(op).getAxis() : cast<RecvOp>(op).getAxis();
  int64_t peerPosition = isSend ? cast<SendOp>(op).getDestination()
                                : cast<RecvOp>(op).getSource();
  if (axis >= static_cast<int64_t>(mesh.sizes.size()) ||
      peerPosition >= mesh.sizes[axis])
    return op->emitOpError() << "codegen: position " << peerPosition
                             << " on mesh axis " << axis
                             << " is outside the mesh";
  int position = 0;
  std::vector<int> group = groupOf(mesh, rankIndex, {axis}, position);
  std::vector<int64_t> ints = {
      static_cast<int64_t>(isSend ? rt::CollectiveKind::Send
                                  : rt::CollectiveKind::Recv),
      0, /*peer=*/group[peerPosition], /*tag=*/0, /*n=*/0};
  addCommand(op, rt::KernelKind::Count, {ints, {}},
             rt::CommandKind::Collective);
  return success();
}

/// Upstream `shard` collectives. The runtime gathers and scatters along the
/// leading dimension, so a gather/scatter axis must have only size-1
/// dimensions before it (the partitioner arranges that).
LogicalResult Lowering::lowerShardOp(Operation *op) {
  if (mesh.names.empty())
    return op->emitOpError() << "needs a mesh (shard.grid @mesh)";
  auto leading = [&](Value value, int64_t axis) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
    for (int64_t d = 0; d < axis; ++d)
      if (shape[d] != 1)
        return false;
    return true;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](shard::AllReduceOp o) {
        addCollective(op, rt::CollectiveKind::AllReduce, o.getReduction(),
                      axesOf(o.getGridAxes()));
        return success();
      })
      .Case([&](shard::AllGatherOp o) -> LogicalResult {
        int64_t axis = o.getGatherAxis().getSExtValue();
        if (!leading(o.getInput(), axis))
          return o.emitOpError() << "codegen: gather_axis " << axis
                                 << " must follow only size-1 dimensions";
        addCollective(op, rt::CollectiveKind::AllGather,
                      shard::ReductionKind::Sum, axesOf(o.getGridAxes()));
        return success();
      })
      .Case([&](shard::ReduceScatterOp o) -> LogicalResult {
        int64_t axis = o.getScatterAxis().getSExtValue();
        if (!leading(o.getInput(), axis))
          return o.emitOpError() << "codegen: scatter_axis " << axis
                                 << " must follow only size-1 dimensions";
        addCollective(op, rt::CollectiveKind::ReduceScatter, o.getReduction(),
                      axesOf(o.getGridAxes()));
        return success();
      })
      .Case([&](shard::ShiftOp o) -> LogicalResult {
        // A rotation along one axis (ring attention): a send to the rank
        // `offset` ahead and a receive from the one `offset` behind. Sends
        // are synchronous (runtime/cpu/Collectives.h), so even positions
        // send first and odd ones receive first: no cycle of waiting sends.
        if (!o.getRotate())
          return o.emitOpError() << "codegen: only rotating shifts are "
                                    "supported";
        int position = 0;
        std::vector<int> group =
            groupOf(mesh, rankIndex, axesOf(o.getGridAxes()), position);
        int64_t n = static_cast<int64_t>(group.size());
        int64_t offset = static_cast<int64_t>(o.getOffset()) % n;
        int to = group[(position + offset) % n];
        int from = group[(position - offset + n) % n];
        // One tag per shift op, the same on every rank (SPMD order).
        int64_t tag = shiftTags++;
        auto command = [&](rt::CollectiveKind kind, int peer) {
          rt::Command c;
          c.kind = rt::CommandKind::Collective;
          c.kernel = rt::KernelKind::Count;
          c.attrs.ints = {static_cast<int64_t>(kind), 0, peer, tag, 0};
          c.origin = locationText(op->getLoc());
          if (kind == rt::CollectiveKind::Send)
            c.inputs.push_back(slotOf(o.getInput()));
          else
            c.outputs.push_back(slotOf(o.getResult()));
          return c;
        };
        rt::Command send = command(rt::CollectiveKind::Send, to);
        rt::Command recv = command(rt::CollectiveKind::Recv, from);
        if (position % 2 == 0) {
          rank.commands.push_back(std::move(send));
          rank.commands.push_back(std::move(recv));
        } else {
          rank.commands.push_back(std::move(recv));
          rank.commands.push_back(std::move(send));
        }
        return success();
      })
      .Case([&](shard::AllToAllOp o) -> LogicalResult {
        // The runtime sends leading-dimension chunk j to the j-th rank of
        // the group and concatenates what it receives in group order; the
        // partitioner transposes around it (PartitionContext::allToAll).
        if (o.getSplitAxis().getSExtValue() != 0 ||
            o.getConcatAxis().getSExtValue() != 0)
          return o.emitOpError()
                 << "codegen: all_to_all needs split_axis = concat_axis = 0, "
                    "got "
                 << o.getSplitAxis().getSExtValue() << " and "
                 << o.getConcatAxis().getSExtValue();
        addCollective(op, rt::CollectiveKind::AllToAll,
                      shard::ReductionKind::Sum, axesOf(o.getGridAxes()));
        return success();
      })
      .Case([&](shard::AllSliceOp o) {
        // No communication: this rank's chunk, as a slice.
        int position = 0;
        (void)groupOf(mesh, rankIndex, axesOf(o.getGridAxes()), position);
        int64_t axis = o.getSliceAxis().getSExtValue();
        ArrayRef<int64_t> in =
            cast<RankedTensorType>(o.getInput().getType()).getShape();
        ArrayRef<int64_t> out = o.getType().getShape();
        std::vector<int64_t> ints(in.size(), 0);
        std::vector<int64_t> limits(in.begin(), in.end());
        ints[axis] = position * out[axis];
        limits[axis] = ints[axis] + out[axis];
        ints.insert(ints.end(), limits.begin(), limits.end());
        ints.insert(ints.end(), in.size(), 1);
        addCommand(op, rt::KernelKind::Slice, {ints, {}});
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "codegen: this shard op has no runtime command";
      });
}

FailureOr<rt::TensorSharding>
Lowering::shardingAttr(DictionaryAttr attrs, int64_t valueRank, Location loc) {
  if (!attrs || mesh.names.empty())
    return rt::TensorSharding{};
  FailureOr<Sharding> sharding =
      Sharding::fromAttrs(attrs.get("llmc.sharding"),
                          attrs.get("llmc.shard_groups"), mesh, valueRank,
                          attrs.get("llmc.shard_zigzag"));
  if (failed(sharding))
    return emitError(loc) << "codegen: malformed llmc.sharding " << attrs;
  return runtimeSharding(*sharding);
}

} // namespace llmc::codegen
