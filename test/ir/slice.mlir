// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The query third of a fused QKV projection; no strides are printed when
// none are given.
// CHECK-LABEL: func.func @query_of_qkv
// CHECK-SAME:    (%[[QKV:.+]]: tensor<2x16x96xbf16>) -> tensor<2x16x32xbf16>
// CHECK-NEXT:    %[[Q:.+]] = llmc.slice %[[QKV]] starts [0, 0, 0] limits [2, 16, 32] : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
// CHECK-NEXT:    return %[[Q]] : tensor<2x16x32xbf16>
func.func @query_of_qkv(%qkv: tensor<2x16x96xbf16>) -> tensor<2x16x32xbf16> {
  %q = llmc.slice %qkv starts [0, 0, 0] limits [2, 16, 32] : tensor<2x16x96xbf16> -> tensor<2x16x32xbf16>
  return %q : tensor<2x16x32xbf16>
}

// -----

// CHECK-LABEL: func.func @even_elements
// CHECK-SAME:    (%[[X:.+]]: tensor<8xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.slice %[[X]] starts [0] limits [8] strides [2] : tensor<8xf32> -> tensor<4xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<4xf32>
func.func @even_elements(%x: tensor<8xf32>) -> tensor<4xf32> {
  %y = llmc.slice %x starts [0] limits [8] strides [2] : tensor<8xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A stride that does not divide the extent rounds up: indices 1, 4, 7.
// CHECK-LABEL: func.func @ceil_of_extent
// CHECK-SAME:    (%[[X:.+]]: tensor<8x4xi32>) -> tensor<3x2xi32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.slice %[[X]] starts [1, 2] limits [8, 4] strides [3, 1] : tensor<8x4xi32> -> tensor<3x2xi32>
// CHECK-NEXT:    return %[[Y]] : tensor<3x2xi32>
func.func @ceil_of_extent(%x: tensor<8x4xi32>) -> tensor<3x2xi32> {
  %y = llmc.slice %x starts [1, 2] limits [8, 4] strides [3, 1] : tensor<8x4xi32> -> tensor<3x2xi32>
  return %y : tensor<3x2xi32>
}

// -----

// Explicit unit strides are kept, not dropped as the default.
// CHECK-LABEL: func.func @unit_strides
// CHECK-SAME:    (%[[X:.+]]: tensor<4x4xf16>) -> tensor<2x4xf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.slice %[[X]] starts [2, 0] limits [4, 4] strides [1, 1] : tensor<4x4xf16> -> tensor<2x4xf16>
// CHECK-NEXT:    return %[[Y]] : tensor<2x4xf16>
func.func @unit_strides(%x: tensor<4x4xf16>) -> tensor<2x4xf16> {
  %y = llmc.slice %x starts [2, 0] limits [4, 4] strides [1, 1] : tensor<4x4xf16> -> tensor<2x4xf16>
  return %y : tensor<2x4xf16>
}

// -----

// start == limit is an empty slice.
// CHECK-LABEL: func.func @empty
// CHECK-SAME:    (%[[X:.+]]: tensor<4xi1>) -> tensor<0xi1>
// CHECK-NEXT:    %[[Y:.+]] = llmc.slice %[[X]] starts [2] limits [2] : tensor<4xi1> -> tensor<0xi1>
// CHECK-NEXT:    return %[[Y]] : tensor<0xi1>
func.func @empty(%x: tensor<4xi1>) -> tensor<0xi1> {
  %y = llmc.slice %x starts [2] limits [2] : tensor<4xi1> -> tensor<0xi1>
  return %y : tensor<0xi1>
}

// -----

// CHECK-LABEL: func.func @scalar
// CHECK-SAME:    (%[[X:.+]]: tensor<i64>) -> tensor<i64>
// CHECK-NEXT:    %[[Y:.+]] = llmc.slice %[[X]] starts [] limits [] : tensor<i64> -> tensor<i64>
// CHECK-NEXT:    return %[[Y]] : tensor<i64>
func.func @scalar(%x: tensor<i64>) -> tensor<i64> {
  %y = llmc.slice %x starts [] limits [] : tensor<i64> -> tensor<i64>
  return %y : tensor<i64>
}
