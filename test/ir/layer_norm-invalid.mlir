// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @scalar_input(%x: tensor<f32>, %gamma: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.layer_norm' op expected an input of rank at least 1, got rank 0}}
  %y = llmc.layer_norm %x, %gamma epsilon 1.0e-05 : (tensor<f32>, tensor<1xf32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// gamma is over the last dimension, not the first.
func.func @gamma_shape(%x: tensor<4x8xf32>, %gamma: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.layer_norm' op expected gamma of shape [8], got [4]}}
  %y = llmc.layer_norm %x, %gamma epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @beta_shape(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>, %beta: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.layer_norm' op expected beta of shape [8], got [1, 8]}}
  %y = llmc.layer_norm %x, %gamma, %beta epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The result has the input's type, whatever the parameters' type.
func.func @result_type(%x: tensor<4x8xbf16>, %gamma: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.layer_norm' op expected result of type 'tensor<4x8xbf16>', got 'tensor<4x8xf32>'}}
  %y = llmc.layer_norm %x, %gamma epsilon 1.0e-05 : (tensor<4x8xbf16>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @zero_epsilon(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.layer_norm' op expected a positive epsilon, got 0.000000e+00}}
  %y = llmc.layer_norm %x, %gamma epsilon 0.0 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @negative_epsilon(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.layer_norm' op expected a positive epsilon, got -1.000000e-05}}
  %y = llmc.layer_norm %x, %gamma epsilon -1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// NaN is not positive either.
func.func @nan_epsilon(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.layer_norm' op expected a positive epsilon, got nan}}
  %y = llmc.layer_norm %x, %gamma epsilon 0x7FF8000000000000 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

func.func @integer_input(%x: tensor<4x8xi32>, %gamma: tensor<8xf32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{'llmc.layer_norm' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x8xi32>'}}
  %y = llmc.layer_norm %x, %gamma epsilon 1.0e-05 : (tensor<4x8xi32>, tensor<8xf32>) -> tensor<4x8xi32>
  return %y : tensor<4x8xi32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>, %gamma: tensor<8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'llmc.layer_norm' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?x8xf32>'}}
  %y = llmc.layer_norm %x, %gamma epsilon 1.0e-05 : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// gamma and beta share one element type.
func.func @beta_element_type(%x: tensor<2x8xbf16>, %g: tensor<8xf32>, %b: tensor<8xbf16>) -> tensor<2x8xbf16> {
  // expected-error @+1 {{'llmc.layer_norm' op expected beta element type 'f32', got 'bf16'}}
  %y = llmc.layer_norm %x, %g, %b epsilon 1.0e-05 : (tensor<2x8xbf16>, tensor<8xf32>, tensor<8xbf16>) -> tensor<2x8xbf16>
  return %y : tensor<2x8xbf16>
}
