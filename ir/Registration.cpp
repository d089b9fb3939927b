//===- Registration.cpp - the dialects an llmc program may use ------------===//
#include "ir/Registration.h"
#include "ir/LlmcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void llmc::registerLlmcDialects(mlir::DialectRegistry &registry) {
  registry.insert<llmc::LlmcDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::shard::ShardDialect>();
}
