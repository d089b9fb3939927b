//===- StructureOps.cpp - verifiers of llmc.fused and llmc.yield ----------===//
//
// The region op --llmc-fuse builds (StructureOps.td): its block arguments
// stand for its operands, its yield for its results.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"

using namespace mlir;
using namespace llmc;

LogicalResult FusedOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "expected " << getInputs().size()
                         << " block arguments (one per operand), got "
                         << body.getNumArguments();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(body.getArguments(), getInputs()))) {
    auto [arg, input] = pair;
    if (arg.getType() != input.getType())
      return emitOpError() << "expected block argument #" << i
                           << " to have the type of operand #" << i << " "
                           << input.getType() << ", got " << arg.getType();
  }
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "expected the body to end in llmc.yield, got "
                         << body.getTerminator()->getName();
  if (yield.getValues().size() != getNumResults())
    return emitOpError() << "expected llmc.yield to return " << getNumResults()
                         << " values (one per result), got "
                         << yield.getValues().size();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(yield.getValues(), getResultTypes()))) {
    auto [value, type] = pair;
    if (value.getType() != type)
      return emitOpError() << "expected yielded value #" << i
                           << " to have the type of result #" << i << " "
                           << type << ", got " << value.getType();
  }
  return success();
}
