// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Rows of a table at a [B, T] batch of ids.
// CHECK-LABEL: func.func @rows
// CHECK-SAME:    (%[[TABLE:.+]]: tensor<64x8xf32>, %[[IDS:.+]]: tensor<2x3xi32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    %[[R:.+]] = llmc.gather %[[TABLE]][%[[IDS]]] dim 0 : (tensor<64x8xf32>, tensor<2x3xi32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x3x8xf32>
func.func @rows(%table: tensor<64x8xf32>, %ids: tensor<2x3xi32>) -> tensor<2x3x8xf32> {
  %r = llmc.gather %table[%ids] dim 0 : (tensor<64x8xf32>, tensor<2x3xi32>) -> tensor<2x3x8xf32>
  return %r : tensor<2x3x8xf32>
}

// -----

// The indices' shape replaces dimension `dim` in place.
// CHECK-LABEL: func.func @middle_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<2x10x4xbf16>, %[[I:.+]]: tensor<5xi64>) -> tensor<2x5x4xbf16>
// CHECK-NEXT:    %[[R:.+]] = llmc.gather %[[X]][%[[I]]] dim 1 : (tensor<2x10x4xbf16>, tensor<5xi64>) -> tensor<2x5x4xbf16>
// CHECK-NEXT:    return %[[R]] : tensor<2x5x4xbf16>
func.func @middle_dim(%x: tensor<2x10x4xbf16>, %i: tensor<5xi64>) -> tensor<2x5x4xbf16> {
  %r = llmc.gather %x[%i] dim 1 : (tensor<2x10x4xbf16>, tensor<5xi64>) -> tensor<2x5x4xbf16>
  return %r : tensor<2x5x4xbf16>
}

// -----

// A rank-0 index drops the dimension.
// CHECK-LABEL: func.func @scalar_index
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf16>, %[[I:.+]]: tensor<i32>) -> tensor<4xf16>
// CHECK-NEXT:    %[[R:.+]] = llmc.gather %[[X]][%[[I]]] dim 1 : (tensor<4x8xf16>, tensor<i32>) -> tensor<4xf16>
// CHECK-NEXT:    return %[[R]] : tensor<4xf16>
func.func @scalar_index(%x: tensor<4x8xf16>, %i: tensor<i32>) -> tensor<4xf16> {
  %r = llmc.gather %x[%i] dim 1 : (tensor<4x8xf16>, tensor<i32>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @integer_values
// CHECK-SAME:    (%[[X:.+]]: tensor<16xi32>, %[[I:.+]]: tensor<2x2xi32>) -> tensor<2x2xi32>
// CHECK-NEXT:    %[[R:.+]] = llmc.gather %[[X]][%[[I]]] dim 0 : (tensor<16xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
// CHECK-NEXT:    return %[[R]] : tensor<2x2xi32>
func.func @integer_values(%x: tensor<16xi32>, %i: tensor<2x2xi32>) -> tensor<2x2xi32> {
  %r = llmc.gather %x[%i] dim 0 : (tensor<16xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  return %r : tensor<2x2xi32>
}

// -----

// CHECK-LABEL: func.func @bool_values
// CHECK-SAME:    (%[[M:.+]]: tensor<4x6xi1>, %[[I:.+]]: tensor<3xi64>) -> tensor<3x6xi1>
// CHECK-NEXT:    %[[R:.+]] = llmc.gather %[[M]][%[[I]]] dim 0 : (tensor<4x6xi1>, tensor<3xi64>) -> tensor<3x6xi1>
// CHECK-NEXT:    return %[[R]] : tensor<3x6xi1>
func.func @bool_values(%m: tensor<4x6xi1>, %i: tensor<3xi64>) -> tensor<3x6xi1> {
  %r = llmc.gather %m[%i] dim 0 : (tensor<4x6xi1>, tensor<3xi64>) -> tensor<3x6xi1>
  return %r : tensor<3x6xi1>
}
