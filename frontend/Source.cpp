//===- Source.cpp - read what the user asked llmc to compile --------------===//
#include "frontend/Source.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

llmc::SourceKind llmc::classifySource(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".mlir")
    return SourceKind::Mlir;
  if (ext == ".toml")
    return SourceKind::RunDescription;
  if (ext == ".json")
    return SourceKind::HuggingFaceConfig;
  return SourceKind::Unknown;
}

OwningOpRef<ModuleOp> llmc::loadSource(llvm::StringRef path,
                                       MLIRContext &context,
                                       llvm::SourceMgr &sourceMgr) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  switch (classifySource(path)) {
  case SourceKind::Mlir:
    break;
  case SourceKind::RunDescription:
  case SourceKind::HuggingFaceConfig:
    emitError(fileLoc) << "run descriptions and Hugging Face configs are not "
                          "supported yet (issue #3); pass a .mlir file in the "
                          "llmc dialect, such as examples/gpt2-tiny.mlir";
    return nullptr;
  case SourceKind::Unknown:
    emitError(fileLoc) << "cannot tell what '" << path
                       << "' holds from its extension; expected .mlir (llmc "
                          "IR), .toml (run description) or .json (Hugging "
                          "Face config)";
    return nullptr;
  }

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(path, &error);
  if (!buffer) {
    emitError(fileLoc) << "cannot read the input: " << error;
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  // parseSourceFile verifies the module; errors carry file:line:column.
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}
