// RUN: llmc-opt %s --split-input-file --llmc-fold-attention-layout | FileCheck %s

// GPT-2's attention, forward and backward: q, k, v sliced from one [B, T, 3C]
// product, heads split and transposed, the result transposed back; dq, dk,
// dv transposed back and concatenated. Both ops read one packed reshape of
// the product; no transpose, slice or concat is left.
// CHECK-LABEL: func.func @gpt2_attention
// CHECK-SAME:    (%[[QKV:.+]]: tensor<2x8x96xf32>, %[[DY:.+]]: tensor<2x8x32xf32>)
// CHECK-NEXT:    %[[P:.+]] = llmc.reshape %[[QKV]] : tensor<2x8x96xf32> -> tensor<2x8x12x8xf32>
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[P]], %[[P]], %[[P]] causal layout packed : (tensor<2x8x12x8xf32>, tensor<2x8x12x8xf32>, tensor<2x8x12x8xf32>) -> tensor<2x8x4x8xf32>
// CHECK-NEXT:    %[[Y:.+]] = llmc.reshape %[[O]] : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
// CHECK-NEXT:    %[[G:.+]] = llmc.reshape %[[DY]] : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
// CHECK-NEXT:    %[[D:.+]] = llmc.attention_grad %[[P]], %[[P]], %[[P]], %[[O]], %[[G]] causal layout packed : (tensor<2x8x12x8xf32>, tensor<2x8x12x8xf32>, tensor<2x8x12x8xf32>, tensor<2x8x4x8xf32>, tensor<2x8x4x8xf32>) -> tensor<2x8x12x8xf32>
// CHECK-NEXT:    %[[DQKV:.+]] = llmc.reshape %[[D]] : tensor<2x8x12x8xf32> -> tensor<2x8x96xf32>
// CHECK-NEXT:    return %[[Y]], %[[DQKV]]
func.func @gpt2_attention(%qkv: tensor<2x8x96xf32>, %dy: tensor<2x8x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x96xf32>) {
  %q = llmc.slice %qkv starts [0, 0, 0] limits [2, 8, 32] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %qh = llmc.reshape %q : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %qt = llmc.transpose %qh perm [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %k = llmc.slice %qkv starts [0, 0, 32] limits [2, 8, 64] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %kh = llmc.reshape %k : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %kt = llmc.transpose %kh perm [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %v = llmc.slice %qkv starts [0, 0, 64] limits [2, 8, 96] : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %vh = llmc.reshape %v : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %vt = llmc.transpose %vh perm [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %o = llmc.attention %qt, %kt, %vt causal : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %ot = llmc.transpose %o perm [0, 2, 1, 3] : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %y = llmc.reshape %ot : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %dyh = llmc.reshape %dy : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %dyt = llmc.transpose %dyh perm [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %dq, %dk, %dv = llmc.attention_grad %qt, %kt, %vt, %o, %dyt causal : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
  %dvt = llmc.transpose %dv perm [0, 2, 1, 3] : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %dvr = llmc.reshape %dvt : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %dkt = llmc.transpose %dk perm [0, 2, 1, 3] : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %dkr = llmc.reshape %dkt : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %dqt = llmc.transpose %dq perm [0, 2, 1, 3] : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %dqr = llmc.reshape %dqt : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %dqkv = llmc.concat %dqr, %dkr, %dvr dim 2 : (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x96xf32>
  return %y, %dqkv : tensor<2x8x32xf32>, tensor<2x8x96xf32>
}

// -----

// Separate q, k, v with grouped heads (no common product): bthd, no
// packing; a result also read as [B, H, T, D] gets one transpose; dk read
// outside a concat keeps the three gradients.
// CHECK-LABEL: func.func @bthd_grouped
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x8x4x8xf32>, %[[K:.+]]: tensor<2x8x2x8xf32>, %[[V:.+]]: tensor<2x8x2x8xf32>, %[[G:.+]]: tensor<2x8x4x8xf32>)
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] layout bthd : (tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>) -> tensor<2x8x4x8xf32>
// CHECK-NEXT:    %[[OT:.+]] = llmc.transpose %[[O]] perm [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    %[[D:.+]]:3 = llmc.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[G]] layout bthd : {{.*}} -> (tensor<2x8x4x8xf32>, tensor<2x8x2x8xf32>, tensor<2x8x2x8xf32>)
// CHECK-NEXT:    return %[[O]], %[[OT]], %[[D]]#1
func.func @bthd_grouped(%q: tensor<2x8x4x8xf32>, %k: tensor<2x8x2x8xf32>, %v: tensor<2x8x2x8xf32>, %g: tensor<2x8x4x8xf32>) -> (tensor<2x8x4x8xf32>, tensor<2x4x8x8xf32>, tensor<2x8x2x8xf32>) {
  %qt = llmc.transpose %q perm [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %kt = llmc.transpose %k perm [0, 2, 1, 3] : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %vt = llmc.transpose %v perm [0, 2, 1, 3] : tensor<2x8x2x8xf32> -> tensor<2x2x8x8xf32>
  %o = llmc.attention %qt, %kt, %vt : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
  %ot = llmc.transpose %o perm [0, 2, 1, 3] : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %gt = llmc.transpose %g perm [0, 2, 1, 3] : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %dq, %dk, %dv = llmc.attention_grad %qt, %kt, %vt, %o, %gt : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>)
  %dkt = llmc.transpose %dk perm [0, 2, 1, 3] : tensor<2x2x8x8xf32> -> tensor<2x8x2x8xf32>
  return %ot, %o, %dkt : tensor<2x8x4x8xf32>, tensor<2x4x8x8xf32>, tensor<2x8x2x8xf32>
}

// -----

// LLaMA: rope runs on [B, H, T, D] between the transpose and the attention,
// so the query and key are no transposes: nothing changes.
// CHECK-LABEL: func.func @rope_in_between
// CHECK:         llmc.transpose
// CHECK:         llmc.rope
// CHECK:         llmc.attention %{{.+}}, %{{.+}}, %{{.+}} causal : (tensor<1x4x8x8xf32>
// CHECK-NOT:     layout
// CHECK:         return
func.func @rope_in_between(%q: tensor<1x8x4x8xf32>, %v: tensor<1x8x4x8xf32>) -> tensor<1x8x4x8xf32> {
  %qt = llmc.transpose %q perm [0, 2, 1, 3] : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %qr = llmc.rope %qt theta 1.000000e+04 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %vt = llmc.transpose %v perm [0, 2, 1, 3] : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %o = llmc.attention %qr, %qr, %vt causal : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %ot = llmc.transpose %o perm [0, 2, 1, 3] : tensor<1x4x8x8xf32> -> tensor<1x8x4x8xf32>
  return %ot : tensor<1x8x4x8xf32>
}

// -----

// The slices are not q, k, v in order (k first): bthd over the reshapes,
// no packing; the slices stay.
// CHECK-LABEL: func.func @slices_out_of_order
// CHECK-COUNT-3: llmc.slice
// CHECK:         llmc.attention {{.*}} layout bthd
func.func @slices_out_of_order(%qkv: tensor<1x8x96xf32>) -> tensor<1x8x4x8xf32> {
  %q = llmc.slice %qkv starts [0, 0, 32] limits [1, 8, 64] : tensor<1x8x96xf32> -> tensor<1x8x32xf32>
  %qh = llmc.reshape %q : tensor<1x8x32xf32> -> tensor<1x8x4x8xf32>
  %qt = llmc.transpose %qh perm [0, 2, 1, 3] : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %k = llmc.slice %qkv starts [0, 0, 0] limits [1, 8, 32] : tensor<1x8x96xf32> -> tensor<1x8x32xf32>
  %kh = llmc.reshape %k : tensor<1x8x32xf32> -> tensor<1x8x4x8xf32>
  %kt = llmc.transpose %kh perm [0, 2, 1, 3] : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %v = llmc.slice %qkv starts [0, 0, 64] limits [1, 8, 96] : tensor<1x8x96xf32> -> tensor<1x8x32xf32>
  %vh = llmc.reshape %v : tensor<1x8x32xf32> -> tensor<1x8x4x8xf32>
  %vt = llmc.transpose %vh perm [0, 2, 1, 3] : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %o = llmc.attention %qt, %kt, %vt : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %ot = llmc.transpose %o perm [0, 2, 1, 3] : tensor<1x4x8x8xf32> -> tensor<1x8x4x8xf32>
  return %ot : tensor<1x8x4x8xf32>
}

// -----

// A pipelined step (the pass runs after llmc-split-pipeline): what the pass
// creates takes the pipeline placement of the op it stands beside: the
// packed view its product's, the transpose of a result also read as
// [B, H, T, D] its attention's, the gradient's reshape its concat's.
// Codegen runs an op without llmc.stage on every stage, where the values it
// reads may not exist (GPT-2 dp2 x tp2 x pp2 + ZeRO-3 read the first
// argument in their place on the last stage).
// CHECK-LABEL: func.func @pipelined
// CHECK:         %[[QKV:.+]] = llmc.add
// CHECK-NEXT:    %[[P:.+]] = llmc.reshape %[[QKV]] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x96xf32> -> tensor<2x8x12x8xf32>
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[P]], %[[P]], %[[P]] causal layout packed {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64}
// CHECK-NEXT:    %[[OT:.+]] = llmc.transpose %[[O]] perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64}
// CHECK:         %[[D:.+]] = llmc.attention_grad %[[P]], %[[P]], %[[P]], %[[O]], %{{.+}} causal layout packed {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64}
// CHECK-NEXT:    %[[DQKV:.+]] = llmc.reshape %[[D]] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x12x8xf32> -> tensor<2x8x96xf32>
// CHECK-NEXT:    return %{{.+}}, %[[DQKV]], %[[OT]]
func.func @pipelined(%x: tensor<2x8x96xf32>, %dy: tensor<2x8x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x96xf32>, tensor<2x4x8x8xf32>) {
  %qkv = llmc.add %x, %x {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x96xf32>
  %q = llmc.slice %qkv starts [0, 0, 0] limits [2, 8, 32] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %qh = llmc.reshape %q {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %qt = llmc.transpose %qh perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %k = llmc.slice %qkv starts [0, 0, 32] limits [2, 8, 64] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %kh = llmc.reshape %k {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %kt = llmc.transpose %kh perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %v = llmc.slice %qkv starts [0, 0, 64] limits [2, 8, 96] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  %vh = llmc.reshape %v {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %vt = llmc.transpose %vh perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %o = llmc.attention %qt, %kt, %vt causal {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %ot = llmc.transpose %o perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %y = llmc.reshape %ot {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %dyh = llmc.reshape %dy {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
  %dyt = llmc.transpose %dyh perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %dq, %dk, %dv = llmc.attention_grad %qt, %kt, %vt, %o, %dyt causal {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>)
  %dvt = llmc.transpose %dv perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %dvr = llmc.reshape %dvt {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %dkt = llmc.transpose %dk perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %dkr = llmc.reshape %dkt {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %dqt = llmc.transpose %dq perm [0, 2, 1, 3] {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x4x8x8xf32> -> tensor<2x8x4x8xf32>
  %dqr = llmc.reshape %dqt {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : tensor<2x8x4x8xf32> -> tensor<2x8x32xf32>
  %dqkv = llmc.concat %dqr, %dkr, %dvr dim 2 {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64} : (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x96xf32>
  return %y, %dqkv, %o : tensor<2x8x32xf32>, tensor<2x8x96xf32>, tensor<2x4x8x8xf32>
}
