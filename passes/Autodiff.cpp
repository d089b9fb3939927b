//===- Autodiff.cpp - build @train_step from @loss by reverse mode --------===//
//
// Step 3 of the compile pipeline (docs/passes.md): copies @loss into
// @train_step and appends the backward program, asking each op's
// DifferentiableOpInterface for its vector-Jacobian product (the rules of
// the primitives are in ir/VjpPrimitives.cpp). With microbatches = M it
// copies the forward and backward program M times, one per microbatch, and
// averages (gradient accumulation). See docs/autodiff.md.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
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

/// Records every op the pass creates, so that the ones whose results end up
/// unused (a rule computes all operand gradients, some of which flow into
/// inputs) can be erased: gradients nobody uses are not computed.
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
  LogicalResult buildStep(func::FuncOp loss, func::FuncOp step);
};

std::string argumentName(func::FuncOp function, unsigned index) {
  auto name = function.getArgAttrOfType<StringAttr>(index, "llmc.name");
  // The same fallback as codegen uses for unnamed arguments.
  return name ? name.getValue().str() : "arg" + std::to_string(index);
}

bool hasRole(func::FuncOp function, unsigned index, StringRef wanted) {
  auto role = function.getArgAttrOfType<StringAttr>(index, "llmc.role");
  return role && role.getValue() == wanted;
}

/// Appends the backward program of `ops` (a forward program, in order,
/// ending in `loss`) at `b`'s insertion point, seeding d(loss) = `seed`
/// (times `scale`, the loss scale of fp16 training, when given), and
/// sets `grads` to the gradient of each of `params` (null where the loss
/// does not depend on it). Every op the rules build is added to `created`.
LogicalResult backward(OpBuilder &b, ArrayRef<Operation *> ops, Value loss,
                       double seed, Value scale, ArrayRef<Value> params,
                       SmallVector<Value> &grads) {
  // 1. Active values: float values that depend on a parameter and that the
  // loss depends on. Only these get cotangents.
  DenseSet<Value> fromParam(params.begin(), params.end());
  for (Operation *op : ops)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return fromParam.contains(v); }))
      for (Value result : op->getResults())
        if (isFloatTensor(result))
          fromParam.insert(result);
  DenseSet<Value> toLoss = {loss};
  SmallVector<Operation *> activeOps;
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getResults(), [&](Value v) {
          return toLoss.contains(v) && fromParam.contains(v);
        }))
      continue;
    activeOps.push_back(op);
    for (Value operand : op->getOperands())
      toLoss.insert(operand);
  }
  auto isActive = [&](Value v) {
    return fromParam.contains(v) && toLoss.contains(v) && isFloatTensor(v);
  };

  // 2. Every op on a path needs a rule; report all that lack one.
  bool missing = false;
  for (Operation *op : activeOps)
    if (!isa<llmc::DifferentiableOpInterface>(op)) {
      op->emitError() << "no derivative rule for '" << op->getName() << "'";
      missing = true;
    }
  if (missing)
    return failure();

  // 3. Reverse sweep from the seed.
  DenseMap<Value, Value> cotangents;
  if (isActive(loss)) {
    auto type = cast<RankedTensorType>(loss.getType());
    auto attr = DenseElementsAttr::get(
        type, b.getFloatAttr(type.getElementType(), seed));
    Value seedValue = llmc::ConstantOp::create(b, loss.getLoc(), type,
                                               cast<ElementsAttr>(attr));
    if (scale) {
      if (scale.getType() != type)
        scale = llmc::CastOp::create(b, loss.getLoc(), type, scale);
      seedValue = llmc::MulOp::create(b, loss.getLoc(), seedValue, scale);
    }
    cotangents[loss] = seedValue;
  }
  for (Operation *op : activeOps) {
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(cotangents.lookup(result));
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
      Value &sum = cotangents[operand];
      sum = sum ? llmc::AddOp::create(b, op->getLoc(), sum, grad).getResult()
                : grad;
    }
  }
  grads.clear();
  for (Value param : params)
    grads.push_back(cotangents.lookup(param));
  return success();
}

