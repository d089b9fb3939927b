// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @not_a_matrix(%x: tensor<16xbf16>, %s: tensor<f32>) -> tensor<16xf8E4M3FN> {
  // expected-error @+1 {{'llmc.scaled_cast_transpose' op expected input of rank 2, got rank 1}}
  %y, %yt = llmc.scaled_cast_transpose %x, %s : tensor<16xbf16> -> tensor<16xf8E4M3FN>, tensor<16xf8E4M3FN>
  return %y : tensor<16xf8E4M3FN>
}

// -----

func.func @result_transposed(%x: tensor<16x32xbf16>, %s: tensor<f32>) -> tensor<32x16xf8E4M3FN> {
  // expected-error @+1 {{'llmc.scaled_cast_transpose' op expected result of shape [16, 32], got [32, 16]}}
  %y, %yt = llmc.scaled_cast_transpose %x, %s : tensor<16x32xbf16> -> tensor<32x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>
  return %y : tensor<32x16xf8E4M3FN>
}

// -----

func.func @transposed_not_transposed(%x: tensor<16x32xbf16>, %s: tensor<f32>) -> tensor<16x32xf8E4M3FN> {
  // expected-error @+1 {{'llmc.scaled_cast_transpose' op expected transposed of shape [32, 16], got [16, 32]}}
  %y, %yt = llmc.scaled_cast_transpose %x, %s : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>
  return %y : tensor<16x32xf8E4M3FN>
}

// -----

func.func @two_formats(%x: tensor<16x32xbf16>, %s: tensor<f32>) -> tensor<32x16xf8E5M2> {
  // expected-error @+1 {{'llmc.scaled_cast_transpose' op expected transposed element type 'f8E4M3FN', got 'f8E5M2'}}
  %y, %yt = llmc.scaled_cast_transpose %x, %s : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>, tensor<32x16xf8E5M2>
  return %yt : tensor<32x16xf8E5M2>
}
