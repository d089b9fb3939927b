//===- Parameters.h - what a traced model's parameters add up to -*- C++ -*-===//
#ifndef LLMC_FRONTEND_PARAMETERS_H
#define LLMC_FRONTEND_PARAMETERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc {

/// Parameters that share a module path up to their layer or expert index:
/// "transformer.h.*.attn.c_attn" holds the c_attn weight and bias of every
/// layer.
struct ParameterGroup {
  std::string name;
  int64_t tensors = 0;
  int64_t elements = 0;
};

struct ParameterSummary {
  std::vector<ParameterGroup> groups; ///< in order of first declaration
  int64_t tensors = 0;
  int64_t elements = 0;
};

/// Summarizes the arguments of `function` whose llmc.role is "parameter",
/// named by llmc.name. A tied parameter is one argument and counts once.
ParameterSummary summarizeParameters(mlir::func::FuncOp function);

/// The group of a parameter name: the leaf (weight, bias) dropped and every
/// purely numeric component replaced by '*'.
std::string parameterGroupName(llvm::StringRef name);

} // namespace llmc

#endif // LLMC_FRONTEND_PARAMETERS_H
