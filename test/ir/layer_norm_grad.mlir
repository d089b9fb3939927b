// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Mixed precision: bf16 x, dy and dx; f32 gamma, dgamma and dbeta.
// CHECK-LABEL: func.func @mixed
// CHECK-SAME:    (%[[X:.+]]: tensor<2x4x8xbf16>, %[[GAMMA:.+]]: tensor<8xf32>, %[[DY:.+]]: tensor<2x4x8xbf16>)
// CHECK-NEXT:    %[[DX:.+]], %[[DG:.+]], %[[DB:.+]] = llmc.layer_norm_grad %[[X]], %[[GAMMA]], %[[DY]] epsilon 1.000000e-05 : (tensor<2x4x8xbf16>, tensor<8xf32>, tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT:    return %[[DX]], %[[DG]], %[[DB]]
func.func @mixed(%x: tensor<2x4x8xbf16>, %gamma: tensor<8xf32>, %dy: tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %dy epsilon 1.0e-05 : (tensor<2x4x8xbf16>, tensor<8xf32>, tensor<2x4x8xbf16>) -> (tensor<2x4x8xbf16>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %dg, %db : tensor<2x4x8xbf16>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Rank 1: one row.
// CHECK-LABEL: func.func @one_row
// CHECK-NEXT:    llmc.layer_norm_grad %{{.+}}, %{{.+}}, %{{.+}} epsilon 9.9999999999999995E-7 : (tensor<5xf32>, tensor<5xbf16>, tensor<5xf32>) -> (tensor<5xf32>, tensor<5xbf16>, tensor<5xbf16>)
func.func @one_row(%x: tensor<5xf32>, %gamma: tensor<5xbf16>, %dy: tensor<5xf32>) -> tensor<5xbf16> {
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %dy epsilon 1.0e-06 : (tensor<5xf32>, tensor<5xbf16>, tensor<5xf32>) -> (tensor<5xf32>, tensor<5xbf16>, tensor<5xbf16>)
  return %dg : tensor<5xbf16>
}
