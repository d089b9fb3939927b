// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @targets_shape(%l: tensor<2x4x16xf32>, %t: tensor<8xi32>, %g: tensor<f32>) {
  // expected-error @+1 {{'llmc.cross_entropy_grad' op expected targets of shape [2, 4], got [8]}}
  %d = llmc.cross_entropy_grad %l, %t, %g reduction mean : (tensor<2x4x16xf32>, tensor<8xi32>, tensor<f32>) -> tensor<2x4x16xf32>
  return
}

// -----

// A mean or a sum has one cotangent.
func.func @sum_dloss(%l: tensor<2x4x16xf32>, %t: tensor<2x4xi32>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{'llmc.cross_entropy_grad' op expected dloss of shape [], got [2, 4]}}
  %d = llmc.cross_entropy_grad %l, %t, %g reduction sum : (tensor<2x4x16xf32>, tensor<2x4xi32>, tensor<2x4xf32>) -> tensor<2x4x16xf32>
  return
}

// -----

// none has one per position.
func.func @none_dloss(%l: tensor<2x4x16xf32>, %t: tensor<2x4xi32>, %g: tensor<f32>) {
  // expected-error @+1 {{'llmc.cross_entropy_grad' op expected dloss of shape [2, 4], got []}}
  %d = llmc.cross_entropy_grad %l, %t, %g reduction none : (tensor<2x4x16xf32>, tensor<2x4xi32>, tensor<f32>) -> tensor<2x4x16xf32>
  return
}

// -----

// dlogits has the logits' type, not the f32 of the loss.
func.func @result_type(%l: tensor<2x4x16xbf16>, %t: tensor<2x4xi32>, %g: tensor<f32>) {
  // expected-error @+1 {{'llmc.cross_entropy_grad' op expected dlogits of type 'tensor<2x4x16xbf16>', got 'tensor<2x4x16xf32>'}}
  %d = llmc.cross_entropy_grad %l, %t, %g reduction mean : (tensor<2x4x16xbf16>, tensor<2x4xi32>, tensor<f32>) -> tensor<2x4x16xf32>
  return
}

// -----

func.func @rank0(%l: tensor<f32>, %t: tensor<i32>, %g: tensor<f32>) {
  // expected-error @+1 {{'llmc.cross_entropy_grad' op expected logits of rank at least 1, got rank 0}}
  %d = llmc.cross_entropy_grad %l, %t, %g reduction mean : (tensor<f32>, tensor<i32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @dloss_f32(%l: tensor<2x16xbf16>, %t: tensor<2xi32>, %g: tensor<bf16>) {
  // expected-error @+1 {{'llmc.cross_entropy_grad' op operand #2 must be statically shaped tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %d = llmc.cross_entropy_grad %l, %t, %g reduction mean : (tensor<2x16xbf16>, tensor<2xi32>, tensor<bf16>) -> tensor<2x16xbf16>
  return
}

// -----

// The lse is one per position.
func.func @lse_shape(%l: tensor<2x4x16xf32>, %t: tensor<2x4xi32>, %g: tensor<f32>, %s: tensor<8xf32>) {
  // expected-error @+1 {{'llmc.cross_entropy_grad' op expected lse of shape [2, 4], got [8]}}
  %d = llmc.cross_entropy_grad %l, %t, %g lse %s reduction mean : (tensor<2x4x16xf32>, tensor<2x4xi32>, tensor<f32>, tensor<8xf32>) -> tensor<2x4x16xf32>
  return
}
