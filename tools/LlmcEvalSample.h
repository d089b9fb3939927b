//===- LlmcEvalSample.h - llmc eval and llmc sample -------------*- C++ -*-===//
//
// `llmc eval RUN.toml --resume CKPT` (or a Hugging Face folder) prints the
// validation loss of trained weights through the run's eval program
// (runtime/train/Evaluate.h), and `llmc sample TARGET --prompt "..."`
// generates text from a checkpoint, a model folder or a run description,
// decoded through the tokenizer (runtime/train/Sample.h, no KV cache).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TOOLS_LLMCEVALSAMPLE_H
#define LLMC_TOOLS_LLMCEVALSAMPLE_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace llmc::driver {

llvm::cl::OptionCategory &llmcCategory();

/// Options of `llmc eval`.
struct EvalCommand {
  llvm::cl::SubCommand command{
      "eval",
      "Print the validation loss of trained weights: the mean loss of the\n"
      "  run's [eval] steps batches of its [data] val (or --val) through the\n"
      "  forward program, as the training loop measures it. FILE is a run\n"
      "  description with --resume CHECKPOINT, or a Hugging Face model\n"
      "  folder (its weights) with --val."};
  llvm::cl::opt<std::string> input{
      llvm::cl::Positional, llvm::cl::desc("<run.toml|model folder>"),
      llvm::cl::Required, llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> resume{
      "resume",
      llvm::cl::desc("The checkpoint to evaluate (a step-N directory, or the "
                     "[checkpoint] dir: its latest)"),
      llvm::cl::value_desc("dir"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> weights{
      "weights",
      llvm::cl::desc("Evaluate these weights instead (safetensors, a shard "
                     "index or a model folder)"),
      llvm::cl::value_desc("path"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::list<std::string> val{
      "val", llvm::cl::desc("Validation files instead of [data] val (a file "
                            "or glob; repeatable)"),
      llvm::cl::value_desc("file|glob"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> tokenizer{
      "tokenizer",
      llvm::cl::desc("The tokenizer.json of text validation data"),
      llvm::cl::value_desc("file"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<int64_t> steps{
      "steps", llvm::cl::desc("Batches to evaluate (default: [eval] steps)"),
      llvm::cl::init(0), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> device{
      "device", llvm::cl::desc("cpu, cuda or auto (default: [parallel] "
                               "devices)"),
      llvm::cl::value_desc("cpu|cuda|auto"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<unsigned> threads{
      "threads", llvm::cl::desc("CPU threads, 0 to 1024 (default 0: every core)"),
      llvm::cl::init(0), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
};

/// Options of `llmc sample`.
struct SampleCommand {
  llvm::cl::SubCommand command{
      "sample",
      "Generate text from a trained model. TARGET is a checkpoint (a\n"
      "  step-N directory or a [checkpoint] dir), a Hugging Face model\n"
      "  folder, or a run description with --resume. The prompt is encoded\n"
      "  and the result decoded with the tokenizer (the checkpoint's or the\n"
      "  folder's tokenizer.json, [data] tokenizer, or --tokenizer; bytes\n"
      "  when the model's vocabulary is 256 or less). Runs on the CPU and\n"
      "  has no KV cache: each token runs the whole window of --seq-len\n"
      "  tokens again."};
  llvm::cl::opt<std::string> target{
      llvm::cl::Positional, llvm::cl::desc("<checkpoint|folder|run.toml>"),
      llvm::cl::Required, llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> resume{
      "resume", llvm::cl::desc("With a run description: the checkpoint"),
      llvm::cl::value_desc("dir"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> prompt{
      "prompt", llvm::cl::desc("The text to continue"), llvm::cl::init("\n"),
      llvm::cl::sub(command), llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<int64_t> tokens{
      "tokens", llvm::cl::desc("Tokens to generate (default 100)"),
      llvm::cl::init(100), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<double> temperature{
      "temperature",
      llvm::cl::desc("Softmax temperature (default 0.8; 0: greedy)"),
      llvm::cl::init(0.8), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<int64_t> topK{
      "top-k", llvm::cl::desc("Sample among the K most likely tokens (0: "
                              "all; default 0)"),
      llvm::cl::init(0), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<uint64_t> seed{
      "seed", llvm::cl::desc("The sampler's seed (default 1)"),
      llvm::cl::init(1), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<int64_t> seqLen{
      "seq-len",
      llvm::cl::desc("The window each token sees (default: [train] seq_len, "
                     "or min(1024, the model's context))"),
      llvm::cl::init(0), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<std::string> tokenizer{
      "tokenizer", llvm::cl::desc("A tokenizer.json to encode and decode with"),
      llvm::cl::value_desc("file"), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
  llvm::cl::opt<unsigned> threads{
      "threads", llvm::cl::desc("CPU threads, 0 to 1024 (default 0: every core)"),
      llvm::cl::init(0), llvm::cl::sub(command),
      llvm::cl::cat(llmcCategory())};
};

int runEval(const EvalCommand &options);
int runSample(const SampleCommand &options);

} // namespace llmc::driver

#endif // LLMC_TOOLS_LLMCEVALSAMPLE_H
