// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// 32 tokens, top-2 of 8 experts, capacity 10 per expert.
// CHECK-LABEL: func.func @top2
// CHECK-SAME:    (%[[X:.+]]: tensor<32x16xf32>, %[[E:.+]]: tensor<32x2xi32>) -> tensor<8x10x16xf32>
// CHECK-NEXT:    %[[BUF:.+]] = llmc.moe_dispatch %[[X]], %[[E]] : (tensor<32x16xf32>, tensor<32x2xi32>) -> tensor<8x10x16xf32>
// CHECK-NEXT:    return %[[BUF]] : tensor<8x10x16xf32>
func.func @top2(%x: tensor<32x16xf32>, %e: tensor<32x2xi32>) -> tensor<8x10x16xf32> {
  %buf = llmc.moe_dispatch %x, %e : (tensor<32x16xf32>, tensor<32x2xi32>) -> tensor<8x10x16xf32>
  return %buf : tensor<8x10x16xf32>
}

// -----

// CHECK-LABEL: func.func @top1_bf16_i64
// CHECK-SAME:    (%[[X:.+]]: tensor<16x8xbf16>, %[[E:.+]]: tensor<16x1xi64>) -> tensor<4x4x8xbf16>
// CHECK-NEXT:    %[[BUF:.+]] = llmc.moe_dispatch %[[X]], %[[E]] : (tensor<16x8xbf16>, tensor<16x1xi64>) -> tensor<4x4x8xbf16>
// CHECK-NEXT:    return %[[BUF]] : tensor<4x4x8xbf16>
func.func @top1_bf16_i64(%x: tensor<16x8xbf16>, %e: tensor<16x1xi64>) -> tensor<4x4x8xbf16> {
  %buf = llmc.moe_dispatch %x, %e : (tensor<16x8xbf16>, tensor<16x1xi64>) -> tensor<4x4x8xbf16>
  return %buf : tensor<4x4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @f16
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf16>, %[[E:.+]]: tensor<4x2xi32>) -> tensor<2x4x8xf16>
// CHECK-NEXT:    %[[BUF:.+]] = llmc.moe_dispatch %[[X]], %[[E]] : (tensor<4x8xf16>, tensor<4x2xi32>) -> tensor<2x4x8xf16>
// CHECK-NEXT:    return %[[BUF]] : tensor<2x4x8xf16>
func.func @f16(%x: tensor<4x8xf16>, %e: tensor<4x2xi32>) -> tensor<2x4x8xf16> {
  %buf = llmc.moe_dispatch %x, %e : (tensor<4x8xf16>, tensor<4x2xi32>) -> tensor<2x4x8xf16>
  return %buf : tensor<2x4x8xf16>
}
