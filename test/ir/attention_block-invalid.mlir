// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// Positions are i32: the ring's, one per query row.
func.func @query_positions_type(%q: tensor<1x2x8x16xf32>, %qp: tensor<8xi64>, %kp: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block' op expected i32 query positions [8], got 'tensor<8xi64>'}}
  %o, %l = llmc.attention_block %q, %q, %q positions(%qp, %kp) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8xi64>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @query_positions_float(%q: tensor<1x2x8x16xf32>, %qp: tensor<8xf32>, %kp: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block' op expected i32 query positions [8], got 'tensor<8xf32>'}}
  %o, %l = llmc.attention_block %q, %q, %q positions(%qp, %kp) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8xf32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x16xf32>
}

// -----

// One key position per key: S = 4 here.
func.func @key_positions_shape(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x4x16xf32>, %qp: tensor<8xi32>, %kp: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block' op expected i32 key positions [4], got 'tensor<8xi32>'}}
  %o, %l = llmc.attention_block %q, %k, %k positions(%qp, %kp) : (tensor<1x2x8x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @key_positions_rank(%q: tensor<1x2x8x16xf32>, %qp: tensor<8xi32>, %kp: tensor<1x8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block' op expected i32 key positions [8], got 'tensor<1x8xi32>'}}
  %o, %l = llmc.attention_block %q, %q, %q positions(%qp, %kp) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8xi32>, tensor<1x8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x16xf32>
}

// -----

func.func @lse_shape(%q: tensor<1x2x8x16xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block' op expected lse of shape [1, 2, 8], got [1, 8, 2]}}
  %o, %l = llmc.attention_block %q, %q, %q positions(%p, %p) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x8x2xf32>)
  return %o : tensor<1x2x8x16xf32>
}

// -----

// The shared attention checks apply: query heads a multiple of key heads.
func.func @heads(%q: tensor<1x3x8x16xf32>, %k: tensor<1x2x8x16xf32>, %p: tensor<8xi32>) -> tensor<1x3x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block' op expected the query heads to be a multiple of the key/value heads, got 3 and 2}}
  %o, %l = llmc.attention_block %q, %k, %k positions(%p, %p) : (tensor<1x3x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x3x8x16xf32>, tensor<1x3x8xf32>)
  return %o : tensor<1x3x8x16xf32>
}

// -----

func.func @result_type(%q: tensor<1x2x8x16xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xbf16> {
  // expected-error @+1 {{'llmc.attention_block' op expected result of type 'tensor<1x2x8x16xf32>', got 'tensor<1x2x8x16xbf16>'}}
  %o, %l = llmc.attention_block %q, %q, %q positions(%p, %p) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x16xbf16>
}

// -----

func.func @grad_query_positions(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>, %qp: tensor<4xi32>, %kp: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block_grad' op expected i32 query positions [8], got 'tensor<4xi32>'}}
  %dq, %dk, %dv = llmc.attention_block_grad %q, %q, %q, %q, %q, %l positions(%qp, %kp) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<4xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %dq : tensor<1x2x8x16xf32>
}

// -----

func.func @grad_out_type(%q: tensor<1x2x8x16xf32>, %o: tensor<1x2x8x16xbf16>, %l: tensor<1x2x8xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block_grad' op expected out of type 'tensor<1x2x8x16xf32>', got 'tensor<1x2x8x16xbf16>'}}
  %dq, %dk, %dv = llmc.attention_block_grad %q, %q, %q, %o, %q, %l positions(%p, %p) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %dq : tensor<1x2x8x16xf32>
}

// -----

func.func @grad_dkey_type(%q: tensor<1x2x8x16xf32>, %k: tensor<1x1x8x16xf32>, %l: tensor<1x2x8xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block_grad' op expected dkey of type 'tensor<1x1x8x16xf32>', got 'tensor<1x2x8x16xf32>'}}
  %dq, %dk, %dv = llmc.attention_block_grad %q, %k, %k, %q, %q, %l positions(%p, %p) : (tensor<1x2x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x16xf32>)
  return %dq : tensor<1x2x8x16xf32>
}

// -----

func.func @grad_dout_type(%q: tensor<1x2x8x16xf32>, %g: tensor<1x2x8x8xf32>, %l: tensor<1x2x8xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block_grad' op expected dout of type 'tensor<1x2x8x16xf32>', got 'tensor<1x2x8x8xf32>'}}
  %dq, %dk, %dv = llmc.attention_block_grad %q, %q, %q, %q, %g, %l positions(%p, %p) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %dq : tensor<1x2x8x16xf32>
}

// -----

func.func @grad_dquery_type(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xbf16> {
  // expected-error @+1 {{'llmc.attention_block_grad' op expected dquery of type 'tensor<1x2x8x16xf32>', got 'tensor<1x2x8x16xbf16>'}}
  %dq, %dk, %dv = llmc.attention_block_grad %q, %q, %q, %q, %q, %l positions(%p, %p) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %dq : tensor<1x2x8x16xbf16>
}

// -----

func.func @grad_dvalue_type(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block_grad' op expected dvalue of type 'tensor<1x2x8x16xf32>', got 'tensor<1x2x4x16xf32>'}}
  %dq, %dk, %dv = llmc.attention_block_grad %q, %q, %q, %q, %q, %l positions(%p, %p) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x4x16xf32>)
  return %dq : tensor<1x2x8x16xf32>
}

// -----

// The backward's lse is the merged one of the whole ring: f32 [B, Hq, T].
func.func @grad_lse_shape(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x4xf32>, %p: tensor<8xi32>) -> tensor<1x2x8x16xf32> {
  // expected-error @+1 {{'llmc.attention_block_grad' op expected lse of shape [1, 2, 8], got [1, 2, 4]}}
  %dq, %dk, %dv = llmc.attention_block_grad %q, %q, %q, %q, %q, %l positions(%p, %p) : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x4xf32>, tensor<8xi32>, tensor<8xi32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %dq : tensor<1x2x8x16xf32>
}
