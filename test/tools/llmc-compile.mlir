// The main job: llmc compile of the GPT-2 tiny example. Pins the cost report
// of the parts whose numbers are easy to derive by hand (B=2, T=16, C=64,
// vocabulary 128), and that the IR comes out with its locations.

// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.mlir --print-cost --quiet | FileCheck %s --check-prefix=COST
// COST-LABEL: cost of @loss
// The embedding reads 32 ids and their 32 rows of 64 floats, not the table.
// COST:       wte       llmc.embedding  flops 0  read 8320  written 8192
// lm_head: [2, 16, 64] x [128, 64]^T = 2 * (2*16*128) * 64 flops.
// COST:       lm_head   llmc.matmul  flops 524288
// COST:       total

// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.mlir --locations | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @loss
// IR:       llmc.attention {{.*}} causal
// IR:       llmc.cross_entropy {{.*}} reduction mean {{.*}} loc("loss")

// --dump-ir writes the input and one file per pass, numbered in order.
// RUN: rm -rf %t && llmc compile %llmc_src_root/examples/gpt2-tiny.mlir --dump-ir=%t --quiet
// RUN: ls %t | FileCheck %s --check-prefix=DUMP
// DUMP:      00-input.mlir
// DUMP-NEXT: 01-canonicalize.mlir
// DUMP-NEXT: 02-cse.mlir
// RUN: FileCheck %s --check-prefix=DUMPLOC < %t/02-cse.mlir
// DUMPLOC: loc("h.1.mlp.act")
