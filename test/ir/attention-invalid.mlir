// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// The layout is [B, H, T, D]: heads are not folded into the batch.
func.func @query_rank(%q: tensor<8x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected query of rank 4, got rank 3}}
  %o = llmc.attention %q, %k, %k : (tensor<8x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<8x16x8xf32>
  return %o : tensor<8x16x8xf32>
}

// -----

func.func @key_rank(%q: tensor<2x4x16x8xf32>, %k: tensor<8x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected key of rank 4, got rank 3}}
  %o = llmc.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<8x16x8xf32>, tensor<8x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

func.func @value_type(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x4xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected value of type 'tensor<2x4x16x8xf32>', got 'tensor<2x4x16x4xf32>'}}
  %o = llmc.attention %q, %k, %v : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x4xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

func.func @key_element_type(%q: tensor<2x4x16x8xbf16>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xbf16> {
  // expected-error @+1 {{'llmc.attention' op expected key element type 'bf16', got 'f32'}}
  %o = llmc.attention %q, %k, %k : (tensor<2x4x16x8xbf16>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xbf16>
  return %o : tensor<2x4x16x8xbf16>
}

// -----

func.func @key_batch(%q: tensor<2x4x16x8xf32>, %k: tensor<1x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected key batch size 2, got 1}}
  %o = llmc.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

func.func @key_head_dim(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x16xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected key head dimension 8, got 16}}
  %o = llmc.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// Zero key/value heads once crashed the verifier with a division by zero.
func.func @no_kv_heads(%q: tensor<2x4x16x8xf32>, %k: tensor<2x0x16x8xf32>) -> tensor<2x4x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected at least one key/value head, got 0}}
  %o = llmc.attention %q, %k, %k : (tensor<2x4x16x8xf32>, tensor<2x0x16x8xf32>, tensor<2x0x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

func.func @heads_not_multiple(%q: tensor<2x6x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x6x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected the query heads to be a multiple of the key/value heads, got 6 and 4}}
  %o = llmc.attention %q, %k, %k : (tensor<2x6x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x6x16x8xf32>
  return %o : tensor<2x6x16x8xf32>
}

// -----

// More key/value heads than query heads is not grouped query attention.
func.func @more_kv_heads(%q: tensor<2x2x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x2x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected the query heads to be a multiple of the key/value heads, got 2 and 4}}
  %o = llmc.attention %q, %k, %k : (tensor<2x2x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x2x16x8xf32>
  return %o : tensor<2x2x16x8xf32>
}

// -----

func.func @causal_lengths(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected equal query and key lengths for causal attention, got 4 and 16}}
  %o = llmc.attention %q, %k, %k causal : (tensor<1x2x4x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

func.func @zero_scale(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected a positive scale, got 0.000000e+00}}
  %o = llmc.attention %q, %k, %k scale 0.0 : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @negative_scale(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected a positive scale, got -1.250000e-01}}
  %o = llmc.attention %q, %k, %k causal scale -0.125 : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// The result has the query's type: no f32 output for bf16 inputs.
func.func @result_type(%q: tensor<1x2x16x8xbf16>, %k: tensor<1x2x16x8xbf16>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected result of type 'tensor<1x2x16x8xbf16>', got 'tensor<1x2x16x8xf32>'}}
  %o = llmc.attention %q, %k, %k : (tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// The result follows the query's heads and length, not the key's.
func.func @result_shape(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected result of type 'tensor<1x4x4x8xf32>', got 'tensor<1x2x16x8xf32>'}}
  %o = llmc.attention %q, %k, %k : (tensor<1x4x4x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @integer_query(%q: tensor<1x2x16x8xi32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-error @+1 {{'llmc.attention' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<1x2x16x8xi32>'}}
  %o = llmc.attention %q, %k, %k : (tensor<1x2x16x8xi32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @dynamic_shape(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x?x8xf32> {
  // expected-error @+1 {{'llmc.attention' op operand #0 must be statically shaped tensor of 32-bit float or 64-bit float or bfloat16 type or 16-bit float values, but got 'tensor<1x2x?x8xf32>'}}
  %o = llmc.attention %q, %k, %k : (tensor<1x2x?x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// -----

// bthd: the heads are dimension 2, positions dimension 1.
func.func @bthd_heads(%q: tensor<1x16x6x8xf32>, %k: tensor<1x16x4x8xf32>) -> tensor<1x16x6x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected the query heads to be a multiple of the key/value heads, got 6 and 4}}
  %o = llmc.attention %q, %k, %k layout bthd : (tensor<1x16x6x8xf32>, tensor<1x16x4x8xf32>, tensor<1x16x4x8xf32>) -> tensor<1x16x6x8xf32>
  return %o : tensor<1x16x6x8xf32>
}

// -----

func.func @packed_values(%p: tensor<1x16x6x8xf32>, %r: tensor<1x16x6x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected one packed value as query, key and value}}
  %o = llmc.attention %p, %r, %p layout packed : (tensor<1x16x6x8xf32>, tensor<1x16x6x8xf32>, tensor<1x16x6x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

// 5 packed heads cannot be 2 query heads and as many key as value heads.
func.func @packed_heads(%p: tensor<1x16x5x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error @+1 {{'llmc.attention' op expected 5 packed heads to be Hq = 2 query heads and as many key as value heads}}
  %o = llmc.attention %p, %p, %p layout packed : (tensor<1x16x5x8xf32>, tensor<1x16x5x8xf32>, tensor<1x16x5x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

// The log-sum-exp has one value per query row: [B, Hq, T].
func.func @lse_shape(%q: tensor<1x4x16x8xf32>, %k: tensor<1x2x16x8xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{'llmc.attention' op expected lse of shape [1, 4, 16], got [1, 2, 16]}}
  %o, %lse = llmc.attention %q, %k, %k : (tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> (tensor<1x4x16x8xf32>, tensor<1x2x16xf32>)
  return %lse : tensor<1x2x16xf32>
}
