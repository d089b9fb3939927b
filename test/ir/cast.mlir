// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @f32_to_bf16
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xbf16>
func.func @f32_to_bf16(%x: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  %y = llmc.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @f16_to_f32
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.cast %[[X]] : tensor<2x3xf16> -> tensor<2x3xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<2x3xf32>
func.func @f16_to_f32(%x: tensor<2x3xf16>) -> tensor<2x3xf32> {
  %y = llmc.cast %x : tensor<2x3xf16> -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @float_to_int
// CHECK-SAME:    (%[[X:.+]]: tensor<8xbf16>) -> tensor<8xi32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.cast %[[X]] : tensor<8xbf16> -> tensor<8xi32>
// CHECK-NEXT:    return %[[Y]] : tensor<8xi32>
func.func @float_to_int(%x: tensor<8xbf16>) -> tensor<8xi32> {
  %y = llmc.cast %x : tensor<8xbf16> -> tensor<8xi32>
  return %y : tensor<8xi32>
}

// -----

// CHECK-LABEL: func.func @int_to_float
// CHECK-SAME:    (%[[X:.+]]: tensor<8xi64>) -> tensor<8xf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.cast %[[X]] : tensor<8xi64> -> tensor<8xf16>
// CHECK-NEXT:    return %[[Y]] : tensor<8xf16>
func.func @int_to_float(%x: tensor<8xi64>) -> tensor<8xf16> {
  %y = llmc.cast %x : tensor<8xi64> -> tensor<8xf16>
  return %y : tensor<8xf16>
}

// -----

// CHECK-LABEL: func.func @int_to_bool
// CHECK-SAME:    (%[[X:.+]]: tensor<4xi32>) -> tensor<4xi1>
// CHECK-NEXT:    %[[Y:.+]] = llmc.cast %[[X]] : tensor<4xi32> -> tensor<4xi1>
// CHECK-NEXT:    return %[[Y]] : tensor<4xi1>
func.func @int_to_bool(%x: tensor<4xi32>) -> tensor<4xi1> {
  %y = llmc.cast %x : tensor<4xi32> -> tensor<4xi1>
  return %y : tensor<4xi1>
}

// -----

// A mask turned into multiplicative weights.
// CHECK-LABEL: func.func @bool_to_float
// CHECK-SAME:    (%[[X:.+]]: tensor<4xi1>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.cast %[[X]] : tensor<4xi1> -> tensor<4xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<4xf32>
func.func @bool_to_float(%x: tensor<4xi1>) -> tensor<4xf32> {
  %y = llmc.cast %x : tensor<4xi1> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @rank0
// CHECK-SAME:    (%[[X:.+]]: tensor<f32>) -> tensor<bf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.cast %[[X]] : tensor<f32> -> tensor<bf16>
// CHECK-NEXT:    return %[[Y]] : tensor<bf16>
func.func @rank0(%x: tensor<f32>) -> tensor<bf16> {
  %y = llmc.cast %x : tensor<f32> -> tensor<bf16>
  return %y : tensor<bf16>
}

// -----

// A cast to the same type is valid; parsing does not fold it away.
// CHECK-LABEL: func.func @same_type
// CHECK-SAME:    (%[[X:.+]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.cast %[[X]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<4xf32>
func.func @same_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = llmc.cast %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
