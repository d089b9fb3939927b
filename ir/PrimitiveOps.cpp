//===- PrimitiveOps.cpp - verifiers of the primitive llmc ops -------------===//
#include "ir/LlmcOps.h"
#include "ir/VerifyUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace llmc;

//===----------------------------------------------------------------------===//
// Shared helpers (declared in VerifyUtils.h)
//===----------------------------------------------------------------------===//

std::string llmc::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return text;
}

LogicalResult llmc::expectShape(Operation *op, StringRef what,
                                ArrayRef<int64_t> found,
                                ArrayRef<int64_t> expected) {
  if (found == expected)
    return success();
  return op->emitOpError() << "expected " << what << " of shape "
                           << formatShape(expected) << ", got "
                           << formatShape(found);
}

LogicalResult llmc::expectElementType(Operation *op, StringRef what,
                                      Type found, Type expected) {
  if (found == expected)
    return success();
  return op->emitOpError() << "expected " << what << " element type "
                           << expected << ", got " << found;
}

LogicalResult llmc::expectType(Operation *op, StringRef what, Type found,
                               Type expected) {
  if (found == expected)
    return success();
  return op->emitOpError() << "expected " << what << " of type " << expected
                           << ", got " << found;
}

LogicalResult llmc::expectRank(Operation *op, StringRef what, int64_t found,
                               int64_t expected) {
  if (found == expected)
    return success();
  return op->emitOpError() << "expected " << what << " of rank " << expected
                           << ", got rank " << found;
}

LogicalResult llmc::expectDimInRange(Operation *op, StringRef what,
                                     int64_t dim, int64_t rank) {
  if (dim >= 0 && dim < rank)
    return success();
  return op->emitOpError() << "expected " << what << " in [0, " << rank
                           << "), got " << dim;
}

/// Checks that `dims` is strictly increasing and indexes rank `rank`.
static LogicalResult verifyDimList(Operation *op, StringRef what,
                                   ArrayRef<int64_t> dims, int64_t rank) {
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (failed(expectDimInRange(op, (what + " entry").str(), dim, rank)))
      return failure();
    if (i > 0 && dim <= dims[i - 1])
      return op->emitOpError() << "expected " << what
                               << " to be strictly increasing, got "
                               << formatShape(dims);
  }
  return success();
}

/// An f32 result of a bf16/f16 input means "accumulate in f32".
static bool isAccumulationWidening(Type input, Type result) {
  return isa<FloatType>(input) && result.isF32();
}

