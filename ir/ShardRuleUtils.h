//===- ShardRuleUtils.h - helpers shared by the sharding rules ---*- C++ -*-===//
//
// Private to ir/ShardRules*.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_IR_SHARDRULEUTILS_H
#define LLMC_IR_SHARDRULEUTILS_H

#include "ir/Partition.h"

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

/// Whether `value` is a splat zero (a constant, or a broadcast of one).
bool isZeroSplat(mlir::Value value);

// The rules of the families, one function each.
llvm::LogicalResult partitionElementwise(mlir::Operation *op,
                                         PartitionContext &context);
llvm::LogicalResult partitionReplicated(mlir::Operation *op,
                                        PartitionContext &context);
llvm::LogicalResult partitionComposite(mlir::Operation *op,
                                       PartitionContext &context,
                                       bool &handled);

} // namespace llmc::shardrules

#endif // LLMC_IR_SHARDRULEUTILS_H
