// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// [B, T, H, D] -> [B, H, T, D]
// CHECK-LABEL: func.func @heads_first
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16x4x8xbf16>) -> tensor<2x4x16x8xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.transpose %[[X]] perm [0, 2, 1, 3] : tensor<2x16x4x8xbf16> -> tensor<2x4x16x8xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<2x4x16x8xbf16>
func.func @heads_first(%x: tensor<2x16x4x8xbf16>) -> tensor<2x4x16x8xbf16> {
  %y = llmc.transpose %x perm [0, 2, 1, 3] : tensor<2x16x4x8xbf16> -> tensor<2x4x16x8xbf16>
  return %y : tensor<2x4x16x8xbf16>
}

// -----

// Result dimension i is operand dimension perm[i]: a rotation, not its inverse.
// CHECK-LABEL: func.func @rotate
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3x5xf32>) -> tensor<5x2x3xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.transpose %[[X]] perm [2, 0, 1] : tensor<2x3x5xf32> -> tensor<5x2x3xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<5x2x3xf32>
func.func @rotate(%x: tensor<2x3x5xf32>) -> tensor<5x2x3xf32> {
  %y = llmc.transpose %x perm [2, 0, 1] : tensor<2x3x5xf32> -> tensor<5x2x3xf32>
  return %y : tensor<5x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @matrix_i32
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xi32>) -> tensor<8x4xi32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.transpose %[[X]] perm [1, 0] : tensor<4x8xi32> -> tensor<8x4xi32>
// CHECK-NEXT:    return %[[Y]] : tensor<8x4xi32>
func.func @matrix_i32(%x: tensor<4x8xi32>) -> tensor<8x4xi32> {
  %y = llmc.transpose %x perm [1, 0] : tensor<4x8xi32> -> tensor<8x4xi32>
  return %y : tensor<8x4xi32>
}

// -----

// CHECK-LABEL: func.func @mask_i1
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xi1>) -> tensor<3x2xi1>
// CHECK-NEXT:    %[[Y:.+]] = llmc.transpose %[[X]] perm [1, 0] : tensor<2x3xi1> -> tensor<3x2xi1>
// CHECK-NEXT:    return %[[Y]] : tensor<3x2xi1>
func.func @mask_i1(%x: tensor<2x3xi1>) -> tensor<3x2xi1> {
  %y = llmc.transpose %x perm [1, 0] : tensor<2x3xi1> -> tensor<3x2xi1>
  return %y : tensor<3x2xi1>
}

// -----

// CHECK-LABEL: func.func @identity
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.transpose %[[X]] perm [0, 1] : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xf16>
func.func @identity(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %y = llmc.transpose %x perm [0, 1] : tensor<4x8xf16> -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}

// -----

// A scalar has the empty permutation.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME:    (%[[X:.+]]: tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %[[Y:.+]] = llmc.transpose %[[X]] perm [] : tensor<i64> -> tensor<i64>
// CHECK-NEXT:    return %[[Y]] : tensor<i64>
func.func @scalar(%x: tensor<i64>) -> tensor<i64> {
  %y = llmc.transpose %x perm [] : tensor<i64> -> tensor<i64>
  return %y : tensor<i64>
}