/// Reports that `result` is not an element type a reduction or matmul over
/// `input` may produce: the input's, or f32 for a narrower float input when
/// `allowWidening` is set.
static LogicalResult emitResultElementError(Operation *op, Type input,
                                            Type result, bool allowWidening) {
  InFlightDiagnostic diag = op->emitOpError()
                            << "expected result element type " << input;
  if (allowWidening && isa<FloatType>(input) && !input.isF32())
    diag << " or " << Float32Type::get(input.getContext());
  return diag << ", got " << result;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Operands and result of an elementwise op share one type.
static LogicalResult verifySameTypes(Operation *op) {
  Type expected = op->getResult(0).getType();
  for (OpOperand &operand : op->getOpOperands()) {
    Type found = operand.get().getType();
    if (found != expected)
      return op->emitOpError()
             << "expected operand #" << operand.getOperandNumber()
             << " to have the result type " << expected << ", got " << found;
  }
  return success();
}

#define LLMC_SAME_TYPES_VERIFIER(OP)                                           \
  LogicalResult OP::verify() { return verifySameTypes(getOperation()); }
LLMC_SAME_TYPES_VERIFIER(NegOp)
LLMC_SAME_TYPES_VERIFIER(AbsOp)
LLMC_SAME_TYPES_VERIFIER(ExpOp)
LLMC_SAME_TYPES_VERIFIER(LogOp)
LLMC_SAME_TYPES_VERIFIER(TanhOp)
LLMC_SAME_TYPES_VERIFIER(SqrtOp)
LLMC_SAME_TYPES_VERIFIER(RsqrtOp)
LLMC_SAME_TYPES_VERIFIER(AddOp)
LLMC_SAME_TYPES_VERIFIER(SubOp)
LLMC_SAME_TYPES_VERIFIER(MulOp)
LLMC_SAME_TYPES_VERIFIER(DivOp)
LLMC_SAME_TYPES_VERIFIER(MaxOp)
LLMC_SAME_TYPES_VERIFIER(MinOp)
LLMC_SAME_TYPES_VERIFIER(GeluOp)
LLMC_SAME_TYPES_VERIFIER(SiluOp)
LLMC_SAME_TYPES_VERIFIER(SwigluOp)
#undef LLMC_SAME_TYPES_VERIFIER

LogicalResult CastOp::verify() {
  return expectShape(*this, "result", getType().getShape(),
                     shapeOf(getInput()));
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> out = getType().getShape();
  ArrayRef<int64_t> dims = getDims();
  if (failed(expectElementType(*this, "result", getType().getElementType(),
                               elementOf(getInput()))))
    return failure();
  if (dims.size() != in.size())
    return emitOpError() << "expected one entry of dims per operand dimension ("
                         << in.size() << "), got " << dims.size();
  if (failed(verifyDimList(*this, "dims", dims, out.size())))
    return failure();
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (in[i] != 1 && in[i] != out[dim])
      return emitOpError() << "expected operand dimension " << i
                           << " to be 1 or " << out[dim]
                           << " (result dimension " << dim << "), got "
                           << in[i];
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = tensorType(getInput());
  if (failed(expectElementType(*this, "result", getType().getElementType(),
                               in.getElementType())))
    return failure();
  if (in.getNumElements() != getType().getNumElements())
    return emitOpError() << "expected the result to have "
                         << in.getNumElements() << " elements like "
                         << formatShape(in.getShape()) << ", got "
                         << getType().getNumElements() << " in "
                         << formatShape(getType().getShape());
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPermutation();
  if (failed(expectElementType(*this, "result", getType().getElementType(),
                               elementOf(getInput()))))
    return failure();
  if (perm.size() != in.size())
    return emitOpError() << "expected a permutation of " << in.size()
                         << " dimensions, got " << formatShape(perm);
  SmallVector<bool> seen(in.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p])
      return emitOpError() << "expected a permutation of [0, " << in.size()
                           << "), got " << formatShape(perm);
    seen[p] = true;
    expected.push_back(in[p]);
  }
  return expectShape(*this, "result", getType().getShape(), expected);
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits();
  SmallVector<int64_t> strides(in.size(), 1);
  if (std::optional<ArrayRef<int64_t>> given = getStrides())
    strides.assign(given->begin(), given->end());
  if (failed(expectElementType(*this, "result", getType().getElementType(),
                               elementOf(getInput()))))
    return failure();
  if (starts.size() != in.size() || limits.size() != in.size() ||
      strides.size() != in.size())
    return emitOpError() << "expected starts, limits and strides with "
                         << in.size() << " entries each, got "
                         << starts.size() << ", " << limits.size() << " and "
                         << strides.size();
  SmallVector<int64_t> expected;
  for (size_t i = 0; i < in.size(); ++i) {
    if (starts[i] < 0 || starts[i] > limits[i] || limits[i] > in[i])
      return emitOpError() << "expected 0 <= start <= limit <= " << in[i]
                           << " in dimension " << i << ", got start "
                           << starts[i] << " and limit " << limits[i];
    if (strides[i] < 1)
      return emitOpError() << "expected a positive stride in dimension " << i
                           << ", got " << strides[i];
    expected.push_back(llvm::divideCeil(limits[i] - starts[i], strides[i]));
  }
  return expectShape(*this, "result", getType().getShape(), expected);
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "expected at least one input, got none";
  RankedTensorType result = getType();
  int64_t dim = static_cast<int64_t>(getDim());
  if (failed(expectDimInRange(*this, "dim", dim, result.getRank())))
    return failure();
  int64_t total = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    std::string what = "input #" + std::to_string(i);
    RankedTensorType type = tensorType(input);
    if (failed(expectElementType(*this, what, type.getElementType(),
                                 result.getElementType())) ||
        failed(expectRank(*this, what, type.getRank(), result.getRank())))
      return failure();
    SmallVector<int64_t> expected(result.getShape());
    expected[dim] = type.getDimSize(dim);
    if (failed(expectShape(*this, what, type.getShape(), expected)))
      return failure();
    total += type.getDimSize(dim);
  }
  if (total != result.getDimSize(dim))
    return emitOpError() << "expected result dimension " << dim
                         << " to be the sum of the inputs' (" << total
                         << "), got " << result.getDimSize(dim);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult verifyReduction(Operation *op, Value input, Value result,
                                     ArrayRef<int64_t> dims, bool keepDims,
                                     bool allowWidening) {
  ArrayRef<int64_t> in = shapeOf(input);
  if (dims.empty())
    return op->emitOpError()
           << "expected at least one dimension to reduce, got dims []";
  if (failed(verifyDimList(op, "dims", dims, in.size())))
    return failure();
  Type inElem = elementOf(input), outElem = elementOf(result);
  if (inElem != outElem &&
      !(allowWidening && isAccumulationWidening(inElem, outElem)))
    return emitResultElementError(op, inElem, outElem, allowWidening);
  SmallVector<int64_t> expected;
  for (auto [i, size] : llvm::enumerate(in)) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      expected.push_back(size);
    else if (keepDims)
      expected.push_back(1);
  }
  return expectShape(op, "result", shapeOf(result), expected);
}

