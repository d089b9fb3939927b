// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @gamma_shape(%x: tensor<4x8xf32>, %gamma: tensor<4xf32>) {
  // expected-error @+1 {{'llmc.rms_norm_grad' op expected gamma of shape [8], got [4]}}
  %dx, %dg = llmc.rms_norm_grad %x, %gamma, %x epsilon 1.0e-06 : (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
  return
}

// -----

func.func @dresult_type(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>, %dy: tensor<4x7xf32>) {
  // expected-error @+1 {{'llmc.rms_norm_grad' op expected dresult of type 'tensor<4x8xf32>', got 'tensor<4x7xf32>'}}
  %dx, %dg = llmc.rms_norm_grad %x, %gamma, %dy epsilon 1.0e-06 : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x7xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @dgamma_type(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>) {
  // expected-error @+1 {{'llmc.rms_norm_grad' op expected dgamma of type 'tensor<8xf32>', got 'tensor<8xf64>'}}
  %dx, %dg = llmc.rms_norm_grad %x, %gamma, %x epsilon 1.0e-06 : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf64>)
  return
}
