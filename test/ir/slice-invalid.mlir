// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @element_type(%x: tensor<8xf32>) -> tensor<4xbf16> {
  // expected-error @+1 {{'llmc.slice' op expected result element type 'f32', got 'bf16'}}
  %y = llmc.slice %x starts [0] limits [4] : tensor<8xf32> -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

func.func @starts_length(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'llmc.slice' op expected starts, limits and strides with 2 entries each, got 1, 2 and 2}}
  %y = llmc.slice %x starts [0] limits [4, 4] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

func.func @limits_length(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'llmc.slice' op expected starts, limits and strides with 2 entries each, got 2, 3 and 2}}
  %y = llmc.slice %x starts [0, 0] limits [4, 4, 1] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

func.func @strides_length(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'llmc.slice' op expected starts, limits and strides with 2 entries each, got 2, 2 and 1}}
  %y = llmc.slice %x starts [0, 0] limits [4, 8] strides [2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

// -----

func.func @negative_start(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.slice' op expected 0 <= start <= limit <= 8 in dimension 0, got start -1 and limit 3}}
  %y = llmc.slice %x starts [-1] limits [3] : tensor<8xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @start_after_limit(%x: tensor<4x8xf32>) -> tensor<4x0xf32> {
  // expected-error @+1 {{'llmc.slice' op expected 0 <= start <= limit <= 8 in dimension 1, got start 5 and limit 4}}
  %y = llmc.slice %x starts [0, 5] limits [4, 4] : tensor<4x8xf32> -> tensor<4x0xf32>
  return %y : tensor<4x0xf32>
}

// -----

func.func @limit_past_end(%x: tensor<8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'llmc.slice' op expected 0 <= start <= limit <= 8 in dimension 0, got start 7 and limit 9}}
  %y = llmc.slice %x starts [7] limits [9] : tensor<8xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @zero_stride(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.slice' op expected a positive stride in dimension 0, got 0}}
  %y = llmc.slice %x starts [0] limits [8] strides [0] : tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// No reversal by negative strides.
func.func @negative_stride(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.slice' op expected a positive stride in dimension 1, got -1}}
  %y = llmc.slice %x starts [0, 0] limits [4, 8] strides [1, -1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// With stride 2, [0, 7) has 4 elements, not 3.
func.func @result_shape(%x: tensor<8xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'llmc.slice' op expected result of shape [4], got [3]}}
  %y = llmc.slice %x starts [0] limits [7] strides [2] : tensor<8xf32> -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.slice' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<?xf32>'}}
  %y = llmc.slice %x starts [0] limits [4] : tensor<?xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
