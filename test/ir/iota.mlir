// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Token positions of a [B, T] batch.
// CHECK-LABEL: func.func @positions
// CHECK-NEXT:    %[[POS:.+]] = llmc.iota dim 1 : tensor<2x16xi32>
// CHECK-NEXT:    return %[[POS]] : tensor<2x16xi32>
func.func @positions() -> tensor<2x16xi32> {
  %pos = llmc.iota dim 1 : tensor<2x16xi32>
  return %pos : tensor<2x16xi32>
}

// -----

// CHECK-LABEL: func.func @rows_i64
// CHECK-NEXT:    %[[ROW:.+]] = llmc.iota dim 0 : tensor<16x16xi64>
// CHECK-NEXT:    return %[[ROW]] : tensor<16x16xi64>
func.func @rows_i64() -> tensor<16x16xi64> {
  %row = llmc.iota dim 0 : tensor<16x16xi64>
  return %row : tensor<16x16xi64>
}

// -----

// Float indices, for angles such as those of rope.
// CHECK-LABEL: func.func @float_f32
// CHECK-NEXT:    %[[I:.+]] = llmc.iota dim 0 : tensor<32xf32>
// CHECK-NEXT:    return %[[I]] : tensor<32xf32>
func.func @float_f32() -> tensor<32xf32> {
  %i = llmc.iota dim 0 : tensor<32xf32>
  return %i : tensor<32xf32>
}

// -----

// CHECK-LABEL: func.func @float_bf16
// CHECK-NEXT:    %[[I:.+]] = llmc.iota dim 2 : tensor<2x3x4xbf16>
// CHECK-NEXT:    return %[[I]] : tensor<2x3x4xbf16>
func.func @float_bf16() -> tensor<2x3x4xbf16> {
  %i = llmc.iota dim 2 : tensor<2x3x4xbf16>
  return %i : tensor<2x3x4xbf16>
}

// -----

// CHECK-LABEL: func.func @float_f16
// CHECK-NEXT:    %[[I:.+]] = llmc.iota dim 0 : tensor<8x2xf16>
// CHECK-NEXT:    return %[[I]] : tensor<8x2xf16>
func.func @float_f16() -> tensor<8x2xf16> {
  %i = llmc.iota dim 0 : tensor<8x2xf16>
  return %i : tensor<8x2xf16>
}
