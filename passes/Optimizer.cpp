//===- Optimizer.cpp - append AdamW and gradient clipping to @train_step --===//
//
// Step 3 of the compile pipeline (docs/passes.md), after autodiff:
// rewrites @train_step(params..., inputs...) -> (loss, grads...) in place so
// that it takes the AdamW state and the step count, and returns the loss,
// the gradient norm, the learning rate of the step (from llmc.lr_schedule),
// the new parameters and the new state.
// See docs/optimizer.md.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <cmath>
#include <optional>

namespace llmc {
#define GEN_PASS_DEF_OPTIMIZERPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kFunction = "train_step";
/// The state of dynamic loss scaling (fp16): the scale, added by
/// --llmc-autodiff loss-scale=S, and the count of finite steps since the
/// last change of the scale, added here.
constexpr llvm::StringLiteral kLossScale = "loss_scale.scale";
constexpr llvm::StringLiteral kGoodSteps = "loss_scale.good_steps";
/// The largest finite f32, rounded down: |norm| <= this is false for inf and
/// NaN, so the comparison is the finiteness test of the step.
constexpr double kFiniteLimit = 3.4e38;
/// Added to the norm before dividing, so that an all-zero gradient gives a
/// finite clip factor (min(1, c / 1e-6) = 1).
constexpr double kNormEpsilon = 1e-6;

/// Substrings of the names of embedding tables, which get no weight decay.
constexpr llvm::StringLiteral kEmbeddingNames[] = {"wte", "wpe",
                                                   "embed_tokens"};

/// Builds the update with scalars of type tensor<f32> and f32 tensors of the
/// parameters' shapes. Binary ops need equal types, so scalars are broadcast
/// (a rank-0 operand with no dims names no result dimension: all are new).
struct Builder {
  OpBuilder &b;
  Location loc;

  Value scalar(double value) { return splat(scalarType(), value); }
  RankedTensorType scalarType() {
    return RankedTensorType::get({}, b.getF32Type());
  }
  /// A constant of `type`, as a scalar constant broadcast to it: a splat
  /// constant of a parameter's shape would be stored (and live) for the
  /// whole program, one per coefficient and parameter.
  Value splatOf(RankedTensorType type, double value) {
    Value one = scalar(value);
    return broadcast(one, type);
  }
  Value splat(RankedTensorType type, double value) {
    auto attr =
        DenseElementsAttr::get(type, b.getFloatAttr(b.getF32Type(), value));
    return llmc::ConstantOp::create(b, loc, type, cast<ElementsAttr>(attr));
  }
  Value broadcast(Value scalar, RankedTensorType type) {
    if (type.getRank() == 0)
      return scalar;
    return llmc::BroadcastOp::create(b, loc, type, scalar, ArrayRef<int64_t>{});
  }
  Value add(Value x, Value y) { return llmc::AddOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return llmc::SubOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return llmc::MulOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return llmc::DivOp::create(b, loc, x, y); }
  Value compare(llmc::CompareDirection direction, Value x, Value y) {
    auto type = cast<RankedTensorType>(x.getType()).clone(b.getI1Type());
    return llmc::CompareOp::create(b, loc, type, direction, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return llmc::SelectOp::create(b, loc, x.getType(), cond, x, y);
  }
  /// sum(x * x) over every dimension, as a rank-0 tensor.
  Value sumOfSquares(Value x) {
    Value squares = mul(x, x);
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getRank() == 0)
      return squares;
    auto all = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    return llmc::ReduceSumOp::create(b, loc, scalarType(), squares, all,
                                     /*keep_dims=*/false);
  }
  /// 1 - beta^t, with beta^t = exp(t·log(beta)) and log(beta) a constant.
  Value biasCorrection(double beta, Value t) {
    Value logBeta = scalar(std::log(beta));
    Value power = llmc::ExpOp::create(b, loc, mul(t, logBeta));
    Value one = scalar(1.0);
    return sub(one, power);
  }
};

/// What the steps of the rewrite build, in order (the numbers below).
struct Update {
  func::FuncOp step;
  Block *body = nullptr;
  func::ReturnOp ret;
  // 1. The parameters and the loss scale (loss scaling only).
  SmallVector<BlockArgument> params;
  BlockArgument lossScale;
  // 2. The first new argument (m of the first parameter), the step count,
  // and the count of finite steps (loss scaling only).
  unsigned end = 0;
  Value t, goodSteps;
  // 3. The unscaled gradients, the norm, whether the step is finite (loss
  // scaling), the clip factor (clipping), the rate, the bias corrections.
  SmallVector<Value> grads;
  Value norm, finite, clip, lr, correction1, correction2;
  // 4. The results.
  SmallVector<Value> newParams, newState;
};

struct OptimizerPass : public llmc::impl::OptimizerPassBase<OptimizerPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  bool decays(func::FuncOp step, BlockArgument param) const;
  LogicalResult collectParameters(Update &u);
  LogicalResult addStateArguments(Update &u);
  LogicalResult checkSchedule(func::FuncOp step);
  void buildNormAndRate(Update &u, OpBuilder &ob);
  void updateParameter(Update &u, OpBuilder &ob, size_t i);
  void replaceReturn(Update &u, OpBuilder &ob);
};

