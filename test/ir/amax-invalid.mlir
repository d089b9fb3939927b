// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @vector_result(%x: tensor<16xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'llmc.amax' op expected result of rank 0, got rank 1}}
  %a = llmc.amax %x : tensor<16xf32> -> tensor<1xf32>
  return %a : tensor<1xf32>
}

// -----

func.func @integer_input(%x: tensor<16xi32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.amax' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<16xi32>'}}
  %a = llmc.amax %x : tensor<16xi32> -> tensor<f32>
  return %a : tensor<f32>
}
