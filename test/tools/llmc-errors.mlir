// What llmc says when the input or the command is wrong: a message naming
// the file (and line:column when it has one) and a non-zero exit.

// RUN: not llmc compile %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: cannot read the input: {{.*}}missing.mlir

// RUN: not llmc compile %s.toml 2>&1 | FileCheck %s --check-prefix=TOML
// TOML: error: run descriptions and Hugging Face configs are not supported yet (issue #3)

// RUN: not llmc compile %s.txt 2>&1 | FileCheck %s --check-prefix=EXT
// EXT: error: cannot tell what '{{.*}}.txt' holds from its extension

// The verifier's message points at the op, with line and column.
// RUN: not llmc compile %s 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: llmc-errors.mlir:[[@LINE+2]]:8: error: 'llmc.matmul' op expected contraction sizes to match, got 8 and 4
func.func @bad(%a: tensor<4x8xf32>, %b: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// Subcommands that later issues add say so and exit 2.
// RUN: not llmc train run.toml 2>&1 | FileCheck %s --check-prefix=TRAIN
// TRAIN: llmc train: not implemented yet (issue #5)
// RUN: llmc train run.toml; test $? -eq 2
// RUN: not llmc plan run.toml 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN: llmc plan: not implemented yet (issue #11)
// RUN: not llmc inspect a.llmcx 2>&1 | FileCheck %s --check-prefix=INSPECT
// INSPECT: llmc inspect: not implemented yet (issue #4)

// RUN: not llmc 2>&1 | FileCheck %s --check-prefix=NOSUB
// NOSUB: llmc: expected a subcommand (compile, train, plan, inspect)
