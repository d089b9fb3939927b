// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @up_element_type(%gate: tensor<4xf32>, %up: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.swiglu' op expected operand #1 to have the result type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %h = llmc.swiglu %gate, %up : tensor<4xf32>, tensor<4xbf16> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

func.func @gate_shape(%gate: tensor<8xf32>, %up: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.swiglu' op expected operand #0 to have the result type 'tensor<4xf32>', got 'tensor<8xf32>'}}
  %h = llmc.swiglu %gate, %up : tensor<8xf32>, tensor<4xf32> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

// A fused [gate; up] tensor is not split implicitly: slice it first.
func.func @fused_gate_up(%gu: tensor<4x16xf32>, %up: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.swiglu' op expected operand #0 to have the result type 'tensor<4x8xf32>', got 'tensor<4x16xf32>'}}
  %h = llmc.swiglu %gu, %up : tensor<4x16xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %h : tensor<4x8xf32>
}

// -----

func.func @result_type(%gate: tensor<4xbf16>, %up: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.swiglu' op expected operand #0 to have the result type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %h = llmc.swiglu %gate, %up : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xf32>
  return %h : tensor<4xf32>
}

// -----

func.func @integer_operands(%gate: tensor<4xi32>, %up: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'llmc.swiglu' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %h = llmc.swiglu %gate, %up : tensor<4xi32>
  return %h : tensor<4xi32>
}

// -----

func.func @dynamic_shape(%gate: tensor<?xf32>, %up: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'llmc.swiglu' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?xf32>'}}
  %h = llmc.swiglu %gate, %up : tensor<?xf32>
  return %h : tensor<?xf32>
}

// -----

func.func @too_few_operand_types(%gate: tensor<4xf32>, %up: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'llmc.swiglu' expected 2 operand type(s) before '->', got 1}}
  %h = llmc.swiglu %gate, %up : tensor<4xf32> -> tensor<4xf32>
  return %h : tensor<4xf32>
}
