// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The result type picks the format; the scale is an f32 scalar.
// CHECK-LABEL: func.func @to_e4m3
// CHECK-SAME:    (%[[X:.+]]: tensor<16x32xbf16>, %[[S:.+]]: tensor<f32>) -> tensor<16x32xf8E4M3FN>
// CHECK-NEXT:    %[[Y:.+]] = llmc.scaled_cast %[[X]], %[[S]] : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
// CHECK-NEXT:    return %[[Y]] : tensor<16x32xf8E4M3FN>
func.func @to_e4m3(%x: tensor<16x32xbf16>, %s: tensor<f32>) -> tensor<16x32xf8E4M3FN> {
  %y = llmc.scaled_cast %x, %s : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
  return %y : tensor<16x32xf8E4M3FN>
}

// -----

// CHECK-LABEL: func.func @to_e5m2
// CHECK:         llmc.scaled_cast %{{.+}}, %{{.+}} : tensor<4xf32> -> tensor<4xf8E5M2>
func.func @to_e5m2(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf8E5M2> {
  %y = llmc.scaled_cast %x, %s : tensor<4xf32> -> tensor<4xf8E5M2>
  return %y : tensor<4xf8E5M2>
}
