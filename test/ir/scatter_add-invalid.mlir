// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @dim_out_of_range(%d: tensor<64x8xf32>, %i: tensor<3xi32>, %u: tensor<3x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{'llmc.scatter_add' op expected dim in [0, 2), got 2}}
  %r = llmc.scatter_add %d[%i], %u dim 2 : (tensor<64x8xf32>, tensor<3xi32>, tensor<3x8xf32>) -> tensor<64x8xf32>
  return %r : tensor<64x8xf32>
}

// -----

func.func @negative_dim(%d: tensor<64x8xf32>, %i: tensor<3xi32>, %u: tensor<3x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{'llmc.scatter_add' op expected dim in [0, 2), got -2}}
  %r = llmc.scatter_add %d[%i], %u dim -2 : (tensor<64x8xf32>, tensor<3xi32>, tensor<3x8xf32>) -> tensor<64x8xf32>
  return %r : tensor<64x8xf32>
}

// -----

// The result is the destination, updated.
func.func @result_type(%d: tensor<64x8xf32>, %i: tensor<3xi32>, %u: tensor<3x8xf32>) -> tensor<64x8xbf16> {
  // expected-error @+1 {{'llmc.scatter_add' op expected result of type 'tensor<64x8xf32>', got 'tensor<64x8xbf16>'}}
  %r = llmc.scatter_add %d[%i], %u dim 0 : (tensor<64x8xf32>, tensor<3xi32>, tensor<3x8xf32>) -> tensor<64x8xbf16>
  return %r : tensor<64x8xbf16>
}

// -----

func.func @result_shape(%d: tensor<64x8xf32>, %i: tensor<3xi32>, %u: tensor<3x8xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'llmc.scatter_add' op expected result of type 'tensor<64x8xf32>', got 'tensor<3x8xf32>'}}
  %r = llmc.scatter_add %d[%i], %u dim 0 : (tensor<64x8xf32>, tensor<3xi32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}

// -----

func.func @updates_element_type(%d: tensor<64x8xf32>, %i: tensor<3xi32>, %u: tensor<3x8xbf16>) -> tensor<64x8xf32> {
  // expected-error @+1 {{'llmc.scatter_add' op expected updates element type 'f32', got 'bf16'}}
  %r = llmc.scatter_add %d[%i], %u dim 0 : (tensor<64x8xf32>, tensor<3xi32>, tensor<3x8xbf16>) -> tensor<64x8xf32>
  return %r : tensor<64x8xf32>
}

// -----

// Updates are shaped like what gather would take from the destination.
func.func @updates_shape(%d: tensor<64x8xf32>, %i: tensor<2x3xi32>, %u: tensor<6x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{'llmc.scatter_add' op expected updates of shape [2, 3, 8], got [6, 8]}}
  %r = llmc.scatter_add %d[%i], %u dim 0 : (tensor<64x8xf32>, tensor<2x3xi32>, tensor<6x8xf32>) -> tensor<64x8xf32>
  return %r : tensor<64x8xf32>
}

// -----

func.func @bool_destination(%d: tensor<8xi1>, %i: tensor<3xi32>, %u: tensor<3xi1>) -> tensor<8xi1> {
  // expected-error @+1 {{'llmc.scatter_add' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xi1>'}}
  %r = llmc.scatter_add %d[%i], %u dim 0 : (tensor<8xi1>, tensor<3xi32>, tensor<3xi1>) -> tensor<8xi1>
  return %r : tensor<8xi1>
}

// -----

func.func @float_indices(%d: tensor<64x8xf32>, %i: tensor<3xf32>, %u: tensor<3x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{'llmc.scatter_add' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<3xf32>'}}
  %r = llmc.scatter_add %d[%i], %u dim 0 : (tensor<64x8xf32>, tensor<3xf32>, tensor<3x8xf32>) -> tensor<64x8xf32>
  return %r : tensor<64x8xf32>
}

// -----

func.func @dynamic_updates(%d: tensor<64x8xf32>, %i: tensor<3xi32>, %u: tensor<?x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{'llmc.scatter_add' op operand #2 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?x8xf32>'}}
  %r = llmc.scatter_add %d[%i], %u dim 0 : (tensor<64x8xf32>, tensor<3xi32>, tensor<?x8xf32>) -> tensor<64x8xf32>
  return %r : tensor<64x8xf32>
}
