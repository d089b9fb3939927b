//===- PartitionContext.h - building the per-rank (SPMD) program -*- C++ -*-===//
//
// The state the partitioner (passes/Partition.cpp) hands to each op's
// sharding rule (ShardingRuleOpInterface::partition): for every value of the
// global program, its local value and its Sharding; and the resharding that
// moves a value from one sharding to another with upstream `shard`
// collectives (all_reduce, all_gather, reduce_scatter, all_slice; all_to_all
// for expert parallelism), each
// tagged with why it exists (`llmc.reason`) and the bytes it sends per rank.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_SHARDING_PARTITIONCONTEXT_H
#define LLMC_SHARDING_PARTITIONCONTEXT_H

#include "sharding/Sharding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

namespace llmc {

/// Choices of the user's strategy that resharding applies.
struct PartitionPolicy {
  /// ZeRO (stage >= 1): a pending sum over this axis (the data-parallel
  /// gradient) is reduce-scattered onto zeroDim() instead of all-reduced;
  /// -1 for no ZeRO.
  int64_t zeroAxis = -1;
  /// ZeRO-2 and 3: gradients are kept sharded, so a pending sum over the
  /// zero axis is reduce-scattered before it is accumulated with another
  /// (each microbatch's gradient), not after.
  bool scatterEachGradient = false;
  /// Sequence parallelism: a pending sum over this axis (the tensor-parallel
  /// axis) of a [B, T, C] activation is reduce-scattered along T; -1: off.
  int64_t sequenceAxis = -1;
};

class PartitionContext {
public:
  PartitionContext(const Mesh &mesh, PartitionPolicy policy,
                   mlir::OpBuilder &builder)
      : mesh_(mesh), policy_(policy), builder_(builder) {}

  const Mesh &mesh() const { return mesh_; }
  const PartitionPolicy &policy() const { return policy_; }
  mlir::OpBuilder &builder() { return builder_; }

  /// Records that `original` (a value of the global program) is `local`
  /// with `sharding` on every rank.
  void map(mlir::Value original, mlir::Value local, const Sharding &sharding);
  bool isMapped(mlir::Value original) const {
    return values_.count(original) != 0;
  }
  const Sharding &shardingOf(mlir::Value original) const;
  mlir::Value localOf(mlir::Value original) const;

  /// Whether resolve() has already summed `original`: its users then read
  /// the sum rather than carry the pending sum further.
  bool isResolved(mlir::Value original) const {
    return resolved_.count(original) != 0;
  }
  /// `original`'s sharding after resolve(): what an op that cannot take a
  /// pending sum sees.
  Sharding resolvedSharding(mlir::Value original);
  /// `original` with its pending reduction done, the way the policy says
  /// (reduce-scatter for ZeRO and sequence parallelism, else all-reduce).
  /// Computed once per value.
  llvm::FailureOr<mlir::Value> resolve(mlir::Value original,
                                       mlir::Operation *user);

  /// `original`'s local value in sharding `target`, inserting the
  /// collectives and local slices needed; `user` is the op that needs it
  /// (its model part goes into the reason). Fails with a diagnostic on
  /// `user` when a split does not divide its dimension.
  llvm::FailureOr<mlir::Value> reshard(mlir::Value original,
                                       const Sharding &target,
                                       mlir::Operation *user);

  /// The local type of a global `type` under `sharding`; fails with a
  /// diagnostic on `where` when a split does not divide.
  llvm::FailureOr<mlir::RankedTensorType>
  localType(mlir::Type type, const Sharding &sharding,
            mlir::Operation *where) const;

  /// Clones `op` with `operands` (local values) and local result types for
  /// `results`, and maps the results. The common rule's last step.
  llvm::LogicalResult cloneLocal(mlir::Operation *op,
                                 mlir::ValueRange operands,
                                 llvm::ArrayRef<Sharding> results);

  /// A rank-0 tensor of `element` type: this rank's linear position along
  /// `axes` times `stride` (llmc.axis_offset).
  mlir::Value axisOffset(mlir::Location loc, llvm::ArrayRef<int64_t> axes,
                         int64_t stride, mlir::Type element);

  /// Collectives on local values (the reason names `user`).
  mlir::Value allReduce(mlir::Value local, llvm::ArrayRef<int64_t> axes,
                        PartialKind kind, mlir::Operation *user,
                        llvm::StringRef what);

