//===- Parameters.cpp - what a traced model's parameters add up to --------===//
#include "frontend/Parameters.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace llmc {

std::string parameterGroupName(llvm::StringRef name) {
  llvm::SmallVector<llvm::StringRef> parts;
  name.split(parts, '.');
  if (parts.size() > 1)
    parts.pop_back();
  std::string group;
  for (auto [i, part] : llvm::enumerate(parts)) {
    if (i)
      group += '.';
    group += llvm::all_of(part, llvm::isDigit) ? std::string("*") : part.str();
  }
  return group;
}

ParameterSummary summarizeParameters(func::FuncOp function) {
  ParameterSummary summary;
  llvm::StringMap<size_t> index;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto role = function.getArgAttrOfType<StringAttr>(i, "llmc.role");
    auto name = function.getArgAttrOfType<StringAttr>(i, "llmc.name");
    if (!role || role.getValue() != "parameter" || !name)
      continue;
    auto type = cast<RankedTensorType>(function.getArgument(i).getType());
    std::string group = parameterGroupName(name.getValue());
    auto [it, inserted] = index.try_emplace(group, summary.groups.size());
    if (inserted)
      summary.groups.push_back({group, 0, 0});
    ParameterGroup &entry = summary.groups[it->second];
    entry.tensors += 1;
    entry.elements += type.getNumElements();
    summary.tensors += 1;
    summary.elements += type.getNumElements();
  }
  return summary;
}

} // namespace llmc