LogicalResult ReduceSumOp::verify() {
  return verifyReduction(*this, getInput(), getResult(), getDims(),
                         getKeepDims(), /*allowWidening=*/true);
}

LogicalResult ReduceMaxOp::verify() {
  return verifyReduction(*this, getInput(), getResult(), getDims(),
                         getKeepDims(), /*allowWidening=*/false);
}

LogicalResult ReduceMeanOp::verify() {
  return verifyReduction(*this, getInput(), getResult(), getDims(),
                         getKeepDims(), /*allowWidening=*/true);
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  RankedTensorType lhs = tensorType(getLhs()), rhs = tensorType(getRhs());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOpError() << "expected operands of rank at least 2, got ranks "
                         << lhs.getRank() << " and " << rhs.getRank();
  if (failed(expectElementType(*this, "rhs", rhs.getElementType(),
                               lhs.getElementType())))
    return failure();
  ArrayRef<int64_t> batch = lhs.getShape().drop_back(2);
  if (rhs.getRank() != 2 && rhs.getShape().drop_back(2) != batch)
    return emitOpError() << "expected rhs batch dimensions "
                         << formatShape(batch)
                         << " (or a rank-2 rhs shared by all batches), got "
                         << formatShape(rhs.getShape().drop_back(2));
  int64_t m = lhs.getDimSize(lhs.getRank() - (getTransposeA() ? 1 : 2));
  int64_t k = lhs.getDimSize(lhs.getRank() - (getTransposeA() ? 2 : 1));
  int64_t rhsK = rhs.getDimSize(rhs.getRank() - (getTransposeB() ? 1 : 2));
  int64_t n = rhs.getDimSize(rhs.getRank() - (getTransposeB() ? 2 : 1));
  if (k != rhsK)
    return emitOpError() << "expected contraction sizes to match, got " << k
                         << " and " << rhsK;
  Type inElem = lhs.getElementType(), outElem = getType().getElementType();
  if (inElem != outElem && !isAccumulationWidening(inElem, outElem))
    return emitResultElementError(*this, inElem, outElem,
                                  /*allowWidening=*/true);
  SmallVector<int64_t> expected(batch);
  expected.append({m, n});
  return expectShape(*this, "result", getType().getShape(), expected);
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

/// The shape of `take(source, indices, axis=dim)`.
static SmallVector<int64_t> gatheredShape(ArrayRef<int64_t> source,
                                          ArrayRef<int64_t> indices,
                                          int64_t dim) {
  SmallVector<int64_t> shape(source.take_front(dim));
  shape.append(indices.begin(), indices.end());
  shape.append(source.begin() + dim + 1, source.end());
  return shape;
}

LogicalResult GatherOp::verify() {
  int64_t dim = static_cast<int64_t>(getDim());
  ArrayRef<int64_t> in = shapeOf(getInput());
  if (failed(expectDimInRange(*this, "dim", dim, in.size())) ||
      failed(expectElementType(*this, "result", getType().getElementType(),
                               elementOf(getInput()))))
    return failure();
  return expectShape(*this, "result", getType().getShape(),
                     gatheredShape(in, shapeOf(getIndices()), dim));
}

LogicalResult ScatterAddOp::verify() {
  int64_t dim = static_cast<int64_t>(getDim());
  ArrayRef<int64_t> dest = shapeOf(getDest());
  if (failed(expectDimInRange(*this, "dim", dim, dest.size())) ||
      failed(expectType(*this, "result", getType(), getDest().getType())) ||
      failed(expectElementType(*this, "updates", elementOf(getUpdates()),
                               elementOf(getDest()))))
    return failure();
  return expectShape(*this, "updates", shapeOf(getUpdates()),
                     gatheredShape(dest, shapeOf(getIndices()), dim));
}

//===----------------------------------------------------------------------===//
// Compare and select
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::verify() {
  if (failed(expectType(*this, "rhs", getRhs().getType(), getLhs().getType())))
    return failure();
  return expectShape(*this, "result", getType().getShape(),
                     shapeOf(getLhs()));
}

LogicalResult SelectOp::verify() {
  if (failed(expectType(*this, "on_false", getOnFalse().getType(),
                        getOnTrue().getType())) ||
      failed(expectType(*this, "result", getType(), getOnTrue().getType())))
    return failure();
  return expectShape(*this, "cond", shapeOf(getCond()), shapeOf(getOnTrue()));
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

LogicalResult AxisOffsetOp::verify() {
  if (getType().getRank() != 0)
    return emitOpError() << "expected a rank-0 result, got " << getType();
  if (getAxes().empty())
    return emitOpError() << "expected at least one mesh axis";
  if (llvm::any_of(getAxes(), [](int64_t axis) { return axis < 0; }))
    return emitOpError() << "expected non-negative mesh axes";
  if (getStride() < 0)
    return emitOpError() << "expected a non-negative stride, got "
                         << getStride();
  return success();
}

LogicalResult IotaOp::verify() {
  return expectDimInRange(*this, "dim", static_cast<int64_t>(getDim()),
                          getType().getRank());
}

//===----------------------------------------------------------------------===//
// Point-to-point transfers
//===----------------------------------------------------------------------===//

template <typename Op>
static LogicalResult verifyTransfer(Op op) {
  if (op.getAxis() < 0)
    return op.emitOpError() << "expected a non-negative mesh axis, got "
                            << op.getAxis();
  if (op.getSource() < 0 || op.getDestination() < 0)
    return op.emitOpError() << "expected non-negative positions, got from "
                            << op.getSource() << " to "
                            << op.getDestination();
  if (op.getSource() == op.getDestination())
    return op.emitOpError() << "expected different source and destination, "
                               "got "
                            << op.getSource() << " for both";
  return success();
}

LogicalResult SendOp::verify() { return verifyTransfer(*this); }
LogicalResult RecvOp::verify() { return verifyTransfer(*this); }
