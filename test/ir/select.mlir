// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @floats
// CHECK-SAME:    (%[[M:.+]]: tensor<4x8xi1>, %[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.select %[[M]], %[[A]], %[[B]] : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xf32>
func.func @floats(%m: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = llmc.select %m, %a, %b : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// on_true and on_false keep their order.
// CHECK-LABEL: func.func @swapped_branches
// CHECK-SAME:    (%[[M:.+]]: tensor<8xi1>, %[[A:.+]]: tensor<8xbf16>, %[[B:.+]]: tensor<8xbf16>) -> tensor<8xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.select %[[M]], %[[B]], %[[A]] : (tensor<8xi1>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<8xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<8xbf16>
func.func @swapped_branches(%m: tensor<8xi1>, %a: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<8xbf16> {
  %y = llmc.select %m, %b, %a : (tensor<8xi1>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<8xbf16>
  return %y : tensor<8xbf16>
}

// -----

// CHECK-LABEL: func.func @integers
// CHECK-SAME:    (%[[M:.+]]: tensor<2x2xi1>, %[[A:.+]]: tensor<2x2xi64>, %[[B:.+]]: tensor<2x2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT:    %[[Y:.+]] = llmc.select %[[M]], %[[A]], %[[B]] : (tensor<2x2xi1>, tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
// CHECK-NEXT:    return %[[Y]] : tensor<2x2xi64>
func.func @integers(%m: tensor<2x2xi1>, %a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {
  %y = llmc.select %m, %a, %b : (tensor<2x2xi1>, tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
  return %y : tensor<2x2xi64>
}

// -----

// Selecting between masks.
// CHECK-LABEL: func.func @bools
// CHECK-SAME:    (%[[M:.+]]: tensor<4xi1>, %[[A:.+]]: tensor<4xi1>, %[[B:.+]]: tensor<4xi1>) -> tensor<4xi1>
// CHECK-NEXT:    %[[Y:.+]] = llmc.select %[[M]], %[[A]], %[[B]] : (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK-NEXT:    return %[[Y]] : tensor<4xi1>
func.func @bools(%m: tensor<4xi1>, %a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %y = llmc.select %m, %a, %b : (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %y : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @scalar
// CHECK-SAME:    (%[[M:.+]]: tensor<i1>, %[[A:.+]]: tensor<f16>, %[[B:.+]]: tensor<f16>) -> tensor<f16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.select %[[M]], %[[A]], %[[B]] : (tensor<i1>, tensor<f16>, tensor<f16>) -> tensor<f16>
// CHECK-NEXT:    return %[[Y]] : tensor<f16>
func.func @scalar(%m: tensor<i1>, %a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
  %y = llmc.select %m, %a, %b : (tensor<i1>, tensor<f16>, tensor<f16>) -> tensor<f16>
  return %y : tensor<f16>
}
