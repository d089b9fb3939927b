// Every subcommand has --help; llmc's own options are shown, libLLVM's are not.
// The overview and the environment variables (docs/environment.md) are in
// `llmc --help` only: a subcommand's help starts with its own description.

// RUN: llmc --help | FileCheck %s --check-prefix=TOP
// TOP:     OVERVIEW: llmc: compile and train language models
// TOP:     USAGE: llmc [subcommand] [options]
// TOP-DAG: compile - Trace a model
// TOP-DAG: train   - Compile a run description and train it
// TOP-DAG: plan    - Compile a model and print the memory
// TOP-DAG: inspect - Print a model's parameters
// TOP-DAG: verify  - Check a parallel configuration against one device
// TOP-DAG: launch  - Compile a run description once and train it with N
// TOP-DAG: export  - Write a checkpoint as a Hugging Face model folder
// TOP-DAG: trace   - Work with traces
// TOP-NOT: --x86-
// TOP:     ENVIRONMENT (docs/environment.md):
// TOP-NEXT:  LLMC_PROFILE=1|shapes

// RUN: llmc train --help | FileCheck %s --check-prefix=NO-OVERVIEW
// RUN: llmc report --help | FileCheck %s --check-prefix=NO-OVERVIEW
// NO-OVERVIEW-NOT: OVERVIEW
// NO-OVERVIEW-NOT: llmc compile FILE
// NO-OVERVIEW:     SUBCOMMAND '{{train|report}}':
// NO-OVERVIEW-NOT: ENVIRONMENT

// llmc-run's help lists the same variables.
// RUN: llmc-run --help | FileCheck %s --check-prefix=RUN-ENV
// RUN-ENV: ENVIRONMENT (docs/environment.md):
// RUN-ENV: LLMC_KERNEL_CACHE=DIR

// RUN: llmc export --help | FileCheck %s --check-prefix=EXPORT
// EXPORT: USAGE: llmc export [options] <checkpoint dir>
// EXPORT-DAG: --dtype=<string>
// EXPORT-DAG: --force
// EXPORT-DAG: -o <dir>
// EXPORT-DAG: --shard-size=<string>

// RUN: llmc compile --help | FileCheck %s --check-prefix=COMPILE
// COMPILE: USAGE: llmc compile [options] <input.toml|.json|.mlir>
// COMPILE-DAG: --emit=<stage>
// COMPILE-DAG: --forward
// COMPILE-DAG: --logits
// COMPILE-DAG: --dump-ir=<DIR>
// COMPILE-DAG: --print-cost
// COMPILE-DAG: -o <file>

// RUN: llmc train --help | FileCheck %s --check-prefix=TRAIN
// TRAIN: USAGE: llmc train [options] [<run.toml|config.json>]
// TRAIN-DAG: --metrics=<file>
// TRAIN-DAG: --resume=<dir>
// TRAIN-DAG: --weights=<file>
// TRAIN-DAG: --checkpoint-dir=<dir>
// TRAIN-DAG: --sample-tokens=<long>
// TRAIN-DAG: --trace=<file.json>
// TRAIN-DAG: --trace-steps=<A:B>
// RUN: llmc plan --help | FileCheck %s --check-prefix=PLAN
// PLAN: USAGE: llmc plan [options] <input.toml|.json|.mlir>
// RUN: llmc launch --help | FileCheck %s --check-prefix=LAUNCH
// LAUNCH: USAGE: llmc launch [options] <run.toml|config.json>
// LAUNCH-DAG: -n <N>
// LAUNCH-DAG: --master-port=<int>
// LAUNCH-DAG: --nccl
// LAUNCH-DAG: --steps=<long>
// LAUNCH-DAG: --trace=<file.json>
// RUN: llmc trace --help | FileCheck %s --check-prefix=TRACE
// TRACE: USAGE: llmc trace [options] merge <OUT.json> <IN.json>...
// RUN: llmc inspect --help | FileCheck %s --check-prefix=INSPECT
// INSPECT: USAGE: llmc inspect [options] <input.toml|.json|.mlir>
// RUN: llmc verify --help | FileCheck %s --check-prefix=VERIFY
// VERIFY: USAGE: llmc verify [options] <run.toml>
// VERIFY-DAG: --steps=<long>
// VERIFY-DAG: --keep=<DIR>
// VERIFY-DAG: --threads=<uint>
// VERIFY-NOT: --perturb-part

// --version names llmc and the commit it was built from (12 hex digits,
// "-modified" for a changed tree, "unknown" outside git), not LLVM.
// RUN: llmc --version | FileCheck %s --check-prefix=VERSION
// RUN: llmc-run --version | FileCheck %s --check-prefix=VERSION
// VERSION: {{^llmc [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}(-modified)?|unknown)\)$}}
// VERSION-NOT: LLVM
