//===- AssignPrecision.cpp - low-precision compute with f32 master weights -===//
//
// Runs on the forward program @loss before --llmc-autodiff (docs/precision.md
// says why it runs before autodiff, not after the optimizer): every f32 parameter and
// float input is cast once to the policy's type (bf16 or f16) and the ops
// that consume it compute in that type; norms keep their f32 gamma/beta,
// reductions accumulate into f32 results, and the loss stays f32. Autodiff
// then differentiates through the casts, so the backward runs in the low
// type and every parameter gradient arrives in f32 for the optimizer.
// Policy fp8 is bf16 plus the linear layers' matmuls as llmc.fp8_matmul
// (useFp8ForLinearLayers; docs/precision.md, "FP8").
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"

namespace llmc {
#define GEN_PASS_DEF_ASSIGNPRECISIONPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace {

struct AssignPrecisionPass
    : public llmc::impl::AssignPrecisionPassBase<AssignPrecisionPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult assign(func::FuncOp function, FloatType low);
  void useFp8ForLinearLayers(func::FuncOp function);
};

bool isF32Tensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

bool isFloatTensor(Value value) {
  return isa<FloatType>(getElementTypeOrSelf(value.getType()));
}

/// Operands that keep their f32 value although the op computes in the low
/// type: the affine weights of the norms (the kernels accumulate in f32 or
/// wider and read gamma/beta as they are; the verifier allows any float
/// type there), so norm weights are never rounded.
bool keepsF32Operand(Operation *op, unsigned index) {
  if (isa<llmc::LayerNormOp, llmc::RmsNormOp>(op))
    return index >= 1;
  return false;
}

/// Results that stay f32 when the op's inputs are low: the loss (f32 by
/// definition of cross_entropy) and sums/means (accumulated in f32, which
/// their verifiers allow as a widening result).
bool keepsF32Result(Operation *op) {
  return isa<llmc::CrossEntropyOp, llmc::ReduceSumOp, llmc::ReduceMeanOp,
             llmc::LrScheduleOp>(op);
}

/// One pass over @loss in program order. A value is "lowered" when this pass
/// made it low (a cast of a parameter or input, or the result of an op it
/// converted); an op with a lowered float operand computes in the low type.
/// Ops that only see values the pass did not touch (integer work, a module
/// already in bf16, the f32 tail after the loss) are left as they are.
LogicalResult AssignPrecisionPass::assign(func::FuncOp function,
                                          FloatType low) {
  Block &body = function.getBody().front();
  DenseSet<Value> lowered;
  // f32 value -> its single low copy, shared by all users (tied weights get
  // one cast).
  DenseMap<Value, Value> lowCopy;
  OpBuilder b(function.getContext());
  // Casts of arguments go first in the body, in argument order.
  Operation *lastArgCast = nullptr;

  auto lowTypeOf = [&](Type type) {
    return cast<RankedTensorType>(type).clone(low);
  };
  // The low copy of an f32 value: a splat constant is rebuilt in the low
  // type, anything else gets one llmc.cast right after its definition.
  auto lowOf = [&](Value value) -> Value {
    if (Value copy = lowCopy.lookup(value))
      return copy;
    OpBuilder::InsertionGuard guard(b);
    bool isArgument = isa<BlockArgument>(value);
    if (isArgument && lastArgCast)
      b.setInsertionPointAfter(lastArgCast);
    else if (isArgument)
      b.setInsertionPointToStart(&body);
    else
      b.setInsertionPointAfter(value.getDefiningOp());
    Value copy;
    auto constant = value.getDefiningOp<llmc::ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                          : DenseElementsAttr();
    if (dense && dense.isSplat()) {
      auto type = lowTypeOf(value.getType());
      double v = dense.getSplatValue<APFloat>().convertToDouble();
      auto attr = DenseElementsAttr::get(type, b.getFloatAttr(low, v));
      copy = llmc::ConstantOp::create(b, value.getLoc(), type,
                                      cast<ElementsAttr>(attr));
    } else {
      copy = llmc::CastOp::create(b, value.getLoc(), lowTypeOf(value.getType()),
                                  value);
    }
    if (isArgument)
      lastArgCast = copy.getDefiningOp();
    lowCopy[value] = copy;
    lowered.insert(copy);
    return copy;
  };

  // 1. Sources: f32 parameters and float inputs are low where an op that
  // computes in the low type reads them.
  DenseSet<Value> sources;
  for (BlockArgument arg : body.getArguments())
    if (isF32Tensor(arg))
      sources.insert(arg);

  // 2. Ops in order.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  bool failed = false;
  for (Operation *op : ops) {
    if (op->getDialect() != function->getContext()
                                ->getLoadedDialect<llmc::LlmcDialect>())
      continue;
    // An explicit cast of the model stays as written (its operand is the
    // original value): the model chose that type.
    if (isa<llmc::CastOp>(op))
      continue;
    bool reads = false, other = false;
    for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
      if (!isFloatTensor(operand) || keepsF32Operand(op, index))
        continue;
      if (lowered.contains(operand) || sources.contains(operand))
        reads = true;
      else if (!isF32Tensor(operand) &&
               getElementTypeOrSelf(operand.getType()) != low)
        other = true; // f64 or another narrow type: not ours to change
    }
    if (!reads || other)
      continue;
    // 3. Compute in the low type: every float operand low (except the norm
    // weights), float results low (except the f32-accumulating ones).
    for (auto [index, operand] : llvm::enumerate(op->getOperands()))
      if (isF32Tensor(operand) && !keepsF32Operand(op, index))
        op->setOperand(index, lowOf(operand));
    if (!keepsF32Result(op))
      for (Value result : op->getResults())
        if (isF32Tensor(result)) {
          result.setType(lowTypeOf(result.getType()));
          lowered.insert(result);
        }
    if (mlir::failed(mlir::verify(op))) {
      op->emitError() << "cannot compute this op in " << low;
      failed = true;
    }
  }

  // 4. f32 constants that were only read as low copies are gone.
  for (auto [value, copy] : lowCopy)
    if (auto constant = value.getDefiningOp<llmc::ConstantOp>())
      if (constant->use_empty())
        constant->erase();

  // 5. A low value returned where the signature says f32 goes back through
  // one cast (the loss of cross_entropy is already f32).
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
    Type expected = function.getFunctionType().getResult(index);
    if (operand.getType() != expected)
      ret.setOperand(index, llmc::CastOp::create(b, operand.getLoc(), expected,
                                                 operand));
  }
  return mlir::failure(failed);
}

