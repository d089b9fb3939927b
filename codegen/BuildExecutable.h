//===- BuildExecutable.h - lower the final IR to an Executable ---*- C++ -*-===//
//
// Codegen for the CPU backend: every op of the function becomes one command
// naming a kernel of runtime/Kernels.def (chosen by op class, never by
// name), every value a slot in a buffer plan, every constant data baked
// into the Executable. The runtime runs the result without MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_BUILDEXECUTABLE_H
#define LLMC_CODEGEN_BUILDEXECUTABLE_H

#include "runtime/Executable.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace llmc {

struct CodegenOptions {
  /// The function to compile.
  std::string function = "loss";
  /// Recorded in the Executable (what it was compiled from).
  std::string source;
};

/// Lowers `options.function` of `module` to a single-rank Executable.
/// Ops with no kernel are reported as errors at their location.
mlir::FailureOr<rt::Executable> buildExecutable(mlir::ModuleOp module,
                                                const CodegenOptions &options);

/// Bytes the buffer plan of `executable`'s rank 0 needs (its arena).
uint64_t plannedBytes(const rt::Executable &executable);

} // namespace llmc

#endif // LLMC_CODEGEN_BUILDEXECUTABLE_H