std::string nameOf(func::FuncOp step, unsigned index) {
  auto name = step.getArgAttrOfType<StringAttr>(index, "llmc.name");
  // The same fallback as codegen uses for unnamed arguments.
  return name ? name.getValue().str() : "arg" + std::to_string(index);
}

bool OptimizerPass::decays(func::FuncOp step, BlockArgument param) const {
  if (decayAll)
    return true;
  // Biases and norm weights (rank < 2) and embedding tables are not decayed:
  // decaying them pulls the model toward zero without regularizing it.
  if (cast<RankedTensorType>(param.getType()).getRank() < 2)
    return false;
  std::string name = nameOf(step, param.getArgNumber());
  return llvm::none_of(kEmbeddingNames, [&](llvm::StringLiteral embedding) {
    return StringRef(name).contains(embedding);
  });
}

/// Tags every op built through it as the update (ir/Phase.h).
struct Tagger : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    op->setLoc(llmc::withPhase(op->getLoc(), llmc::Phase::Optimizer));
  }
};

void OptimizerPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto step = module.lookupSymbol<func::FuncOp>(kFunction);
  if (!step) {
    module.emitError() << "expected a function @" << kFunction
                       << " to add the optimizer to, found none; run "
                          "--llmc-autodiff first";
    return signalPassFailure();
  }
  if (!llvm::hasSingleElement(step.getBody())) {
    step.emitError() << "expected @" << kFunction
                     << " to have one block, found "
                     << step.getBody().getBlocks().size();
    return signalPassFailure();
  }
  Update u;
  u.step = step;
  u.body = &step.getBody().front();
  if (failed(collectParameters(u)) || failed(addStateArguments(u)) ||
      failed(checkSchedule(step)))
    return signalPassFailure();
  // 3. The global norm and the clip factor, before any update. Every op
  // built from here on is tagged as the update.
  Tagger tagger;
  OpBuilder ob(u.ret);
  ob.setListener(&tagger);
  buildNormAndRate(u, ob);
  // 4. AdamW per parameter.
  for (size_t i = 0; i < u.params.size(); ++i)
    updateParameter(u, ob, i);
  replaceReturn(u, ob);
}

