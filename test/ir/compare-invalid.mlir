// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @operand_types(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xi1> {
  // expected-error @+1 {{'llmc.compare' op expected rhs of type 'tensor<4xf32>', got 'tensor<4xbf16>'}}
  %m = llmc.compare lt %a, %b : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xi1>
  return %m : tensor<4xi1>
}

// -----

// No implicit broadcasting.
func.func @operand_shapes(%a: tensor<4x8xi32>, %b: tensor<4x1xi32>) -> tensor<4x8xi1> {
  // expected-error @+1 {{'llmc.compare' op expected rhs of type 'tensor<4x8xi32>', got 'tensor<4x1xi32>'}}
  %m = llmc.compare eq %a, %b : (tensor<4x8xi32>, tensor<4x1xi32>) -> tensor<4x8xi1>
  return %m : tensor<4x8xi1>
}

// -----

func.func @result_shape(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<8xi1> {
  // expected-error @+1 {{'llmc.compare' op expected result of shape [4], got [8]}}
  %m = llmc.compare ge %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xi1>
  return %m : tensor<8xi1>
}

// -----

func.func @result_not_bool(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'llmc.compare' op result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<4xi32>'}}
  %m = llmc.compare eq %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %m : tensor<4xi32>
}

// -----

// Booleans are compared with llmc.select or a cast, not ordered.
func.func @bool_operands(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'llmc.compare' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %m = llmc.compare eq %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %m : tensor<4xi1>
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xi1> {
  // expected-error @+1 {{'llmc.compare' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<?xf32>'}}
  %m = llmc.compare eq %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
  return %m : tensor<?xi1>
}

// -----

func.func @unknown_direction(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{custom op 'llmc.compare' expected string or keyword containing one of the following enum values for attribute 'direction' [eq, ne, lt, le, gt, ge]}}
  %m = llmc.compare less %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %m : tensor<4xi1>
}

// -----

func.func @direction_out_of_range(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{invalid properties {direction = 6 : i32} for op llmc.compare: Invalid attribute `direction` in property conversion: 6 : i32}}
  %m = "llmc.compare"(%a, %b) <{direction = 6 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %m : tensor<4xi1>
}
