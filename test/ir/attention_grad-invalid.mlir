// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// The checks shared with llmc.attention: query, key and value.
func.func @heads(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected the query heads to be a multiple of the key/value heads, got 3 and 2}}
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %k, %q, %q : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x3x4x8xf32>, tensor<1x3x4x8xf32>) -> (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

func.func @causal_lengths(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected equal query and key lengths for causal attention, got 4 and 5}}
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %k, %q, %q causal : (tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>)
  return
}

// -----

// The forward result and its cotangent have the query's type.
func.func @out_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %o: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected out of type 'tensor<1x2x4x8xf32>', got 'tensor<1x2x4x4xf32>'}}
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %k, %o, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

func.func @dout_type(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %g: tensor<1x2x4x8xbf16>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected dout of type 'tensor<1x2x4x8xf32>', got 'tensor<1x2x4x8xbf16>'}}
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %k, %q, %g : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xbf16>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

// The gradients have the types of query, key and value.
func.func @dkey_type(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected dkey of type 'tensor<1x2x4x8xf32>', got 'tensor<1x4x4x8xf32>'}}
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %k, %q, %q : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

func.func @scale(%q: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected a positive scale, got -1.000000e+00}}
  %dq, %dk, %dv = llmc.attention_grad %q, %q, %q, %q, %q scale -1.0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}

// -----

// packed writes one gradient.
func.func @packed_gradients(%p: tensor<1x16x6x8xf32>, %o: tensor<1x16x2x8xf32>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected 1 gradient in the packed layout, got 3}}
  %dq, %dk, %dv = llmc.attention_grad %p, %p, %p, %o, %o layout packed : (tensor<1x16x6x8xf32>, tensor<1x16x6x8xf32>, tensor<1x16x6x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> (tensor<1x16x6x8xf32>, tensor<1x16x6x8xf32>, tensor<1x16x6x8xf32>)
  return
}

// -----

// The log-sum-exp operand must be f32 (the ODS constraint).
func.func @lse_element_type(%q: tensor<1x2x4x8xbf16>, %lse: tensor<1x2x4xbf16>) {
  // expected-error @+1 {{'llmc.attention_grad' op operand #5 must be statically shaped tensor of 32-bit float values}}
  %dq, %dk, %dv = llmc.attention_grad %q, %q, %q, %q, %q lse %lse : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4xbf16>) -> (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>)
  return
}

// -----

// bthd: out has the query's [B, T, Hq, D] type.
func.func @bthd_out(%q: tensor<1x16x2x8xf32>, %o: tensor<1x2x16x8xf32>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected out of type 'tensor<1x16x2x8xf32>', got 'tensor<1x2x16x8xf32>'}}
  %dq, %dk, %dv = llmc.attention_grad %q, %q, %q, %o, %o layout bthd : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>)
  return
}

// -----

func.func @lse_shape(%q: tensor<1x2x4x8xf32>, %lse: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'llmc.attention_grad' op expected lse of shape [1, 2, 4], got [1, 2, 8]}}
  %dq, %dk, %dv = llmc.attention_grad %q, %q, %q, %q, %q lse %lse : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  return
}
