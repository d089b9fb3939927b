//===- LlmcDialect.cpp - dialect registration, assembly helpers, folds ----===//
//
// Holds the generated op, enum and attribute definitions, the shared custom
// assembly directive of elementwise ops, and the folders. Verifiers live in
// PrimitiveOps.cpp and CompositeOps.cpp, costs in Cost.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace llmc;

//===----------------------------------------------------------------------===//
// custom<ElementwiseTypes>
//
// Elementwise ops print one type when all operands and the result share it
// (`: tensor<4xf32>`), and the long form otherwise
// (`: tensor<4xf32>, tensor<4xbf16> -> tensor<4xf32>`). The long form exists
// so that a mismatch can be written down and rejected by the verifier with
// the values it found, instead of being unrepresentable.
//===----------------------------------------------------------------------===//

static ParseResult parseElementwiseTypes(OpAsmParser &parser,
                                         ArrayRef<Type *> operandTypes,
                                         Type &resultType) {
  Type first;
  if (parser.parseType(first))
    return failure();
  bool sawComma = succeeded(parser.parseOptionalComma());
  if (!sawComma && failed(parser.parseOptionalArrow())) {
    for (Type *t : operandTypes)
      *t = first;
    resultType = first;
    return success();
  }
  // Long form: one type per operand, then `->` and the result type.
  SmallVector<Type> types{first};
  if (sawComma) {
    do {
      Type next;
      if (parser.parseType(next))
        return failure();
      types.push_back(next);
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseArrow())
      return failure();
  }
  if (types.size() != operandTypes.size())
    return parser.emitError(parser.getCurrentLocation())
           << "expected " << operandTypes.size()
           << " operand type(s) before '->', got " << types.size();
  for (auto [slot, t] : llvm::zip(operandTypes, types))
    *slot = t;
  return parser.parseType(resultType);
}

static ParseResult parseElementwiseTypes(OpAsmParser &parser, Type &input,
                                         Type &result) {
  return parseElementwiseTypes(parser, {&input}, result);
}

static ParseResult parseElementwiseTypes(OpAsmParser &parser, Type &lhs,
                                         Type &rhs, Type &result) {
  return parseElementwiseTypes(parser, {&lhs, &rhs}, result);
}

static void printElementwiseTypes(OpAsmPrinter &printer, Operation *,
                                  ArrayRef<Type> operandTypes,
                                  Type resultType) {
  if (llvm::all_equal(operandTypes) && operandTypes.front() == resultType) {
    printer << resultType;
    return;
  }
  llvm::interleaveComma(operandTypes, printer);
  printer << " -> " << resultType;
}

static void printElementwiseTypes(OpAsmPrinter &printer, Operation *op,
                                  Type input, Type result) {
  printElementwiseTypes(printer, op, ArrayRef<Type>{input}, result);
}

static void printElementwiseTypes(OpAsmPrinter &printer, Operation *op,
                                  Type lhs, Type rhs, Type result) {
  printElementwiseTypes(printer, op, ArrayRef<Type>{lhs, rhs}, result);
}

//===----------------------------------------------------------------------===//
// Generated definitions
//===----------------------------------------------------------------------===//

#include "ir/LlmcDialect.cpp.inc"
#include "ir/LlmcEnums.cpp.inc"

#define GET_OP_CLASSES
#include "ir/LlmcOps.cpp.inc"

void LlmcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/LlmcOps.cpp.inc"
      >();
  // The sharding rules live in sharding/ (registerShardingRuleModels): a
  // cast to the interface before they are registered fails loudly, naming
  // it, instead of finding no rule.
  declarePromisedInterfaces<ShardingRuleOpInterface,
#define GET_OP_LIST
#include "ir/LlmcOps.cpp.inc"
                            >();
}

Operation *LlmcDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

//===----------------------------------------------------------------------===//
// Argument attributes: llmc.name, llmc.role, llmc.init, llmc.tp_split,
// llmc.ep_split, llmc.offset
//===----------------------------------------------------------------------===//

// optimizer_state: the AdamW moments that --llmc-optimizer adds to
// @train_step; like parameters, they persist from step to step.
static constexpr llvm::StringLiteral kRoles[] = {"parameter", "input",
                                                 "optimizer_state"};
static constexpr llvm::StringLiteral kInitKinds[] = {"normal", "uniform",
                                                     "zeros", "ones",
                                                     "constant"};

