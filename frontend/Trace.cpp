//===- Trace.cpp - the Tracer: scopes, arguments, constants, finish -------===//
//
// The op functions of Trace.h are in TraceOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/Trace.h"
#include "ir/LlmcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace llmc {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::I1:
    return "i1";
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

RankedTensorType Tensor::type() const {
  return llvm::cast<RankedTensorType>(value_.getType());
}
ArrayRef<int64_t> Tensor::shape() const { return type().getShape(); }
int64_t Tensor::rank() const { return type().getRank(); }
int64_t Tensor::dim(int64_t d) const {
  return type().getDimSize(d < 0 ? d + rank() : d);
}
int64_t Tensor::numElements() const { return type().getNumElements(); }

DType Tensor::dtype() const {
  Type element = type().getElementType();
  if (element.isF32())
    return DType::F32;
  if (element.isF64())
    return DType::F64;
  if (element.isBF16())
    return DType::BF16;
  if (element.isF16())
    return DType::F16;
  if (element.isInteger(1))
    return DType::I1;
  if (element.isInteger(64))
    return DType::I64;
  return DType::I32;
}

ScopeGuard::~ScopeGuard() {
  if (tracer_)
    tracer_->popScope();
}

//===----------------------------------------------------------------------===//
// Tracer
//===----------------------------------------------------------------------===//

Tracer::Tracer(MLIRContext &context, StringRef functionName)
    : context_(context), builder_(&context) {
  context_.getOrLoadDialect<LlmcDialect>();
  context_.getOrLoadDialect<func::FuncDialect>();
  module_ = ModuleOp::create(builder_.getUnknownLoc());
  builder_.setInsertionPointToEnd(module_->getBody());
  auto function = func::FuncOp::create(builder_, builder_.getUnknownLoc(),
                                       functionName,
                                       builder_.getFunctionType({}, {}));
  function_ = function;
  body_ = function.addEntryBlock();
  builder_.setInsertionPointToStart(body_);
}

Tracer::~Tracer() = default;

ScopeGuard Tracer::scope(StringRef name) {
  scopeLengths_.push_back(scopePath_.size());
  if (!scopePath_.empty())
    scopePath_ += '.';
  scopePath_ += name.str();
  return ScopeGuard(this);
}

void Tracer::popScope() {
  scopePath_.resize(scopeLengths_.back());
  scopeLengths_.pop_back();
}

Location Tracer::location() const {
  if (scopePath_.empty())
    return NameLoc::get(
        llvm::cast<func::FuncOp>(function_).getSymNameAttr());
  return NameLoc::get(StringAttr::get(&context_, scopePath_));
}

InFlightDiagnostic Tracer::emitError() {
  failed_ = true;
  return mlir::emitError(location());
}

Type Tracer::elementType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return builder_.getF32Type();
  case DType::F64:
    return builder_.getF64Type();
  case DType::BF16:
    return builder_.getBF16Type();
  case DType::F16:
    return builder_.getF16Type();
  case DType::I32:
    return builder_.getI32Type();
  case DType::I64:
    return builder_.getI64Type();
  case DType::I1:
    return builder_.getI1Type();
  }
  return builder_.getF32Type();
}

Tensor Tracer::wrap(Operation *op, unsigned result) {
  // Verify each op as it is traced, so that an error points at the scope
  // that made it rather than at the end of tracing.
  if (mlir::failed(mlir::verify(op, /*verifyRecursively=*/false)))
    failed_ = true;
  return Tensor(this, op->getResult(result));
}

Tensor Tracer::addArgument(StringRef name, ArrayRef<int64_t> shape,
                           DType dtype, ArgumentRole role,
                           std::optional<Init> init,
                           TensorParallelSplit split) {
  std::string fullName =
      scopePath_.empty() ? name.str() : scopePath_ + "." + name.str();
  for (const Argument &arg : arguments_)
    if (arg.name == fullName) {
      emitError() << "expected a unique name, but '" << fullName
                  << "' was already declared";
      return Tensor(this, arg.value);
    }
  for (int64_t size : shape)
    if (size <= 0) {
      emitError() << "expected positive dimension sizes for '" << fullName
                  << "', got " << size;
      break;
    }
  int64_t rank = static_cast<int64_t>(shape.size());
  if (split.isSplit() &&
      (split.dim >= rank || split.groups < 1 ||
       shape[split.dim] % split.groups != 0))
    emitError() << "expected a tensor-parallel split of '" << fullName
                << "' along a dimension below its rank " << rank
                << " into groups that divide it, got dim " << split.dim
                << " and groups " << split.groups;
  SmallVector<int64_t> sizes(shape);
  for (int64_t &size : sizes)
    size = std::max<int64_t>(size, 1);
  auto type = RankedTensorType::get(sizes, elementType(dtype));
  BlockArgument value = body_->addArgument(
      type, NameLoc::get(StringAttr::get(&context_, fullName)));
  arguments_.push_back({fullName, role, value, init, split});
  return Tensor(this, value);
}

