// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @f32
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16x8xf32>, %[[GAMMA:.+]]: tensor<8xf32>) -> tensor<2x16x8xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.rms_norm %[[X]], %[[GAMMA]] epsilon 1.000000e-05 : (tensor<2x16x8xf32>, tensor<8xf32>) -> tensor<2x16x8xf32>
// CHECK-NEXT:    return %[[Y]] : tensor<2x16x8xf32>
func.func @f32(%x: tensor<2x16x8xf32>, %gamma: tensor<8xf32>) -> tensor<2x16x8xf32> {
  %y = llmc.rms_norm %x, %gamma epsilon 1.0e-05 : (tensor<2x16x8xf32>, tensor<8xf32>) -> tensor<2x16x8xf32>
  return %y : tensor<2x16x8xf32>
}

// -----

// bf16 activations with an f32 gamma. 1e-6 has no short exact f64 form,
// so it prints with all its digits.
// CHECK-LABEL: func.func @bf16_input
// CHECK-SAME:    (%[[X:.+]]: tensor<4x8xbf16>, %[[GAMMA:.+]]: tensor<8xf32>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.rms_norm %[[X]], %[[GAMMA]] epsilon 9.9999999999999995E-7 : (tensor<4x8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<4x8xbf16>
func.func @bf16_input(%x: tensor<4x8xbf16>, %gamma: tensor<8xf32>) -> tensor<4x8xbf16> {
  %y = llmc.rms_norm %x, %gamma epsilon 1.0e-06 : (tensor<4x8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// CHECK-LABEL: func.func @rank1_f16
// CHECK-SAME:    (%[[X:.+]]: tensor<8xf16>, %[[GAMMA:.+]]: tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.rms_norm %[[X]], %[[GAMMA]] epsilon 1.250000e-01 : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
// CHECK-NEXT:    return %[[Y]] : tensor<8xf16>
func.func @rank1_f16(%x: tensor<8xf16>, %gamma: tensor<8xf16>) -> tensor<8xf16> {
  %y = llmc.rms_norm %x, %gamma epsilon 0.125 : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  return %y : tensor<8xf16>
}
