// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @tokens
// CHECK-SAME:    (%[[WTE:.+]]: tensor<64x8xf32>, %[[TOKENS:.+]]: tensor<2x16xi32>) -> tensor<2x16x8xf32>
// CHECK-NEXT:    %[[H:.+]] = llmc.embedding %[[WTE]][%[[TOKENS]]] : (tensor<64x8xf32>, tensor<2x16xi32>) -> tensor<2x16x8xf32>
// CHECK-NEXT:    return %[[H]] : tensor<2x16x8xf32>
func.func @tokens(%wte: tensor<64x8xf32>, %tokens: tensor<2x16xi32>) -> tensor<2x16x8xf32> {
  %h = llmc.embedding %wte[%tokens] : (tensor<64x8xf32>, tensor<2x16xi32>) -> tensor<2x16x8xf32>
  return %h : tensor<2x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @bf16_i64
// CHECK-SAME:    (%[[WPE:.+]]: tensor<16x8xbf16>, %[[POS:.+]]: tensor<16xi64>) -> tensor<16x8xbf16>
// CHECK-NEXT:    %[[H:.+]] = llmc.embedding %[[WPE]][%[[POS]]] : (tensor<16x8xbf16>, tensor<16xi64>) -> tensor<16x8xbf16>
// CHECK-NEXT:    return %[[H]] : tensor<16x8xbf16>
func.func @bf16_i64(%wpe: tensor<16x8xbf16>, %pos: tensor<16xi64>) -> tensor<16x8xbf16> {
  %h = llmc.embedding %wpe[%pos] : (tensor<16x8xbf16>, tensor<16xi64>) -> tensor<16x8xbf16>
  return %h : tensor<16x8xbf16>
}

// -----

// A single id gives a single row.
// CHECK-LABEL: func.func @scalar_id
// CHECK-SAME:    (%[[T:.+]]: tensor<64x8xf16>, %[[ID:.+]]: tensor<i32>) -> tensor<8xf16>
// CHECK-NEXT:    %[[H:.+]] = llmc.embedding %[[T]][%[[ID]]] : (tensor<64x8xf16>, tensor<i32>) -> tensor<8xf16>
// CHECK-NEXT:    return %[[H]] : tensor<8xf16>
func.func @scalar_id(%t: tensor<64x8xf16>, %id: tensor<i32>) -> tensor<8xf16> {
  %h = llmc.embedding %t[%id] : (tensor<64x8xf16>, tensor<i32>) -> tensor<8xf16>
  return %h : tensor<8xf16>
}