/// 1. Parameters, as --llmc-autodiff found them; the signature must be the
/// one it builds: (loss, one gradient per parameter).
LogicalResult OptimizerPass::collectParameters(Update &u) {
  func::FuncOp step = u.step;
  Type f32 = Float32Type::get(&getContext());
  bool wrongType = false;
  for (BlockArgument arg : u.body->getArguments()) {
    auto role =
        step.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "llmc.role");
    if (lossScaling && role && role.getValue() == "optimizer_state" &&
        nameOf(step, arg.getArgNumber()) == kLossScale && !u.lossScale &&
        arg.getType() == RankedTensorType::get({}, f32)) {
      u.lossScale = arg;
      continue;
    }
    if (role && role.getValue() == "optimizer_state")
      return step.emitError()
             << "@" << kFunction << " already has optimizer state (argument #"
             << arg.getArgNumber() << "); run --llmc-optimizer once";
    if (!role || role.getValue() != "parameter" ||
        !isa<FloatType>(getElementTypeOrSelf(arg.getType())))
      continue;
    if (getElementTypeOrSelf(arg.getType()) != f32) {
      step.emitError() << "expected f32 parameters, got " << arg.getType()
                       << " for '" << nameOf(step, arg.getArgNumber())
                       << "'; low-precision parameters with f32 master "
                          "weights are issue #6";
      wrongType = true;
    }
    u.params.push_back(arg);
  }
  if (wrongType)
    return failure();
  if (lossScaling && !u.lossScale)
    return step.emitError()
           << "expected a tensor<f32> argument '" << kLossScale
           << "' (optimizer state) for loss-scaling; run "
              "--llmc-autodiff with loss-scale=S first";
  if (lossScaling && (growthInterval < 1 || !(backoffFactor > 0) ||
                      !(backoffFactor < 1) || !(growthFactor > 1)))
    return step.emitError()
           << "invalid loss scaling: growth-interval "
           << static_cast<int64_t>(growthInterval) << ", growth-factor "
           << growthFactor << ", backoff-factor " << backoffFactor
           << "; expected interval >= 1, growth > 1 and 0 < "
              "backoff < 1";
  u.ret = cast<func::ReturnOp>(u.body->getTerminator());
  func::ReturnOp ret = u.ret;
  auto lossType = ret.getNumOperands() > 0
                      ? dyn_cast<RankedTensorType>(ret.getOperand(0).getType())
                      : RankedTensorType();
  bool shaped = lossType && lossType.getRank() == 0 &&
                ret.getNumOperands() == u.params.size() + 1;
  for (auto [param, grad] :
       llvm::zip(u.params, ret.getOperands().drop_front(shaped ? 1 : 0)))
    shaped = shaped && grad.getType() == param.getType();
  if (!shaped)
    return step.emitError() << "expected @" << kFunction
                            << " to return a rank-0 loss and one gradient "
                               "per parameter ("
                            << u.params.size() << "), found "
                            << step.getFunctionType().getResults();
  return success();
}

/// 2. New arguments: m and v per parameter, then the step (and the count of
/// finite steps of loss scaling).
LogicalResult OptimizerPass::addStateArguments(Update &u) {
  MLIRContext *context = &getContext();
  func::FuncOp step = u.step;
  unsigned end = step.getNumArguments();
  u.end = end;
  SmallVector<unsigned> indices;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  auto append = [&](Type type, const std::string &name, StringRef role,
                    Location loc, Attribute tpSplit = {},
                    Attribute epSplit = {}) {
    indices.push_back(end);
    types.push_back(type);
    SmallVector<NamedAttribute, 3> named = {
        NamedAttribute(StringAttr::get(context, "llmc.name"),
                       StringAttr::get(context, name)),
        NamedAttribute(StringAttr::get(context, "llmc.role"),
                       StringAttr::get(context, role))};
    if (tpSplit)
      named.push_back(
          NamedAttribute(StringAttr::get(context, "llmc.tp_split"), tpSplit));
    if (epSplit)
      named.push_back(
          NamedAttribute(StringAttr::get(context, "llmc.ep_split"), epSplit));
    attrs.push_back(DictionaryAttr::get(context, named));
    locs.push_back(loc);
  };
  // The state is interleaved (m, v per parameter) in the arguments and in
  // the results alike, so a training loop feeds results back in order. A
  // moment has its parameter's shape, so tensor parallelism splits it the
  // same way (llmc.tp_split), and expert parallelism (llmc.ep_split).
  for (BlockArgument param : u.params)
    for (const char *moment : {"m", "v"})
      append(param.getType(),
             std::string("optimizer.") + moment + "." +
                 nameOf(step, param.getArgNumber()),
             "optimizer_state", param.getLoc(),
             step.getArgAttr(param.getArgNumber(), "llmc.tp_split"),
             step.getArgAttr(param.getArgNumber(), "llmc.ep_split"));
  auto scalarType = RankedTensorType::get({}, Float32Type::get(context));
  append(scalarType, "optimizer.step", "input", step.getLoc());
  if (lossScaling)
    append(scalarType, kGoodSteps.str(), "optimizer_state", step.getLoc());
  if (failed(step.insertArguments(indices, types, attrs, locs)))
    return step.emitError() << "cannot add the optimizer arguments";
  u.t = u.body->getArgument(end + 2 * u.params.size());
  if (lossScaling)
    u.goodSteps = u.body->getArgument(end + 2 * u.params.size() + 1);
  return success();
}

