// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @rhs_element_type(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.add' op expected operand #1 to have the result type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %c = llmc.add %a, %b : tensor<4xf32>, tensor<4xbf16> -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @lhs_element_type(%a: tensor<4xi64>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'llmc.add' op expected operand #0 to have the result type 'tensor<4xi32>', got 'tensor<4xi64>'}}
  %c = llmc.add %a, %b : tensor<4xi64>, tensor<4xi32> -> tensor<4xi32>
  return %c : tensor<4xi32>
}

// -----

// Agreeing operands do not make a wider result valid.
func.func @result_element_type(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.add' op expected operand #0 to have the result type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %c = llmc.add %a, %b : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// No implicit broadcasting: use llmc.broadcast.
func.func @no_implicit_broadcast(%a: tensor<4x8xf32>, %b: tensor<1x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.add' op expected operand #1 to have the result type 'tensor<4x8xf32>', got 'tensor<1x8xf32>'}}
  %c = llmc.add %a, %b : tensor<4x8xf32>, tensor<1x8xf32> -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

func.func @element_type(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'llmc.add' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %c = llmc.add %a, %b : tensor<4xi1>
  return %c : tensor<4xi1>
}

// -----

func.func @dynamic_shape(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'llmc.add' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?x4xf32>'}}
  %c = llmc.add %a, %b : tensor<?x4xf32>
  return %c : tensor<?x4xf32>
}

// -----

// The long form names one type per operand.
func.func @too_few_operand_types(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'llmc.add' expected 2 operand type(s) before '->', got 1}}
  %c = llmc.add %a, %b : tensor<4xf32> -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

func.func @missing_result_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{expected '->'}}
  %c = llmc.add %a, %b : tensor<4xf32>, tensor<4xf32>
  return %c : tensor<4xf32>
}
