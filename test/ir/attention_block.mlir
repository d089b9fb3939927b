// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Grouped queries, a block of 8 queries against 4 keys, with its lse.
// CHECK-LABEL: func.func @block
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x8x16xf32>, %[[K:.+]]: tensor<2x2x4x16xf32>, %[[V:.+]]: tensor<2x2x4x16xf32>, %[[QP:.+]]: tensor<8xi32>, %[[KP:.+]]: tensor<4xi32>)
// CHECK-NEXT:    %[[O:.+]], %[[L:.+]] = llmc.attention_block %[[Q]], %[[K]], %[[V]] positions(%[[QP]], %[[KP]]) : (tensor<2x4x8x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<8xi32>, tensor<4xi32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
// CHECK-NEXT:    return %[[O]], %[[L]]
func.func @block(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x4x16xf32>, %v: tensor<2x2x4x16xf32>, %qp: tensor<8xi32>, %kp: tensor<4xi32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>) {
  %o, %l = llmc.attention_block %q, %k, %v positions(%qp, %kp) : (tensor<2x4x8x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<8xi32>, tensor<4xi32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  return %o, %l : tensor<2x4x8x16xf32>, tensor<2x4x8xf32>
}

// -----

// The backward, with a scale.
// CHECK-LABEL: func.func @block_grad
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x2x8x16xbf16>, %[[K:.+]]: tensor<1x1x8x16xbf16>, %[[O:.+]]: tensor<1x2x8x16xbf16>, %[[L:.+]]: tensor<1x2x8xf32>, %[[P:.+]]: tensor<8xi32>)
// CHECK-NEXT:    %[[DQ:.+]], %{{.+}}, %{{.+}} = llmc.attention_block_grad %[[Q]], %[[K]], %[[K]], %[[O]], %[[O]], %[[L]] positions(%[[P]], %[[P]]) scale 2.500000e-01 : (tensor<1x2x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>)
// CHECK-NEXT:    return %[[DQ]]
func.func @block_grad(%q: tensor<1x2x8x16xbf16>, %k: tensor<1x1x8x16xbf16>, %o: tensor<1x2x8x16xbf16>, %l: tensor<1x2x8xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xbf16> {
  %dq, %dk, %dv = llmc.attention_block_grad %q, %k, %k, %o, %o, %l positions(%p, %p) scale 2.500000e-01 : (tensor<1x2x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xbf16>, tensor<1x1x8x16xbf16>, tensor<1x1x8x16xbf16>)
  return %dq : tensor<1x2x8x16xbf16>
}