LogicalResult OptimizerPass::checkSchedule(func::FuncOp step) {
  if (!llmc::symbolizeLrScheduleKind(schedule))
    return step.emitError() << "unknown learning-rate schedule '" << schedule
                            << "'; expected cosine, linear or constant";
  if (!(learningRate > 0) || minLearningRate < 0 ||
      minLearningRate > learningRate || totalSteps < 1 || warmupSteps < 0 ||
      warmupSteps >= totalSteps)
    return step.emitError()
           << "invalid learning-rate schedule: learning-rate " << learningRate
           << ", min-learning-rate " << minLearningRate << ", warmup-steps "
           << static_cast<int64_t>(warmupSteps) << ", total-steps "
           << static_cast<int64_t>(totalSteps)
           << "; expected 0 <= min <= rate, rate > 0 and 0 <= "
              "warmup < total";
  return success();
}

/// 3. The unscaled gradients, their global norm, the clip factor, whether
/// the step is finite, the learning rate and Adam's bias corrections.
void OptimizerPass::buildNormAndRate(Update &u, OpBuilder &ob) {
  Builder b{ob, u.ret.getLoc()};
  u.grads.assign(u.ret.getOperands().begin() + 1, u.ret.getOperands().end());
  // 3a. Loss scaling: the gradients are of scale·loss; unscale them first,
  // so that the norm, the clip and the update see the true gradients.
  if (lossScaling) {
    Value one = b.scalar(1.0);
    Value inverse = b.div(one, u.lossScale);
    for (Value &grad : u.grads) {
      Value wide = b.broadcast(inverse, cast<RankedTensorType>(grad.getType()));
      grad = b.mul(grad, wide);
    }
  }
  // Every op is built in its own statement: C++ leaves the order of
  // argument evaluation open, and the IR must not depend on the compiler.
  Value sumsq = b.scalar(0.0);
  for (Value grad : u.grads) {
    Value squares = b.sumOfSquares(grad);
    sumsq = b.add(sumsq, squares);
  }
  u.norm = llmc::SqrtOp::create(ob, b.loc, sumsq);
  // 3b. A step whose gradients hold inf or NaN (fp16 overflow) is skipped.
  if (lossScaling) {
    Value magnitude = llmc::AbsOp::create(ob, b.loc, u.norm);
    Value limit = b.scalar(kFiniteLimit);
    u.finite = b.compare(llmc::CompareDirection::le, magnitude, limit);
  }
  if (gradClip > 0) {
    Value maxNorm = b.scalar(gradClip);
    Value tiny = b.scalar(kNormEpsilon);
    Value ratio = b.div(maxNorm, b.add(u.norm, tiny));
    Value one = b.scalar(1.0);
    u.clip = llmc::MinOp::create(ob, b.loc, one, ratio);
  }
  u.lr = llmc::LrScheduleOp::create(
      ob, b.loc, u.t, *llmc::symbolizeLrScheduleKind(schedule), learningRate,
      minLearningRate, warmupSteps, totalSteps);
  u.correction1 = b.biasCorrection(beta1, u.t);
  u.correction2 = b.biasCorrection(beta2, u.t);
}

