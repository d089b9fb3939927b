//===- Source.h - read what the user asked llmc to compile -------*- C++ -*-===//
//
// The frontend's entry point: turns an input file into a module of llmc IR.
// Today that is a .mlir file written in the llmc dialect; run descriptions
// (.toml) and Hugging Face config.json arrive with issue #3 and are rejected
// with a message that says so.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_SOURCE_H
#define LLMC_FRONTEND_SOURCE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace llmc {

/// What kind of input a path names, from its extension.
enum class SourceKind { Mlir, RunDescription, HuggingFaceConfig, Unknown };

SourceKind classifySource(llvm::StringRef path);

/// Parses and verifies `path` into a module. Diagnostics (a missing file,
/// an unsupported kind, a parse or verifier error with file:line:column) go
/// to the context's diagnostic handler; returns null on failure. `sourceMgr`
/// keeps the buffer alive for later diagnostics that point into it.
mlir::OwningOpRef<mlir::ModuleOp> loadSource(llvm::StringRef path,
                                             mlir::MLIRContext &context,
                                             llvm::SourceMgr &sourceMgr);

} // namespace llmc

#endif // LLMC_FRONTEND_SOURCE_H
