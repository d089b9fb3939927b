//===- Matchers.h - questions about values that several folders ask -*- C++ -*-===//
//
// Small predicates on llmc values shared by the canonicalization (ir/) and
// the sharding rules (sharding/).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_IR_MATCHERS_H
#define LLMC_IR_MATCHERS_H

#include "mlir/IR/Value.h"

namespace llmc {

/// Whether `value` is a splat zero: an llmc.constant whose dense splat is
/// +0 or -0 (0 for integers), or an llmc.broadcast of one.
bool isZeroSplat(mlir::Value value);

} // namespace llmc

#endif // LLMC_IR_MATCHERS_H
