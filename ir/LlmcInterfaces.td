//===- LlmcInterfaces.td - op interfaces and traits of the llmc dialect --===//
//
// The interfaces every op of a training step implements. Passes ask these,
// never op names: autodiff asks DifferentiableOpInterface, the cost model
// and the planner ask CostOpInterface, sharding asks the upstream
// ShardingInterface (see docs/ir.md for its plan).
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_INTERFACES_TD
#define LLMC_INTERFACES_TD

include "mlir/IR/OpBase.td"

// Marks ops that apply the same scalar function to every element position
// of same-shaped operands. A marker only: each op's verifier checks shapes
// and reports the values it found.
def Llmc_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::llmc::OpTrait";
}

// Marks ops that stand for a whole subgraph of primitives (layer_norm,
// attention, ...) so that passes can treat them as one kernel.
def Llmc_Composite : NativeOpTrait<"Composite"> {
  let cppNamespace = "::llmc::OpTrait";
}

def Llmc_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::llmc";
  let description = [{
    Reverse-mode differentiation of one op (the autodiff pass, issue #5).

    `buildVjp` is called with the builder positioned after the forward op and
    one cotangent per result (a null Value where no gradient flows into that
    result). It appends to `operandGrads` one Value per operand: the
    vector-Jacobian product for that operand, or a null Value when the
    operand is not differentiable (indices, masks) or receives no gradient.
    The VJP may use the op's operands and results; rematerialization decides
    later whether they are kept or recomputed.
  }];
  let methods = [
    InterfaceMethod<
      "Builds the vector-Jacobian product of this op.",
      "::llvm::LogicalResult", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
    InterfaceMethod<
      "Whether a gradient can flow into operand `index` (false for integer "
      "and boolean operands).",
      "bool", "isDifferentiableOperand", (ins "unsigned":$index), [{}],
      [{
        return ::llvm::isa<::mlir::FloatType>(::mlir::getElementTypeOrSelf(
            $_op->getOperand(index).getType()));
      }]>,
  ];
}

def Llmc_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::llmc";
  let description = [{
    How an op runs on a device mesh (the partitioner, issue #8): given the
    shardings of its operands in a PartitionContext, build the op's local
    (per-rank) form, resharding operands where the rule needs it, and
    record each result's local value and Sharding (which may be a pending
    sum). The dialect promises it for every llmc op; the rules are external
    models attached by sharding/ (registerShardingRuleModels, rules of the
    op families in sharding/ShardRules*.cpp; docs/sharding.md lists them),
    so that the dialect does not depend on the partitioner. Why this is not
    upstream `shard::ShardingInterface` is said there too: it has no
    partial results and no blocked splits.
  }];
  let methods = [
    InterfaceMethod<
      "Builds the local form of this op in `context` "
      "(sharding/PartitionContext.h).",
      "::llvm::LogicalResult", "partition",
      (ins "::llmc::PartitionContext &":$context)>,
  ];
}

def Llmc_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::llmc";
  let description = [{
    What one execution of the op costs, independent of any device: floating
    point operations and the bytes it must read and write if nothing is
    fused. The planner turns these into time with a device profile
    (issue #11); fusion subtracts the bytes that stay on chip.

    Conventions: a multiply-add is 2 flops; exp, log, tanh, rsqrt count as
    one flop each; ops that only move data (transpose, slice, gather) have
    zero flops; reshape is free (a view).
  }];
  let methods = [
    InterfaceMethod<"Floating point operations of one execution.",
      "double", "getFlops", (ins), [{}],
      [{ return ::llmc::detail::defaultFlops($_op); }]>,
    InterfaceMethod<"Bytes read from memory when not fused.",
      "int64_t", "getBytesRead", (ins), [{}],
      [{ return ::llmc::detail::operandBytes($_op); }]>,
    InterfaceMethod<"Bytes written to memory when not fused.",
      "int64_t", "getBytesWritten", (ins), [{}],
      [{ return ::llmc::detail::resultBytes($_op); }]>,
  ];
}

#endif // LLMC_INTERFACES_TD
