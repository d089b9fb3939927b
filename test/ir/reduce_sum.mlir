// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// No keep_dims is printed when it is not set.
// CHECK-LABEL: func.func @drop_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[S:.+]] = llmc.reduce_sum %[[X]] dims [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT:    return %[[S]] : tensor<4xf32>
func.func @drop_dim(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = llmc.reduce_sum %x dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @keep_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[S:.+]] = llmc.reduce_sum %[[X]] dims [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    return %[[S]] : tensor<4x1xf32>
func.func @keep_dim(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %s = llmc.reduce_sum %x dims [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
  return %s : tensor<4x1xf32>
}

// -----

// A bf16 input with an f32 result accumulates in f32.
// CHECK-LABEL: func.func @bf16_to_f32
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xbf16>) -> tensor<4xf32>
// CHECK-NEXT:    %[[S:.+]] = llmc.reduce_sum %[[X]] dims [1] : tensor<4x8xbf16> -> tensor<4xf32>
// CHECK-NEXT:    return %[[S]] : tensor<4xf32>
func.func @bf16_to_f32(%x: tensor<4x8xbf16>) -> tensor<4xf32> {
  %s = llmc.reduce_sum %x dims [1] : tensor<4x8xbf16> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @f16_to_f32_keep_dims
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3x4xf16>) -> tensor<1x3x1xf32>
// CHECK-NEXT:    %[[S:.+]] = llmc.reduce_sum %[[X]] dims [0, 2] keep_dims : tensor<2x3x4xf16> -> tensor<1x3x1xf32>
// CHECK-NEXT:    return %[[S]] : tensor<1x3x1xf32>
func.func @f16_to_f32_keep_dims(%x: tensor<2x3x4xf16>) -> tensor<1x3x1xf32> {
  %s = llmc.reduce_sum %x dims [0, 2] keep_dims : tensor<2x3x4xf16> -> tensor<1x3x1xf32>
  return %s : tensor<1x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @bf16_to_bf16
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xbf16>) -> tensor<8xbf16>
// CHECK-NEXT:    %[[S:.+]] = llmc.reduce_sum %[[X]] dims [0] : tensor<4x8xbf16> -> tensor<8xbf16>
// CHECK-NEXT:    return %[[S]] : tensor<8xbf16>
func.func @bf16_to_bf16(%x: tensor<4x8xbf16>) -> tensor<8xbf16> {
  %s = llmc.reduce_sum %x dims [0] : tensor<4x8xbf16> -> tensor<8xbf16>
  return %s : tensor<8xbf16>
}

// -----

// Reducing every dimension gives a rank-0 result.
// CHECK-LABEL: func.func @to_scalar
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xi32>) -> tensor<i32>
// CHECK-NEXT:    %[[S:.+]] = llmc.reduce_sum %[[X]] dims [0, 1] : tensor<4x8xi32> -> tensor<i32>
// CHECK-NEXT:    return %[[S]] : tensor<i32>
func.func @to_scalar(%x: tensor<4x8xi32>) -> tensor<i32> {
  %s = llmc.reduce_sum %x dims [0, 1] : tensor<4x8xi32> -> tensor<i32>
  return %s : tensor<i32>
}

// -----

// CHECK-LABEL: func.func @i64
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xi64>) -> tensor<4x1xi64>
// CHECK-NEXT:    %[[S:.+]] = llmc.reduce_sum %[[X]] dims [1] keep_dims : tensor<4x8xi64> -> tensor<4x1xi64>
// CHECK-NEXT:    return %[[S]] : tensor<4x1xi64>
func.func @i64(%x: tensor<4x8xi64>) -> tensor<4x1xi64> {
  %s = llmc.reduce_sum %x dims [1] keep_dims : tensor<4x8xi64> -> tensor<4x1xi64>
  return %s : tensor<4x1xi64>
}
