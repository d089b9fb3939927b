// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @vector_lhs(%x: tensor<32xbf16>, %w: tensor<32x96xbf16>) -> tensor<96xbf16> {
  // expected-error @+1 {{'llmc.fp8_matmul' op expected an lhs of rank at least 2, got rank 1}}
  %y = llmc.fp8_matmul %x, %w : tensor<32xbf16>, tensor<32x96xbf16> -> tensor<96xbf16>
  return %y : tensor<96xbf16>
}

// -----

func.func @batched_weight(%x: tensor<2x16x32xbf16>, %w: tensor<2x32x96xbf16>) -> tensor<2x16x96xbf16> {
  // expected-error @+1 {{'llmc.fp8_matmul' op expected rhs of rank 2, got rank 3}}
  %y = llmc.fp8_matmul %x, %w : tensor<2x16x32xbf16>, tensor<2x32x96xbf16> -> tensor<2x16x96xbf16>
  return %y : tensor<2x16x96xbf16>
}

// -----

func.func @mixed_types(%x: tensor<16x32xbf16>, %w: tensor<32x96xf32>) -> tensor<16x96xbf16> {
  // expected-error @+1 {{'llmc.fp8_matmul' op expected rhs element type 'bf16', got 'f32'}}
  %y = llmc.fp8_matmul %x, %w : tensor<16x32xbf16>, tensor<32x96xf32> -> tensor<16x96xbf16>
  return %y : tensor<16x96xbf16>
}

// -----

func.func @wide_result(%x: tensor<16x32xbf16>, %w: tensor<32x96xbf16>) -> tensor<16x96xf32> {
  // expected-error @+1 {{'llmc.fp8_matmul' op expected result element type 'bf16', got 'f32'}}
  %y = llmc.fp8_matmul %x, %w : tensor<16x32xbf16>, tensor<32x96xbf16> -> tensor<16x96xf32>
  return %y : tensor<16x96xf32>
}

// -----

func.func @contraction(%x: tensor<16x32xbf16>, %w: tensor<32x96xbf16>) -> tensor<16x32xbf16> {
  // expected-error @+1 {{'llmc.fp8_matmul' op expected contraction sizes to match, got 32 and 96}}
  %y = llmc.fp8_matmul %x, %w transpose_b : tensor<16x32xbf16>, tensor<32x96xbf16> -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}

// -----

func.func @result_shape(%x: tensor<2x16x32xbf16>, %w: tensor<32x96xbf16>) -> tensor<32x96xbf16> {
  // expected-error @+1 {{'llmc.fp8_matmul' op expected result of shape [2, 16, 96], got [32, 96]}}
  %y = llmc.fp8_matmul %x, %w : tensor<2x16x32xbf16>, tensor<32x96xbf16> -> tensor<32x96xbf16>
  return %y : tensor<32x96xbf16>
}
