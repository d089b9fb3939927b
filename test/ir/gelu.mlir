// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The GPT-2 approximation.
// CHECK-LABEL: func.func @tanh_bf16
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16x32xbf16>) -> tensor<2x16x32xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.gelu %[[X]] tanh : tensor<2x16x32xbf16>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<2x16x32xbf16>
func.func @tanh_bf16(%x: tensor<2x16x32xbf16>) -> tensor<2x16x32xbf16> {
  %y = llmc.gelu %x tanh : tensor<2x16x32xbf16>
  return %y : tensor<2x16x32xbf16>
}

// -----

// CHECK-LABEL: func.func @erf_f32
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.gelu %[[X]] erf : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xf32>
func.func @erf_f32(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = llmc.gelu %x erf : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @scalar_f16
// CHECK-SAME:    (%[[X:.+]]: tensor<f16>) -> tensor<f16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.gelu %[[X]] tanh : tensor<f16>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<f16>
func.func @scalar_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = llmc.gelu %x tanh : tensor<f16>
  return %y : tensor<f16>
}

// -----

// The long type form is accepted and printed in the short form when the
// types agree.
// CHECK-LABEL: func.func @long_form
// CHECK-SAME:    (%[[X:.+]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.gelu %[[X]] erf : tensor<8xf32>{{$}}
// CHECK-NEXT:    return %[[Y]] : tensor<8xf32>
func.func @long_form(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = llmc.gelu %x erf : tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}
