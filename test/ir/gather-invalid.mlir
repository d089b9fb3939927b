// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @dim_out_of_range(%x: tensor<64x8xf32>, %i: tensor<3xi32>) -> tensor<64x3xf32> {
  // expected-error @+1 {{'llmc.gather' op expected dim in [0, 2), got 2}}
  %r = llmc.gather %x[%i] dim 2 : (tensor<64x8xf32>, tensor<3xi32>) -> tensor<64x3xf32>
  return %r : tensor<64x3xf32>
}

// -----

func.func @negative_dim(%x: tensor<64x8xf32>, %i: tensor<3xi32>) -> tensor<64x3xf32> {
  // expected-error @+1 {{'llmc.gather' op expected dim in [0, 2), got -1}}
  %r = llmc.gather %x[%i] dim -1 : (tensor<64x8xf32>, tensor<3xi32>) -> tensor<64x3xf32>
  return %r : tensor<64x3xf32>
}

// -----

func.func @scalar_input(%x: tensor<f32>, %i: tensor<3xi32>) -> tensor<3xf32> {
  // expected-error @+1 {{'llmc.gather' op expected dim in [0, 0), got 0}}
  %r = llmc.gather %x[%i] dim 0 : (tensor<f32>, tensor<3xi32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

func.func @element_type(%x: tensor<64x8xf32>, %i: tensor<3xi32>) -> tensor<3x8xbf16> {
  // expected-error @+1 {{'llmc.gather' op expected result element type 'f32', got 'bf16'}}
  %r = llmc.gather %x[%i] dim 0 : (tensor<64x8xf32>, tensor<3xi32>) -> tensor<3x8xbf16>
  return %r : tensor<3x8xbf16>
}

// -----

// The gathered dimension is replaced, not kept beside the indices.
func.func @result_shape(%x: tensor<64x8xf32>, %i: tensor<2x3xi32>) -> tensor<2x3x64x8xf32> {
  // expected-error @+1 {{'llmc.gather' op expected result of shape [2, 3, 8], got [2, 3, 64, 8]}}
  %r = llmc.gather %x[%i] dim 0 : (tensor<64x8xf32>, tensor<2x3xi32>) -> tensor<2x3x64x8xf32>
  return %r : tensor<2x3x64x8xf32>
}

// -----

func.func @float_indices(%x: tensor<64x8xf32>, %i: tensor<3xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'llmc.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<3xf32>'}}
  %r = llmc.gather %x[%i] dim 0 : (tensor<64x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}

// -----

func.func @dynamic_indices(%x: tensor<64x8xf32>, %i: tensor<?xi32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'llmc.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?xi32>'}}
  %r = llmc.gather %x[%i] dim 0 : (tensor<64x8xf32>, tensor<?xi32>) -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}
