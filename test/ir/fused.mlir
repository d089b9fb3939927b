// RUN: llmc-opt %s --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// A region with two inputs and two results prints and parses back.
// CHECK-LABEL: func.func @two_results
// CHECK-SAME:    (%[[A:.+]]: tensor<8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK:         %[[F:.+]]:2 = llmc.fused row_reduction (%[[A]], %[[B]]) : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>) {
// CHECK-NEXT:    ^bb0(%[[X:.+]]: tensor<8xf32>, %[[Y:.+]]: tensor<8xf32>):
// CHECK-NEXT:      %[[S:.+]] = llmc.add %[[X]], %[[Y]] : tensor<8xf32>
// CHECK-NEXT:      %[[R:.+]] = llmc.reduce_sum %[[S]] dims [0] : tensor<8xf32> -> tensor<f32>
// CHECK-NEXT:      llmc.yield %[[S]], %[[R]] : tensor<8xf32>, tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1
func.func @two_results(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>) {
  %f:2 = llmc.fused row_reduction (%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>) {
  ^bb0(%x: tensor<8xf32>, %y: tensor<8xf32>):
    %s = llmc.add %x, %y : tensor<8xf32>
    %r = llmc.reduce_sum %s dims [0] : tensor<8xf32> -> tensor<f32>
    llmc.yield %s, %r : tensor<8xf32>, tensor<f32>
  }
  return %f#0, %f#1 : tensor<8xf32>, tensor<f32>
}
