// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The inverse of moe_dispatch for 32 tokens, top-2 of 8 experts.
// CHECK-LABEL: func.func @top2
// CHECK-SAME:    (%[[OUT:.+]]: tensor<8x10x16xf32>, %[[W:.+]]: tensor<32x2xf32>, %[[E:.+]]: tensor<32x2xi32>) -> tensor<32x16xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.moe_combine %[[OUT]], %[[W]], %[[E]] : (tensor<8x10x16xf32>, tensor<32x2xf32>, tensor<32x2xi32>) -> tensor<32x16xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<32x16xf32>
func.func @top2(%out: tensor<8x10x16xf32>, %w: tensor<32x2xf32>, %e: tensor<32x2xi32>) -> tensor<32x16xf32> {
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x16xf32>, tensor<32x2xf32>, tensor<32x2xi32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

// CHECK-LABEL: func.func @top1_bf16_i64
// CHECK-SAME:    (%[[OUT:.+]]: tensor<4x4x8xbf16>, %[[W:.+]]: tensor<16x1xbf16>, %[[E:.+]]: tensor<16x1xi64>) -> tensor<16x8xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.moe_combine %[[OUT]], %[[W]], %[[E]] : (tensor<4x4x8xbf16>, tensor<16x1xbf16>, tensor<16x1xi64>) -> tensor<16x8xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<16x8xbf16>
func.func @top1_bf16_i64(%out: tensor<4x4x8xbf16>, %w: tensor<16x1xbf16>, %e: tensor<16x1xi64>) -> tensor<16x8xbf16> {
  %y = llmc.moe_combine %out, %w, %e : (tensor<4x4x8xbf16>, tensor<16x1xbf16>, tensor<16x1xi64>) -> tensor<16x8xbf16>
  return %y : tensor<16x8xbf16>
}

// -----

// CHECK-LABEL: func.func @f16
// CHECK-SAME:    (%[[OUT:.+]]: tensor<2x4x8xf16>, %[[W:.+]]: tensor<4x2xf16>, %[[E:.+]]: tensor<4x2xi32>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.moe_combine %[[OUT]], %[[W]], %[[E]] : (tensor<2x4x8xf16>, tensor<4x2xf16>, tensor<4x2xi32>) -> tensor<4x8xf16>
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xf16>
func.func @f16(%out: tensor<2x4x8xf16>, %w: tensor<4x2xf16>, %e: tensor<4x2xi32>) -> tensor<4x8xf16> {
  %y = llmc.moe_combine %out, %w, %e : (tensor<2x4x8xf16>, tensor<4x2xf16>, tensor<4x2xi32>) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
