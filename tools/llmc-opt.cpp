//===- llmc-opt.cpp - mlir-opt with the llmc dialect and passes -----------===//
//
// Runs any llmc pass or pipeline on a file, with the mlir-opt conventions
// (--split-input-file, --verify-diagnostics, --mlir-print-ir-after-all, ...).
//
//===----------------------------------------------------------------------===//

#include "ir/Registration.h"
#include "passes/Passes.h"
#include "sharding/Registration.h"

#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  llmc::registerLlmcDialects(registry);
  llmc::registerShardingRuleModels(registry);
  mlir::registerTransformsPasses();
  mlir::shard::registerShardPasses();
  llmc::registerLlmcPassesAndPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "llmc optimizer driver\n", registry));
}
