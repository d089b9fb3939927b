//===- LlmcOps.h - the ops, enums and attributes of llmc ---------*- C++ -*-===//
#ifndef LLMC_IR_LLMCOPS_H
#define LLMC_IR_LLMCOPS_H

#include "ir/LlmcDialect.h"
#include "ir/LlmcInterfaces.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/LlmcEnums.h.inc"

#define GET_OP_CLASSES
#include "ir/LlmcOps.h.inc"

#endif // LLMC_IR_LLMCOPS_H
