// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @batched(%a: tensor<2x16x32xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %s: tensor<f32>) -> tensor<2x16x64xbf16> {
  // expected-error @+1 {{'llmc.scaled_matmul' op expected operands of rank 2, got ranks 3 and 2}}
  %c = llmc.scaled_matmul %a, %b scales(%s, %s) : tensor<2x16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<2x16x64xbf16>
  return %c : tensor<2x16x64xbf16>
}

// -----

// The rhs must be [N, K]: a [K, N] weight is transposed before its cast.
func.func @rhs_not_transposed(%a: tensor<16x32xf8E4M3FN>, %b: tensor<32x64xf8E4M3FN>, %s: tensor<f32>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{'llmc.scaled_matmul' op expected the contraction sizes (the last dimension of both operands) to match, got 32 and 64}}
  %c = llmc.scaled_matmul %a, %b scales(%s, %s) : tensor<16x32xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<16x64xbf16>
  return %c : tensor<16x64xbf16>
}

// -----

func.func @two_e5m2(%a: tensor<16x32xf8E5M2>, %b: tensor<64x32xf8E5M2>, %s: tensor<f32>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{'llmc.scaled_matmul' op expected at most one f8E5M2 operand (FP8 GEMMs take no f8E5M2 x f8E5M2 product), got two}}
  %c = llmc.scaled_matmul %a, %b scales(%s, %s) : tensor<16x32xf8E5M2>, tensor<64x32xf8E5M2> -> tensor<16x64xbf16>
  return %c : tensor<16x64xbf16>
}

// -----

func.func @f16_result(%a: tensor<16x32xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %s: tensor<f32>) -> tensor<16x64xf16> {
  // expected-error @+1 {{'llmc.scaled_matmul' op expected a bf16 or f32 result, got 'f16'}}
  %c = llmc.scaled_matmul %a, %b scales(%s, %s) : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xf16>
  return %c : tensor<16x64xf16>
}

// -----

func.func @result_shape(%a: tensor<16x32xf8E4M3FN>, %b: tensor<64x32xf8E4M3FN>, %s: tensor<f32>) -> tensor<64x16xbf16> {
  // expected-error @+1 {{'llmc.scaled_matmul' op expected result of shape [16, 64], got [64, 16]}}
  %c = llmc.scaled_matmul %a, %b scales(%s, %s) : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<64x16xbf16>
  return %c : tensor<64x16xbf16>
}
