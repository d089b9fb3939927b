// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @mixed
// CHECK-SAME:    (%[[X:.+]]: tensor<2x4x8xbf16>, %[[GAMMA:.+]]: tensor<8xf32>, %[[DY:.+]]: tensor<2x4x8xbf16>)
// CHECK-NEXT:    %[[DX:.+]], %[[DG:.+]] = llmc.rms_norm_grad %[[X]], %[[GAMMA]], %[[DY]] epsilon 9.9999999999999995E-7 : (tensor<2x4x8xbf16>, tensor<8xf32>, tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<8xf32>)
// CHECK-NEXT:    return %[[DX]], %[[DG]]
func.func @mixed(%x: tensor<2x4x8xbf16>, %gamma: tensor<8xf32>, %dy: tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<8xf32>) {
  %dx, %dg = llmc.rms_norm_grad %x, %gamma, %dy epsilon 1.0e-06 : (tensor<2x4x8xbf16>, tensor<8xf32>, tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<8xf32>)
  return %dx, %dg : tensor<2x4x8xbf16>, tensor<8xf32>
}
