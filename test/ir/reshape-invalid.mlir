// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// A reshape does not convert: use llmc.cast.
func.func @element_type(%x: tensor<4x8xf32>) -> tensor<32xf16> {
  // expected-error @+1 {{'llmc.reshape' op expected result element type 'f32', got 'f16'}}
  %y = llmc.reshape %x : tensor<4x8xf32> -> tensor<32xf16>
  return %y : tensor<32xf16>
}

// -----

func.func @element_count(%x: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'llmc.reshape' op expected the result to have 12 elements like [3, 4], got 10 in [2, 5]}}
  %y = llmc.reshape %x : tensor<3x4xf32> -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

func.func @dynamic_result(%x: tensor<4x8xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'llmc.reshape' op result #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<?xf32>'}}
  %y = llmc.reshape %x : tensor<4x8xf32> -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

// The custom form parses ranked tensor types only.
func.func @unranked(%x: tensor<*xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{custom op 'llmc.reshape' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %y = llmc.reshape %x : tensor<*xf32> -> tensor<32xf32>
  return %y : tensor<32xf32>
}
