// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @scalar_logits(%logits: tensor<f32>, %targets: tensor<i32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.cross_entropy' op expected logits of rank at least 1, got rank 0}}
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<f32>, tensor<i32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Targets are class ids, not one-hot rows shaped like the logits.
func.func @one_hot_targets(%logits: tensor<8x64xf32>, %targets: tensor<8x64xi32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.cross_entropy' op expected targets of shape [8], got [8, 64]}}
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<8x64xf32>, tensor<8x64xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @targets_shape(%logits: tensor<2x16x64xf32>, %targets: tensor<32xi32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.cross_entropy' op expected targets of shape [2, 16], got [32]}}
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<2x16x64xf32>, tensor<32xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @mean_not_scalar(%logits: tensor<8x64xf32>, %targets: tensor<8xi32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.cross_entropy' op expected result of shape [], got [8]}}
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<8x64xf32>, tensor<8xi32>) -> tensor<8xf32>
  return %l : tensor<8xf32>
}

// -----

func.func @sum_not_scalar(%logits: tensor<8x64xf32>, %targets: tensor<8xi32>) -> tensor<1xf32> {
  // expected-error @+1 {{'llmc.cross_entropy' op expected result of shape [], got [1]}}
  %l = llmc.cross_entropy %logits, %targets reduction sum : (tensor<8x64xf32>, tensor<8xi32>) -> tensor<1xf32>
  return %l : tensor<1xf32>
}

// -----

func.func @none_scalar(%logits: tensor<8x64xf32>, %targets: tensor<8xi32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.cross_entropy' op expected result of shape [8], got []}}
  %l = llmc.cross_entropy %logits, %targets reduction none : (tensor<8x64xf32>, tensor<8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The loss is always f32, whatever the logits' type.
func.func @bf16_result(%logits: tensor<8x64xbf16>, %targets: tensor<8xi32>) -> tensor<bf16> {
  // expected-error @+1 {{'llmc.cross_entropy' op result #0 must be statically shaped tensor of 32-bit float values, but got 'tensor<bf16>'}}
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<8x64xbf16>, tensor<8xi32>) -> tensor<bf16>
  return %l : tensor<bf16>
}

// -----

func.func @float_targets(%logits: tensor<8x64xf32>, %targets: tensor<8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<8xf32>'}}
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<8x64xf32>, tensor<8xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @dynamic_shape(%logits: tensor<?x64xf32>, %targets: tensor<?xi32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.cross_entropy' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?x64xf32>'}}
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<?x64xf32>, tensor<?xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The reduction is not optional.
func.func @missing_reduction(%logits: tensor<8x64xf32>, %targets: tensor<8xi32>) -> tensor<f32> {
  // expected-error @+1 {{expected 'reduction'}}
  %l = llmc.cross_entropy %logits, %targets : (tensor<8x64xf32>, tensor<8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @unknown_reduction(%logits: tensor<8x64xf32>, %targets: tensor<8xi32>) -> tensor<f32> {
  // expected-error @+1 {{custom op 'llmc.cross_entropy' expected string or keyword containing one of the following enum values for attribute 'reduction' [mean, sum, none]}}
  %l = llmc.cross_entropy %logits, %targets reduction max : (tensor<8x64xf32>, tensor<8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The lse is one per position, not one per class.
func.func @lse_shape(%logits: tensor<8x64xf32>, %targets: tensor<8xi32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.cross_entropy' op expected lse of shape [8], got [8, 64]}}
  %l, %lse = llmc.cross_entropy %logits, %targets reduction mean : (tensor<8x64xf32>, tensor<8xi32>) -> (tensor<f32>, tensor<8x64xf32>)
  return %l : tensor<f32>
}

// -----

func.func @lse_f32(%logits: tensor<8x64xbf16>, %targets: tensor<8xi32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.cross_entropy' op result #1 must be statically shaped tensor of 32-bit float values, but got 'tensor<8xbf16>'}}
  %l, %lse = llmc.cross_entropy %logits, %targets reduction mean : (tensor<8x64xbf16>, tensor<8xi32>) -> (tensor<f32>, tensor<8xbf16>)
  return %l : tensor<f32>
}
