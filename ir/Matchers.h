//===- Matchers.h - questions about values that several folders ask -*- C++ -*-===//
//
// Small predicates on llmc values shared by the canonicalization (ir/), the
// sharding rules (sharding/) and the passes that move ops (passes/).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_IR_MATCHERS_H
#define LLMC_IR_MATCHERS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

namespace llmc {

/// Whether `value` is a splat zero: an llmc.constant whose dense splat is
/// +0 or -0 (0 for integers), or an llmc.broadcast of one.
bool isZeroSplat(mlir::Value value);

/// When `op` is a layer_norm_grad or rms_norm_grad whose next op adds its dx
/// (result 0) to another value, that add: the residual add that the CUDA
/// runtime folds into the norm's kernel only when it is the next command
/// (findFoldedAdds), so passes that move ops in after a norm gradient put
/// them after it. Else null.
mlir::Operation *foldableResidualAdd(mlir::Operation *op);

} // namespace llmc

#endif // LLMC_IR_MATCHERS_H
