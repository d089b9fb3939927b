//===- VerifyUtils.h - shape helpers shared by the op verifiers --*- C++ -*-===//
//
// Internal to ir/. Verifier messages say what was expected and what was
// found, with the values (docs/architecture.md, "How the code reads").
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_IR_VERIFYUTILS_H
#define LLMC_IR_VERIFYUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace llmc {

/// Formats a shape as `[8, 1024, 768]` for diagnostics.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}
inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
  return tensorType(v).getShape();
}
inline mlir::Type elementOf(mlir::Value v) {
  return tensorType(v).getElementType();
}

/// Checks that `what` has shape `expected`; reports both shapes otherwise.
mlir::LogicalResult expectShape(mlir::Operation *op, llvm::StringRef what,
                                llvm::ArrayRef<int64_t> found,
                                llvm::ArrayRef<int64_t> expected);

/// Checks that `what` has element type `expected`.
mlir::LogicalResult expectElementType(mlir::Operation *op,
                                      llvm::StringRef what, mlir::Type found,
                                      mlir::Type expected);

/// Checks that `what` has type `expected` (shape and element type).
mlir::LogicalResult expectType(mlir::Operation *op, llvm::StringRef what,
                               mlir::Type found, mlir::Type expected);

/// Checks that `what` has rank `expected`.
mlir::LogicalResult expectRank(mlir::Operation *op, llvm::StringRef what,
                               int64_t found, int64_t expected);

/// Checks that `dim` indexes a tensor of rank `rank`.
mlir::LogicalResult expectDimInRange(mlir::Operation *op, llvm::StringRef what,
                                     int64_t dim, int64_t rank);

} // namespace llmc

#endif // LLMC_IR_VERIFYUTILS_H
