// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// The result type is the value's type; a splat stays a splat.
// CHECK-LABEL: func.func @splat_f32
// CHECK-NEXT:    %[[C:.+]] = llmc.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT:    return %[[C]] : tensor<4x8xf32>
func.func @splat_f32() -> tensor<4x8xf32> {
  %c = llmc.constant dense<0.0> : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// A scalar; 1e-5 is not exact in f32 and prints as the nearest float.
// CHECK-LABEL: func.func @scalar_f32
// CHECK-NEXT:    %[[EPS:.+]] = llmc.constant dense<9.99999974E-6> : tensor<f32>
// CHECK-NEXT:    return %[[EPS]] : tensor<f32>
func.func @scalar_f32() -> tensor<f32> {
  %eps = llmc.constant dense<1.0e-05> : tensor<f32>
  return %eps : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @elements_bf16
// CHECK-NEXT:    %[[C:.+]] = llmc.constant dense<[1.000000e+00, -2.500000e-01]> : tensor<2xbf16>
// CHECK-NEXT:    return %[[C]] : tensor<2xbf16>
func.func @elements_bf16() -> tensor<2xbf16> {
  %c = llmc.constant dense<[1.0, -0.25]> : tensor<2xbf16>
  return %c : tensor<2xbf16>
}

// -----

// CHECK-LABEL: func.func @splat_f16
// CHECK-NEXT:    %[[C:.+]] = llmc.constant dense<-1.500000e+00> : tensor<2x2xf16>
// CHECK-NEXT:    return %[[C]] : tensor<2x2xf16>
func.func @splat_f16() -> tensor<2x2xf16> {
  %c = llmc.constant dense<-1.5> : tensor<2x2xf16>
  return %c : tensor<2x2xf16>
}

// -----

// CHECK-LABEL: func.func @elements_i32
// CHECK-NEXT:    %[[C:.+]] = llmc.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
// CHECK-NEXT:    return %[[C]] : tensor<2x3xi32>
func.func @elements_i32() -> tensor<2x3xi32> {
  %c = llmc.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  return %c : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @ignore_index_i64
// CHECK-NEXT:    %[[C:.+]] = llmc.constant dense<-100> : tensor<i64>
// CHECK-NEXT:    return %[[C]] : tensor<i64>
func.func @ignore_index_i64() -> tensor<i64> {
  %c = llmc.constant dense<-100> : tensor<i64>
  return %c : tensor<i64>
}

// -----

// CHECK-LABEL: func.func @mask_i1
// CHECK-NEXT:    %[[C:.+]] = llmc.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NEXT:    return %[[C]] : tensor<3xi1>
func.func @mask_i1() -> tensor<3xi1> {
  %c = llmc.constant dense<[true, false, true]> : tensor<3xi1>
  return %c : tensor<3xi1>
}
