// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @element_type(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'llmc.transpose' op expected result element type 'f32', got 'bf16'}}
  %y = llmc.transpose %x perm [1, 0] : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %y : tensor<8x4xbf16>
}

// -----

func.func @too_short(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'llmc.transpose' op expected a permutation of 2 dimensions, got [0]}}
  %y = llmc.transpose %x perm [0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @out_of_range(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'llmc.transpose' op expected a permutation of [0, 2), got [1, 2]}}
  %y = llmc.transpose %x perm [1, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @negative(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'llmc.transpose' op expected a permutation of [0, 2), got [1, -1]}}
  %y = llmc.transpose %x perm [1, -1] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

func.func @repeated(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'llmc.transpose' op expected a permutation of [0, 2), got [0, 0]}}
  %y = llmc.transpose %x perm [0, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

// The result must be the permuted operand shape, not the operand shape.
func.func @result_shape(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.transpose' op expected result of shape [8, 4], got [4, 8]}}
  %y = llmc.transpose %x perm [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>) -> tensor<8x?xf32> {
  // expected-error @+1 {{'llmc.transpose' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer or f8E4M3FN type or f8E5M2 type values, but got 'tensor<?x8xf32>'}}
  %y = llmc.transpose %x perm [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  return %y : tensor<8x?xf32>
}
