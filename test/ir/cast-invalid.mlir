// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// A cast keeps the shape: use llmc.transpose to permute.
func.func @result_shape(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'llmc.cast' op expected result of shape [4, 8], got [8, 4]}}
  %y = llmc.cast %x : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %y : tensor<8x4xbf16>
}

// -----

// Nor the rank: use llmc.reshape to add a unit dimension.
func.func @result_rank(%x: tensor<4xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'llmc.cast' op expected result of shape [4], got [4, 1]}}
  %y = llmc.cast %x : tensor<4xf32> -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

func.func @i8_result(%x: tensor<4xf32>) -> tensor<4xi8> {
  // expected-error @+1 {{'llmc.cast' op result #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xi8>'}}
  %y = llmc.cast %x : tensor<4xf32> -> tensor<4xi8>
  return %y : tensor<4xi8>
}

// -----

func.func @i8_operand(%x: tensor<4xi8>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.cast' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xi8>'}}
  %y = llmc.cast %x : tensor<4xi8> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x4xf32>) -> tensor<?x4xbf16> {
  // expected-error @+1 {{'llmc.cast' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<?x4xf32>'}}
  %y = llmc.cast %x : tensor<?x4xf32> -> tensor<?x4xbf16>
  return %y : tensor<?x4xbf16>
}
