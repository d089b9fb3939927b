// Every subcommand has --help; llmc's own options are shown, libLLVM's are not.

// RUN: llmc --help | FileCheck %s --check-prefix=TOP
// TOP:     USAGE: llmc [subcommand] [options]
// TOP-DAG: compile - Trace a model
// TOP-DAG: train   - Train a model
// TOP-DAG: plan    - Estimate memory
// TOP-DAG: inspect - Print a model's parameters
// TOP-NOT: --x86-

// RUN: llmc compile --help | FileCheck %s --check-prefix=COMPILE
// COMPILE: USAGE: llmc compile [options] <input.toml|.json|.mlir>
// COMPILE-DAG: --emit=<value>
// COMPILE-DAG: --dump-ir=<DIR>
// COMPILE-DAG: --print-cost
// COMPILE-DAG: -o <file>

// RUN: llmc train --help | FileCheck %s --check-prefix=TRAIN
// TRAIN: not implemented yet: issue #5
// RUN: llmc plan --help | FileCheck %s --check-prefix=PLAN
// PLAN: not implemented yet: issue #11
// RUN: llmc inspect --help | FileCheck %s --check-prefix=INSPECT
// INSPECT: USAGE: llmc inspect [options] <input.toml|.json|.mlir>