LogicalResult LlmcDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto error = [&]() {
    return op->emitOpError() << "argument #" << argIndex << ": ";
  };
  if (name == "llmc.name") {
    auto value = dyn_cast<StringAttr>(attr.getValue());
    if (!value || value.getValue().empty())
      return error() << "expected llmc.name to be a non-empty string, got "
                     << attr.getValue();
    return success();
  }
  if (name == "llmc.role") {
    auto value = dyn_cast<StringAttr>(attr.getValue());
    if (!value || !llvm::is_contained(kRoles, value.getValue()))
      return error() << "expected llmc.role to be \"parameter\", "
                        "\"input\" or \"optimizer_state\", got "
                     << attr.getValue();
    return success();
  }
  if (name == "llmc.init") {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
    if (!kind || !llvm::is_contained(kInitKinds, kind.getValue()))
      return error() << "expected llmc.init = {kind = \"normal\" | "
                        "\"uniform\" | \"zeros\" | \"ones\" | "
                        "\"constant\", ...}, got "
                     << attr.getValue();
    bool scaled = kind.getValue() == "normal" || kind.getValue() == "uniform";
    auto scale = dict.getAs<FloatAttr>("scale");
    if (scaled && (!scale || !(scale.getValueAsDouble() >= 0.0)))
      return error() << "expected a non-negative float 'scale' in llmc.init "
                        "of kind \""
                     << kind.getValue() << "\", got " << attr.getValue();
    if (kind.getValue() == "constant" && !dict.getAs<FloatAttr>("value"))
      return error() << "expected a float 'value' in llmc.init of kind "
                        "\"constant\", got "
                     << attr.getValue();
    return success();
  }
  if (name == "llmc.offset") {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return error() << "expected llmc.offset (the buffer plan's byte "
                        "offset) to be a non-negative integer, got "
                     << attr.getValue();
    return success();
  }
  if (name == "llmc.stage") {
    // The pipeline stage that alone reads the argument
    // (passes/SplitPipeline.cpp).
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return error() << "expected llmc.stage (a pipeline stage) to be a "
                        "non-negative integer, got "
                     << attr.getValue();
    return success();
  }
  if (name == "llmc.sharding") {
    // One array of mesh axis names per dimension (passes/Partition.cpp).
    auto dims = dyn_cast<ArrayAttr>(attr.getValue());
    bool ok = dims && llvm::all_of(dims, [](Attribute dim) {
                auto axes = dyn_cast<ArrayAttr>(dim);
                return axes && llvm::all_of(axes, [](Attribute axis) {
                         return isa<StringAttr>(axis);
                       });
              });
    if (!ok)
      return error() << "expected llmc.sharding to be an array of mesh axis "
                        "name arrays, one per dimension, got "
                     << attr.getValue();
    return success();
  }
  if (name == "llmc.shard_groups") {
    auto values = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    bool ok = values && llvm::all_of(values.asArrayRef(),
                                     [](int64_t v) { return v >= 1; });
    if (!ok)
      return error() << "expected " << name
                     << " to be an array<i64> of block counts >= 1, got "
                     << attr.getValue();
    return success();
  }
  if (name == "llmc.shard_zigzag") {
    auto values = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    bool ok = values && llvm::all_of(values.asArrayRef(), [](int64_t v) {
                return v == 0 || v == 1;
              });
    if (!ok)
      return error() << "expected " << name
                     << " to be an array<i64> of 0 or 1 per dimension, got "
                     << attr.getValue();
    return success();
  }
  if (name == "llmc.tp_split") {
    // array<i64: dim, groups>: dim a dimension of the argument, cut into
    // `groups` equal blocks (frontend/Trace.h, TensorParallelSplit).
    auto value = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!value || value.size() != 2 || value[0] < 0 || value[1] < 1)
      return error() << "expected llmc.tp_split = array<i64: dim, groups> "
                        "with dim >= 0 and groups >= 1, got "
                     << attr.getValue();
    auto function = dyn_cast<FunctionOpInterface>(op);
    auto type = function && argIndex < function.getNumArguments()
                    ? dyn_cast<RankedTensorType>(
                          function.getArgumentTypes()[argIndex])
                    : RankedTensorType();
    if (type && (value[0] >= type.getRank() ||
                 type.getDimSize(value[0]) % value[1] != 0))
      return error() << "expected llmc.tp_split to name a dimension of "
                     << type << " that " << value[1]
                     << " groups divide, got dim " << value[0];
    return success();
  }
  if (name == "llmc.ep_split") {
    // i64: the stacked-experts dimension that expert parallelism splits.
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    auto function = dyn_cast<FunctionOpInterface>(op);
    auto type = function && argIndex < function.getNumArguments()
                    ? dyn_cast<RankedTensorType>(
                          function.getArgumentTypes()[argIndex])
                    : RankedTensorType();
    if (!value || value.getInt() < 0 ||
        (type && value.getInt() >= type.getRank()))
      return error() << "expected llmc.ep_split to be an i64 dimension of "
                        "the argument, got "
                     << attr.getValue();
    return success();
  }
  return error() << "unknown argument attribute '" << name
                 << "'; expected llmc.name, llmc.role, llmc.init, "
                    "llmc.offset, llmc.sharding, llmc.shard_groups, "
                    "llmc.shard_zigzag, llmc.stage, llmc.tp_split or "
                    "llmc.ep_split";
}

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A reshape of a reshape is one reshape of the original value.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(getType());
  return {};
}
