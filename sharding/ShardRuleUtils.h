//===- ShardRuleUtils.h - helpers shared by the sharding rules ---*- C++ -*-===//
//
// Private to sharding/ShardRules*.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_SHARDING_SHARDRULEUTILS_H
#define LLMC_SHARDING_SHARDRULEUTILS_H

#include "ir/LlmcOps.h"
#include "ir/Matchers.h"
#include "sharding/PartitionContext.h"

#include "mlir/IR/BuiltinTypes.h"

namespace llmc::shardrules {

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
}

inline int64_t rankOf(mlir::Value value) {
  return static_cast<int64_t>(shapeOf(value).size());
}

/// A constant op holding `attr`.
mlir::Value makeConstant(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::DenseElementsAttr attr);

/// The number of ranks a sharding's splits spread a value over.
int64_t splitWays(const Sharding &sharding, const Mesh &mesh);

/// `s` with dimension `dim` unsplit.
Sharding unsplitDim(Sharding s, int64_t dim);

/// Drops from `s` every split whose axes are in `used`, and adds the axes
/// `s` keeps to `used`. Returns the dims that lost their split.
void claimAxes(DimSplit &split, llvm::SmallVectorImpl<int64_t> &used);

/// Reshards `original` to `target` for `user`, or fails.
llvm::FailureOr<mlir::Value> reshardTo(PartitionContext &context,
                                       mlir::Value original,
                                       const Sharding &target,
                                       mlir::Operation *user);

// The rules of the families, one function each.
llvm::LogicalResult partitionElementwise(mlir::Operation *op,
                                         PartitionContext &context);
llvm::LogicalResult partitionReplicated(mlir::Operation *op,
                                        PartitionContext &context);
llvm::LogicalResult partitionComposite(mlir::Operation *op,
                                       PartitionContext &context,
                                       bool &handled);

/// `ids - offset` on local index tensors, with `offset` this rank's first
/// row along `axes` of a dimension of `rows` local rows (vocabulary
/// parallelism).
mlir::Value shiftIds(PartitionContext &context, mlir::Location loc,
                     mlir::Value ids, llvm::ArrayRef<int64_t> axes,
                     int64_t rows);
/// Per row of `x` (local, split over `axes` along dimension `d`): returns
/// x - max and, in `sumExp`, the sum of exp(x - max), both complete over
/// `axes` (an all-reduce max, then an all-reduce sum).
mlir::Value shiftedByGlobalMax(PartitionContext &context, mlir::Operation *user,
                               mlir::Value x, int64_t d,
                               llvm::ArrayRef<int64_t> axes,
                               mlir::Value &sumExp);

// The loss and its gradient (sharding/ShardRulesLoss.cpp).
llvm::LogicalResult partitionCrossEntropy(CrossEntropyOp op,
                                          PartitionContext &context);
llvm::LogicalResult partitionCrossEntropyGrad(CrossEntropyGradOp op,
                                              PartitionContext &context);

// Context parallelism (sharding/ShardRulesRing.cpp).

/// The split of dimension `dim` of `sequenceOf` (resolved) when it is over
/// the context-parallel axis `cp` alone; else an unsplit DimSplit.
DimSplit contextParallelSplit(PartitionContext &context, mlir::Value sequenceOf,
                              int64_t dim);
/// This rank's global positions ([local size], i32) along a dimension of
/// `global` positions split as `split` (zigzag or not).
mlir::Value localPositions(PartitionContext &context, mlir::Location loc,
                           int64_t global, const DimSplit &split);
/// The sharding of attention's log-sum-exp [B, Hq, T]: the query's splits
/// of its first three dimensions.
Sharding lseSharding(const Sharding &query);
llvm::LogicalResult partitionRingAttention(AttentionOp op,
                                           PartitionContext &context,
                                           const DimSplit &seq);
llvm::LogicalResult partitionRingAttentionGrad(AttentionGradOp op,
                                               PartitionContext &context,
                                               const DimSplit &seq);
llvm::LogicalResult partitionRingRope(RopeOp op, PartitionContext &context,
                                      const DimSplit &seq);

} // namespace llmc::shardrules

#endif // LLMC_SHARDING_SHARDRULEUTILS_H
