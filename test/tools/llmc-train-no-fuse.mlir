// llmc-fuse changes what becomes one kernel, never a number: the CPU backend
// runs a region's ops as the commands they were, so training with and
// without fusion gives bitwise the same losses, gradient norms and
// parameters (no tolerance: the same f32 kernels in the same order per
// value). A matmul_epilogue region that codegen makes one MatmulEpilogue
// command (llmc-matmul-epilogue.mlir) computes the same f32 bits too: the
// f32 product, the f32 adds, gelu in f64 from the f32 sum.
// DEFINE: %{strip} = sed -E 's/, "tokens_per_s".*//'

// RUN: rm -rf %t && mkdir -p %t
// RUN: llmc compile %S/Inputs/train-tiny.toml --quiet --fusion-report | FileCheck %s --check-prefix=REPORT
// REPORT: fusion of @train_step: kernels [[BEFORE:[0-9]+]] -> {{[0-9]+}}, regions {{[1-9][0-9]*}} elementwise, {{[1-9][0-9]*}} row_reduction, {{[1-9][0-9]*}} matmul_epilogue, {{[1-9][0-9]*}} classifier_loss (with {{[1-9][0-9]*}} elementwise runs nested in them); device-memory bytes removed {{[1-9][0-9]*}}
// RUN: llmc compile %S/Inputs/train-tiny.toml --quiet --no-fuse --fusion-report | count 0

// RUN: llmc train %S/Inputs/train-tiny.toml --metrics %t/fused.jsonl --checkpoint-dir %t/fused --sample-tokens 0 > /dev/null
// RUN: llmc train %S/Inputs/train-tiny.toml --no-fuse --metrics %t/plain.jsonl --checkpoint-dir %t/plain --sample-tokens 0 > /dev/null
// RUN: %{strip} %t/fused.jsonl > %t/fused.txt
// RUN: %{strip} %t/plain.jsonl > %t/plain.txt
// RUN: diff %t/fused.txt %t/plain.txt
// RUN: cmp %t/fused/step-00000008/model.safetensors %t/plain/step-00000008/model.safetensors
// RUN: FileCheck %s --check-prefix=METRICS < %t/fused.txt
// METRICS-COUNT-8: {"step": {{[1-8]}}, "loss": {{[0-9.]+}},
