// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// A bias over the channels, added to every row: result dimension 0 is new.
// CHECK-LABEL: func.func @bias_over_rows
// CHECK-SAME:    (%[[BIAS:.+]]: tensor<64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT:    %[[B:.+]] = llmc.broadcast %[[BIAS]] dims [1] : tensor<64xf32> -> tensor<8x64xf32>
// CHECK-NEXT:    return %[[B]] : tensor<8x64xf32>
func.func @bias_over_rows(%bias: tensor<64xf32>) -> tensor<8x64xf32> {
  %b = llmc.broadcast %bias dims [1] : tensor<64xf32> -> tensor<8x64xf32>
  return %b : tensor<8x64xf32>
}

// -----

// A size-1 operand dimension stretches to the result's size.
// CHECK-LABEL: func.func @stretch_unit_dim
// CHECK-SAME:    (%[[X:.+]]: tensor<4x1xbf16>) -> tensor<4x16xbf16>
// CHECK-NEXT:    %[[B:.+]] = llmc.broadcast %[[X]] dims [0, 1] : tensor<4x1xbf16> -> tensor<4x16xbf16>
// CHECK-NEXT:    return %[[B]] : tensor<4x16xbf16>
func.func @stretch_unit_dim(%x: tensor<4x1xbf16>) -> tensor<4x16xbf16> {
  %b = llmc.broadcast %x dims [0, 1] : tensor<4x1xbf16> -> tensor<4x16xbf16>
  return %b : tensor<4x16xbf16>
}

// -----

// A scalar fills the whole result; its dims list is empty.
// CHECK-LABEL: func.func @scalar
// CHECK-SAME:    (%[[X:.+]]: tensor<f16>) -> tensor<2x3xf16>
// CHECK-NEXT:    %[[B:.+]] = llmc.broadcast %[[X]] dims [] : tensor<f16> -> tensor<2x3xf16>
// CHECK-NEXT:    return %[[B]] : tensor<2x3xf16>
func.func @scalar(%x: tensor<f16>) -> tensor<2x3xf16> {
  %b = llmc.broadcast %x dims [] : tensor<f16> -> tensor<2x3xf16>
  return %b : tensor<2x3xf16>
}

// -----

// New dimensions in the middle and at the end.
// CHECK-LABEL: func.func @interleaved_new_dims
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xi32>) -> tensor<2x5x3x7xi32>
// CHECK-NEXT:    %[[B:.+]] = llmc.broadcast %[[X]] dims [0, 2] : tensor<2x3xi32> -> tensor<2x5x3x7xi32>
// CHECK-NEXT:    return %[[B]] : tensor<2x5x3x7xi32>
func.func @interleaved_new_dims(%x: tensor<2x3xi32>) -> tensor<2x5x3x7xi32> {
  %b = llmc.broadcast %x dims [0, 2] : tensor<2x3xi32> -> tensor<2x5x3x7xi32>
  return %b : tensor<2x5x3x7xi32>
}

// -----

// CHECK-LABEL: func.func @bool_mask
// CHECK-SAME:    (%[[M:.+]]: tensor<1x4x4xi1>) -> tensor<2x4x4xi1>
// CHECK-NEXT:    %[[B:.+]] = llmc.broadcast %[[M]] dims [0, 1, 2] : tensor<1x4x4xi1> -> tensor<2x4x4xi1>
// CHECK-NEXT:    return %[[B]] : tensor<2x4x4xi1>
func.func @bool_mask(%m: tensor<1x4x4xi1>) -> tensor<2x4x4xi1> {
  %b = llmc.broadcast %m dims [0, 1, 2] : tensor<1x4x4xi1> -> tensor<2x4x4xi1>
  return %b : tensor<2x4x4xi1>
}

// -----

// The identity broadcast is valid.
// CHECK-LABEL: func.func @identity
// CHECK-SAME:    (%[[X:.+]]: tensor<3xi64>) -> tensor<3xi64>
// CHECK-NEXT:    %[[B:.+]] = llmc.broadcast %[[X]] dims [0] : tensor<3xi64> -> tensor<3xi64>
// CHECK-NEXT:    return %[[B]] : tensor<3xi64>
func.func @identity(%x: tensor<3xi64>) -> tensor<3xi64> {
  %b = llmc.broadcast %x dims [0] : tensor<3xi64> -> tensor<3xi64>
  return %b : tensor<3xi64>
}
