// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @expert_rank(%out: tensor<80x16xf32>, %w: tensor<32x2xf32>, %e: tensor<32x2xi32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op expected expert output of rank 3, got rank 2}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<80x16xf32>, tensor<32x2xf32>, tensor<32x2xi32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

func.func @result_rank(%out: tensor<8x10x16xf32>, %w: tensor<32x2xf32>, %e: tensor<32x2xi32>) -> tensor<2x16x16xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op expected result of rank 2, got rank 3}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x16xf32>, tensor<32x2xf32>, tensor<32x2xi32>) -> tensor<2x16x16xf32>
  return %y : tensor<2x16x16xf32>
}

// -----

func.func @indices_rank(%out: tensor<8x10x16xf32>, %w: tensor<32xf32>, %e: tensor<32xi32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op expected indices of rank 2, got rank 1}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x16xf32>, tensor<32xf32>, tensor<32xi32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

// The token count comes from the result.
func.func @indices_tokens(%out: tensor<8x10x16xf32>, %w: tensor<16x2xf32>, %e: tensor<16x2xi32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op expected indices for 32 tokens, got 16}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x16xf32>, tensor<16x2xf32>, tensor<16x2xi32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

func.func @weights_shape(%out: tensor<8x10x16xf32>, %w: tensor<32x1xf32>, %e: tensor<32x2xi32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op expected weights of shape [32, 2], got [32, 1]}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x16xf32>, tensor<32x1xf32>, tensor<32x2xi32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

func.func @result_element_type(%out: tensor<8x10x16xbf16>, %w: tensor<32x2xf32>, %e: tensor<32x2xi32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op expected result element type 'bf16', got 'f32'}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x16xbf16>, tensor<32x2xf32>, tensor<32x2xi32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

func.func @feature_size(%out: tensor<8x10x16xf32>, %w: tensor<32x2xf32>, %e: tensor<32x2xi32>) -> tensor<32x8xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op expected result feature size 16, got 8}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x16xf32>, tensor<32x2xf32>, tensor<32x2xi32>) -> tensor<32x8xf32>
  return %y : tensor<32x8xf32>
}

// -----

func.func @float_indices(%out: tensor<8x10x16xf32>, %w: tensor<32x2xf32>, %e: tensor<32x2xf32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op operand #2 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<32x2xf32>'}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x16xf32>, tensor<32x2xf32>, tensor<32x2xf32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}

// -----

func.func @dynamic_shape(%out: tensor<8x10x?xf32>, %w: tensor<32x2xf32>, %e: tensor<32x2xi32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{'llmc.moe_combine' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<8x10x?xf32>'}}
  %y = llmc.moe_combine %out, %w, %e : (tensor<8x10x?xf32>, tensor<32x2xf32>, tensor<32x2xi32>) -> tensor<32x16xf32>
  return %y : tensor<32x16xf32>
}
