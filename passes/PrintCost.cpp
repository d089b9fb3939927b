//===- PrintCost.cpp - report flops and bytes per op and per function -----===//
//
// An analysis pass: asks CostOpInterface of every op and prints a table
// keyed by the op's location (the model part it comes from).
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace llmc {
#define GEN_PASS_DEF_PRINTCOSTPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace {

/// The model part of a location: the name of a NameLoc or a FusedLoc's
/// first name, else the printed location.
std::string describeLocation(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        return name.getName().str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

struct Row {
  std::string part;
  std::string op;
  double flops;
  int64_t read;
  int64_t written;
};

class PrintCostPass : public llmc::impl::PrintCostPassBase<PrintCostPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    getOperation().walk([&](func::FuncOp func) {
      std::vector<Row> rows;
      func.walk([&](llmc::CostOpInterface op) {
        // A region's cost already stands for its body.
        if (op->getParentOfType<llmc::FusedOp>())
          return;
        rows.push_back({describeLocation(op->getLoc()),
                        op->getName().getStringRef().str(), op.getFlops(),
                        op.getBytesRead(), op.getBytesWritten()});
      });
      Row total{"total", "", 0, 0, 0};
      size_t partWidth = total.part.size(), opWidth = 0;
      for (const Row &row : rows) {
        total.flops += row.flops;
        total.read += row.read;
        total.written += row.written;
        partWidth = std::max(partWidth, row.part.size());
        opWidth = std::max(opWidth, row.op.size());
      }
      os << "cost of @" << func.getSymName() << "\n";
      auto print = [&](const Row &row) {
        os << "  " << llvm::left_justify(row.part, partWidth) << "  "
           << llvm::left_justify(row.op, opWidth) << "  flops "
           << llvm::format("%.0f", row.flops) << "  read " << row.read
           << "  written " << row.written << "\n";
      };
      if (!totalsOnly)
        for (const Row &row : rows)
          print(row);
      print(total);
    });
    markAllAnalysesPreserved();
  }
};

} // namespace
