// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Both operands with the contraction innermost: [M, K] and [N, K].
// CHECK-LABEL: func.func @forward
// CHECK-SAME:    (%[[A:.+]]: tensor<16x32xf8E4M3FN>, %[[B:.+]]: tensor<64x32xf8E4M3FN>, %[[SA:.+]]: tensor<f32>, %[[SB:.+]]: tensor<f32>) -> tensor<16x64xbf16>
// CHECK-NEXT:    %[[C:.+]] = llmc.scaled_matmul %[[A]], %[[B]] scales(%[[SA]], %[[SB]]) : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xbf16>
// CHECK-NEXT:    return %[[C]] : tensor<16x64xbf16>
func.func @forward(%a: tensor<16x32xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %sa: tensor<f32>, %sb: tensor<f32>) -> tensor<16x64xbf16> {
  %c = llmc.scaled_matmul %a, %b scales(%sa, %sb) : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xbf16>
  return %c : tensor<16x64xbf16>
}

// -----

// A gradient in E5M2 times a weight in E4M3, into f32.
// CHECK-LABEL: func.func @gradient
// CHECK:         llmc.scaled_matmul %{{.+}}, %{{.+}} scales(%{{.+}}, %{{.+}}) : tensor<16x64xf8E5M2>, tensor<32x64xf8E4M3FN> -> tensor<16x32xf32>
func.func @gradient(%g: tensor<16x64xf8E5M2>, %w: tensor<32x64xf8E4M3FN>, %sg: tensor<f32>, %sw: tensor<f32>) -> tensor<16x32xf32> {
  %c = llmc.scaled_matmul %g, %w scales(%sg, %sw) : tensor<16x64xf8E5M2>, tensor<32x64xf8E4M3FN> -> tensor<16x32xf32>
  return %c : tensor<16x32xf32>
}
