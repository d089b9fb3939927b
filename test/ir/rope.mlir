// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Positions 0..T-1 when none are given; no `positions` is printed.
// CHECK-LABEL: func.func @implicit_positions
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    %[[R:.+]] = llmc.rope %[[Q]] theta 1.000000e+04 : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x4x16x8xf32>
func.func @implicit_positions(%q: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %r = llmc.rope %q theta 1.0e+04 : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %r : tensor<2x4x16x8xf32>
}

// -----

// A sequence shard that does not start at 0.
// CHECK-LABEL: func.func @explicit_positions
// CHECK-SAME:    (%[[K:.+]]: tensor<2x4x16x8xbf16>, %[[POS:.+]]: tensor<16xi32>) -> tensor<2x4x16x8xbf16>
// CHECK-NEXT:    %[[R:.+]] = llmc.rope %[[K]] positions %[[POS]] theta 5.000000e+05 : (tensor<2x4x16x8xbf16>, tensor<16xi32>) -> tensor<2x4x16x8xbf16>
// CHECK-NEXT:    return %[[R]] : tensor<2x4x16x8xbf16>
func.func @explicit_positions(%k: tensor<2x4x16x8xbf16>, %pos: tensor<16xi32>) -> tensor<2x4x16x8xbf16> {
  %r = llmc.rope %k positions %pos theta 5.0e+05 : (tensor<2x4x16x8xbf16>, tensor<16xi32>) -> tensor<2x4x16x8xbf16>
  return %r : tensor<2x4x16x8xbf16>
}

// -----

// The smallest input: [T, D].
// CHECK-LABEL: func.func @rank2_i64_positions
// CHECK-SAME:    (%[[X:.+]]: tensor<16x8xf16>, %[[POS:.+]]: tensor<16xi64>) -> tensor<16x8xf16>
// CHECK-NEXT:    %[[R:.+]] = llmc.rope %[[X]] positions %[[POS]] theta 1.000000e+04 : (tensor<16x8xf16>, tensor<16xi64>) -> tensor<16x8xf16>
// CHECK-NEXT:    return %[[R]] : tensor<16x8xf16>
func.func @rank2_i64_positions(%x: tensor<16x8xf16>, %pos: tensor<16xi64>) -> tensor<16x8xf16> {
  %r = llmc.rope %x positions %pos theta 10000.0 : (tensor<16x8xf16>, tensor<16xi64>) -> tensor<16x8xf16>
  return %r : tensor<16x8xf16>
}

// -----

// A scaled rope (LLaMA 3): one inverse frequency per pair replaces
// theta^(-2i/D).
// CHECK-LABEL: func.func @inverse_frequencies
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    %[[R:.+]] = llmc.rope %[[Q]] theta 5.000000e+05 inv_freq [1.000000e+00, 1.250000e-01, 9.765625e-04, 1.200000e-04] : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    return %[[R]] : tensor<2x4x16x8xf32>
func.func @inverse_frequencies(%q: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %r = llmc.rope %q theta 5.0e+05 inv_freq [1.0, 0.125, 0.0009765625, 1.2e-04] : (tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %r : tensor<2x4x16x8xf32>
}
