//===- LlmcInterfaces.h - traits and interfaces of llmc ops ------*- C++ -*-===//
//
// The marker traits (Elementwise, Composite) and the op interfaces
// (DifferentiableOpInterface, CostOpInterface, ShardingRuleOpInterface)
// declared in LlmcInterfaces.td.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_IR_LLMCINTERFACES_H
#define LLMC_IR_LLMCINTERFACES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/TypeUtilities.h"

namespace llmc {
namespace OpTrait {

/// The op applies one scalar function at every element position of
/// same-shaped operands; fusion may merge chains of such ops.
template <typename ConcreteType>
class Elementwise : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {
};

/// The op stands for a subgraph of primitives and maps to one kernel.
template <typename ConcreteType>
class Composite : public mlir::OpTrait::TraitBase<ConcreteType, Composite> {};

} // namespace OpTrait

namespace detail {
/// Default flops of an op: one per element of its first result.
double defaultFlops(mlir::Operation *op);
/// Bytes of all tensor operands of `op`.
int64_t operandBytes(mlir::Operation *op);
/// Bytes of all tensor results of `op`.
int64_t resultBytes(mlir::Operation *op);
} // namespace detail

/// Bytes of a statically shaped tensor type (i1 counts one byte).
int64_t tensorBytes(mlir::Type type);

/// The partitioner's state (sharding/PartitionContext.h), which
/// ShardingRuleOpInterface's method takes; the dialect only names it.
class PartitionContext;

} // namespace llmc

#include "ir/LlmcInterfaces.h.inc"

#endif // LLMC_IR_LLMCINTERFACES_H
