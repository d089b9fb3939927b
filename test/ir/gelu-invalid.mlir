// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @result_element_type(%x: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.gelu' op expected operand #0 to have the result type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %y = llmc.gelu %x tanh : tensor<4xbf16> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @result_shape(%x: tensor<4xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'llmc.gelu' op expected operand #0 to have the result type 'tensor<2x2xf32>', got 'tensor<4xf32>'}}
  %y = llmc.gelu %x tanh : tensor<4xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// The approximation is not optional.
func.func @missing_approximation(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'llmc.gelu' expected string or keyword containing one of the following enum values for attribute 'approximation' [tanh, erf]}}
  %y = llmc.gelu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @unknown_approximation(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'llmc.gelu' expected string or keyword containing one of the following enum values for attribute 'approximation' [tanh, erf]}}
  %y = llmc.gelu %x exact : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @integer_input(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'llmc.gelu' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4xi32>'}}
  %y = llmc.gelu %x tanh : tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @dynamic_shape(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'llmc.gelu' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?xf32>'}}
  %y = llmc.gelu %x tanh : tensor<?xf32>
  return %y : tensor<?xf32>
}
