//===- LlmcDriver.h - the pieces the llmc subcommands share ------*- C++ -*-===//
//
// The options of each subcommand (llvm::cl, in the llmc category), the MLIR
// context with llmc's dialects and diagnostics, and the compile path that
// compile, train, plan and verify share: load a source, run the pipeline,
// build the Executable. tools/llmc.cpp holds main, compile and inspect;
// tools/LlmcTrainPlan.cpp holds train and plan; tools/LlmcVerify.cpp verify.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TOOLS_LLMCDRIVER_H
#define LLMC_TOOLS_LLMCDRIVER_H

#include "analysis/BufferPlan.h"
#include "codegen/BuildExecutable.h"
#include "frontend/Parameters.h"
#include "frontend/Source.h"
#include "frontend/models/Models.h"
#include "ir/LlmcOps.h"
#include "ir/Registration.h"
#include "passes/Passes.h"
#include "runtime/train/Launched.h"
#include "runtime/train/StopSignal.h"
#include "runtime/train/Trainer.h"
#include "sharding/Registration.h"
#ifdef LLMC_HAVE_CUDA
#include "runtime/cuda/session/CudaSession.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace llmc::driver {

namespace cl = llvm::cl;

constexpr int kExitOk = 0;
constexpr int kExitRejected = 1;
constexpr int kExitUsage = 2;
/// compileModule's code after `llmc plan --search-only` printed the search:
/// nothing was compiled, and nothing failed.
constexpr int kSearchOnlyDone = -1;

/// The category of every llmc option, so that --help hides libLLVM's.
cl::OptionCategory &llmcCategory();

