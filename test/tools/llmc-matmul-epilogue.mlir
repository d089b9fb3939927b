// GEMM epilogues (docs/fusion.md, "GEMM epilogues"): codegen lowers each
// matmul_epilogue region whose body is a bias add [+ gelu tanh | + residual
// add] as one MatmulEpilogue command. GPT-2 tiny (one layer, two
// microbatches): per microbatch c_attn (bias), attn.c_proj and mlp.c_proj
// (bias+residual) and c_fc (bias+gelu, its pre-activation kept for the
// backward); the backward's GEMMs stay plain. No bias gradient joins its
// weight-gradient GEMM here: those GEMMs run beside the optimizer (after
// the gradient norm reads the bias gradients), and codegen defers a bias
// gradient only when nothing reads it before its GEMM.

// RUN: rm -rf %t && mkdir -p %t
// RUN: llmc compile %S/Inputs/train-tiny.toml -o %t/fused.llmcx
// RUN: llmc inspect %t/fused.llmcx | FileCheck %s --check-prefix=FUSED
// FUSED: 30 GEMMs; with an epilogue: bias 2, bias+gelu 0, bias+gelu+pre-activation 2, bias+residual 4, bias gradient 0

// Without fusion there is no region, so no epilogue.
// RUN: llmc compile %S/Inputs/train-tiny.toml --no-fuse -o %t/plain.llmcx
// RUN: llmc inspect %t/plain.llmcx | FileCheck %s --check-prefix=PLAIN
// PLAIN: 30 GEMMs; with an epilogue: bias 0, bias+gelu 0, bias+gelu+pre-activation 0, bias+residual 0, bias gradient 0

// That the CPU runs these commands with the unfused ops' bits (f32) is
// llmc-train-no-fuse.mlir: training with and without fusion, bitwise.
