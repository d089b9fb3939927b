//===- Lowering.h - one rank's command list from the final IR --*- C++ -*-===//
//
// Private to codegen/: the Lowering of BuildExecutable.cpp (ops, fused
// regions, values, outputs) and LowerCollectives.cpp (the shard dialect's
// collectives, point-to-point transfers and argument shardings), and the
// helpers both use.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_LOWERING_H
#define LLMC_CODEGEN_LOWERING_H

#include "analysis/BufferPlan.h"
#include "ir/LlmcOps.h"
#include "runtime/Executable.h"
#include "sharding/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/DenseMap.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmc::codegen {

using namespace mlir;

/// "transformer.h.0.mlp (backward)": the model part and phase of `loc`.
std::string locationText(Location loc);

/// The ranks that run a collective over mesh `axes` with `rank`, in group
/// order (row-major over `axes` as listed), and `rank`'s position in it.
std::vector<int> groupOf(const Mesh &mesh, int rank, ArrayRef<int64_t> axes,
                         int &position);

SmallVector<int64_t> axesOf(ArrayRef<int16_t> axes);

rt::TensorSharding runtimeSharding(const Sharding &sharding);

std::vector<int64_t> toVector(ArrayRef<int64_t> values);

/// Builds the command list and the value table of one function for one
/// rank of the mesh (rank 0 of one device when there is no mesh). The
/// program is SPMD: ranks differ only in their collectives' groups, their
/// slices and their llmc.axis_offset constants.
class Lowering {
public:
  Lowering(func::FuncOp function, rt::Executable &exe, const Mesh &mesh,
           int rankIndex)
      : function(function), exe(exe), mesh(mesh), rankIndex(rankIndex),
        rank(exe.ranks.emplace_back()) {
    // A pipelined program (llmc-split-pipeline): this rank runs the ops of
    // its position along the pp axis.
    if (function->hasAttr("llmc.pipeline"))
      if (int64_t pp = mesh.axisIndex("pp"); pp >= 0) {
        int position = 0;
        (void)groupOf(mesh, rankIndex, {pp}, position);
        stage = position;
      }
  }

  LogicalResult run();

private:
  FailureOr<int32_t> addValue(Value value);
  /// The slot of an operand, which must already exist.
  int32_t slotOf(Value value) { return slots.lookup(value); }
  LogicalResult lowerOp(Operation *op);
  /// The command of an op that is one kernel of Kernels.def
  /// (LowerKernels.cpp); an error naming the op when it is none.
  LogicalResult lowerKernelOp(Operation *op);
  /// The primitives and composites whose kernels take attributes: the
  /// lowering, or none when `op` is not one of them.
  std::optional<LogicalResult> lowerPrimitiveKernel(Operation *op);
  std::optional<LogicalResult> lowerCompositeKernel(Operation *op);
  LogicalResult lowerFused(FusedOp fused);
  LogicalResult lowerSumOfSquares(FusedOp fused);
  /// A matmul_epilogue region as one MatmulEpilogue command, when its body
  /// is a bias add [+ gelu | + residual] after the matmul and the buffer
  /// plan lets one GEMM write its results (LowerMatmulEpilogue.cpp); false
  /// when the region is to be lowered op by op.
  FailureOr<bool> lowerMatmulEpilogue(FusedOp fused);
  /// A reduce_sum of dY over all but its last dimension whose dY a later
  /// matmul_epilogue region's weight-gradient GEMM (dW = X^T dY) reads:
  /// recorded in biasGradientOf, and written by that GEMM's command
  /// (MatmulEpilogue bias_gradient) instead of a command here.
  FailureOr<bool> deferBiasGradient(ReduceSumOp reduce);
  /// The MatmulEpilogue bias_gradient command of `matmul` (in `fused`).
  void lowerBiasGradientGemm(FusedOp fused, MatmulOp matmul,
                             ReduceSumOp reduce);
  /// Makes `plan` (the overlap checks of the two above).
  LogicalResult ensurePlan();
  void addCommand(Operation *op, rt::KernelKind kernel,
                  rt::KernelAttrs attrs = {},
                  rt::CommandKind kind = rt::CommandKind::Kernel);
  LogicalResult placeValues();
  void numberOutputsAlike();

  LogicalResult lowerShardOp(Operation *op);
  LogicalResult lowerTransfer(Operation *op);
  bool onStage(Operation *op) const {
    auto attr = op->getAttrOfType<IntegerAttr>("llmc.stage");
    return stage < 0 || !attr || attr.getInt() == stage;
  }
  void addCollective(Operation *op, rt::CollectiveKind kind,
                     shard::ReductionKind reduction, ArrayRef<int64_t> axes);
  FailureOr<rt::TensorSharding> shardingAttr(DictionaryAttr attrs,
                                             int64_t rank, Location loc);

  func::FuncOp function;
  rt::Executable &exe;
  const Mesh &mesh;
  int rankIndex;
  /// This rank's pipeline stage, or -1 (every op runs on every rank).
  int64_t stage = -1;
  rt::RankProgram &rank;
  llvm::DenseMap<Value, int32_t> slots;
  int64_t shiftTags = 0;
  std::vector<rt::OutputInfo> outputs;
  /// The buffer plan, made on the first matmul_epilogue region (the
  /// overlap check of lowerMatmulEpilogue); placeValues plans on its own.
  std::unique_ptr<BufferPlan> plan;
  /// Weight-gradient regions and the bias gradient their GEMM writes.
  llvm::DenseMap<Operation *, ReduceSumOp> biasGradientOf;
};

} // namespace llmc::codegen

#endif // LLMC_CODEGEN_LOWERING_H
