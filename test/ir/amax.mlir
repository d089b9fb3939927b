// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The statistic of a tensorwise FP8 scale: one f32 scalar.
// CHECK-LABEL: func.func @amax_of_bf16
// CHECK-SAME:    (%[[X:.+]]: tensor<16x32xbf16>) -> tensor<f32>
// CHECK-NEXT:    %[[A:.+]] = llmc.amax %[[X]] : tensor<16x32xbf16> -> tensor<f32>
// CHECK-NEXT:    return %[[A]] : tensor<f32>
func.func @amax_of_bf16(%x: tensor<16x32xbf16>) -> tensor<f32> {
  %a = llmc.amax %x : tensor<16x32xbf16> -> tensor<f32>
  return %a : tensor<f32>
}
