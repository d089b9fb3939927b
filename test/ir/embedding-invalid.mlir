// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @table_rank(%t: tensor<4x16x8xf32>, %ids: tensor<2xi32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'llmc.embedding' op expected table of rank 2, got rank 3}}
  %h = llmc.embedding %t[%ids] : (tensor<4x16x8xf32>, tensor<2xi32>) -> tensor<2x8xf32>
  return %h : tensor<2x8xf32>
}

// -----

func.func @element_type(%t: tensor<64x8xf32>, %ids: tensor<2xi32>) -> tensor<2x8xbf16> {
  // expected-error @+1 {{'llmc.embedding' op expected result element type 'f32', got 'bf16'}}
  %h = llmc.embedding %t[%ids] : (tensor<64x8xf32>, tensor<2xi32>) -> tensor<2x8xbf16>
  return %h : tensor<2x8xbf16>
}

// -----

// The rows are [dim] wide: the vocabulary size does not appear.
func.func @result_shape(%t: tensor<64x8xf32>, %ids: tensor<2x16xi32>) -> tensor<2x16x64xf32> {
  // expected-error @+1 {{'llmc.embedding' op expected result of shape [2, 16, 8], got [2, 16, 64]}}
  %h = llmc.embedding %t[%ids] : (tensor<64x8xf32>, tensor<2x16xi32>) -> tensor<2x16x64xf32>
  return %h : tensor<2x16x64xf32>
}

// -----

func.func @integer_table(%t: tensor<64x8xi32>, %ids: tensor<2xi32>) -> tensor<2x8xi32> {
  // expected-error @+1 {{'llmc.embedding' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<64x8xi32>'}}
  %h = llmc.embedding %t[%ids] : (tensor<64x8xi32>, tensor<2xi32>) -> tensor<2x8xi32>
  return %h : tensor<2x8xi32>
}

// -----

func.func @float_ids(%t: tensor<64x8xf32>, %ids: tensor<2xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'llmc.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %h = llmc.embedding %t[%ids] : (tensor<64x8xf32>, tensor<2xf32>) -> tensor<2x8xf32>
  return %h : tensor<2x8xf32>
}

// -----

func.func @dynamic_ids(%t: tensor<64x8xf32>, %ids: tensor<?xi32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'llmc.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?xi32>'}}
  %h = llmc.embedding %t[%ids] : (tensor<64x8xf32>, tensor<?xi32>) -> tensor<2x8xf32>
  return %h : tensor<2x8xf32>
}
