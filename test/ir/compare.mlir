// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// One case per direction; operand order matters for lt/le/gt/ge.

// CHECK-LABEL: func.func @eq_i32
// CHECK-SAME:    (%[[A:.+]]: tensor<4x8xi32>, %[[B:.+]]: tensor<4x8xi32>) -> tensor<4x8xi1>
// CHECK-NEXT:    %[[M:.+]] = llmc.compare eq %[[A]], %[[B]] : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi1>
// CHECK-NEXT:    return %[[M]] : tensor<4x8xi1>
func.func @eq_i32(%a: tensor<4x8xi32>, %b: tensor<4x8xi32>) -> tensor<4x8xi1> {
  %m = llmc.compare eq %a, %b : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi1>
  return %m : tensor<4x8xi1>
}

// -----

// CHECK-LABEL: func.func @ne_i64
// CHECK-SAME:    (%[[A:.+]]: tensor<8xi64>, %[[B:.+]]: tensor<8xi64>) -> tensor<8xi1>
// CHECK-NEXT:    %[[M:.+]] = llmc.compare ne %[[A]], %[[B]] : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi1>
// CHECK-NEXT:    return %[[M]] : tensor<8xi1>
func.func @ne_i64(%a: tensor<8xi64>, %b: tensor<8xi64>) -> tensor<8xi1> {
  %m = llmc.compare ne %a, %b : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi1>
  return %m : tensor<8xi1>
}

// -----

// CHECK-LABEL: func.func @lt_f32
// CHECK-SAME:    (%[[A:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT:    %[[M:.+]] = llmc.compare lt %[[B]], %[[A]] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT:    return %[[M]] : tensor<4xi1>
func.func @lt_f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %m = llmc.compare lt %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %m : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @le_bf16
// CHECK-SAME:    (%[[A:.+]]: tensor<2x3xbf16>, %[[B:.+]]: tensor<2x3xbf16>) -> tensor<2x3xi1>
// CHECK-NEXT:    %[[M:.+]] = llmc.compare le %[[A]], %[[B]] : (tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xi1>
// CHECK-NEXT:    return %[[M]] : tensor<2x3xi1>
func.func @le_bf16(%a: tensor<2x3xbf16>, %b: tensor<2x3xbf16>) -> tensor<2x3xi1> {
  %m = llmc.compare le %a, %b : (tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xi1>
  return %m : tensor<2x3xi1>
}

// -----

// CHECK-LABEL: func.func @gt_f16
// CHECK-SAME:    (%[[A:.+]]: tensor<8xf16>, %[[B:.+]]: tensor<8xf16>) -> tensor<8xi1>
// CHECK-NEXT:    %[[M:.+]] = llmc.compare gt %[[A]], %[[B]] : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xi1>
// CHECK-NEXT:    return %[[M]] : tensor<8xi1>
func.func @gt_f16(%a: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<8xi1> {
  %m = llmc.compare gt %a, %b : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xi1>
  return %m : tensor<8xi1>
}

// -----

// CHECK-LABEL: func.func @ge_scalar
// CHECK-SAME:    (%[[A:.+]]: tensor<i32>, %[[B:.+]]: tensor<i32>) -> tensor<i1>
// CHECK-NEXT:    %[[M:.+]] = llmc.compare ge %[[A]], %[[B]] : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK-NEXT:    return %[[M]] : tensor<i1>
func.func @ge_scalar(%a: tensor<i32>, %b: tensor<i32>) -> tensor<i1> {
  %m = llmc.compare ge %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %m : tensor<i1>
}
