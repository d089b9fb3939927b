// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @element_type(%x: tensor<64xf32>) -> tensor<8x64xbf16> {
  // expected-error @+1 {{'llmc.broadcast' op expected result element type 'f32', got 'bf16'}}
  %b = llmc.broadcast %x dims [1] : tensor<64xf32> -> tensor<8x64xbf16>
  return %b : tensor<8x64xbf16>
}

// -----

func.func @too_many_dims(%x: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'llmc.broadcast' op expected one entry of dims per operand dimension (1), got 2}}
  %b = llmc.broadcast %x dims [0, 1] : tensor<64xf32> -> tensor<8x64xf32>
  return %b : tensor<8x64xf32>
}

// -----

// An operand of higher rank than the result cannot be described.
func.func @operand_rank_above_result(%x: tensor<2x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.broadcast' op expected dims entry in [0, 1), got 1}}
  %b = llmc.broadcast %x dims [0, 1] : tensor<2x8xf32> -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

func.func @dim_out_of_range(%x: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'llmc.broadcast' op expected dims entry in [0, 2), got 2}}
  %b = llmc.broadcast %x dims [2] : tensor<64xf32> -> tensor<8x64xf32>
  return %b : tensor<8x64xf32>
}

// -----

func.func @negative_dim(%x: tensor<64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'llmc.broadcast' op expected dims entry in [0, 2), got -1}}
  %b = llmc.broadcast %x dims [-1] : tensor<64xf32> -> tensor<8x64xf32>
  return %b : tensor<8x64xf32>
}

// -----

// A broadcast does not transpose.
func.func @decreasing_dims(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'llmc.broadcast' op expected dims to be strictly increasing, got [1, 0]}}
  %b = llmc.broadcast %x dims [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %b : tensor<8x4xf32>
}

// -----

func.func @repeated_dim(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'llmc.broadcast' op expected dims to be strictly increasing, got [0, 0]}}
  %b = llmc.broadcast %x dims [0, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return %b : tensor<4x4xf32>
}

// -----

// Only a size-1 operand dimension stretches.
func.func @incompatible_size(%x: tensor<3xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'llmc.broadcast' op expected operand dimension 0 to be 1 or 64 (result dimension 1), got 3}}
  %b = llmc.broadcast %x dims [1] : tensor<3xf32> -> tensor<8x64xf32>
  return %b : tensor<8x64xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'llmc.broadcast' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<?xf32>'}}
  %b = llmc.broadcast %x dims [1] : tensor<?xf32> -> tensor<8x4xf32>
  return %b : tensor<8x4xf32>
}

// -----

func.func @i8_element(%x: tensor<4xi8>) -> tensor<8x4xi8> {
  // expected-error @+1 {{'llmc.broadcast' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xi8>'}}
  %b = llmc.broadcast %x dims [1] : tensor<4xi8> -> tensor<8x4xi8>
  return %b : tensor<8x4xi8>
}