/// Whether `value` reaches a cross_entropy through shape ops only: the
/// logits of the LM head.
bool feedsTheLoss(Value value) {
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<llmc::CrossEntropyOp>(user))
        return true;
      if (isa<llmc::ReshapeOp, llmc::TransposeOp, llmc::CastOp>(user))
        work.push_back(user->getResult(0));
    }
  }
  return false;
}

/// A linear layer's matmul that FP8 can take: an untransposed bf16
/// activation times a rank-2 parameter (its bf16 cast), not the LM head,
/// with M (all rows), K and N multiples of 16 (cuBLASLt's FP8 GEMMs want
/// 16-byte leading dimensions for every operand of the forward and both
/// backward products).
bool isFp8Linear(func::FuncOp function, llmc::MatmulOp matmul) {
  auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
  if (matmul.getTransposeA() || rhs.getRank() != 2 ||
      !lhs.getElementType().isBF16() ||
      matmul.getType().getElementType() != lhs.getElementType())
    return false;
  auto lowCast = matmul.getRhs().getDefiningOp<llmc::CastOp>();
  auto weight =
      lowCast ? dyn_cast<BlockArgument>(lowCast.getInput()) : BlockArgument();
  auto role = weight ? function.getArgAttrOfType<StringAttr>(
                           weight.getArgNumber(), "llmc.role")
                     : StringAttr();
  if (!role || role.getValue() != "parameter" || feedsTheLoss(matmul))
    return false;
  int64_t k = lhs.getShape().back();
  int64_t rows = lhs.getNumElements() / k;
  int64_t n = matmul.getType().getShape().back();
  return rows % 16 == 0 && k % 16 == 0 && n % 16 == 0;
}

void AssignPrecisionPass::useFp8ForLinearLayers(func::FuncOp function) {
  SmallVector<llmc::MatmulOp> matmuls;
  function.walk([&](llmc::MatmulOp op) {
    if (isFp8Linear(function, op))
      matmuls.push_back(op);
  });
  for (llmc::MatmulOp op : matmuls) {
    OpBuilder b(op);
    auto fp8 = llmc::Fp8MatmulOp::create(b, op.getLoc(), op.getType(),
                                         op.getLhs(), op.getRhs(),
                                         op.getTransposeB());
    op.replaceAllUsesWith(fp8.getResult());
    op.erase();
  }
}

void AssignPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  FloatType low;
  if (policy == "fp32")
    return; // the module stays as it is
  if (policy == "bf16" || policy == "fp8")
    low = BFloat16Type::get(context);
  else if (policy == "fp16")
    low = Float16Type::get(context);
  else {
    module.emitError() << "unknown precision policy '" << policy
                       << "'; expected fp32, bf16, fp16 or fp8";
    return signalPassFailure();
  }
  auto loss = module.lookupSymbol<func::FuncOp>(function);
  if (!loss) {
    module.emitError() << "expected a function @" << function
                       << " to assign precision to, found none";
    return signalPassFailure();
  }
  if (!llvm::hasSingleElement(loss.getBody())) {
    loss.emitError() << "expected @" << function << " to have one block, found "
                     << loss.getBody().getBlocks().size();
    return signalPassFailure();
  }
  if (failed(assign(loss, low)))
    return signalPassFailure();
  if (policy == "fp8")
    useFp8ForLinearLayers(loss);
  // The decision, visible in every later dump.
  loss->setAttr("llmc.precision", StringAttr::get(context, policy));
}

} // namespace
