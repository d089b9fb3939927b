// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @neg_f32
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.neg %[[X]] : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xf32>
func.func @neg_f32(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = llmc.neg %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @neg_bf16
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.neg %[[X]] : tensor<2x3xbf16>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<2x3xbf16>
func.func @neg_bf16(%x: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %y = llmc.neg %x : tensor<2x3xbf16>
  return %y : tensor<2x3xbf16>
}

// -----

// CHECK-LABEL: func.func @neg_f16
// CHECK-SAME:    (%[[X:.+]]: tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.neg %[[X]] : tensor<8xf16>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<8xf16>
func.func @neg_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %y = llmc.neg %x : tensor<8xf16>
  return %y : tensor<8xf16>
}

// -----

// CHECK-LABEL: func.func @neg_i32
// CHECK-SAME:    (%[[X:.+]]: tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.neg %[[X]] : tensor<4xi32>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<4xi32>
func.func @neg_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %y = llmc.neg %x : tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @neg_i64
// CHECK-SAME:    (%[[X:.+]]: tensor<2x2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT:    %[[Y:.+]] = llmc.neg %[[X]] : tensor<2x2xi64>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<2x2xi64>
func.func @neg_i64(%x: tensor<2x2xi64>) -> tensor<2x2xi64> {
  %y = llmc.neg %x : tensor<2x2xi64>
  return %y : tensor<2x2xi64>
}

// -----

// A rank-0 tensor is a scalar.
// CHECK-LABEL: func.func @neg_rank0
// CHECK-SAME:    (%[[X:.+]]: tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.neg %[[X]] : tensor<f32>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<f32>
func.func @neg_rank0(%x: tensor<f32>) -> tensor<f32> {
  %y = llmc.neg %x : tensor<f32>
  return %y : tensor<f32>
}

// -----

// The long type form is accepted and printed in the short form when the
// types agree.
// CHECK-LABEL: func.func @neg_long_form
// CHECK-SAME:    (%[[X:.+]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.neg %[[X]] : tensor<4xf32>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<4xf32>
func.func @neg_long_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = llmc.neg %x : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
