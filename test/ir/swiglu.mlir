// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// silu(gate) * up: the operand order is meaningful.
// CHECK-LABEL: func.func @f32
// CHECK-SAME:    (%[[GATE:.+]]: tensor<2x16x32xf32>, %[[UP:.+]]: tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT:    %[[H:.+]] = llmc.swiglu %[[GATE]], %[[UP]] : tensor<2x16x32xf32>{{$}}
// CHECK-NEXT:    return %[[H]] : tensor<2x16x32xf32>
func.func @f32(%gate: tensor<2x16x32xf32>, %up: tensor<2x16x32xf32>) -> tensor<2x16x32xf32> {
  %h = llmc.swiglu %gate, %up : tensor<2x16x32xf32>
  return %h : tensor<2x16x32xf32>
}

// -----

// CHECK-LABEL: func.func @bf16_swapped
// CHECK-SAME:    (%[[A:.+]]: tensor<4x8xbf16>, %[[B:.+]]: tensor<4x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[H:.+]] = llmc.swiglu %[[B]], %[[A]] : tensor<4x8xbf16>{{$}}
// CHECK-NEXT:    return %[[H]] : tensor<4x8xbf16>
func.func @bf16_swapped(%a: tensor<4x8xbf16>, %b: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %h = llmc.swiglu %b, %a : tensor<4x8xbf16>
  return %h : tensor<4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @scalar_f16
// CHECK-SAME:    (%[[GATE:.+]]: tensor<f16>, %[[UP:.+]]: tensor<f16>) -> tensor<f16>
// CHECK-NEXT:    %[[H:.+]] = llmc.swiglu %[[GATE]], %[[UP]] : tensor<f16>{{$}}
// CHECK-NEXT:    return %[[H]] : tensor<f16>
func.func @scalar_f16(%gate: tensor<f16>, %up: tensor<f16>) -> tensor<f16> {
  %h = llmc.swiglu %gate, %up : tensor<f16>
  return %h : tensor<f16>
}

// -----

// The long type form is accepted and printed in the short form when the
// types agree.
// CHECK-LABEL: func.func @long_form
// CHECK-SAME:    (%[[GATE:.+]]: tensor<8xf32>, %[[UP:.+]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[H:.+]] = llmc.swiglu %[[GATE]], %[[UP]] : tensor<8xf32>{{$}}
// CHECK-NEXT:    return %[[H]] : tensor<8xf32>
func.func @long_form(%gate: tensor<8xf32>, %up: tensor<8xf32>) -> tensor<8xf32> {
  %h = llmc.swiglu %gate, %up : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %h : tensor<8xf32>
}
