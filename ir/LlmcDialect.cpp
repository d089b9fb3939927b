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
           << " operand types before '->', got " << types.size();
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