/// Fills the empty function `step` (the signature of @loss with inputs M
/// times as large) with M copies of the forward program of @loss, each on its
/// microbatch and each followed by its backward program, and returns the mean
/// loss and the mean gradients. Copy i's activations are dead once its
/// backward has run, so a liveness-based buffer plan reuses them for copy i+1.
LogicalResult AutodiffPass::buildStep(func::FuncOp loss, func::FuncOp step) {
  Block &source = loss.getBody().front();
  auto ret = cast<func::ReturnOp>(source.getTerminator());
  Block *entry = step.addEntryBlock();
  for (auto [from, to] :
       llvm::zip(source.getArguments(), entry->getArguments()))
    to.setLoc(from.getLoc());
  CreatedOps created;
  // The copies of @loss (and the slices feeding them) stay forward; the
  // rest of what this builds is the backward program.
  llvm::DenseSet<Operation *> forwardOps;
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  b.setListener(&created);

  SmallVector<Value> params;
  for (BlockArgument arg : entry->getArguments())
    if (hasRole(step, arg.getArgNumber(), "parameter") && isFloatTensor(arg))
      params.push_back(arg);

  // fp16 loss scaling: the last argument is loss_scale.scale.
  Value scale = lossScale > 0 ? entry->getArguments().back() : Value();
  int64_t count = microbatches;
  Value lossSum;
  SmallVector<Value> gradSums(params.size());
  for (int64_t i = 0; i < count; ++i) {
    IRMapping mapping;
    for (auto [from, to] :
         llvm::zip(source.getArguments(), entry->getArguments())) {
      if (count == 1 || !hasRole(loss, from.getArgNumber(), "input")) {
        mapping.map(from, to);
        continue;
      }
      // Microbatch i of an input: rows [i*b, (i+1)*b) of dimension 0.
      auto type = cast<RankedTensorType>(from.getType());
      SmallVector<int64_t> starts(type.getRank(), 0);
      SmallVector<int64_t> limits(type.getShape());
      starts[0] = i * type.getDimSize(0);
      limits[0] = starts[0] + type.getDimSize(0);
      Value slice = llmc::SliceOp::create(b, from.getLoc(), type, to, starts,
                                          limits, DenseI64ArrayAttr());
      // The slice says which microbatch it is (llmc.microbatch), so that a
      // pipeline schedule (llmc-split-pipeline) can tell the microbatches
      // apart by what reads them. Only the slices: ops that read no input
      // (a weight's cast) stay untagged, and CSE still merges their copies.
      slice.getDefiningOp()->setAttr("llmc.microbatch", b.getI64IntegerAttr(i));
      forwardOps.insert(slice.getDefiningOp());
      mapping.map(from, slice);
    }
    SmallVector<Operation *> forward;
    for (Operation &op : source.without_terminator())
      forward.push_back(b.clone(op, mapping));
    forwardOps.insert(forward.begin(), forward.end());
    Value microLoss = mapping.lookup(ret.getOperand(0));
    SmallVector<Value> grads;
    // The mean over microbatches: each backward is seeded with 1/M.
    if (failed(backward(b, forward, microLoss, 1.0 / count, scale, params,
                        grads)))
      return failure();
    if (lossSum) {
      lossSum = llmc::AddOp::create(b, ret.getLoc(), lossSum, microLoss);
      forwardOps.insert(lossSum.getDefiningOp());
    } else {
      lossSum = microLoss;
    }
    for (auto [sum, grad] : llvm::zip(gradSums, grads))
      if (grad)
        sum = sum ? llmc::AddOp::create(b, grad.getLoc(), sum, grad).getResult()
                  : grad;
  }

  // Return the mean loss and one gradient per parameter (zeros for one the
  // loss does not depend on), named for codegen's output table.
  b.setListener(nullptr);
  Value meanLoss = lossSum;
  if (count > 1) {
    auto type = cast<RankedTensorType>(lossSum.getType());
    auto attr = DenseElementsAttr::get(
        type, b.getFloatAttr(type.getElementType(), 1.0 / count));
    Value scale = llmc::ConstantOp::create(b, ret.getLoc(), type,
                                           cast<ElementsAttr>(attr));
    meanLoss = llmc::MulOp::create(b, ret.getLoc(), lossSum, scale);
  }
  SmallVector<Value> results = {meanLoss};
  for (auto [param, grad] : llvm::zip(params, gradSums))
    results.push_back(grad ? grad
                           : zerosOf(b, param.getLoc(), param.getType()));
  func::ReturnOp::create(b, ret.getLoc(), results);
  step.setFunctionType(FunctionType::get(step.getContext(),
                                         step.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  MLIRContext *context = step.getContext();
  auto nameAttr = [&](const std::string &name) {
    return DictionaryAttr::get(
        context, {NamedAttribute(StringAttr::get(context, "llmc.name"),
                                 StringAttr::get(context, name))});
  };
  SmallVector<Attribute> resultAttrs = {nameAttr("loss")};
  for (Value param : params)
    resultAttrs.push_back(nameAttr(
        "grad." + argumentName(step, cast<BlockArgument>(param).getArgNumber())));
  step.setAllResultAttrs(resultAttrs);

  // Erase what the rules built but nothing uses (gradients of inputs), and
  // tag the rest of the backward program (ir/Phase.h).
  for (Operation *op : llvm::reverse(created.ops)) {
    if (op->use_empty() && isPure(op)) {
      op->erase();
      continue;
    }
    if (!forwardOps.contains(op))
      op->setLoc(llmc::withPhase(op->getLoc(), llmc::Phase::Backward));
  }
  // And the forward ops a rule replaced (attention, rebuilt with its
  // log-sum-exp result), users before what they use.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (forwardOps.contains(&op) && op.use_empty() && isPure(&op))
      op.erase();
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
  if (microbatches < 1) {
    loss.emitError() << "expected microbatches >= 1, got "
                     << static_cast<int64_t>(microbatches);
    return signalPassFailure();
  }

  // The step takes every input M times as large (M microbatches stacked
  // along dimension 0); the other arguments as they are.
  SmallVector<Type> inputs;
  for (auto [index, argType] : llvm::enumerate(type.getInputs())) {
    if (microbatches == 1 || !hasRole(loss, index, "input")) {
      inputs.push_back(argType);
      continue;
    }
    auto tensor = cast<RankedTensorType>(argType);
    if (tensor.getRank() == 0) {
      loss.emitError() << "cannot split input '" << argumentName(loss, index)
                       << "' into " << static_cast<int64_t>(microbatches)
                       << " microbatches: it has rank 0; inputs are split "
                          "along dimension 0";
      return signalPassFailure();
    }
    SmallVector<int64_t> shape(tensor.getShape());
    shape[0] *= microbatches;
    inputs.push_back(tensor.clone(shape));
  }
  MLIRContext *context = module.getContext();
  OpBuilder builder(context);
  SmallVector<Attribute> argAttrs;
  if (ArrayAttr attrs = loss.getAllArgAttrs())
    llvm::append_range(argAttrs, attrs);
  else
    argAttrs.assign(inputs.size(), DictionaryAttr::get(context));
  if (lossScale > 0) {
    // Dynamic loss scaling: the scale is optimizer state (the optimizer
    // updates it), starting at `loss-scale`.
    inputs.push_back(RankedTensorType::get({}, builder.getF32Type()));
    NamedAttribute init[] = {
        builder.getNamedAttr("kind", builder.getStringAttr("constant")),
        builder.getNamedAttr("value", builder.getF64FloatAttr(lossScale))};
    NamedAttribute attrs[] = {
        builder.getNamedAttr("llmc.name",
                             builder.getStringAttr("loss_scale.scale")),
        builder.getNamedAttr("llmc.role",
                             builder.getStringAttr("optimizer_state")),
        builder.getNamedAttr("llmc.init", builder.getDictionaryAttr(init))};
    argAttrs.push_back(builder.getDictionaryAttr(attrs));
  }
  builder.setInsertionPointAfter(loss);
  auto step = func::FuncOp::create(builder, loss.getLoc(), result,
                                   builder.getFunctionType(inputs, {}));
  step.setAllArgAttrs(argAttrs);
  if (failed(buildStep(loss, step))) {
    step.erase();
    return signalPassFailure();
  }
}

} // namespace
