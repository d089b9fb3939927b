// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// Only the generic form can name a result type other than the value's.
func.func @value_and_result_types() -> tensor<4xbf16> {
  // expected-error @+1 {{'llmc.constant' op failed to verify that all of {value, result} have same type}}
  %c = "llmc.constant"() <{value = dense<0.0> : tensor<4xf32>}> : () -> tensor<4xbf16>
  return %c : tensor<4xbf16>
}

// -----

func.func @i8_value() -> tensor<4xi8> {
  // expected-error @+1 {{'llmc.constant' op result #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<4xi8>'}}
  %c = llmc.constant dense<1> : tensor<4xi8>
  return %c : tensor<4xi8>
}

// -----

func.func @vector_value() -> vector<4xf32> {
  // expected-error @+1 {{'llmc.constant' op result #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'vector<4xf32>'}}
  %c = llmc.constant dense<1.0> : vector<4xf32>
  return %c : vector<4xf32>
}

// -----

// A scalar is a rank-0 tensor, not a bare float.
func.func @bare_float() -> tensor<f32> {
  // expected-error @+1 {{custom op 'llmc.constant' invalid kind of attribute specified}}
  %c = llmc.constant 1.0 : f32
  return %c : tensor<f32>
}