  /// Point to point around the ring of `axis` (context parallelism): rank p
  /// of each group along `axis` sends `local` to rank p + 1 (mod n) and
  /// returns what rank p - 1 sent (upstream `shard.shift ... offset = 1
  /// rotate`); the reason names `what` and the model part of `user`.
  mlir::Value ringShift(mlir::Value local, int64_t axis, mlir::Operation *user,
                        llvm::StringRef what);

  /// Values one op's rule leaves for a later op's rule, keyed by the global
  /// op that made them: ring attention's forward leaves the log-sum-exp of
  /// its rows for the backward (llmc.attention_grad of the same operands).
  void setCarried(mlir::Operation *original, mlir::Value local) {
    carried_[original] = local;
  }
  mlir::Value carried(mlir::Operation *original) const {
    return carried_.lookup(original);
  }

  /// All-to-all over mesh axis `axis` (N ranks) on a local value: dimension
  /// `splitDim` is cut into N chunks, chunk j goes to the j-th rank along
  /// the axis, and the chunks received are concatenated along `concatDim`
  /// in rank order (`local` [.., S, .., C, ..] -> [.., S/N, .., N·C, ..]).
  /// As a sharding: `axis` moves from the minor end of `concatDim`'s split
  /// to the minor end of `splitDim`'s. The runtime exchanges leading-
  /// dimension chunks, so the IR transposes around the collective when
  /// `splitDim` is not leading. Expert parallelism's dispatch and combine.
  mlir::Value allToAll(mlir::Value local, int64_t splitDim, int64_t concatDim,
                       int64_t axis, mlir::Operation *user,
                       llvm::StringRef what);

  /// Expert outputs already moved back to their tokens by a combine's
  /// all-to-all: the backward's second combine of the same values (the
  /// router weights' gradient) reads them instead of exchanging them again.
  mlir::Value movedToTokens(mlir::Value original) const {
    return movedToTokens_.lookup(original);
  }
  void setMovedToTokens(mlir::Value original, mlir::Value local) {
    movedToTokens_[original] = local;
  }

  /// The dimension ZeRO splits over the data-parallel axis for a value of
  /// global `shape` that already has `sharding`: the first dimension whose
  /// local size the axis divides (-1 when none does).
  int64_t zeroDim(llvm::ArrayRef<int64_t> shape, const Sharding &sharding) const;

private:
  llvm::FailureOr<mlir::Value>
  reshardLocal(mlir::Value local, Sharding current, const Sharding &target,
               llvm::ArrayRef<int64_t> global, mlir::Operation *user,
               llvm::StringRef what);
  bool isSequenceGather(const Sharding &current, const Sharding &target) const;
  mlir::Value gather(mlir::Value local, int64_t dim, const DimSplit &split,
                     mlir::Operation *user, llvm::StringRef what);
  mlir::Value slice(mlir::Value local, int64_t dim,
                    llvm::ArrayRef<int64_t> axes, int64_t groups,
                    bool zigzag);
  mlir::Value reduceScatter(mlir::Value local, int64_t dim,
                            llvm::ArrayRef<int64_t> axes, int64_t groups,
                            bool zigzag, PartialKind kind,
                            mlir::Operation *user, llvm::StringRef what);
  void tag(mlir::Operation *collective, mlir::Operation *user,
           llvm::StringRef what, int64_t bytesPerRank);

  struct Entry {
    mlir::Value local;
    Sharding sharding;
  };
  const Mesh &mesh_;
  PartitionPolicy policy_;
  mlir::OpBuilder &builder_;
  llvm::DenseMap<mlir::Value, Entry> values_;
  llvm::DenseMap<mlir::Value, Entry> resolved_;
  /// Sequence parallelism: values already gathered along the sequence, by
  /// target sharding (the backward reads the forward's gather).
  llvm::DenseMap<mlir::Value, llvm::SmallVector<Entry, 1>> gathered_;
  llvm::DenseMap<mlir::Operation *, mlir::Value> carried_;
  llvm::DenseMap<mlir::Value, mlir::Value> movedToTokens_;
};

/// Partitions one op of the global program: the sharding rule of its
/// family (ShardRules*.cpp). Every op's ShardingRuleOpInterface model calls
/// it (Registration.h).
llvm::LogicalResult partitionOp(mlir::Operation *op,
                                PartitionContext &context);

} // namespace llmc

#endif // LLMC_SHARDING_PARTITIONCONTEXT_H
