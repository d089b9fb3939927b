// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @no_dims(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected at least one dimension to reduce, got dims []}}
  %s = llmc.reduce_sum %x dims [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

func.func @dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected dims entry in [0, 2), got 2}}
  %s = llmc.reduce_sum %x dims [2] : tensor<4x8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @negative_dim(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected dims entry in [0, 2), got -1}}
  %s = llmc.reduce_sum %x dims [-1] : tensor<4x8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @decreasing_dims(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected dims to be strictly increasing, got [1, 0]}}
  %s = llmc.reduce_sum %x dims [1, 0] : tensor<4x8xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @repeated_dim(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected dims to be strictly increasing, got [1, 1]}}
  %s = llmc.reduce_sum %x dims [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Only widening to f32 is allowed, never narrowing.
func.func @narrowing(%x: tensor<4x8xf32>) -> tensor<4xbf16> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected result element type 'f32', got 'bf16'}}
  %s = llmc.reduce_sum %x dims [1] : tensor<4x8xf32> -> tensor<4xbf16>
  return %s : tensor<4xbf16>
}

// -----

func.func @f16_to_bf16(%x: tensor<4x8xf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected result element type 'f16' or 'f32', got 'bf16'}}
  %s = llmc.reduce_sum %x dims [1] : tensor<4x8xf16> -> tensor<4xbf16>
  return %s : tensor<4xbf16>
}

// -----

// Integer sums do not widen.
func.func @integer_widening(%x: tensor<4x8xi32>) -> tensor<4xi64> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected result element type 'i32', got 'i64'}}
  %s = llmc.reduce_sum %x dims [1] : tensor<4x8xi32> -> tensor<4xi64>
  return %s : tensor<4xi64>
}

// -----

func.func @kept_dim_without_keep_dims(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected result of shape [4], got [4, 1]}}
  %s = llmc.reduce_sum %x dims [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  return %s : tensor<4x1xf32>
}

// -----

func.func @dropped_dim_with_keep_dims(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.reduce_sum' op expected result of shape [4, 1], got [4]}}
  %s = llmc.reduce_sum %x dims [1] keep_dims : tensor<4x8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @bool_input(%x: tensor<4x8xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'llmc.reduce_sum' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4x8xi1>'}}
  %s = llmc.reduce_sum %x dims [1] : tensor<4x8xi1> -> tensor<4xi1>
  return %s : tensor<4xi1>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'llmc.reduce_sum' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?x8xf32>'}}
  %s = llmc.reduce_sum %x dims [1] : tensor<?x8xf32> -> tensor<?xf32>
  return %s : tensor<?xf32>
}
