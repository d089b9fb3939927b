// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @no_inputs() -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.concat' op expected at least one input, got none}}
  %c = llmc.concat dim 0 : () -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @dim_out_of_range(%a: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.concat' op expected dim in [0, 2), got 2}}
  %c = llmc.concat %a, %a dim 2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

func.func @negative_dim(%a: tensor<4x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.concat' op expected dim in [0, 2), got -1}}
  %c = llmc.concat %a, %a dim -1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// A scalar has no dimension to join along.
func.func @scalars(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.concat' op expected dim in [0, 0), got 0}}
  %c = llmc.concat %a, %a dim 0 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %c : tensor<f32>
}

// -----

func.func @element_type(%a: tensor<4x8xf32>, %b: tensor<4x8xbf16>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.concat' op expected input #1 element type 'f32', got 'bf16'}}
  %c = llmc.concat %a, %b dim 1 : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

func.func @rank(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.concat' op expected input #1 of rank 2, got rank 1}}
  %c = llmc.concat %a, %b dim 1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// The inputs agree with the result on every dimension but `dim`.
func.func @other_dim(%a: tensor<4x8xf32>, %b: tensor<5x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.concat' op expected input #1 of shape [4, 8], got [5, 8]}}
  %c = llmc.concat %a, %b dim 1 : (tensor<4x8xf32>, tensor<5x8xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

func.func @sum_of_sizes(%a: tensor<4x8xf32>, %b: tensor<4x24xf32>) -> tensor<4x30xf32> {
  // expected-error @+1 {{'llmc.concat' op expected result dimension 1 to be the sum of the inputs' (32), got 30}}
  %c = llmc.concat %a, %b dim 1 : (tensor<4x8xf32>, tensor<4x24xf32>) -> tensor<4x30xf32>
  return %c : tensor<4x30xf32>
}

// -----

func.func @dynamic_shape(%a: tensor<?x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'llmc.concat' op operand #0 must be variadic of statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<?x8xf32>'}}
  %c = llmc.concat %a, %a dim 0 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
