// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// bf16 activations with f32 parameters.
// CHECK-LABEL: func.func @with_beta
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16x8xbf16>, %[[GAMMA:.+]]: tensor<8xf32>, %[[BETA:.+]]: tensor<8xf32>) -> tensor<2x16x8xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.layer_norm %[[X]], %[[GAMMA]], %[[BETA]] epsilon 1.000000e-05 : (tensor<2x16x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x16x8xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<2x16x8xbf16>
func.func @with_beta(%x: tensor<2x16x8xbf16>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<2x16x8xbf16> {
  %y = llmc.layer_norm %x, %gamma, %beta epsilon 1.0e-05 : (tensor<2x16x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x16x8xbf16>
  return %y : tensor<2x16x8xbf16>
}

// -----

// Without beta there is no third operand. 1e-6 has no short exact f64
// form, so it prints with all its digits.
// CHECK-LABEL: func.func @without_beta
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xf32>, %[[GAMMA:.+]]: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.layer_norm %[[X]], %[[GAMMA]] epsilon 9.9999999999999995E-7 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xf32>
func.func @without_beta(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = llmc.layer_norm %x, %gamma epsilon 1.0e-06 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A single feature vector.
// CHECK-LABEL: func.func @rank1_f16
// CHECK-SAME:    (%[[X:.+]]: tensor<8xf16>, %[[GAMMA:.+]]: tensor<8xf16>, %[[BETA:.+]]: tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.layer_norm %[[X]], %[[GAMMA]], %[[BETA]] epsilon 1.000000e-03 : (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    return %[[Y]] : tensor<8xf16>
func.func @rank1_f16(%x: tensor<8xf16>, %gamma: tensor<8xf16>, %beta: tensor<8xf16>) -> tensor<8xf16> {
  %y = llmc.layer_norm %x, %gamma, %beta epsilon 1.0e-03 : (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  return %y : tensor<8xf16>
}
