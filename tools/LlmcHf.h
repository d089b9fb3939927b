//===- LlmcHf.h - Hugging Face models in the llmc CLI -----------*- C++ -*-===//
//
// What the driver adds for Hugging Face models (issue #23): the artifact
// metadata that carries a model's config, weights folder and tokenizer into
// the runtime and its checkpoints, the refusal of a training step whose
// config asks for dropout, and `llmc export`.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TOOLS_LLMCHF_H
#define LLMC_TOOLS_LLMCHF_H

#include "frontend/config/RunDescription.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

#include <map>
#include <string>

namespace llmc::driver {

llvm::cl::OptionCategory &llmcCategory();

/// Options of `llmc export`.
struct ExportCommand {
  llvm::cl::SubCommand command{
      "export",
      "Write a checkpoint as a Hugging Face model folder (config.json,\n"
      "  model.safetensors or shards with an index, generation_config.json,\n"
      "  the tokenizer) that transformers' from_pretrained loads."};
  llvm::cl::opt<std::string> checkpoint{
      llvm::cl::Positional, llvm::cl::desc("<checkpoint dir>"),
      llvm::cl::Required, llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> output{
      "o", llvm::cl::desc("The folder to write"), llvm::cl::value_desc("dir"),
      llvm::cl::Required, llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> dtype{
      "dtype", llvm::cl::desc("The tensors' type: f32 (default, exact), bf16 "
                              "or f16"),
      llvm::cl::init("f32"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> shardSize{
      "shard-size",
      llvm::cl::desc("The largest shard (5GB, 500MB, 2GiB, ...)"),
      llvm::cl::init("5GB"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<bool> force{"force",
                            llvm::cl::desc("Replace an existing folder"),
                            llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
};

int runExport(const ExportCommand &options);

struct CompileCommand;
/// `llmc compile FILE --logits`: the @logits program of the model
/// (frontend/models/Models.h) for the description's batch shape, written
/// as IR or an artifact (with the hf.* metadata, so that llmc-run binds the
/// folder's weights).
int compileLogits(const CompileCommand &options);

/// The hf.* metadata of an artifact compiled from `run`: the config.json
/// llmc writes for the model (every family, so that every checkpoint can be
/// exported), and for a model folder its path (the initial weights),
/// strictness, generation config and tokenizer files. Returns an exit code
/// (printing why) when a file cannot be read.
int writeHfSettings(const RunDescription &run,
                    std::map<std::string, std::string> &metadata);

/// Fails (printing the messages) when `run`'s model cannot be trained as
/// configured (trainingRefusals: dropout).
int checkTrainingRefusals(mlir::MLIRContext &context, const RunDescription &run);

} // namespace llmc::driver

#endif // LLMC_TOOLS_LLMCHF_H
