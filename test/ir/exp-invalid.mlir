// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// No implicit conversion: the result has the operand's element type.
func.func @result_element_type(%x: tensor<4xf32>) -> tensor<4xbf16> {
  // expected-error @+1 {{'llmc.exp' op expected operand #0 to have the result type 'tensor<4xbf16>', got 'tensor<4xf32>'}}
  %y = llmc.exp %x : tensor<4xf32> -> tensor<4xbf16>
  return %y : tensor<4xbf16>
}

// -----

func.func @result_shape(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.exp' op expected operand #0 to have the result type 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %y = llmc.exp %x : tensor<4xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

func.func @element_type(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'llmc.exp' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %y = llmc.exp %x : tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'llmc.exp' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?x4xf32>'}}
  %y = llmc.exp %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// The long form names one type per operand.
func.func @too_many_operand_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'llmc.exp' expected 1 operand type(s) before '->', got 2}}
  %y = llmc.exp %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
