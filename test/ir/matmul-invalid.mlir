// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// A vector is not a matrix: reshape it to [1, K] first.
func.func @vector_lhs(%a: tensor<8xf32>, %b: tensor<8x16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected operands of rank at least 2, got ranks 1 and 2}}
  %c = llmc.matmul %a, %b : tensor<8xf32>, tensor<8x16xf32> -> tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

func.func @vector_rhs(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected operands of rank at least 2, got ranks 2 and 1}}
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @mixed_operands(%a: tensor<4x8xbf16>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected rhs element type 'bf16', got 'f32'}}
  %c = llmc.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

func.func @batch_mismatch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected rhs batch dimensions [2] (or a rank-2 rhs shared by all batches), got [3]}}
  %c = llmc.matmul %a, %b : tensor<2x4x8xf32>, tensor<3x8x16xf32> -> tensor<2x4x16xf32>
  return %c : tensor<2x4x16xf32>
}

// -----

// Only the rhs may be shared across batches, not the lhs.
func.func @batched_rhs_plain_lhs(%a: tensor<4x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected rhs batch dimensions [] (or a rank-2 rhs shared by all batches), got [2]}}
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  return %c : tensor<2x4x16xf32>
}

// -----

func.func @contraction_sizes(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected contraction sizes to match, got 8 and 7}}
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

// [out, in] weights need transpose_b.
func.func @missing_transpose_b(%x: tensor<16x32xf32>, %w: tensor<96x32xf32>) -> tensor<16x96xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected contraction sizes to match, got 32 and 96}}
  %y = llmc.matmul %x, %w : tensor<16x32xf32>, tensor<96x32xf32> -> tensor<16x96xf32>
  return %y : tensor<16x96xf32>
}

// -----

func.func @contraction_transpose_a(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected contraction sizes to match, got 8 and 4}}
  %c = llmc.matmul %a, %b transpose_a : tensor<8x4xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

func.func @narrowing(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xbf16> {
  // expected-error @+1 {{'llmc.matmul' op expected result element type 'f32', got 'bf16'}}
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xbf16>
  return %c : tensor<4x16xbf16>
}

// -----

func.func @bf16_to_f16(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>) -> tensor<4x16xf16> {
  // expected-error @+1 {{'llmc.matmul' op expected result element type 'bf16' or 'f32', got 'f16'}}
  %c = llmc.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xf16>
  return %c : tensor<4x16xf16>
}

// -----

func.func @integer_widening(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) -> tensor<4x16xi64> {
  // expected-error @+1 {{'llmc.matmul' op expected result element type 'i32', got 'i64'}}
  %c = llmc.matmul %a, %b : tensor<4x8xi32>, tensor<8x16xi32> -> tensor<4x16xi64>
  return %c : tensor<4x16xi64>
}

// -----

func.func @result_shape(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected result of shape [4, 16], got [16, 4]}}
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<16x4xf32>
  return %c : tensor<16x4xf32>
}

// -----

// The batch dimensions of the lhs carry into the result.
func.func @result_batch(%a: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'llmc.matmul' op expected result of shape [2, 4, 16], got [4, 16]}}
  %c = llmc.matmul %a, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}

// -----

func.func @bool_operands(%a: tensor<4x8xi1>, %b: tensor<8x16xi1>) -> tensor<4x16xi1> {
  // expected-error @+1 {{'llmc.matmul' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4x8xi1>'}}
  %c = llmc.matmul %a, %b : tensor<4x8xi1>, tensor<8x16xi1> -> tensor<4x16xi1>
  return %c : tensor<4x16xi1>
}

// -----

func.func @dynamic_shape(%a: tensor<4x8xf32>, %b: tensor<8x?xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{'llmc.matmul' op operand #1 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8x?xf32>'}}
  %c = llmc.matmul %a, %b : tensor<4x8xf32>, tensor<8x?xf32> -> tensor<4x?xf32>
  return %c : tensor<4x?xf32>
}
