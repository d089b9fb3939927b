// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The codes of a matrix in both layouts; the result types pick the format.
// CHECK-LABEL: func.func @both_layouts
// CHECK-SAME:    (%[[X:.+]]: tensor<16x32xbf16>, %[[S:.+]]: tensor<f32>)
// CHECK-NEXT:    %[[Y:[^,]+]], %[[YT:.+]] = llmc.scaled_cast_transpose %[[X]], %[[S]] : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>
// CHECK-NEXT:    return %[[Y]], %[[YT]] : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>
func.func @both_layouts(%x: tensor<16x32xbf16>, %s: tensor<f32>) -> (tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>) {
  %y, %yt = llmc.scaled_cast_transpose %x, %s : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>
  return %y, %yt : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @e5m2_of_f32
// CHECK:         llmc.scaled_cast_transpose %{{.+}}, %{{.+}} : tensor<8x4xf32> -> tensor<8x4xf8E5M2>, tensor<4x8xf8E5M2>
func.func @e5m2_of_f32(%x: tensor<8x4xf32>, %s: tensor<f32>) -> tensor<4x8xf8E5M2> {
  %y, %yt = llmc.scaled_cast_transpose %x, %s : tensor<8x4xf32> -> tensor<8x4xf8E5M2>, tensor<4x8xf8E5M2>
  return %yt : tensor<4x8xf8E5M2>
}
