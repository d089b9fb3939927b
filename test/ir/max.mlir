// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @max_f32
// CHECK-SAME:    (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[C:.+]] = llmc.max %[[A]], %[[B]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    return %[[C]] : tensor<4x8xf32>
func.func @max_f32(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = llmc.max %a, %b : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @max_bf16
// CHECK-SAME:    (%[[A:.+]]: tensor<2x3xbf16>, %[[B:.+]]: tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK-NEXT:    %[[C:.+]] = llmc.max %[[A]], %[[B]] : tensor<2x3xbf16>{{$}}
// CHECK-NEXT:    return %[[C]] : tensor<2x3xbf16>
func.func @max_bf16(%a: tensor<2x3xbf16>, %b: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %c = llmc.max %a, %b : tensor<2x3xbf16>
  return %c : tensor<2x3xbf16>
}

// -----

// CHECK-LABEL: func.func @max_f16
// CHECK-SAME:    (%[[A:.+]]: tensor<8xf16>, %[[B:.+]]: tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %[[C:.+]] = llmc.max %[[A]], %[[B]] : tensor<8xf16>{{$}}
// CHECK-NEXT:    return %[[C]] : tensor<8xf16>
func.func @max_f16(%a: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<8xf16> {
  %c = llmc.max %a, %b : tensor<8xf16>
  return %c : tensor<8xf16>
}

// -----

// CHECK-LABEL: func.func @max_i32
// CHECK-SAME:    (%[[A:.+]]: tensor<4xi32>, %[[B:.+]]: tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %[[C:.+]] = llmc.max %[[A]], %[[B]] : tensor<4xi32>{{$}}
// CHECK-NEXT:    return %[[C]] : tensor<4xi32>
func.func @max_i32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %c = llmc.max %a, %b : tensor<4xi32>
  return %c : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @max_i64
// CHECK-SAME:    (%[[A:.+]]: tensor<2x2xi64>, %[[B:.+]]: tensor<2x2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT:    %[[C:.+]] = llmc.max %[[A]], %[[B]] : tensor<2x2xi64>{{$}}
// CHECK-NEXT:    return %[[C]] : tensor<2x2xi64>
func.func @max_i64(%a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {
  %c = llmc.max %a, %b : tensor<2x2xi64>
  return %c : tensor<2x2xi64>
}

// -----

// A rank-0 tensor is a scalar.
// CHECK-LABEL: func.func @max_rank0
// CHECK-SAME:    (%[[A:.+]]: tensor<f32>, %[[B:.+]]: tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    %[[C:.+]] = llmc.max %[[A]], %[[B]] : tensor<f32>{{$}}
// CHECK-NEXT:    return %[[C]] : tensor<f32>
func.func @max_rank0(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %c = llmc.max %a, %b : tensor<f32>
  return %c : tensor<f32>
}

// -----

// The long type form is accepted and printed in the short form when the
// types agree.
// CHECK-LABEL: func.func @max_long_form
// CHECK-SAME:    (%[[A:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[C:.+]] = llmc.max %[[A]], %[[B]] : tensor<4xf32>{{$}}
// CHECK-NEXT:    return %[[C]] : tensor<4xf32>
func.func @max_long_form(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %c = llmc.max %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// The same value on both sides.
// CHECK-LABEL: func.func @max_same_operand
// CHECK-SAME:    (%[[A:.+]]: tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %[[C:.+]] = llmc.max %[[A]], %[[A]] : tensor<4xi32>{{$}}
// CHECK-NEXT:    return %[[C]] : tensor<4xi32>
func.func @max_same_operand(%a: tensor<4xi32>) -> tensor<4xi32> {
  %c = llmc.max %a, %a : tensor<4xi32>
  return %c : tensor<4xi32>
}
