// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// The result has the input's type, or f32 for a bf16 or f16 input (a
// widening cast folded in by llmc-fuse); nothing narrower.
func.func @result_type(%x: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'llmc.softmax' op expected result of type 'tensor<4x8xf32>', got 'tensor<4x8xbf16>'}}
  %p = llmc.softmax %x dim 1 : tensor<4x8xf32> -> tensor<4x8xbf16>
  return %p : tensor<4x8xbf16>
}

// -----

func.func @result_shape(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'llmc.softmax' op expected result of type 'tensor<4x8xf32>', got 'tensor<4x1xf32>'}}
  %p = llmc.softmax %x dim 1 : tensor<4x8xf32> -> tensor<4x1xf32>
  return %p : tensor<4x1xf32>
}

// -----

func.func @dim_out_of_range(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.softmax' op expected dim in [0, 2), got 2}}
  %p = llmc.softmax %x dim 2 : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

func.func @negative_dim(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'llmc.softmax' op expected dim in [0, 2), got -1}}
  %p = llmc.softmax %x dim -1 : tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.softmax' op expected dim in [0, 0), got 0}}
  %p = llmc.softmax %x dim 0 : tensor<f32>
  return %p : tensor<f32>
}

// -----

func.func @integer_input(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{'llmc.softmax' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<4x8xi32>'}}
  %p = llmc.softmax %x dim 1 : tensor<4x8xi32>
  return %p : tensor<4x8xi32>
}

// -----

func.func @dynamic_shape(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'llmc.softmax' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<?x8xf32>'}}
  %p = llmc.softmax %x dim 1 : tensor<?x8xf32>
  return %p : tensor<?x8xf32>
}

// -----

func.func @too_many_operand_types(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{custom op 'llmc.softmax' expected 1 operand type(s) before '->', got 2}}
  %p = llmc.softmax %x dim 1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}
