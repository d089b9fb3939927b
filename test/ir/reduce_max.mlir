// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The row maximum of a softmax, kept for broadcasting back.
// CHECK-LABEL: func.func @keep_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_max %[[X]] dims [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    return %[[M]] : tensor<4x1xf32>
func.func @keep_dim(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %m = llmc.reduce_max %x dims [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
  return %m : tensor<4x1xf32>
}

// -----

// No keep_dims is printed when it is not set.
// CHECK-LABEL: func.func @drop_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xbf16>) -> tensor<8xbf16>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_max %[[X]] dims [0] : tensor<4x8xbf16> -> tensor<8xbf16>
// CHECK-NEXT:    return %[[M]] : tensor<8xbf16>
func.func @drop_dim(%x: tensor<4x8xbf16>) -> tensor<8xbf16> {
  %m = llmc.reduce_max %x dims [0] : tensor<4x8xbf16> -> tensor<8xbf16>
  return %m : tensor<8xbf16>
}

// -----

// CHECK-LABEL: func.func @f16_inner_dims
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3x4xf16>) -> tensor<2xf16>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_max %[[X]] dims [1, 2] : tensor<2x3x4xf16> -> tensor<2xf16>
// CHECK-NEXT:    return %[[M]] : tensor<2xf16>
func.func @f16_inner_dims(%x: tensor<2x3x4xf16>) -> tensor<2xf16> {
  %m = llmc.reduce_max %x dims [1, 2] : tensor<2x3x4xf16> -> tensor<2xf16>
  return %m : tensor<2xf16>
}

// -----

// CHECK-LABEL: func.func @to_scalar
// CHECK-SAME:    (%[[X:.+]]: tensor<8xi32>) -> tensor<i32>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_max %[[X]] dims [0] : tensor<8xi32> -> tensor<i32>
// CHECK-NEXT:    return %[[M]] : tensor<i32>
func.func @to_scalar(%x: tensor<8xi32>) -> tensor<i32> {
  %m = llmc.reduce_max %x dims [0] : tensor<8xi32> -> tensor<i32>
  return %m : tensor<i32>
}

// -----

// CHECK-LABEL: func.func @i64_keep_all
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xi64>) -> tensor<1x1xi64>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_max %[[X]] dims [0, 1] keep_dims : tensor<2x3xi64> -> tensor<1x1xi64>
// CHECK-NEXT:    return %[[M]] : tensor<1x1xi64>
func.func @i64_keep_all(%x: tensor<2x3xi64>) -> tensor<1x1xi64> {
  %m = llmc.reduce_max %x dims [0, 1] keep_dims : tensor<2x3xi64> -> tensor<1x1xi64>
  return %m : tensor<1x1xi64>
}
