// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @dim_out_of_range() -> tensor<2x16xi32> {
  // expected-error @+1 {{'llmc.iota' op expected dim in [0, 2), got 2}}
  %i = llmc.iota dim 2 : tensor<2x16xi32>
  return %i : tensor<2x16xi32>
}

// -----

func.func @negative_dim() -> tensor<2x16xi32> {
  // expected-error @+1 {{'llmc.iota' op expected dim in [0, 2), got -1}}
  %i = llmc.iota dim -1 : tensor<2x16xi32>
  return %i : tensor<2x16xi32>
}

// -----

// A scalar has no dimension to count along.
func.func @scalar() -> tensor<i32> {
  // expected-error @+1 {{'llmc.iota' op expected dim in [0, 0), got 0}}
  %i = llmc.iota dim 0 : tensor<i32>
  return %i : tensor<i32>
}

// -----

func.func @bool_result() -> tensor<4xi1> {
  // expected-error @+1 {{'llmc.iota' op result #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %i = llmc.iota dim 0 : tensor<4xi1>
  return %i : tensor<4xi1>
}

// -----

func.func @dynamic_shape() -> tensor<?xi32> {
  // expected-error @+1 {{'llmc.iota' op result #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?xi32>'}}
  %i = llmc.iota dim 0 : tensor<?xi32>
  return %i : tensor<?xi32>
}
