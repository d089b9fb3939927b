//===- Fp8.h - building the FP8 steps of a linear layer ---------*- C++ -*-===//
//
// The builders that llmc.fp8_matmul's derivative rule (ir/Fp8Ops.cpp) and
// its forward expansion (passes/ExpandFp8Matmul.cpp) share, so that both
// build identical scale computations and casts of one tensor and CSE keeps
// one of each. The recipe is docs/precision.md's "FP8".
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_IR_FP8_H
#define LLMC_IR_FP8_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace llmc {

/// The largest finite value of an 8-bit float type: 448 (f8E4M3FN), 57344
/// (f8E5M2).
double fp8MaxFinite(mlir::Type f8);

/// The smallest amax a scale divides by (torchao's EPS): a tensor of zeros
/// gets a finite scale.
constexpr double kFp8AmaxFloor = 1e-12;

/// A tensorwise scale of `x` for `f8` and its inverse (rank-0 f32):
/// scale = max / max(amax(x), floor), inverse = max(amax(x), floor) / max.
struct Fp8Scale {
  mlir::Value scale;
  mlir::Value inverse;
};
Fp8Scale buildFp8Scale(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                       mlir::Type f8);

/// `x` (rank 2) cast to `f8` with `scale`, transposed after the cast when
/// `transpose` (the cast commutes with the transpose: the 8-bit codes move,
/// and the cast is shared with x's untransposed use).
mlir::Value buildScaledCast(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value x, mlir::Value scale, mlir::Type f8,
                            bool transpose);

/// `lhs · rhsᵀ` of two rank-2 tensors as FP8: lhs [M, K] with `lhsScale`
/// cast to `lhsType`, rhs [N, K] likewise, the product descaled, of element
/// type `result`. `transposeLhs`/`transposeRhs` transpose the operands
/// first (so lhs may be given [K, M], rhs [K, N]).
mlir::Value buildScaledMatmul(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value lhs, bool transposeLhs,
                              const Fp8Scale &lhsScale, mlir::Type lhsType,
                              mlir::Value rhs, bool transposeRhs,
                              const Fp8Scale &rhsScale, mlir::Type rhsType,
                              mlir::Type result);

} // namespace llmc

#endif // LLMC_IR_FP8_H
