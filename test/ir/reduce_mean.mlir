// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Every dimension: a rank-0 result.
// CHECK-LABEL: func.func @to_scalar
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_mean %[[X]] dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[M]] : tensor<f32>
func.func @to_scalar(%x: tensor<4x8xf32>) -> tensor<f32> {
  %m = llmc.reduce_mean %x dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %m : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @keep_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_mean %[[X]] dims [2] keep_dims : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:    return %[[M]] : tensor<2x4x1xf32>
func.func @keep_dim(%x: tensor<2x4x8xf32>) -> tensor<2x4x1xf32> {
  %m = llmc.reduce_mean %x dims [2] keep_dims : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  return %m : tensor<2x4x1xf32>
}

// -----

// A bf16 input with an f32 result accumulates in f32.
// CHECK-LABEL: func.func @bf16_to_f32
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xbf16>) -> tensor<4xf32>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_mean %[[X]] dims [1] : tensor<4x8xbf16> -> tensor<4xf32>
// CHECK-NEXT:    return %[[M]] : tensor<4xf32>
func.func @bf16_to_f32(%x: tensor<4x8xbf16>) -> tensor<4xf32> {
  %m = llmc.reduce_mean %x dims [1] : tensor<4x8xbf16> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @f16_to_f16
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf16>) -> tensor<1x8xf16>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_mean %[[X]] dims [0] keep_dims : tensor<4x8xf16> -> tensor<1x8xf16>
// CHECK-NEXT:    return %[[M]] : tensor<1x8xf16>
func.func @f16_to_f16(%x: tensor<4x8xf16>) -> tensor<1x8xf16> {
  %m = llmc.reduce_mean %x dims [0] keep_dims : tensor<4x8xf16> -> tensor<1x8xf16>
  return %m : tensor<1x8xf16>
}
