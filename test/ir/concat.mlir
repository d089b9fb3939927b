// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @two_inputs
// CHECK-SAME:    (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<4x24xf32>) -> tensor<4x32xf32>
// CHECK-NEXT:    %[[C:.+]] = llmc.concat %[[A]], %[[B]] dim 1 : (tensor<4x8xf32>, tensor<4x24xf32>) -> tensor<4x32xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4x32xf32>
func.func @two_inputs(%a: tensor<4x8xf32>, %b: tensor<4x24xf32>) -> tensor<4x32xf32> {
  %c = llmc.concat %a, %b dim 1 : (tensor<4x8xf32>, tensor<4x24xf32>) -> tensor<4x32xf32>
  return %c : tensor<4x32xf32>
}

// -----

// Operand order is the order of the pieces in the result.
// CHECK-LABEL: func.func @three_inputs
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x2xbf16>, %[[K:.+]]: tensor<2x2xbf16>, %[[V:.+]]: tensor<3x2xbf16>) -> tensor<6x2xbf16>
// CHECK-NEXT:    %[[C:.+]] = llmc.concat %[[V]], %[[Q]], %[[K]] dim 0 : (tensor<3x2xbf16>, tensor<1x2xbf16>, tensor<2x2xbf16>) -> tensor<6x2xbf16>
// CHECK-NEXT:    return %[[C]] : tensor<6x2xbf16>
func.func @three_inputs(%q: tensor<1x2xbf16>, %k: tensor<2x2xbf16>, %v: tensor<3x2xbf16>) -> tensor<6x2xbf16> {
  %c = llmc.concat %v, %q, %k dim 0 : (tensor<3x2xbf16>, tensor<1x2xbf16>, tensor<2x2xbf16>) -> tensor<6x2xbf16>
  return %c : tensor<6x2xbf16>
}

// -----

// CHECK-LABEL: func.func @single_input
// CHECK-SAME:    (%[[A:.+]]: tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT:    %[[C:.+]] = llmc.concat %[[A]] dim 0 : (tensor<4xi64>) -> tensor<4xi64>
// CHECK-NEXT:    return %[[C]] : tensor<4xi64>
func.func @single_input(%a: tensor<4xi64>) -> tensor<4xi64> {
  %c = llmc.concat %a dim 0 : (tensor<4xi64>) -> tensor<4xi64>
  return %c : tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @same_value_twice
// CHECK-SAME:    (%[[M:.+]]: tensor<2x3xi1>) -> tensor<2x6xi1>
// CHECK-NEXT:    %[[C:.+]] = llmc.concat %[[M]], %[[M]] dim 1 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x6xi1>
// CHECK-NEXT:    return %[[C]] : tensor<2x6xi1>
func.func @same_value_twice(%m: tensor<2x3xi1>) -> tensor<2x6xi1> {
  %c = llmc.concat %m, %m dim 1 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x6xi1>
  return %c : tensor<2x6xi1>
}

// -----

// An empty piece contributes nothing.
// CHECK-LABEL: func.func @empty_piece
// CHECK-SAME:    (%[[A:.+]]: tensor<0x4xi32>, %[[B:.+]]: tensor<3x4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT:    %[[C:.+]] = llmc.concat %[[A]], %[[B]] dim 0 : (tensor<0x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
// CHECK-NEXT:    return %[[C]] : tensor<3x4xi32>
func.func @empty_piece(%a: tensor<0x4xi32>, %b: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %c = llmc.concat %a, %b dim 0 : (tensor<0x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
  return %c : tensor<3x4xi32>
}
