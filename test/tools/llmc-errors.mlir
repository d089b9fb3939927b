// What llmc says when the input or the command is wrong: a message naming
// the file (and line:column when it has one) and a non-zero exit.

// RUN: not llmc compile %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: {{.*}}missing.mlir: error: cannot read the input: {{.*}}missing.mlir

// RUN: not llmc compile %t.missing.toml 2>&1 | FileCheck %s --check-prefix=TOML
// TOML: {{.*}}missing.toml: error: cannot read the run description: no such file or directory; check the path

// A bad key in a run description: file, line and column, the source line,
// and a suggestion.
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 64\nlayers = 1\nwidth = 32\nheads = 4\nmax_positions = 16\nlayer = 2\n' > %t.bad.toml
// RUN: not llmc compile %t.bad.toml 2>&1 | FileCheck %s --check-prefix=KEY
// KEY: bad.toml:8:1: error: unknown key 'layer' in [model]; did you mean 'layers'?
// KEY-NEXT: layer = 2
// KEY-NEXT: ^

// mesh = "auto" is no longer pending (the search, #11), and it needs the
// number of devices.
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 64\nlayers = 1\nwidth = 32\nheads = 4\nmax_positions = 64\n[parallel]\ndevices = "cpu"\nmesh = "auto"\n' > %t.auto.toml
// RUN: not llmc compile %t.auto.toml --quiet 2>&1 | FileCheck %s --check-prefix=PENDING
// PENDING-NOT: warning
// PENDING: auto.toml: error: mesh = "auto" needs the number of devices, got devices = "cpu"; write devices = "cuda:N" (or "cpu:N"), or pass llmc plan --gpus N

// A mesh that cannot split the model is an error at its key, with the values
// that work.
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 64\nlayers = 1\nwidth = 32\nheads = 4\nmax_positions = 64\n[parallel]\ndevices = "cpu"\ntp = 8\n' > %t.tp8.toml
// RUN: not llmc compile %t.tp8.toml --quiet 2>&1 | FileCheck %s --check-prefix=MESH
// MESH: tp8.toml:10:6: error: expected tp to divide heads, vocab_size and ffn_width (tensor parallelism splits them over the tp ranks), got 8, which does not divide heads 4; valid tp: 1, 2, 4

// More than one rank on the default devices ("auto", which may be GPUs).
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 64\nlayers = 1\nwidth = 32\nheads = 4\nmax_positions = 64\n[parallel]\ndp = 2\n' > %t.dp.toml
// RUN: not llmc compile %t.dp.toml --quiet 2>&1 | FileCheck %s --check-prefix=LAUNCH
// LAUNCH: dp.toml:8:1: error: expected one rank on devices "auto" (the default), got 2 ranks (dp 2); for GPUs set devices = "cuda" and train with `llmc launch -n 2 RUN.toml` (one process per GPU, docs/distributed.md), or set devices = "cpu:2" to run this mesh on CPU devices

// RUN: not llmc compile %s.txt 2>&1 | FileCheck %s --check-prefix=EXT
// EXT: error: cannot tell what '{{.*}}.txt' holds from its extension

// The verifier's message points at the op, with line and column.
// RUN: not llmc compile %s 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: llmc-errors.mlir:[[@LINE+2]]:8: error: 'llmc.matmul' op expected contraction sizes to match, got 8 and 4
func.func @bad(%a: tensor<4x8xf32>, %b: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// llmc train needs a run description; an .mlir program is bad usage (2).
// RUN: not llmc train run.toml 2>&1 | FileCheck %s --check-prefix=TRAIN
// TRAIN: run.toml: error: cannot read the run description: no such file or directory; check the path
// RUN: not llmc train %s 2>&1 | FileCheck %s --check-prefix=TRAINMLIR
// TRAINMLIR: llmc train: expected a run description (.toml) or a Hugging Face config.json, got '{{.*}}llmc-errors.mlir'; an .mlir program has no training settings
// RUN: llmc train %s; test $? -eq 2

// RUN: not llmc plan run.toml 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN: run.toml: error: cannot read the run description: no such file or directory; check the path
// RUN: not llmc inspect a.llmcx 2>&1 | FileCheck %s --check-prefix=INSPECT
// INSPECT: a.llmcx: error: cannot open 'a.llmcx': write it with `llmc compile FILE -o a.llmcx`
// RUN: not llmc inspect a.bin 2>&1 | FileCheck %s --check-prefix=EXT2
// EXT2: a.bin: error: cannot tell what 'a.bin' holds from its extension

// RUN: not llmc 2>&1 | FileCheck %s --check-prefix=NOSUB
// NOSUB: llmc: expected a subcommand (compile, inspect, train, plan, verify, launch, export, eval, sample, tokenize, report, trace)
