// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @shape_mismatch(%x: tensor<16x32xbf16>, %s: tensor<f32>) -> tensor<32x16xf8E4M3FN> {
  // expected-error @+1 {{'llmc.scaled_cast' op expected result of shape [16, 32], got [32, 16]}}
  %y = llmc.scaled_cast %x, %s : tensor<16x32xbf16> -> tensor<32x16xf8E4M3FN>
  return %y : tensor<32x16xf8E4M3FN>
}

// -----

func.func @not_an_fp8_result(%x: tensor<16xbf16>, %s: tensor<f32>) -> tensor<16xbf16> {
  // expected-error @+1 {{'llmc.scaled_cast' op result #0 must be statically shaped tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<16xbf16>'}}
  %y = llmc.scaled_cast %x, %s : tensor<16xbf16> -> tensor<16xbf16>
  return %y : tensor<16xbf16>
}

// -----

func.func @vector_scale(%x: tensor<16xbf16>, %s: tensor<1xf32>) -> tensor<16xf8E4M3FN> {
  // expected-error @+1 {{'llmc.scaled_cast' op operand #1 must be 0D tensor of 32-bit float values, but got 'tensor<1xf32>'}}
  %y = "llmc.scaled_cast"(%x, %s) : (tensor<16xbf16>, tensor<1xf32>) -> tensor<16xf8E4M3FN>
  return %y : tensor<16xf8E4M3FN>
}
