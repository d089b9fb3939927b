// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @f32
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.silu %[[X]] : tensor<2x16x32xf32>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<2x16x32xf32>
func.func @f32(%x: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %y = llmc.silu %x : tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}

// -----

// CHECK-LABEL: func.func @bf16
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.silu %[[X]] : tensor<4x8xbf16>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xbf16>
func.func @bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %y = llmc.silu %x : tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @scalar_f16
// CHECK-SAME:    (%[[X:.+]]: tensor<f16>) -> tensor<f16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.silu %[[X]] : tensor<f16>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<f16>
func.func @scalar_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = llmc.silu %x : tensor<f16>
  return %y : tensor<f16>
}

// -----

// The long type form is accepted and printed in the short form when the
// types agree.
// CHECK-LABEL: func.func @long_form
// CHECK-SAME:    (%[[X:.+]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.silu %[[X]] : tensor<8xf32>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<8xf32>
func.func @long_form(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = llmc.silu %x : tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}
