// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// A mean over [B, T] positions: dloss is a scalar, dlogits has the
// logits' type (bf16 here). ignore_index is not printed when absent.
// CHECK-LABEL: func.func @mean_bf16
// CHECK-SAME:    (%[[L:.+]]: tensor<2x4x16xbf16>, %[[T:.+]]: tensor<2x4xi32>, %[[G:.+]]: tensor<f32>)
// CHECK-NEXT:    %[[D:.+]] = llmc.cross_entropy_grad %[[L]], %[[T]], %[[G]] reduction mean : (tensor<2x4x16xbf16>, tensor<2x4xi32>, tensor<f32>) -> tensor<2x4x16xbf16>
// CHECK-NEXT:    return %[[D]]
func.func @mean_bf16(%l: tensor<2x4x16xbf16>, %t: tensor<2x4xi32>, %g: tensor<f32>) -> tensor<2x4x16xbf16> {
  %d = llmc.cross_entropy_grad %l, %t, %g reduction mean : (tensor<2x4x16xbf16>, tensor<2x4xi32>, tensor<f32>) -> tensor<2x4x16xbf16>
  return %d : tensor<2x4x16xbf16>
}

// -----

// none: one cotangent per position; an ignore_index; i64 targets.
// CHECK-LABEL: func.func @none_ignore
// CHECK:         llmc.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} ignore_index -100 reduction none : (tensor<8x33xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<8x33xf32>
func.func @none_ignore(%l: tensor<8x33xf32>, %t: tensor<8xi64>, %g: tensor<8xf32>) -> tensor<8x33xf32> {
  %d = llmc.cross_entropy_grad %l, %t, %g ignore_index -100 reduction none : (tensor<8x33xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<8x33xf32>
  return %d : tensor<8x33xf32>
}

// -----

// The forward's lse as an operand: printed after dloss.
// CHECK-LABEL: func.func @with_lse
// CHECK-SAME:    (%[[L:.+]]: tensor<2x4x16xbf16>, %[[T:.+]]: tensor<2x4xi32>, %[[G:.+]]: tensor<f32>, %[[S:.+]]: tensor<2x4xf32>)
// CHECK-NEXT:    %[[D:.+]] = llmc.cross_entropy_grad %[[L]], %[[T]], %[[G]] lse %[[S]] ignore_index -1 reduction sum : (tensor<2x4x16xbf16>, tensor<2x4xi32>, tensor<f32>, tensor<2x4xf32>) -> tensor<2x4x16xbf16>
// CHECK-NEXT:    return %[[D]]
func.func @with_lse(%l: tensor<2x4x16xbf16>, %t: tensor<2x4xi32>, %g: tensor<f32>, %s: tensor<2x4xf32>) -> tensor<2x4x16xbf16> {
  %d = llmc.cross_entropy_grad %l, %t, %g lse %s ignore_index -1 reduction sum : (tensor<2x4x16xbf16>, tensor<2x4xi32>, tensor<f32>, tensor<2x4xf32>) -> tensor<2x4x16xbf16>
  return %d : tensor<2x4x16xbf16>
}
