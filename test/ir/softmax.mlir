// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Attention probabilities over the key positions.
// CHECK-LABEL: func.func @last_dim
// CHECK-SAME:    (%[[S:.+]]: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
// CHECK-NEXT:    %[[P:.+]] = llmc.softmax %[[S]] dim 3 : tensor<2x4x16x16xf32>{{$}}
// CHECK-NEXT:    return %[[P]] : tensor<2x4x16x16xf32>
func.func @last_dim(%s: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %p = llmc.softmax %s dim 3 : tensor<2x4x16x16xf32>
  return %p : tensor<2x4x16x16xf32>
}

// -----

// CHECK-LABEL: func.func @first_dim_bf16
// CHECK-SAME:    (%[[X:.+]]: tensor<8x4xbf16>) -> tensor<8x4xbf16>
// CHECK-NEXT:    %[[P:.+]] = llmc.softmax %[[X]] dim 0 : tensor<8x4xbf16>{{$}}
// CHECK-NEXT:    return %[[P]] : tensor<8x4xbf16>
func.func @first_dim_bf16(%x: tensor<8x4xbf16>) -> tensor<8x4xbf16> {
  %p = llmc.softmax %x dim 0 : tensor<8x4xbf16>
  return %p : tensor<8x4xbf16>
}

// -----

// CHECK-LABEL: func.func @vector_f16
// CHECK-SAME:    (%[[X:.+]]: tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %[[P:.+]] = llmc.softmax %[[X]] dim 0 : tensor<8xf16>{{$}}
// CHECK-NEXT:    return %[[P]] : tensor<8xf16>
func.func @vector_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %p = llmc.softmax %x dim 0 : tensor<8xf16>
  return %p : tensor<8xf16>
}

// -----

// The long type form is accepted and printed in the short form when the
// types agree.
// CHECK-LABEL: func.func @long_form
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.+]] = llmc.softmax %[[X]] dim 1 : tensor<4x8xf32>{{$}}
// CHECK-NEXT:    return %[[P]] : tensor<4x8xf32>
func.func @long_form(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %p = llmc.softmax %x dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}
