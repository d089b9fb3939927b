// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// A GPT-2 linear layer (weight [in, out]) on a batch of sequences.
// CHECK-LABEL: func.func @in_out
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16x32xbf16>, %[[W:.+]]: tensor<32x96xbf16>) -> tensor<2x16x96xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.fp8_matmul %[[X]], %[[W]] : tensor<2x16x32xbf16>, tensor<32x96xbf16> -> tensor<2x16x96xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<2x16x96xbf16>
func.func @in_out(%x: tensor<2x16x32xbf16>, %w: tensor<32x96xbf16>) -> tensor<2x16x96xbf16> {
  %y = llmc.fp8_matmul %x, %w : tensor<2x16x32xbf16>, tensor<32x96xbf16> -> tensor<2x16x96xbf16>
  return %y : tensor<2x16x96xbf16>
}

// -----

// A LLaMA linear layer (weight [out, in]).
// CHECK-LABEL: func.func @out_in
// CHECK:         llmc.fp8_matmul %{{.+}}, %{{.+}} transpose_b : tensor<16x32xbf16>, tensor<96x32xbf16> -> tensor<16x96xbf16>
func.func @out_in(%x: tensor<16x32xbf16>, %w: tensor<96x32xbf16>) -> tensor<16x96xbf16> {
  %y = llmc.fp8_matmul %x, %w transpose_b : tensor<16x32xbf16>, tensor<96x32xbf16> -> tensor<16x96xbf16>
  return %y : tensor<16x96xbf16>
}
