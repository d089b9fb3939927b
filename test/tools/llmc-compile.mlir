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

// A run description compiles to the training step: the input, then every
// pass of the pipeline, canonicalize and cse again after the optimizer.
// RUN: rm -rf %t.train && llmc compile %llmc_src_root/examples/gpt2-tiny.toml --dump-ir=%t.train --quiet
// RUN: ls %t.train | FileCheck %s --check-prefix=TRAINDUMP
// TRAINDUMP:      00-input.mlir
// TRAINDUMP-NEXT: 01-canonicalize.mlir
// TRAINDUMP-NEXT: 02-cse.mlir
// TRAINDUMP-NEXT: 03-llmc-autodiff.mlir
// TRAINDUMP-NEXT: 04-llmc-optimizer.mlir
// TRAINDUMP-NEXT: 05-canonicalize.mlir
// TRAINDUMP-NEXT: 06-cse.mlir
// TRAINDUMP-NEXT: 07-llmc-share-loss-statistics.mlir
// TRAINDUMP-NEXT: 08-llmc-fold-attention-layout.mlir
// TRAINDUMP-NEXT: 09-llmc-fuse.mlir
// TRAINDUMP-NEXT: 10-llmc-plan-buffers.mlir
// TRAINDUMP-NOT:  11-
// The loss gradient reads the forward's log-sum-exp.
// RUN: FileCheck %s --check-prefix=SHARELSE < %t.train/07-llmc-share-loss-statistics.mlir
// SHARELSE: %{{.+}}, %[[LSE:.+]] = llmc.cross_entropy
// SHARELSE: llmc.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} lse %[[LSE]]
// The fusion decisions are visible in the dump: each region says its
// kind and, by its location, the model part it comes from.
// RUN: FileCheck %s --check-prefix=FUSEDUMP < %t.train/09-llmc-fuse.mlir
// FUSEDUMP-DAG: llmc.fused matmul_epilogue
// FUSEDUMP-DAG: llmc.fused row_reduction
// FUSEDUMP-DAG: llmc.fused classifier_loss
// FUSEDUMP-DAG: llmc.fused elementwise
// RUN: FileCheck %s --check-prefix=AUTODIFF < %t.train/03-llmc-autodiff.mlir
// AUTODIFF: func.func @train_step({{.*}}) -> (tensor<f32> {llmc.name = "loss"}, tensor<128x64xf32> {llmc.name = "grad.transformer.wte.weight"}
// RUN: FileCheck %s --check-prefix=OPTIMIZER < %t.train/04-llmc-optimizer.mlir
// OPTIMIZER: llmc.lr_schedule %{{.+}} cosine peak 3.000000e-04 min 0.000000e+00 warmup 0 total 100

// --emit stops after a pass, named by its first run or by its dump's name.
// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.toml --emit=llmc-autodiff | FileCheck %s --check-prefix=EMIT
// EMIT:     func.func @train_step
// EMIT-NOT: optimizer.m.
// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.toml --emit=01-canonicalize | FileCheck %s --check-prefix=EMIT1
// EMIT1-NOT: @train_step
// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.toml --emit=loss | FileCheck %s --check-prefix=EMITLOSS
// EMITLOSS:     func.func @loss
// EMITLOSS-NOT: @train_step
// RUN: not llmc compile %llmc_src_root/examples/gpt2-tiny.toml --emit=bogus 2>&1 | FileCheck %s --check-prefix=BADEMIT
// BADEMIT: llmc: unknown --emit stage 'bogus'; expected loss, final, or a pass of the pipeline: 01-canonicalize, 02-cse, 03-llmc-autodiff, 04-llmc-optimizer, 05-canonicalize, 06-cse, 07-llmc-share-loss-statistics, 08-llmc-fold-attention-layout, 09-llmc-fuse, 10-llmc-plan-buffers
// --forward compiles @loss only (fuses it and plans its buffers).
// RUN: rm -rf %t.fwd && llmc compile %llmc_src_root/examples/gpt2-tiny.toml --forward --dump-ir=%t.fwd --quiet
// RUN: ls %t.fwd | FileCheck %s --check-prefix=FWDDUMP
// FWDDUMP:      02-cse.mlir
// FWDDUMP-NEXT: 03-llmc-fold-attention-layout.mlir
// FWDDUMP-NEXT: 04-llmc-fuse.mlir
// FWDDUMP-NEXT: 05-llmc-plan-buffers.mlir
// FWDDUMP-NOT:  06-
