// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @scalar_input(%x: tensor<f32>, %gamma: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.rms_norm' op expected an input of rank at least 1, got rank 0}}
  %y = llmc.rms_norm %x, %gamma epsilon 1.0e-05 : (tensor<f32>, tensor<1xf32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

func.func @gamma_shape(%x: tensor<4x8xf32>, %gamma: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.rms_norm' op expected gamma of shape [8], got [4, 8]}}
  %y = llmc.rms_norm %x, %gamma epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @result_type(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'llmc.rms_norm' op expected result of type 'tensor<4x8xf32>', got 'tensor<4x8xbf16>'}}
  %y = llmc.rms_norm %x, %gamma epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

func.func @zero_epsilon(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.rms_norm' op expected a positive epsilon, got 0.000000e+00}}
  %y = llmc.rms_norm %x, %gamma epsilon 0.0 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// An rms norm has no beta.
func.func @with_beta(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{expected 'epsilon'}}
  %y = llmc.rms_norm %x, %gamma, %gamma epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @integer_gamma(%x: tensor<4x8xf32>, %gamma: tensor<8xi32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.rms_norm' op operand #1 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<8xi32>'}}
  %y = llmc.rms_norm %x, %gamma epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<8xi32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<4x?xf32>, %gamma: tensor<8xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{'llmc.rms_norm' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x?xf32>'}}
  %y = llmc.rms_norm %x, %gamma epsilon 1.0e-05 : (tensor<4x?xf32>, tensor<8xf32>) -> tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}
