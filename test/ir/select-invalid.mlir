// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @branch_types(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.select' op expected on_false of type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %y = llmc.select %m, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @result_type(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'llmc.select' op expected result of type 'tensor<4xf32>', got 'tensor<4xf16>'}}
  %y = llmc.select %m, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// The condition is not broadcast: it has the values' shape.
func.func @cond_shape(%m: tensor<1xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.select' op expected cond of shape [4], got [1]}}
  %y = llmc.select %m, %a, %b : (tensor<1xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @cond_not_bool(%m: tensor<4xi32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'llmc.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xi32>'}}
  %y = llmc.select %m, %a, %b : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @dynamic_shape(%m: tensor<4xi1>, %a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'llmc.select' op operand #1 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer or 1-bit signless integer values, but got 'tensor<?xf32>'}}
  %y = llmc.select %m, %a, %b : (tensor<4xi1>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
