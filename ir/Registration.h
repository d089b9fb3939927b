//===- Registration.h - the dialects an llmc program may use -----*- C++ -*-===//
#ifndef LLMC_IR_REGISTRATION_H
#define LLMC_IR_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace llmc {

/// Registers llmc and the upstream dialects llmc programs use: func (the
/// step functions), arith (scalars), tensor (tensor.empty and friends) and
/// shard (meshes and sharding annotations, issue #8).
void registerLlmcDialects(mlir::DialectRegistry &registry);

} // namespace llmc

#endif // LLMC_IR_REGISTRATION_H
