// RUN: llmc-opt %s --split-input-file --llmc-print-cost | FileCheck %s
// RUN: llmc-opt %s --split-input-file --llmc-print-cost=totals-only | FileCheck %s --check-prefix=TOTALS
// The pass only reports: the IR that comes out is the IR that went in.
// RUN: llmc-opt %s --split-input-file --llmc-print-cost -o %t.out > /dev/null
// RUN: llmc-opt %s --split-input-file -o %t.ref && diff %t.ref %t.out

// Rows are keyed by the model part (the NameLoc) and in program order.
// [4, 8] x [8, 16]: 4*16 outputs of 8 multiply-adds = 1024 flops; reads
// (32 + 128) * 4 bytes, writes 64 * 4. gelu: 8 flops per element.
// CHECK-LABEL: cost of @mlp
// CHECK-NEXT:    mlp.fc   llmc.matmul  flops 1024  read 640  written 256
// CHECK-NEXT:    mlp.act  llmc.gelu    flops 512  read 256  written 256
// CHECK-NEXT:    total                 flops 1536  read 896  written 512
// TOTALS-LABEL: cost of @mlp
// TOTALS-NEXT:    total  flops 1536  read 896  written 512
func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %y = llmc.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32> loc("mlp.fc")
  %z = llmc.gelu %y tanh : tensor<4x16xf32> loc("mlp.act")
  return %z : tensor<4x16xf32>
}

// -----

// Ops of other dialects have no cost interface and are not listed; a
// function with no llmc op reports zero totals.
// CHECK-LABEL: cost of @no_llmc_ops
// CHECK-NOT:     arith
// CHECK-NEXT:    total  flops 0  read 0  written 0
func.func @no_llmc_ops(%a: i32) -> i32 {
  %b = arith.addi %a, %a : i32
  return %b : i32
}

// -----

// A bf16 reshape is a free view: no flops, no bytes.
// CHECK-LABEL: cost of @view
// CHECK-NEXT:    split_heads  llmc.reshape  flops 0  read 0  written 0
func.func @view(%x: tensor<2x8x64xbf16>) -> tensor<2x8x4x16xbf16> {
  %y = llmc.reshape %x : tensor<2x8x64xbf16> -> tensor<2x8x4x16xbf16> loc("split_heads")
  return %y : tensor<2x8x4x16xbf16>
}
