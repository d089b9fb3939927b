// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @no_dims(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.reduce_mean' op expected at least one dimension to reduce, got dims []}}
  %m = llmc.reduce_mean %x dims [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

func.func @dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_mean' op expected dims entry in [0, 2), got 3}}
  %m = llmc.reduce_mean %x dims [3] : tensor<4x8xf32> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

func.func @repeated_dim(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.reduce_mean' op expected dims to be strictly increasing, got [0, 0]}}
  %m = llmc.reduce_mean %x dims [0, 0] : tensor<4x8xf32> -> tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

func.func @narrowing(%x: tensor<4x8xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'llmc.reduce_mean' op expected result element type 'f32', got 'f16'}}
  %m = llmc.reduce_mean %x dims [1] : tensor<4x8xf32> -> tensor<4xf16>
  return %m : tensor<4xf16>
}

// -----

func.func @bf16_to_f16(%x: tensor<4x8xbf16>) -> tensor<4xf16> {
  // expected-error @+1 {{'llmc.reduce_mean' op expected result element type 'bf16' or 'f32', got 'f16'}}
  %m = llmc.reduce_mean %x dims [1] : tensor<4x8xbf16> -> tensor<4xf16>
  return %m : tensor<4xf16>
}

// -----

func.func @result_shape(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'llmc.reduce_mean' op expected result of shape [4], got [4, 1]}}
  %m = llmc.reduce_mean %x dims [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return %m : tensor<4x1xf32>
}

// -----

// The mean of integers is not an integer: float inputs only.
func.func @integer_input(%x: tensor<4x8xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'llmc.reduce_mean' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x8xi32>'}}
  %m = llmc.reduce_mean %x dims [1] : tensor<4x8xi32> -> tensor<4xi32>
  return %m : tensor<4xi32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'llmc.reduce_mean' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?x8xf32>'}}
  %m = llmc.reduce_mean %x dims [1] : tensor<?x8xf32> -> tensor<?xf32>
  return %m : tensor<?xf32>
}