/// 4. AdamW on parameter i, in the parameter's location so that a dump
/// names the model part.
void OptimizerPass::updateParameter(Update &u, OpBuilder &ob, size_t i) {
  BlockArgument param = u.params[i];
  auto stateArg = [&](size_t index) {
    return u.body->getArgument(u.end + index);
  };
  Builder pb{ob, param.getLoc()};
  auto type = cast<RankedTensorType>(param.getType());
  Value g = u.grads[i];
  if (u.clip) {
    Value wideClip = pb.broadcast(u.clip, type);
    g = pb.mul(g, wideClip);
  }
  Value b1 = pb.splatOf(type, beta1);
  Value mOld = pb.mul(b1, stateArg(2 * i));
  Value a1 = pb.splatOf(type, 1.0 - beta1);
  Value m = pb.add(mOld, pb.mul(a1, g));
  Value b2 = pb.splatOf(type, beta2);
  Value vOld = pb.mul(b2, stateArg(2 * i + 1));
  Value a2 = pb.splatOf(type, 1.0 - beta2);
  Value gg = pb.mul(g, g);
  Value v = pb.add(vOld, pb.mul(a2, gg));
  Value mhat = pb.div(m, pb.broadcast(u.correction1, type));
  Value vhat = pb.div(v, pb.broadcast(u.correction2, type));
  Value root = llmc::SqrtOp::create(ob, pb.loc, vhat);
  Value eps = pb.splatOf(type, epsilon);
  Value update = pb.div(mhat, pb.add(root, eps));
  if (weightDecay != 0 && decays(u.step, param)) {
    Value wd = pb.splatOf(type, weightDecay);
    update = pb.add(update, pb.mul(wd, param));
  }
  Value rate = pb.broadcast(u.lr, type);
  Value newParam = pb.sub(param, pb.mul(rate, update));
  if (u.finite) {
    // Skipped step: the parameter and its moments stay as they were.
    Value keep = type.getRank() == 0
                     ? u.finite
                     : llmc::BroadcastOp::create(
                           ob, pb.loc, type.clone(ob.getI1Type()), u.finite,
                           ArrayRef<int64_t>{});
    newParam = pb.select(keep, newParam, param);
    m = pb.select(keep, m, stateArg(2 * i));
    v = pb.select(keep, v, stateArg(2 * i + 1));
  }
  u.newParams.push_back(newParam);
  u.newState.push_back(m);
  u.newState.push_back(v);
}

/// 5. Return loss, norm, rate, the parameters, the state (m, v per
/// parameter). A result is named like the argument it replaces, so that a
/// training loop feeds each output back into the argument of that name.
void OptimizerPass::replaceReturn(Update &u, OpBuilder &ob) {
  MLIRContext *context = &getContext();
  func::FuncOp step = u.step;
  Builder b{ob, u.ret.getLoc()};
  // 4a. The new loss scale: backoff after a skipped step; growth after
  // growth-interval finite steps in a row.
  if (lossScaling) {
    Value one = b.scalar(1.0);
    Value zero = b.scalar(0.0);
    Value counted = b.add(u.goodSteps, one);
    Value interval = b.scalar(static_cast<double>(growthInterval));
    Value grow = b.compare(llmc::CompareDirection::ge, counted, interval);
    Value grown = b.mul(u.lossScale, b.scalar(growthFactor));
    Value scaleIfFinite = b.select(grow, grown, u.lossScale);
    Value goodIfFinite = b.select(grow, zero, counted);
    Value backedOff = b.mul(u.lossScale, b.scalar(backoffFactor));
    u.newState.push_back(b.select(u.finite, scaleIfFinite, backedOff));
    u.newState.push_back(b.select(u.finite, goodIfFinite, zero));
  }
  SmallVector<Value> results = {u.ret.getOperand(0), u.norm, u.lr};
  llvm::append_range(results, u.newParams);
  llvm::append_range(results, u.newState);
  func::ReturnOp::create(ob, u.ret.getLoc(), results);
  u.ret.erase();
  step.setFunctionType(FunctionType::get(context, step.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  auto nameAttr = [&](const std::string &name) {
    return DictionaryAttr::get(
        context, {NamedAttribute(StringAttr::get(context, "llmc.name"),
                                 StringAttr::get(context, name))});
  };
  SmallVector<Attribute> resultAttrs = {nameAttr("loss"),
                                        nameAttr("grad_norm"), nameAttr("lr")};
  for (BlockArgument param : u.params)
    resultAttrs.push_back(nameAttr(nameOf(step, param.getArgNumber())));
  for (size_t i = 0; i < 2 * u.params.size(); ++i)
    resultAttrs.push_back(nameAttr(nameOf(step, u.end + i)));
  if (lossScaling) {
    resultAttrs.push_back(nameAttr(kLossScale.str()));
    resultAttrs.push_back(nameAttr(kGoodSteps.str()));
  }
  step.setAllResultAttrs(resultAttrs);
}

} // namespace
