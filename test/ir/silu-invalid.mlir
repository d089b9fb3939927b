// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @result_element_type(%x: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.silu' op expected operand #0 to have the result type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %y = llmc.silu %x : tensor<4xbf16> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @result_shape(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.silu' op expected operand #0 to have the result type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %y = llmc.silu %x : tensor<4xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @integer_input(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'llmc.silu' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi64>'}}
  %y = llmc.silu %x : tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

func.func @dynamic_shape(%x: tensor<4x?xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{'llmc.silu' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x?xf32>'}}
  %y = llmc.silu %x : tensor<4x?xf32>
  return %y : tensor<4x?xf32>
}

// -----

func.func @too_many_operand_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'llmc.silu' expected 1 operand type(s) before '->', got 2}}
  %y = llmc.silu %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
