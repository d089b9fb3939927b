// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// Tokens are flattened to [N, E] before routing.
func.func @logits_rank(%router: tensor<2x16x8xf32>) -> (tensor<32x2xf32>, tensor<32x2xi32>) {
  // expected-error @+1 {{'llmc.moe_topk' op expected router logits of rank 2, got rank 3}}
  %w, %e = llmc.moe_topk %router k 2 : tensor<2x16x8xf32> -> tensor<32x2xf32>, tensor<32x2xi32>
  return %w, %e : tensor<32x2xf32>, tensor<32x2xi32>
}

// -----

func.func @zero_k(%router: tensor<32x8xf32>) -> (tensor<32x0xf32>, tensor<32x0xi32>) {
  // expected-error @+1 {{'llmc.moe_topk' op expected k in [1, 8], got 0}}
  %w, %e = llmc.moe_topk %router k 0 : tensor<32x8xf32> -> tensor<32x0xf32>, tensor<32x0xi32>
  return %w, %e : tensor<32x0xf32>, tensor<32x0xi32>
}

// -----

func.func @k_above_experts(%router: tensor<32x8xf32>) -> (tensor<32x9xf32>, tensor<32x9xi32>) {
  // expected-error @+1 {{'llmc.moe_topk' op expected k in [1, 8], got 9}}
  %w, %e = llmc.moe_topk %router k 9 : tensor<32x8xf32> -> tensor<32x9xf32>, tensor<32x9xi32>
  return %w, %e : tensor<32x9xf32>, tensor<32x9xi32>
}

// -----

func.func @weights_shape(%router: tensor<32x8xf32>) -> (tensor<32x8xf32>, tensor<32x2xi32>) {
  // expected-error @+1 {{'llmc.moe_topk' op expected weights of shape [32, 2], got [32, 8]}}
  %w, %e = llmc.moe_topk %router k 2 : tensor<32x8xf32> -> tensor<32x8xf32>, tensor<32x2xi32>
  return %w, %e : tensor<32x8xf32>, tensor<32x2xi32>
}

// -----

func.func @indices_shape(%router: tensor<32x8xf32>) -> (tensor<32x2xf32>, tensor<2x32xi32>) {
  // expected-error @+1 {{'llmc.moe_topk' op expected indices of shape [32, 2], got [2, 32]}}
  %w, %e = llmc.moe_topk %router k 2 : tensor<32x8xf32> -> tensor<32x2xf32>, tensor<2x32xi32>
  return %w, %e : tensor<32x2xf32>, tensor<2x32xi32>
}

// -----

func.func @float_indices(%router: tensor<32x8xf32>) -> (tensor<32x2xf32>, tensor<32x2xf32>) {
  // expected-error @+1 {{'llmc.moe_topk' op result #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<32x2xf32>'}}
  %w, %e = llmc.moe_topk %router k 2 : tensor<32x8xf32> -> tensor<32x2xf32>, tensor<32x2xf32>
  return %w, %e : tensor<32x2xf32>, tensor<32x2xf32>
}

// -----

func.func @integer_logits(%router: tensor<32x8xi32>) -> (tensor<32x2xf32>, tensor<32x2xi32>) {
  // expected-error @+1 {{'llmc.moe_topk' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<32x8xi32>'}}
  %w, %e = llmc.moe_topk %router k 2 : tensor<32x8xi32> -> tensor<32x2xf32>, tensor<32x2xi32>
  return %w, %e : tensor<32x2xf32>, tensor<32x2xi32>
}

// -----

func.func @dynamic_shape(%router: tensor<?x8xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>) {
  // expected-error @+1 {{'llmc.moe_topk' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?x8xf32>'}}
  %w, %e = llmc.moe_topk %router k 2 : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi32>
  return %w, %e : tensor<?x2xf32>, tensor<?x2xi32>
}