struct CompileCommand {
  cl::SubCommand command{
      "compile",
      "Trace a model and print its IR.\n"
      "  FILE is a run description (.toml), a Hugging Face config.json, or\n"
      "  llmc IR (.mlir)."};
  cl::opt<std::string> input{cl::Positional, cl::desc("<input.toml|.json|.mlir>"),
                             cl::Required, cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<std::string> emit{
      "emit",
      cl::desc("Stop after this stage: loss (the traced forward program, "
               "before any pass), a pass of the pipeline by name (its first "
               "run: canonicalize, cse, llmc-autodiff, llmc-optimizer) or by "
               "its dump's name (05-canonicalize), or final (default)"),
      cl::value_desc("stage"), cl::init("final"), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<bool> forward{
      "forward",
      cl::desc("Compile only the forward program @loss (no autodiff, no "
               "optimizer)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> logits{
      "logits",
      cl::desc("Compile the next-token logits program @logits(params, "
               "tokens) -> [B, T, V] instead of @loss (forward only; a run "
               "description, a config.json or a model folder)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> output{"o",
                              cl::desc("Write the IR here (default: standard "
                                       "output); a name ending in .llmcx gets "
                                       "the compiled Executable instead"),
                              cl::value_desc("file"), cl::init("-"),
                              cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> dumpIr{
      "dump-ir",
      cl::desc("Write DIR/00-input.mlir and DIR/NN-<pass>.mlir after every "
               "pass"),
      cl::value_desc("DIR"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> printCost{
      "print-cost",
      cl::desc("Print the flops and bytes of every op (llmc-print-cost)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> noFuse{
      "no-fuse",
      cl::desc("Leave out llmc-fuse: every op stays its own kernel"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> fusionReport{
      "fusion-report",
      cl::desc("Print kernels before/after fusion and the device-memory "
               "bytes it removes"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<cl::boolOrDefault> fusedKernels{
      "fused-kernels",
      cl::desc("Plan buffers for a backend that runs each elementwise fused "
               "region as one kernel: their intermediates get no storage "
               "(default: when [parallel] devices is cuda); such a program "
               "runs only on the GPU"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> cudaArch{
      "cuda-arch",
      cl::desc("Also compile the artifact's CUDA kernels with NVRTC for this "
               "architecture (sm_90) and store their cubins: a GPU of that "
               "architecture then starts without NVRTC"),
      cl::value_desc("ARCH"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> locations{
      "locations",
      cl::desc("Print each op's location (the model part it comes from)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> quiet{"quiet", cl::desc("Do not print the IR"),
                      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> batchSize{
      "batch-size",
      cl::desc("Sequences per batch (default: [train] batch_size; 8 for "
               ".json)"),
      cl::init(0), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> seqLen{
      "seq-len",
      cl::desc("Tokens per sequence (default: [train] seq_len; 64 for "
               ".json)"),
      cl::init(0), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> deviceProfile{
      "device-profile",
      cl::desc("With [parallel] mesh = \"auto\": the device profile the "
               "mesh search predicts with (a built-in name or a .toml path; "
               "default: h200 for cuda devices, cpu otherwise)"),
      cl::value_desc("name|path"), cl::sub(command), cl::cat(llmcCategory())};
};

/// Options of `llmc inspect`.
struct InspectCommand {
  cl::SubCommand command{
      "inspect", "Print a model's parameters by group and in total.\n"
                 "  FILE is a run description (.toml), a Hugging Face "
                 "config.json, or llmc IR (.mlir).\n"
                 "  A compiled Executable (.llmcx): its argument and output tables."};
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<input.toml|.json|.mlir>"),
                             cl::Required, cl::sub(command),
                             cl::cat(llmcCategory())};
};

/// Options of `llmc train`.
struct TrainCommand {
  cl::SubCommand command{
      "train",
      "Compile a run description and train it on this machine (the CPU).\n"
      "  With no FILE: a small GPT on the built-in corpus, ending with a\n"
      "  generated sample. The loop is the runtime's: `llmc compile FILE -o\n"
      "  run.llmcx` and `llmc-run run.llmcx` train the same way."};
  cl::opt<std::string> input{cl::Positional, cl::desc("[<run.toml|config.json>]"),
                             cl::init(""), cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<std::string> metrics{"metrics",
                               cl::desc("Write one JSON line per step here"),
                               cl::value_desc("file"), cl::sub(command),
                               cl::cat(llmcCategory())};
  cl::opt<std::string> resume{
      "resume",
      cl::desc("Continue from a checkpoint (a step-N directory, or the "
               "[checkpoint] dir: its latest); new checkpoints go on into its "
               "directory; not with --weights"),
      cl::value_desc("dir"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> weights{
      "weights", cl::desc("Start from these parameters (safetensors, Hugging "
                          "Face names) instead of the initializers"),
      cl::value_desc("file"), cl::sub(command), cl::cat(llmcCategory())};
  cl::list<std::string> data{
      "data",
      cl::desc("Train on these files instead of [data] train (a file or a "
               "glob pattern; repeatable; format from [data] format)"),
      cl::value_desc("file|glob"), cl::sub(command), cl::cat(llmcCategory())};
  cl::list<std::string> val{
      "val",
      cl::desc("Validate on these files instead of [data] val (the run "
               "needs [data] val to have an eval program)"),
      cl::value_desc("file|glob"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> tokenizer{
      "tokenizer",
      cl::desc("A Hugging Face tokenizer.json instead of [data] tokenizer"),
      cl::value_desc("file"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> checkpointDir{
      "checkpoint-dir", cl::desc("Save checkpoints here instead of "
                                 "[checkpoint] dir (locked by the run; a "
                                 "run without --resume refuses one that "
                                 "holds a run)"),
      cl::value_desc("dir"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> steps{"steps",
                         cl::desc("Stop after this step, >= 1 (the schedule "
                                  "still spans [train] steps)"),
                         cl::init(0), cl::sub(command),
                         cl::cat(llmcCategory())};
  cl::opt<int64_t> sampleTokens{
      "sample-tokens",
      cl::desc("Tokens of the sample printed at the end (default: 300 for "
               "the built-in run, else 0)"),
      cl::init(-1), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<unsigned> threads{"threads",
                            cl::desc("CPU threads, 0 to 1024 (default 0: every core)"),
                            cl::init(0), cl::sub(command),
                            cl::cat(llmcCategory())};
  cl::opt<std::string> device{
      "device",
      cl::desc("Where to train: cpu, cuda or auto (default: [parallel] "
               "devices)"),
      cl::value_desc("cpu|cuda|auto"), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<bool> virtualRanks{
      "virtual-ranks",
      cl::desc("Run every rank of the [parallel] mesh in this process on "
               "GPU 0, each with its own arena and streams, collectives as "
               "device copies and kernels (docs/distributed.md); without it "
               "a mesh needs one process per GPU or the CPU"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> output{
      "o", cl::desc("Also write the compiled training artifact here"),
      cl::value_desc("file.llmcx"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> dumpIr{
      "dump-ir",
      cl::desc("Write DIR/00-input.mlir and DIR/NN-<pass>.mlir after every "
               "pass"),
      cl::value_desc("DIR"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> noFuse{
      "no-fuse",
      cl::desc("Leave out llmc-fuse (the losses are bitwise the same)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> trace{
      "trace",
      cl::desc("Write a Chrome/Perfetto trace of some steps here (every "
               "command on its thread or GPU stream, the host phases; open "
               "it in ui.perfetto.dev); also LLMC_TRACE=FILE"),
      cl::value_desc("file.json"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> traceSteps{
      "trace-steps",
      cl::desc("The steps --trace records, A:B or A (default: the run's "
               "third and fourth steps, after two warm-up steps; its last "
               "two when it has fewer); also LLMC_TRACE_STEPS"),
      cl::value_desc("A:B"), cl::sub(command), cl::cat(llmcCategory())};
};

/// Options of `llmc launch` (tools/LlmcLaunch.cpp, docs/distributed.md).
struct LaunchCommand {
  cl::SubCommand command{
      "launch",
      "Compile a run description once and train it with N local llmc-run\n"
      "  processes, one per GPU (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,\n"
      "  MASTER_PORT set for each). Lines are prefixed with [rank r]; only\n"
      "  rank 0 prints step lines, every rank prints its errors. If one\n"
      "  process fails the others are stopped."};
  cl::opt<std::string> input{cl::Positional, cl::desc("<run.toml|config.json>"),
                             cl::Required, cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<int> processes{"n", cl::desc("Processes (GPUs) to start: the "
                                       "number of ranks of the run's mesh"),
                         cl::value_desc("N"), cl::init(0), cl::sub(command),
                         cl::cat(llmcCategory())};
  cl::opt<std::string> output{
      "o", cl::desc("Keep the compiled artifact here (default: a temporary "
                    "directory, removed at the end)"),
      cl::value_desc("file.llmcx"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int> port{"master-port",
                    cl::desc("Rank 0's rendezvous port (default: a free one)"),
                    cl::init(0), cl::sub(command), cl::cat(llmcCategory())};
  // Passed to every llmc-run as they are.
  cl::opt<std::string> metrics{"metrics",
                               cl::desc("Write one JSON line per step here "
                                        "(rank 0)"),
                               cl::value_desc("file"), cl::sub(command),
                               cl::cat(llmcCategory())};
  cl::opt<std::string> resume{"resume", cl::desc("Continue from a checkpoint"),
                              cl::value_desc("dir"), cl::sub(command),
                              cl::cat(llmcCategory())};
  cl::opt<std::string> weights{"weights",
                               cl::desc("Start from these parameters"),
                               cl::value_desc("file"), cl::sub(command),
                               cl::cat(llmcCategory())};
  cl::list<std::string> data{"data",
                             cl::desc("Train on these files (a file or a glob; "
                                      "repeatable)"),
                             cl::value_desc("file|glob"), cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::list<std::string> val{"val",
                            cl::desc("Validate on these files (repeatable)"),
                            cl::value_desc("file|glob"), cl::sub(command),
                            cl::cat(llmcCategory())};
  cl::opt<std::string> tokenizer{"tokenizer",
                                 cl::desc("A Hugging Face tokenizer.json"),
                                 cl::value_desc("file"), cl::sub(command),
                                 cl::cat(llmcCategory())};
  cl::opt<std::string> checkpointDir{
      "checkpoint-dir", cl::desc("Save checkpoints here (rank 0 writes)"),
      cl::value_desc("dir"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> steps{"steps", cl::desc("Stop after this step"),
                         cl::init(0), cl::sub(command),
                         cl::cat(llmcCategory())};
  cl::opt<int64_t> sampleTokens{"sample-tokens",
                                cl::desc("Tokens of the sample printed at "
                                         "the end"),
                                cl::init(-1), cl::sub(command),
                                cl::cat(llmcCategory())};
  cl::opt<unsigned> threads{"threads", cl::desc("CPU threads per process, 0 to 1024"),
                            cl::init(0), cl::sub(command),
                            cl::cat(llmcCategory())};
  cl::opt<std::string> device{
      "device", cl::desc("Passed to llmc-run: cpu, cuda or auto"),
      cl::value_desc("cpu|cuda|auto"), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<bool> nccl{"nccl",
                     cl::desc("The NCCL session even for -n 1 (llmc-run "
                              "--nccl)"),
                     cl::sub(command), cl::cat(llmcCategory())};  cl::opt<std::string> trace{
      "trace",
      cl::desc("A trace of some steps (llmc train --trace): each rank writes "
               "FILE.rankN.json, rank 0 merges them into FILE"),
      cl::value_desc("file.json"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> traceSteps{
      "trace-steps", cl::desc("The steps --trace records, A:B (default: "
                              "the third and fourth)"),
      cl::value_desc("A:B"), cl::sub(command), cl::cat(llmcCategory())};
};

/// Options of `llmc plan`.
struct PlanCommand {
  cl::SubCommand command{
      "plan",
      "Compile a model and print the memory of its training step by kind\n"
      "  (the buffer plan: weights, optimizer state, gradients, activations\n"
      "  kept for backward, temporaries, the peak and the arena), the\n"
      "  communication per mesh axis, and the predicted step time on a device\n"
      "  profile (docs/planning.md). --gpus N searches the mesh first\n"
      "  (mesh = \"auto\" does too) and plans the winner."};
  cl::opt<std::string> input{cl::Positional,
                             cl::desc("<input.toml|.json|.mlir>"),
                             cl::Required, cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<int64_t> batchSize{"batch-size",
                             cl::desc("Sequences per batch (default: [train] "
                                      "batch_size; 8 for .json)"),
                             cl::init(0), cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<int64_t> seqLen{"seq-len",
                          cl::desc("Tokens per sequence (default: [train] "
                                   "seq_len; 64 for .json)"),
                          cl::init(0), cl::sub(command),
                          cl::cat(llmcCategory())};
  cl::opt<bool> forward{"forward",
                        cl::desc("Plan the forward program @loss only"),
                        cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> remat{
      "remat",
      cl::desc("Rematerialization instead of [memory] remat: none, "
               "selective, full or auto"),
      cl::value_desc("policy"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<double> budgetGiB{
      "memory-budget-gib",
      cl::desc("Memory budget for --remat=auto and for the mesh search "
               "(--gpus, mesh = \"auto\", --probe) instead of [memory] "
               "budget_gib"),
      cl::init(-1.0), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> deviceProfile{
      "device-profile",
      cl::desc("Device profile of the step-time prediction: a built-in name "
               "(h100, h200, a100, cpu; data/devices.toml) or the path of a "
               ".toml file with one profile (default: h200 for [parallel] "
               "devices cuda, cpu otherwise)"),
      cl::value_desc("name|path"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<cl::boolOrDefault> fusedKernels{
      "fused-kernels",
      cl::desc("Plan buffers for a backend that runs each elementwise fused "
               "region as one kernel: their intermediates get no storage "
               "(default: when [parallel] devices is cuda)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> peakBuffers{
      "peak-buffers",
      cl::desc("Also list the N largest buffers live at the peak: bytes, "
               "kind, the op that makes each, its model part and its last "
               "reader"),
      cl::value_desc("N"), cl::init(0), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<bool> byOp{"by-op",
                     cl::desc("Also break the predicted kernel time down by "
                              "op name (to compare with a profiler)"),
                     cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> gpus{
      "gpus",
      cl::desc("Search the mesh for N devices (as [parallel] mesh = "
               "\"auto\" does): every dp x tp x pp x cp x ep = N, ZeRO "
               "stage, remat policy and microbatch count, pruned with "
               "reasons, evaluated on probe compiles with fewer layers; "
               "prints the top five, the pruned candidates by reason and why "
               "the winner wins, then the winner's plan "
               "(docs/planning.md, \"The search\"). The budget per rank is "
               "--memory-budget-gib, else [memory] budget_gib, else the "
               "profile's memory"),
      cl::value_desc("N"), cl::init(0), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<bool> probe{
      "probe",
      cl::desc("Predict the run's own [parallel] mesh (its ZeRO stage, "
               "[memory] remat and [train] microbatches) from two probe "
               "compiles with fewer layers, as the mesh search does, instead "
               "of compiling every layer: for models too large to compile "
               "whole. Prints the step time, memory per rank, MFU and "
               "communication per axis; --nodes M splits the devices into "
               "M nodes"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> searchOnly{
      "search-only",
      cl::desc("With --gpus: print the search and stop, without compiling "
               "every layer of the winner (for models too large to compile "
               "whole)"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<bool> json{
      "json",
      cl::desc("With --gpus (or mesh = \"auto\"): print the search as one "
               "JSON object on standard output, for scripts (the fields are "
               "in docs/planning.md, \"The search\"), and stop as "
               "--search-only does"),
      cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<int64_t> nodes{
      "nodes",
      cl::desc("With --gpus: the devices are M nodes of N / M (collectives "
               "that span nodes use the profile's inter-node link; default: "
               "nodes of the profile's devices_per_node)"),
      cl::value_desc("M"), cl::init(0), cl::sub(command),
      cl::cat(llmcCategory())};
};

/// Options of `llmc verify`.
struct VerifyCommand {
  cl::SubCommand command{
      "verify",
      "Check a parallel configuration against one device: train a few\n"
      "  steps of the run's [parallel] mesh and of the same run on one device\n"
      "  (both on CPU virtual devices, same initial parameters and data) and\n"
      "  compare losses, gradient norms, gradients and parameters per model\n"
      "  part. Gradients are AdamW's first moment after step 1,\n"
      "  m1 = (1 - beta1) * clipped g1, whose relative difference is the\n"
      "  gradient's. Tolerances: losses 1e-5 relative, gradients and\n"
      "  parameters 1e-4 relative L2 per tensor (2e-2 for bf16/fp16 runs).\n"
      "  --device cuda: the mesh on virtual ranks of GPU 0 against one GPU\n"
      "  and against the mesh on CPU devices, a table and verdict each.\n"
      "  Exit 0 on PASS, 1 on FAIL (the failing parts named)."};
  cl::opt<std::string> input{cl::Positional, cl::desc("<run.toml>"),
                             cl::Required, cl::sub(command),
                             cl::cat(llmcCategory())};
  cl::opt<int64_t> steps{"steps", cl::desc("AdamW steps to compare (default 3)"),
                         cl::init(3), cl::sub(command),
                         cl::cat(llmcCategory())};
  cl::opt<unsigned> threads{"threads",
                            cl::desc("CPU threads, 0 to 1024 (default 0: every core)"),
                            cl::init(0), cl::sub(command),
                            cl::cat(llmcCategory())};
  cl::opt<std::string> keep{
      "keep",
      cl::desc("Keep the initial parameters, checkpoints and metrics of both "
               "runs in DIR (default: a temporary directory, removed)"),
      cl::value_desc("DIR"), cl::sub(command), cl::cat(llmcCategory())};
  cl::opt<std::string> perturbPart{
      "perturb-part",
      cl::desc("Tests of the FAIL path: perturb the mesh run's initial "
               "parameters of this model part"),
      cl::value_desc("part"), cl::Hidden, cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<std::string> device{
      "device",
      cl::desc("cpu (default): the mesh on CPU devices against one CPU "
               "device; cuda: the mesh on virtual ranks of GPU 0 (every "
               "rank, its collectives as device copies and kernels) against "
               "one GPU and against the mesh on CPU devices"),
      cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::sub(command),
      cl::cat(llmcCategory())};
  cl::opt<std::string> prepare{
      "prepare",
      cl::desc("With --device cuda: compile the programs and draw the "
               "initial parameters into DIR, train nothing; on a GPU "
               "machine (no compiler needed) `llmc-run verify DIR` then "
               "runs the check and prints the tables"),
      cl::value_desc("DIR"), cl::sub(command), cl::cat(llmcCategory())};
};

/// A context with every dialect llmc programs use, diagnostics printed with
/// the source line and a caret.
struct Session {
  Session() : context(makeRegistry()), diagnostics(sourceMgr, &context) {
    context.loadAllAvailableDialects();
    // The source line and caret say where; the generic op dump adds noise.
    context.printOpOnDiagnostic(false);
    // A diagnostic about a whole file (line 0: missing, unreadable) prints
    // as "path: error: message" rather than "path:0:0: error: message".
    wholeFileHandler = context.getDiagEngine().registerHandler(
        [](mlir::Diagnostic &diag) -> mlir::LogicalResult {
          auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(diag.getLocation());
          if (!loc || loc.getLine() != 0)
            return mlir::failure(); // not ours: the SourceMgr handler prints it
          const char *severity =
              diag.getSeverity() == mlir::DiagnosticSeverity::Error ? "error"
              : diag.getSeverity() == mlir::DiagnosticSeverity::Warning
                  ? "warning"
                  : "note";
          llvm::errs() << loc.getFilename().getValue() << ": " << severity
                       << ": " << diag.str() << "\n";
          return mlir::success();
        });
  }
  ~Session() { context.getDiagEngine().eraseHandler(wholeFileHandler); }
  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    llmc::registerShardingRuleModels(registry);
    return registry;
  }
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics;
  mlir::DiagnosticEngine::HandlerID wholeFileHandler = 0;
};


/// What to compile and how far (llmc compile, train and plan).
/// Loads, runs the pipeline (up to `stopAfter`), and returns the module;
/// null after a reported error.
struct CompileRequest {
  std::string input;        ///< a path; empty: `builtinText`
  std::string builtinText;  ///< a run description's TOML
  llmc::SourceOptions sourceOptions;
  std::string stopAfter;    ///< "loss", a stage, or "final"
  bool forward = false;
  bool printCost = false;
  bool fuse = true;
  bool fusionReport = false;
  std::string dumpIr;
  /// Overrides of [memory] remat and budget_gib (llmc plan --remat).
  std::string remat;
  double budgetGiB = -1;
  /// Compile for one device whatever [parallel] asks (dp = tp = 1, no sp,
  /// no ZeRO): the reference program of llmc verify.
  bool singleDevice = false;
  /// Where the program will run, instead of [parallel] devices (llmc train
  /// --device): "cuda..." plans buffers for fused kernels.
  std::string devices;
  /// Overrides the buffer plan's mode that `devices` implies (llmc compile
  /// --fused-kernels; llmc verify, which runs on the CPU, sets false).
  std::optional<bool> fusedKernels;
  /// The mesh search (issue #11): run it for this many devices whatever
  /// [parallel] says (llmc plan --gpus); 0: only for mesh = "auto", on
  /// [parallel] devices' count.
  int64_t searchDevices = 0;
  int64_t searchNodes = 0;   ///< 0: nodes of the profile's size
  std::string deviceProfile; ///< "": h200 for cuda devices, else cpu
  /// Print the search's whole report (top five, pruned by reason, why) on
  /// standard output; otherwise one line on standard error.
  bool printSearch = false;
  /// Stop after the search's report (compileModule returns
  /// kSearchOnlyDone).
  bool searchOnly = false;
  /// The report as one JSON object instead of text (llmc plan --json;
  /// docs/planning.md, "The search").
  bool json = false;
};

/// Whether a program for `devices` ([parallel] devices or --device) is
/// planned for fused kernels: "cuda" and "cuda:N", whose backend runs each
/// elementwise region as one kernel. "auto" may end on the CPU, so it keeps
/// every value stored, as "cpu" does (docs/buffers.md).
bool fusedKernelsFor(llvm::StringRef devices);
/// The --fused-kernels option of compile and plan, as a request override.
std::optional<bool> fusedKernelsOption(cl::boolOrDefault option);

struct Compiled {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::optional<llmc::RunDescription> description;
  /// The pipeline's options as compileModule ran them (the mesh after a
  /// search, the buffer plan's mode): the companions compile with them.
  llmc::CompilePipelineOptions pipeline;
};

/// Loads, runs the pipeline (up to request.stopAfter); reports errors and
/// returns an exit code.
int compileModule(Session &session, const CompileRequest &request,
                  Compiled &compiled);
/// The Executable of the program the pipeline ended with, with the training
/// settings and the companions of a training step: "logits" (the sample)
/// and, when the run has [data] val, "eval" (the validation loss: the
/// forward loss of one microbatch's rows on the step's mesh).
int buildArtifact(const Compiled &compiled, const std::string &source,
                  llmc::rt::Executable &exe);
int writeArtifact(const llmc::rt::Executable &exe, const std::string &path);
/// What the runtime's training loop needs from a run description (the
/// artifact's train.*, data.*, eval.* settings).
llmc::rt::TrainSettings trainSettingsFor(const llmc::RunDescription &run);
/// The @logits program of `model` for `batch` sequences of `seqLen`
/// tokens (canonicalized), as an Executable: the sample's program.
mlir::FailureOr<llmc::rt::Executable>
buildLogitsExecutable(mlir::MLIRContext &context, const llmc::ModelConfig &model,
                      int64_t batch, int64_t seqLen, const std::string &source);
/// Appends the companion "eval" to `exe`: the forward loss of one
/// microbatch's rows (batch_size / microbatches) of compiled.description's
/// model, compiled with compiled.pipeline's options on the same mesh
/// without its pipeline axis. Returns an exit code.
int buildEvalCompanion(const Compiled &compiled, const std::string &source,
                       llmc::rt::Executable &exe);
/// 124439808 -> "124,439,808".
std::string withThousands(int64_t value);

/// The mesh search of `mesh = "auto"` or `llmc plan --gpus`
/// (tools/LlmcPlanSearch.cpp): searches, reports, and rewrites `run` (its
/// mesh, ZeRO stage, remat, microbatches) and `module` (traced again when
/// the microbatches change; llmc.auto_mesh records the choice) for the
/// winner. Returns an exit code.
int chooseMesh(Session &session, const CompileRequest &request,
               llmc::RunDescription &run,
               mlir::OwningOpRef<mlir::ModuleOp> &module);

int runCompile(const CompileCommand &options);
int runInspect(const InspectCommand &options);
int runTrain(const TrainCommand &options);
int runPlan(const PlanCommand &options);
/// llmc plan --probe (tools/LlmcPlanSearch.cpp).
int runPlanProbe(const PlanCommand &options);
int runVerify(const VerifyCommand &options);
int runLaunch(const LaunchCommand &options);

} // namespace llmc::driver

#endif // LLMC_TOOLS_LLMCDRIVER_H
