//===- Autodiff.cpp - build @train_step from @loss by reverse mode --------===//
//
// The first step of the training pipeline (DESIGN.md): copies @loss into
// @train_step and appends the backward program, asking each op's
// DifferentiableOpInterface for its vector-Jacobian product (the rules of
// the primitives are in ir/VjpPrimitives.cpp). See docs/autodiff.md.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace llmc {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace {

bool isFloatTensor(Value value) {
  return isa<FloatType>(getElementTypeOrSelf(value.getType()));
}

Value zerosOf(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  auto attr = DenseElementsAttr::get(
      tensor, b.getFloatAttr(tensor.getElementType(), 0.0));
  return llmc::ConstantOp::create(b, loc, tensor, cast<ElementsAttr>(attr));
}

/// Records every op a VJP rule creates, so that the ones whose results end
/// up unused (a rule computes all operand gradients, some of which flow
/// into inputs) can be erased: gradients nobody uses are not computed.
struct CreatedOps : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  SmallVector<Operation *> ops;
};

struct AutodiffPass : public llmc::impl::AutodiffPassBase<AutodiffPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult differentiate(func::FuncOp step);
};

/// Builds the backward program at the end of `step` (a copy of @loss) and
/// makes it return the loss and the parameter gradients.
LogicalResult AutodiffPass::differentiate(func::FuncOp step) {
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  // 1. Parameters: float arguments with llmc.role = "parameter".
  SmallVector<BlockArgument> params;
  for (BlockArgument arg : body.getArguments()) {
    auto role =
        step.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "llmc.role");
    if (role && role.getValue() == "parameter" && isFloatTensor(arg))
      params.push_back(arg);
  }

  // 2. Active values: float values that depend on a parameter and that the
  // loss depends on. Only these get cotangents.
  DenseSet<Value> fromParam(params.begin(), params.end());
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return fromParam.contains(v); }))
      for (Value result : op.getResults())
        if (isFloatTensor(result))
          fromParam.insert(result);
  DenseSet<Value> toLoss = {loss};
  SmallVector<Operation *> activeOps;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!llvm::any_of(op.getResults(), [&](Value v) {
          return toLoss.contains(v) && fromParam.contains(v);
        }))
      continue;
    activeOps.push_back(&op);
    for (Value operand : op.getOperands())
      toLoss.insert(operand);
  }
  auto isActive = [&](Value v) {
    return fromParam.contains(v) && toLoss.contains(v) && isFloatTensor(v);
  };

  // 3. Every op on a path needs a rule; report all that lack one.
  bool missing = false;
  for (Operation *op : activeOps)
    if (!isa<llmc::DifferentiableOpInterface>(op)) {
      op->emitError() << "no derivative rule for '" << op->getName()
                      << "' yet (issue #5)";
      missing = true;
    }
  if (missing)
    return failure();

  // 4. Reverse sweep, seeding d(loss) = 1.
  CreatedOps created;
  OpBuilder b(ret);
  b.setListener(&created);
  DenseMap<Value, Value> grads;
  if (isActive(loss)) {
    auto type = cast<RankedTensorType>(loss.getType());
    auto one = DenseElementsAttr::get(
        type, b.getFloatAttr(type.getElementType(), 1.0));
    grads[loss] = llmc::ConstantOp::create(b, ret.getLoc(), type,
                                           cast<ElementsAttr>(one));
  }
  for (Operation *op : activeOps) {
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(grads.lookup(result));
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    auto rule = cast<llmc::DifferentiableOpInterface>(op);
    SmallVector<Value> operandGrads;
    if (failed(rule.buildVjp(b, resultGrads, operandGrads)))
      return failure();
    if (operandGrads.size() != op->getNumOperands())
      return op->emitError()
             << "derivative rule returned " << operandGrads.size()
             << " operand gradients, expected " << op->getNumOperands();
    for (auto [index, operand, grad] :
         llvm::enumerate(op->getOperands(), operandGrads)) {
      if (!grad || !isActive(operand) || !rule.isDifferentiableOperand(index))
        continue;
      if (grad.getType() != operand.getType())
        return op->emitError()
               << "derivative rule produced " << grad.getType()
               << " for operand " << index << " of type " << operand.getType();
      Value &sum = grads[operand];
      sum = sum ? llmc::AddOp::create(b, op->getLoc(), sum, grad).getResult()
                : grad;
    }
  }

  // 5. Return the loss and one gradient per parameter (zeros for one the
  // loss does not depend on).
  b.setListener(nullptr);
  SmallVector<Value> results = {loss};
  for (BlockArgument param : params) {
    Value grad = grads.lookup(param);
    results.push_back(grad ? grad
                           : zerosOf(b, param.getLoc(), param.getType()));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  step.setFunctionType(FunctionType::get(step.getContext(),
                                         step.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  step.removeResAttrsAttr();

  // 6. Erase what the rules built but nothing uses (gradients of inputs).
  for (Operation *op : llvm::reverse(created.ops))
    if (op->use_empty() && isPure(op))
      op->erase();
  return success();
}

void AutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto loss = module.lookupSymbol<func::FuncOp>(function);
  if (!loss) {
    module.emitError() << "expected a function @" << function
                       << " to differentiate, found none";
    return signalPassFailure();
  }
  if (module.lookupSymbol(result)) {
    loss.emitError() << "cannot build @" << result
                     << ": the module already has a symbol of that name";
    return signalPassFailure();
  }
  if (!llvm::hasSingleElement(loss.getBody())) {
    loss.emitError() << "expected @" << function << " to have one block, found "
                     << loss.getBody().getBlocks().size();
    return signalPassFailure();
  }
  FunctionType type = loss.getFunctionType();
  auto lossType = type.getNumResults() == 1
                      ? dyn_cast<RankedTensorType>(type.getResult(0))
                      : RankedTensorType();
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType())) {
    loss.emitError() << "expected @" << function
                     << " to return one rank-0 float tensor, found "
                     << type.getResults();
    return signalPassFailure();
  }

  func::FuncOp step = loss.clone();
  step.setSymName(result);
  module.getBody()->getOperations().insertAfter(loss->getIterator(), step);
  if (failed(differentiate(step))) {
    step.erase();
    return signalPassFailure();
  }
}

} // namespace
