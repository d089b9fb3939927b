// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The table gradient of a gather of rows.
// CHECK-LABEL: func.func @rows
// CHECK-SAME:    (%[[ZEROS:.+]]: tensor<64x8xf32>, %[[IDS:.+]]: tensor<2x3xi32>, %[[DY:.+]]: tensor<2x3x8xf32>) -> tensor<64x8xf32>
// CHECK-NEXT:    %[[G:.+]] = llmc.scatter_add %[[ZEROS]][%[[IDS]]], %[[DY]] dim 0 : (tensor<64x8xf32>, tensor<2x3xi32>, tensor<2x3x8xf32>) -> tensor<64x8xf32>
// CHECK-NEXT:    return %[[G]] : tensor<64x8xf32>
func.func @rows(%zeros: tensor<64x8xf32>, %ids: tensor<2x3xi32>, %dy: tensor<2x3x8xf32>) -> tensor<64x8xf32> {
  %g = llmc.scatter_add %zeros[%ids], %dy dim 0 : (tensor<64x8xf32>, tensor<2x3xi32>, tensor<2x3x8xf32>) -> tensor<64x8xf32>
  return %g : tensor<64x8xf32>
}

// -----

// CHECK-LABEL: func.func @last_dim
// CHECK-SAME:    (%[[D:.+]]: tensor<4x10xbf16>, %[[I:.+]]: tensor<5xi64>, %[[U:.+]]: tensor<4x5xbf16>) -> tensor<4x10xbf16>
// CHECK-NEXT:    %[[R:.+]] = llmc.scatter_add %[[D]][%[[I]]], %[[U]] dim 1 : (tensor<4x10xbf16>, tensor<5xi64>, tensor<4x5xbf16>) -> tensor<4x10xbf16>
// CHECK-NEXT:    return %[[R]] : tensor<4x10xbf16>
func.func @last_dim(%d: tensor<4x10xbf16>, %i: tensor<5xi64>, %u: tensor<4x5xbf16>) -> tensor<4x10xbf16> {
  %r = llmc.scatter_add %d[%i], %u dim 1 : (tensor<4x10xbf16>, tensor<5xi64>, tensor<4x5xbf16>) -> tensor<4x10xbf16>
  return %r : tensor<4x10xbf16>
}

// -----

// A rank-0 index adds one slice.
// CHECK-LABEL: func.func @scalar_index
// CHECK-SAME:    (%[[D:.+]]: tensor<16x4xf16>, %[[I:.+]]: tensor<i32>, %[[U:.+]]: tensor<4xf16>) -> tensor<16x4xf16>
// CHECK-NEXT:    %[[R:.+]] = llmc.scatter_add %[[D]][%[[I]]], %[[U]] dim 0 : (tensor<16x4xf16>, tensor<i32>, tensor<4xf16>) -> tensor<16x4xf16>
// CHECK-NEXT:    return %[[R]] : tensor<16x4xf16>
func.func @scalar_index(%d: tensor<16x4xf16>, %i: tensor<i32>, %u: tensor<4xf16>) -> tensor<16x4xf16> {
  %r = llmc.scatter_add %d[%i], %u dim 0 : (tensor<16x4xf16>, tensor<i32>, tensor<4xf16>) -> tensor<16x4xf16>
  return %r : tensor<16x4xf16>
}

// -----

// Counting occurrences: integer destination and updates.
// CHECK-LABEL: func.func @histogram
// CHECK-SAME:    (%[[D:.+]]: tensor<8xi64>, %[[I:.+]]: tensor<32xi32>, %[[ONES:.+]]: tensor<32xi64>) -> tensor<8xi64>
// CHECK-NEXT:    %[[R:.+]] = llmc.scatter_add %[[D]][%[[I]]], %[[ONES]] dim 0 : (tensor<8xi64>, tensor<32xi32>, tensor<32xi64>) -> tensor<8xi64>
// CHECK-NEXT:    return %[[R]] : tensor<8xi64>
func.func @histogram(%d: tensor<8xi64>, %i: tensor<32xi32>, %ones: tensor<32xi64>) -> tensor<8xi64> {
  %r = llmc.scatter_add %d[%i], %ones dim 0 : (tensor<8xi64>, tensor<32xi32>, tensor<32xi64>) -> tensor<8xi64>
  return %r : tensor<8xi64>
}