Tensor Tracer::parameter(StringRef name, ArrayRef<int64_t> shape, DType dtype,
                         Init init, TensorParallelSplit split) {
  return addArgument(name, shape, dtype, ArgumentRole::Parameter, init, split);
}

Tensor Tracer::input(StringRef name, ArrayRef<int64_t> shape, DType dtype) {
  return addArgument(name, shape, dtype, ArgumentRole::Input, std::nullopt);
}

Tensor Tracer::constant(double value, ArrayRef<int64_t> shape, DType dtype) {
  auto type = RankedTensorType::get(shape, elementType(dtype));
  Attribute element;
  if (isa<FloatType>(type.getElementType()))
    element = builder_.getFloatAttr(type.getElementType(), value);
  else
    element = builder_.getIntegerAttr(type.getElementType(),
                                      static_cast<int64_t>(value));
  auto attr = DenseElementsAttr::get(type, element);
  return wrap(ConstantOp::create(builder_, location(), type, attr));
}

Tensor Tracer::iota(ArrayRef<int64_t> shape, int64_t dim, DType dtype) {
  auto type = RankedTensorType::get(shape, elementType(dtype));
  return wrap(IotaOp::create(builder_, location(), type,
                             static_cast<uint64_t>(dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim)));
}

/// The llmc.init attribute of a parameter: {kind = "normal", scale = 0.02}.
static DictionaryAttr initAttr(Builder &b, const Init &init) {
  StringRef kind;
  switch (init.kind) {
  case Init::Kind::Normal:
    kind = "normal";
    break;
  case Init::Kind::Uniform:
    kind = "uniform";
    break;
  case Init::Kind::Zeros:
    kind = "zeros";
    break;
  case Init::Kind::Ones:
    kind = "ones";
    break;
  }
  SmallVector<NamedAttribute> fields{b.getNamedAttr("kind", b.getStringAttr(kind))};
  if (init.kind == Init::Kind::Normal || init.kind == Init::Kind::Uniform)
    fields.push_back(b.getNamedAttr("scale", b.getF64FloatAttr(init.scale)));
  return b.getDictionaryAttr(fields);
}

OwningOpRef<ModuleOp> Tracer::finish(ArrayRef<Tensor> results) {
  if (finished_) {
    emitError() << "finish() was already called on this tracer";
    return nullptr;
  }
  finished_ = true;
  auto function = llvm::cast<func::FuncOp>(function_);

  // 1. Return the results.
  SmallVector<Value> values;
  for (const Tensor &result : results)
    values.push_back(result.value());
  builder_.setInsertionPointToEnd(body_);
  func::ReturnOp::create(builder_, location(), values);

  // 2. Order the arguments: parameters in declaration order, then inputs.
  //    New block arguments replace the old ones in that order.
  std::stable_partition(arguments_.begin(), arguments_.end(),
                        [](const Argument &arg) {
                          return arg.role == ArgumentRole::Parameter;
                        });
  unsigned oldCount = body_->getNumArguments();
  for (Argument &arg : arguments_) {
    BlockArgument fresh =
        body_->addArgument(arg.value.getType(), arg.value.getLoc());
    arg.value.replaceAllUsesWith(fresh);
    arg.value = fresh;
  }
  body_->eraseArguments(0, oldCount);

  // 3. The signature and the argument attributes.
  SmallVector<Type> argTypes, resultTypes;
  for (const Argument &arg : arguments_)
    argTypes.push_back(arg.value.getType());
  for (Value v : values)
    resultTypes.push_back(v.getType());
  function.setFunctionType(builder_.getFunctionType(argTypes, resultTypes));
  for (auto [i, arg] : llvm::enumerate(arguments_)) {
    SmallVector<NamedAttribute> attrs{
        builder_.getNamedAttr("llmc.name", builder_.getStringAttr(arg.name)),
        builder_.getNamedAttr(
            "llmc.role", builder_.getStringAttr(arg.role == ArgumentRole::Parameter
                                                    ? "parameter"
                                                    : "input"))};
    if (arg.init)
      attrs.push_back(
          builder_.getNamedAttr("llmc.init", initAttr(builder_, *arg.init)));
    if (arg.split.isSplit())
      attrs.push_back(builder_.getNamedAttr(
          "llmc.tp_split",
          builder_.getDenseI64ArrayAttr({arg.split.dim, arg.split.groups})));
    if (arg.split.expertDim >= 0)
      attrs.push_back(builder_.getNamedAttr(
          "llmc.ep_split", builder_.getI64IntegerAttr(arg.split.expertDim)));
    function.setArgAttrs(i, attrs);
  }

  if (failed_ || mlir::failed(mlir::verify(*module_)))
    return nullptr;
  return std::move(module_);
}

} // namespace llmc
