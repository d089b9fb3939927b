// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Mixtral routing: top-2 of 8 experts, weights renormalized.
// CHECK-LABEL: func.func @top2_normalize
// CHECK-SAME:    (%[[ROUTER:.+]]: tensor<32x8xf32>) -> (tensor<32x2xf32>, tensor<32x2xi32>)
// CHECK-NEXT:    %[[W:.+]], %[[E:.+]] = llmc.moe_topk %[[ROUTER]] k 2 normalize : tensor<32x8xf32> -> tensor<32x2xf32>, tensor<32x2xi32>
// CHECK-NEXT:    return %[[W]], %[[E]] : tensor<32x2xf32>, tensor<32x2xi32>
func.func @top2_normalize(%router: tensor<32x8xf32>) -> (tensor<32x2xf32>, tensor<32x2xi32>) {
  %w, %e = llmc.moe_topk %router k 2 normalize : tensor<32x8xf32> -> tensor<32x2xf32>, tensor<32x2xi32>
  return %w, %e : tensor<32x2xf32>, tensor<32x2xi32>
}

// -----

// No normalize is printed when it is not set.
// CHECK-LABEL: func.func @top1_bf16
// CHECK-SAME:    (%[[ROUTER:.+]]: tensor<16x4xbf16>) -> (tensor<16x1xbf16>, tensor<16x1xi64>)
// CHECK-NEXT:    %[[W:.+]], %[[E:.+]] = llmc.moe_topk %[[ROUTER]] k 1 : tensor<16x4xbf16> -> tensor<16x1xbf16>, tensor<16x1xi64>
// CHECK-NEXT:    return %[[W]], %[[E]] : tensor<16x1xbf16>, tensor<16x1xi64>
func.func @top1_bf16(%router: tensor<16x4xbf16>) -> (tensor<16x1xbf16>, tensor<16x1xi64>) {
  %w, %e = llmc.moe_topk %router k 1 : tensor<16x4xbf16> -> tensor<16x1xbf16>, tensor<16x1xi64>
  return %w, %e : tensor<16x1xbf16>, tensor<16x1xi64>
}

// -----

// k may be every expert.
// CHECK-LABEL: func.func @all_experts_f16
// CHECK-SAME:    (%[[ROUTER:.+]]: tensor<8x4xf16>) -> (tensor<8x4xf16>, tensor<8x4xi32>)
// CHECK-NEXT:    %[[W:.+]], %[[E:.+]] = llmc.moe_topk %[[ROUTER]] k 4 normalize : tensor<8x4xf16> -> tensor<8x4xf16>, tensor<8x4xi32>
// CHECK-NEXT:    return %[[W]], %[[E]] : tensor<8x4xf16>, tensor<8x4xi32>
func.func @all_experts_f16(%router: tensor<8x4xf16>) -> (tensor<8x4xf16>, tensor<8x4xi32>) {
  %w, %e = llmc.moe_topk %router k 4 normalize : tensor<8x4xf16> -> tensor<8x4xf16>, tensor<8x4xi32>
  return %w, %e : tensor<8x4xf16>, tensor<8x4xi32>
}
