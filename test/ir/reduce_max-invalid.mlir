// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @no_dims(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.reduce_max' op expected at least one dimension to reduce, got dims []}}
  %m = llmc.reduce_max %x dims [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}

// -----

func.func @dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_max' op expected dims entry in [0, 2), got 2}}
  %m = llmc.reduce_max %x dims [2] : tensor<4x8xf32> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

func.func @decreasing_dims(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.reduce_max' op expected dims to be strictly increasing, got [1, 0]}}
  %m = llmc.reduce_max %x dims [1, 0] : tensor<4x8xf32> -> tensor<f32>
  return %m : tensor<f32>
}

// -----

// A maximum is exact in its input type: no f32 result for a bf16 input.
func.func @no_widening(%x: tensor<4x8xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_max' op expected result element type 'bf16', got 'f32'}}
  %m = llmc.reduce_max %x dims [1] : tensor<4x8xbf16> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

func.func @result_shape(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.reduce_max' op expected result of shape [4], got [8]}}
  %m = llmc.reduce_max %x dims [1] : tensor<4x8xf32> -> tensor<8xf32>
  return %m : tensor<8xf32>
}

// -----

func.func @dropped_dim_with_keep_dims(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_max' op expected result of shape [4, 1], got [4]}}
  %m = llmc.reduce_max %x dims [1] keep_dims : tensor<4x8xf32> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// -----

func.func @bool_input(%x: tensor<4x8xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'llmc.reduce_max' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4x8xi1>'}}
  %m = llmc.reduce_max %x dims [1] : tensor<4x8xi1> -> tensor<4xi1>
  return %m : tensor<4xi1>
}

// -----

func.func @dynamic_shape(%x: tensor<4x?xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_max' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4x?xf32>'}}
  %m = llmc.reduce_max %x dims [1] : tensor<4x?xf32> -> tensor<4xf32>
  return %m : tensor<4xf32>
}
