// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// No transpose flag is printed when none is set.
// CHECK-LABEL: func.func @plain
// CHECK-SAME:    (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[C:.+]] = llmc.matmul %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4x16xf32>
func.func @plain(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// A linear layer: weights stored [out, in], shared by every batch.
// CHECK-LABEL: func.func @linear_transpose_b
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16x32xbf16>, %[[W:.+]]: tensor<96x32xbf16>) -> tensor<2x16x96xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.matmul %[[X]], %[[W]] transpose_b : tensor<2x16x32xbf16>, tensor<96x32xbf16> -> tensor<2x16x96xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<2x16x96xbf16>
func.func @linear_transpose_b(%x: tensor<2x16x32xbf16>, %w: tensor<96x32xbf16>) -> tensor<2x16x96xbf16> {
  %y = llmc.matmul %x, %w transpose_b : tensor<2x16x32xbf16>, tensor<96x32xbf16> -> tensor<2x16x96xbf16>
  return %y : tensor<2x16x96xbf16>
}

// -----

// The weight gradient: x^T dy, lhs stored [K, M].
// CHECK-LABEL: func.func @transpose_a
// CHECK-SAME:    (%[[X:.+]]: tensor<16x32xf32>, %[[DY:.+]]: tensor<16x96xf32>) -> tensor<32x96xf32>
// CHECK-NEXT:    %[[DW:.+]] = llmc.matmul %[[X]], %[[DY]] transpose_a : tensor<16x32xf32>, tensor<16x96xf32> -> tensor<32x96xf32>
// CHECK-NEXT:    return %[[DW]] : tensor<32x96xf32>
func.func @transpose_a(%x: tensor<16x32xf32>, %dy: tensor<16x96xf32>) -> tensor<32x96xf32> {
  %dw = llmc.matmul %x, %dy transpose_a : tensor<16x32xf32>, tensor<16x96xf32> -> tensor<32x96xf32>
  return %dw : tensor<32x96xf32>
}

// -----

// Both flags print in the order transpose_a, transpose_b.
// CHECK-LABEL: func.func @both_transposed
// CHECK-SAME:    (%[[A:.+]]: tensor<8x4xf32>, %[[B:.+]]: tensor<16x8xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[C:.+]] = llmc.matmul %[[A]], %[[B]] transpose_a transpose_b : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4x16xf32>
func.func @both_transposed(%a: tensor<8x4xf32>, %b: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %c = llmc.matmul %a, %b transpose_a transpose_b : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// Attention scores q k^T: batch dimensions [B, H] on both sides.
// CHECK-LABEL: func.func @batched_rhs
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x3x16x8xf32>, %[[K:.+]]: tensor<2x3x16x8xf32>) -> tensor<2x3x16x16xf32>
// CHECK-NEXT:    %[[S:.+]] = llmc.matmul %[[Q]], %[[K]] transpose_b : tensor<2x3x16x8xf32>, tensor<2x3x16x8xf32> -> tensor<2x3x16x16xf32>
// CHECK-NEXT:    return %[[S]] : tensor<2x3x16x16xf32>
func.func @batched_rhs(%q: tensor<2x3x16x8xf32>, %k: tensor<2x3x16x8xf32>) -> tensor<2x3x16x16xf32> {
  %s = llmc.matmul %q, %k transpose_b : tensor<2x3x16x8xf32>, tensor<2x3x16x8xf32> -> tensor<2x3x16x16xf32>
  return %s : tensor<2x3x16x16xf32>
}

// -----

// bf16 operands with an f32 result.
// CHECK-LABEL: func.func @bf16_to_f32
// CHECK-SAME:    (%[[A:.+]]: tensor<4x8xbf16>, %[[B:.+]]: tensor<8x16xbf16>) -> tensor<4x16xf32>
// CHECK-NEXT:    %[[C:.+]] = llmc.matmul %[[A]], %[[B]] : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4x16xf32>
func.func @bf16_to_f32(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<4x16xf32> {
  %c = llmc.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @f16_to_f16
// CHECK-SAME:    (%[[A:.+]]: tensor<4x8xf16>, %[[B:.+]]: tensor<8x2xf16>) -> tensor<4x2xf16>
// CHECK-NEXT:    %[[C:.+]] = llmc.matmul %[[A]], %[[B]] : tensor<4x8xf16>, tensor<8x2xf16> -> tensor<4x2xf16>
// CHECK-NEXT:    return %[[C]] : tensor<4x2xf16>
func.func @f16_to_f16(%a: tensor<4x8xf16>, %b: tensor<8x2xf16>) -> tensor<4x2xf16> {
  %c = llmc.matmul %a, %b : tensor<4x8xf16>, tensor<8x2xf16> -> tensor<4x2xf16>
  return %c : tensor<4x2xf16>
}

// -----

// CHECK-LABEL: func.func @integer
// CHECK-SAME:    (%[[A:.+]]: tensor<2x3xi32>, %[[B:.+]]: tensor<3x5xi32>) -> tensor<2x5xi32>
// CHECK-NEXT:    %[[C:.+]] = llmc.matmul %[[A]], %[[B]] : tensor<2x3xi32>, tensor<3x5xi32> -> tensor<2x5xi32>
// CHECK-NEXT:    return %[[C]] : tensor<2x5xi32>
func.func @integer(%a: tensor<2x3xi32>, %b: tensor<3x5xi32>) -> tensor<2x5xi32> {
  %c = llmc.matmul %a, %b : tensor<2x3xi32>, tensor<3x5xi32> -> tensor<2x5xi32>
  return %c : tensor<2x5xi32>
}
