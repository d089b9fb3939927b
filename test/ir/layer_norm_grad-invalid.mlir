// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// The forward's checks: gamma over the last dimension.
func.func @gamma_shape(%x: tensor<4x8xf32>, %gamma: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.layer_norm_grad' op expected gamma of shape [8], got [4]}}
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %x epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @scalar_input(%x: tensor<f32>, %gamma: tensor<1xf32>) {
  // expected-error @+1 {{'llmc.layer_norm_grad' op expected an input of rank at least 1, got rank 0}}
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %x epsilon 1.0e-05 : (tensor<f32>, tensor<1xf32>, tensor<f32>) -> (tensor<f32>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

func.func @epsilon(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) {
  // expected-error @+1 {{'llmc.layer_norm_grad' op expected a positive epsilon, got 0}}
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %x epsilon 0.0 : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// The cotangent has the forward result's type, which is the input's.
func.func @dresult_type(%x: tensor<4x8xbf16>, %gamma: tensor<8xf32>, %dy: tensor<4x8xf32>) {
  // expected-error @+1 {{'llmc.layer_norm_grad' op expected dresult of type 'tensor<4x8xbf16>', got 'tensor<4x8xf32>'}}
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %dy epsilon 1.0e-05 : (tensor<4x8xbf16>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xbf16>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @dinput_type(%x: tensor<4x8xbf16>, %gamma: tensor<8xf32>) {
  // expected-error @+1 {{'llmc.layer_norm_grad' op expected dinput of type 'tensor<4x8xbf16>', got 'tensor<4x8xf32>'}}
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %x epsilon 1.0e-05 : (tensor<4x8xbf16>, tensor<8xf32>, tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// dgamma and dbeta have gamma's type (f32 master weights get f32 gradients).
func.func @dgamma_type(%x: tensor<4x8xbf16>, %gamma: tensor<8xf32>) {
  // expected-error @+1 {{'llmc.layer_norm_grad' op expected dgamma of type 'tensor<8xf32>', got 'tensor<8xbf16>'}}
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %x epsilon 1.0e-05 : (tensor<4x8xbf16>, tensor<8xf32>, tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xf32>)
  return
}

// -----

func.func @dbeta_type(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) {
  // expected-error @+1 {{'llmc.layer_norm_grad' op expected dbeta of type 'tensor<8xf32>', got 'tensor<1x8xf32>'}}
  %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %x epsilon 1.0e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<1x8xf32>)
  return
}
