// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @rank1(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.rope' op expected an input [..., T, D] of rank at least 2, got rank 1}}
  %r = llmc.rope %x theta 1.0e+04 : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Pairs (i, i + D/2) need an even D.
func.func @odd_head_dim(%x: tensor<16x7xf32>) -> tensor<16x7xf32> {
  // expected-error @+1 {{'llmc.rope' op expected an even head dimension, got 7}}
  %r = llmc.rope %x theta 1.0e+04 : (tensor<16x7xf32>) -> tensor<16x7xf32>
  return %r : tensor<16x7xf32>
}

// -----

// One position per token of the sequence dimension (T = 16), not per head.
func.func @positions_shape(%x: tensor<2x4x16x8xf32>, %pos: tensor<4xi32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{'llmc.rope' op expected positions of shape [16], got [4]}}
  %r = llmc.rope %x positions %pos theta 1.0e+04 : (tensor<2x4x16x8xf32>, tensor<4xi32>) -> tensor<2x4x16x8xf32>
  return %r : tensor<2x4x16x8xf32>
}

// -----

// Per-batch positions are not supported.
func.func @batched_positions(%x: tensor<2x16x8xf32>, %pos: tensor<2x16xi32>) -> tensor<2x16x8xf32> {
  // expected-error @+1 {{'llmc.rope' op expected positions of shape [16], got [2, 16]}}
  %r = llmc.rope %x positions %pos theta 1.0e+04 : (tensor<2x16x8xf32>, tensor<2x16xi32>) -> tensor<2x16x8xf32>
  return %r : tensor<2x16x8xf32>
}

// -----

func.func @zero_theta(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'llmc.rope' op expected a positive theta, got 0.000000e+00}}
  %r = llmc.rope %x theta 0.0 : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

func.func @negative_theta(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'llmc.rope' op expected a positive theta, got -1.000000e+04}}
  %r = llmc.rope %x theta -1.0e+04 : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

func.func @result_type(%x: tensor<16x8xbf16>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'llmc.rope' op expected result of type 'tensor<16x8xbf16>', got 'tensor<16x8xf32>'}}
  %r = llmc.rope %x theta 1.0e+04 : (tensor<16x8xbf16>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

func.func @float_positions(%x: tensor<16x8xf32>, %pos: tensor<16xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'llmc.rope' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<16xf32>'}}
  %r = llmc.rope %x positions %pos theta 1.0e+04 : (tensor<16x8xf32>, tensor<16xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

func.func @integer_input(%x: tensor<16x8xi32>) -> tensor<16x8xi32> {
  // expected-error @+1 {{'llmc.rope' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<16x8xi32>'}}
  %r = llmc.rope %x theta 1.0e+04 : (tensor<16x8xi32>) -> tensor<16x8xi32>
  return %r : tensor<16x8xi32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'llmc.rope' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?x8xf32>'}}
  %r = llmc.rope %x theta 1.0e+04 : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// One inverse frequency per pair: D = 8 has 4 pairs.
func.func @inverse_frequency_count(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'llmc.rope' op expected 4 inverse frequencies (one per pair of the head dimension 8), got 3}}
  %r = llmc.rope %x theta 1.0e+04 inv_freq [1.0, 0.5, 0.25] : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

func.func @zero_inverse_frequency(%x: tensor<16x8xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'llmc.rope' op expected positive finite inverse frequencies, got 0.000000e+00 at pair 2}}
  %r = llmc.rope %x theta 1.0e+04 inv_freq [1.0, 0.5, 0.0, 0.25] : (tensor<16x8xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}
