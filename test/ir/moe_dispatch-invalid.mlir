// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @input_rank(%x: tensor<2x16x16xf32>, %e: tensor<32x2xi32>) -> tensor<8x10x16xf32> {
  // expected-error @+1 {{'llmc.moe_dispatch' op expected input of rank 2, got rank 3}}
  %buf = llmc.moe_dispatch %x, %e : (tensor<2x16x16xf32>, tensor<32x2xi32>) -> tensor<8x10x16xf32>
  return %buf : tensor<8x10x16xf32>
}

// -----

func.func @indices_rank(%x: tensor<32x16xf32>, %e: tensor<32xi32>) -> tensor<8x10x16xf32> {
  // expected-error @+1 {{'llmc.moe_dispatch' op expected indices of rank 2, got rank 1}}
  %buf = llmc.moe_dispatch %x, %e : (tensor<32x16xf32>, tensor<32xi32>) -> tensor<8x10x16xf32>
  return %buf : tensor<8x10x16xf32>
}

// -----

func.func @indices_tokens(%x: tensor<32x16xf32>, %e: tensor<16x2xi32>) -> tensor<8x10x16xf32> {
  // expected-error @+1 {{'llmc.moe_dispatch' op expected indices for 32 tokens, got 16}}
  %buf = llmc.moe_dispatch %x, %e : (tensor<32x16xf32>, tensor<16x2xi32>) -> tensor<8x10x16xf32>
  return %buf : tensor<8x10x16xf32>
}

// -----

// The result is [E, C, D]: the expert count and capacity are explicit.
func.func @result_rank(%x: tensor<32x16xf32>, %e: tensor<32x2xi32>) -> tensor<80x16xf32> {
  // expected-error @+1 {{'llmc.moe_dispatch' op expected result of rank 3, got rank 2}}
  %buf = llmc.moe_dispatch %x, %e : (tensor<32x16xf32>, tensor<32x2xi32>) -> tensor<80x16xf32>
  return %buf : tensor<80x16xf32>
}

// -----

func.func @result_element_type(%x: tensor<32x16xf32>, %e: tensor<32x2xi32>) -> tensor<8x10x16xbf16> {
  // expected-error @+1 {{'llmc.moe_dispatch' op expected result element type 'f32', got 'bf16'}}
  %buf = llmc.moe_dispatch %x, %e : (tensor<32x16xf32>, tensor<32x2xi32>) -> tensor<8x10x16xbf16>
  return %buf : tensor<8x10x16xbf16>
}

// -----

func.func @feature_size(%x: tensor<32x16xf32>, %e: tensor<32x2xi32>) -> tensor<8x10x32xf32> {
  // expected-error @+1 {{'llmc.moe_dispatch' op expected result feature size 16, got 32}}
  %buf = llmc.moe_dispatch %x, %e : (tensor<32x16xf32>, tensor<32x2xi32>) -> tensor<8x10x32xf32>
  return %buf : tensor<8x10x32xf32>
}

// -----

func.func @float_indices(%x: tensor<32x16xf32>, %e: tensor<32x2xf32>) -> tensor<8x10x16xf32> {
  // expected-error @+1 {{'llmc.moe_dispatch' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<32x2xf32>'}}
  %buf = llmc.moe_dispatch %x, %e : (tensor<32x16xf32>, tensor<32x2xf32>) -> tensor<8x10x16xf32>
  return %buf : tensor<8x10x16xf32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x16xf32>, %e: tensor<32x2xi32>) -> tensor<8x10x16xf32> {
  // expected-error @+1 {{'llmc.moe_dispatch' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?x16xf32>'}}
  %buf = llmc.moe_dispatch %x, %e : (tensor<?x16xf32>, tensor<32x2xi32>) -> tensor<8x10x16xf32>
  return %buf : tensor<8x10x16xf32>
}
