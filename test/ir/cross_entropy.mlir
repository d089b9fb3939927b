// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The GPT-2 loss: bf16 logits, a rank-0 f32 mean.
// CHECK-LABEL: func.func @mean_ignore_index
// CHECK-SAME:    (%[[LOGITS:.+]]: tensor<2x16x64xbf16>, %[[TARGETS:.+]]: tensor<2x16xi32>) -> tensor<f32>
// CHECK-NEXT:    %[[L:.+]] = llmc.cross_entropy %[[LOGITS]], %[[TARGETS]] ignore_index -100 reduction mean : (tensor<2x16x64xbf16>, tensor<2x16xi32>) -> tensor<f32>
// CHECK-NEXT:    return %[[L]] : tensor<f32>
func.func @mean_ignore_index(%logits: tensor<2x16x64xbf16>, %targets: tensor<2x16xi32>) -> tensor<f32> {
  %l = llmc.cross_entropy %logits, %targets ignore_index -100 reduction mean : (tensor<2x16x64xbf16>, tensor<2x16xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// No ignore_index is printed when absent.
// CHECK-LABEL: func.func @sum
// CHECK-SAME:    (%[[LOGITS:.+]]: tensor<8x64xf32>, %[[TARGETS:.+]]: tensor<8xi64>) -> tensor<f32>
// CHECK-NEXT:    %[[L:.+]] = llmc.cross_entropy %[[LOGITS]], %[[TARGETS]] reduction sum : (tensor<8x64xf32>, tensor<8xi64>) -> tensor<f32>
// CHECK-NEXT:    return %[[L]] : tensor<f32>
func.func @sum(%logits: tensor<8x64xf32>, %targets: tensor<8xi64>) -> tensor<f32> {
  %l = llmc.cross_entropy %logits, %targets reduction sum : (tensor<8x64xf32>, tensor<8xi64>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Per-position losses are shaped like the targets.
// CHECK-LABEL: func.func @none
// CHECK-SAME:    (%[[LOGITS:.+]]: tensor<2x16x64xf16>, %[[TARGETS:.+]]: tensor<2x16xi32>) -> tensor<2x16xf32>
// CHECK-NEXT:    %[[L:.+]] = llmc.cross_entropy %[[LOGITS]], %[[TARGETS]] ignore_index 0 reduction none : (tensor<2x16x64xf16>, tensor<2x16xi32>) -> tensor<2x16xf32>
// CHECK-NEXT:    return %[[L]] : tensor<2x16xf32>
func.func @none(%logits: tensor<2x16x64xf16>, %targets: tensor<2x16xi32>) -> tensor<2x16xf32> {
  %l = llmc.cross_entropy %logits, %targets ignore_index 0 reduction none : (tensor<2x16x64xf16>, tensor<2x16xi32>) -> tensor<2x16xf32>
  return %l : tensor<2x16xf32>
}

// -----

// One position: rank-0 targets, and `none` gives a rank-0 result too.
// CHECK-LABEL: func.func @single_position
// CHECK-SAME:    (%[[LOGITS:.+]]: tensor<64xf32>, %[[TARGET:.+]]: tensor<i32>) -> tensor<f32>
// CHECK-NEXT:    %[[L:.+]] = llmc.cross_entropy %[[LOGITS]], %[[TARGET]] reduction none : (tensor<64xf32>, tensor<i32>) -> tensor<f32>
// CHECK-NEXT:    return %[[L]] : tensor<f32>
func.func @single_position(%logits: tensor<64xf32>, %target: tensor<i32>) -> tensor<f32> {
  %l = llmc.cross_entropy %logits, %target reduction none : (tensor<64xf32>, tensor<i32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The optional lse result: one f32 per position, whatever the reduction.
// CHECK-LABEL: func.func @with_lse
// CHECK-SAME:    (%[[LOGITS:.+]]: tensor<2x16x64xbf16>, %[[TARGETS:.+]]: tensor<2x16xi32>)
// CHECK-NEXT:    %[[L:.+]], %[[S:.+]] = llmc.cross_entropy %[[LOGITS]], %[[TARGETS]] ignore_index -100 reduction mean : (tensor<2x16x64xbf16>, tensor<2x16xi32>) -> (tensor<f32>, tensor<2x16xf32>)
// CHECK-NEXT:    return %[[L]], %[[S]] : tensor<f32>, tensor<2x16xf32>
func.func @with_lse(%logits: tensor<2x16x64xbf16>, %targets: tensor<2x16xi32>) -> (tensor<f32>, tensor<2x16xf32>) {
  %l, %lse = llmc.cross_entropy %logits, %targets ignore_index -100 reduction mean : (tensor<2x16x64xbf16>, tensor<2x16xi32>) -> (tensor<f32>, tensor<2x16xf32>)
  return %l, %lse : tensor<f32>, tensor<2x16xf32>
}
