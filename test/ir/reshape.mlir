// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Splitting the channels into heads.
// CHECK-LABEL: func.func @split_heads
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16x64xbf16>) -> tensor<2x16x4x16xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.reshape %[[X]] : tensor<2x16x64xbf16> -> tensor<2x16x4x16xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<2x16x4x16xbf16>
func.func @split_heads(%x: tensor<2x16x64xbf16>) -> tensor<2x16x4x16xbf16> {
  %y = llmc.reshape %x : tensor<2x16x64xbf16> -> tensor<2x16x4x16xbf16>
  return %y : tensor<2x16x4x16xbf16>
}

// -----

// CHECK-LABEL: func.func @flatten_mask
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xi1>) -> tensor<6xi1>
// CHECK-NEXT:    %[[Y:.+]] = llmc.reshape %[[X]] : tensor<2x3xi1> -> tensor<6xi1>
// CHECK-NEXT:    return %[[Y]] : tensor<6xi1>
func.func @flatten_mask(%x: tensor<2x3xi1>) -> tensor<6xi1> {
  %y = llmc.reshape %x : tensor<2x3xi1> -> tensor<6xi1>
  return %y : tensor<6xi1>
}

// -----

// CHECK-LABEL: func.func @to_scalar
// CHECK-SAME:    (%[[X:.+]]: tensor<1x1xf32>) -> tensor<f32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.reshape %[[X]] : tensor<1x1xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[Y]] : tensor<f32>
func.func @to_scalar(%x: tensor<1x1xf32>) -> tensor<f32> {
  %y = llmc.reshape %x : tensor<1x1xf32> -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @from_scalar
// CHECK-SAME:    (%[[X:.+]]: tensor<i64>) -> tensor<1x1xi64>
// CHECK-NEXT:    %[[Y:.+]] = llmc.reshape %[[X]] : tensor<i64> -> tensor<1x1xi64>
// CHECK-NEXT:    return %[[Y]] : tensor<1x1xi64>
func.func @from_scalar(%x: tensor<i64>) -> tensor<1x1xi64> {
  %y = llmc.reshape %x : tensor<i64> -> tensor<1x1xi64>
  return %y : tensor<1x1xi64>
}

// -----

// Zero elements stay zero elements, whatever the shape.
// CHECK-LABEL: func.func @empty
// CHECK-SAME:    (%[[X:.+]]: tensor<0x4xi32>) -> tensor<2x0xi32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.reshape %[[X]] : tensor<0x4xi32> -> tensor<2x0xi32>
// CHECK-NEXT:    return %[[Y]] : tensor<2x0xi32>
func.func @empty(%x: tensor<0x4xi32>) -> tensor<2x0xi32> {
  %y = llmc.reshape %x : tensor<0x4xi32> -> tensor<2x0xi32>
  return %y : tensor<2x0xi32>
}

// -----

// A reshape to the same type is valid; parsing does not fold it away.
// CHECK-LABEL: func.func @same_type
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.reshape %[[X]] : tensor<4x8xf16> -> tensor<4x8xf16>
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xf16>
func.func @same_type(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %y = llmc.reshape %x : tensor<4x8xf16> -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
