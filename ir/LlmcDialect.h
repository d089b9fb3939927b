//===- LlmcDialect.h - the llmc dialect --------------------------*- C++ -*-===//
#ifndef LLMC_IR_LLMCDIALECT_H
#define LLMC_IR_LLMCDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/LlmcDialect.h.inc"

#endif // LLMC_IR_LLMCDIALECT_H
