// RUN: llmc-opt %s --split-input-file --llmc-fuse | FileCheck %s
// The region carries the location of the model part it comes from: the
// first op of a chain, the norm of a row reduction, the matmul otherwise.
// RUN: llmc-opt %s --split-input-file --llmc-fuse --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LOC
// RUN: llmc-opt %s --split-input-file --llmc-fuse=report=true -o /dev/null | FileCheck %s --check-prefix=REPORT

// A chain of elementwise ops over one shape becomes one region; the value
// read after the chain is its only result.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%[[A:.+]]: tensor<8x64xf32>, %[[B:.+]]: tensor<8x64xf32>)
// CHECK:         %[[F:.+]] = llmc.fused elementwise (%[[A]], %[[B]]) : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32> {
// CHECK-NEXT:    ^bb0(%[[X:.+]]: tensor<8x64xf32>, %[[Y:.+]]: tensor<8x64xf32>):
// CHECK-NEXT:      %[[S:.+]] = llmc.add %[[X]], %[[Y]] : tensor<8x64xf32>
// CHECK-NEXT:      %[[G:.+]] = llmc.gelu %[[S]] tanh : tensor<8x64xf32>
// CHECK-NEXT:      %[[M:.+]] = llmc.mul %[[G]], %[[X]] : tensor<8x64xf32>
// CHECK-NEXT:      llmc.yield %[[M]] : tensor<8x64xf32>
// CHECK-NEXT:    }
// LOC-LABEL:   func.func @chain
// LOC:           llmc.mul {{.*}} loc("h.0.scale")
// LOC:           } loc("h.0.act")
// CHECK-NEXT:    return %[[F]]
// 3 kernels become 1; the two intermediates (2 KiB each) are no longer
// written and read back (4 * 2048 bytes), and %a is read once, not twice
// (2048): 10240 bytes.
// REPORT: fusion of @chain: kernels 3 -> 1, regions 1 elementwise, 0 row_reduction, 0 matmul_epilogue, 0 classifier_loss (with 0 elementwise runs nested in them); device-memory bytes removed 10240
func.func @chain(%a: tensor<8x64xf32>, %b: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %s = llmc.add %a, %b : tensor<8x64xf32> loc("h.0.act")
  %g = llmc.gelu %s tanh : tensor<8x64xf32> loc("h.0.act")
  %m = llmc.mul %g, %a : tensor<8x64xf32> loc("h.0.scale")
  return %m : tensor<8x64xf32>
}

// -----

// A matmul with a single reader takes its epilogue: the bias broadcast is
// pulled in (it is read nowhere else), then the add and the gelu. The
// epilogue's run of elementwise ops (and the broadcast) is a nested
// elementwise region: one generated kernel after the GEMM.
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK-SAME:    (%[[X:.+]]: tensor<8x64xf32>, %[[W:.+]]: tensor<64x256xf32>, %[[B:.+]]: tensor<256xf32>)
// CHECK:         %[[F:.+]] = llmc.fused matmul_epilogue (%[[X]], %[[W]], %[[B]])
// CHECK-NEXT:    ^bb0(%[[BX:.+]]: tensor<8x64xf32>, %[[BW:.+]]: tensor<64x256xf32>, %[[BB:.+]]: tensor<256xf32>)
// CHECK-NEXT:      %[[MM:.+]] = llmc.matmul %[[BX]], %[[BW]]
// CHECK-NEXT:      %[[E:.+]] = llmc.fused elementwise (%[[BB]], %[[MM]])
// CHECK-NEXT:      ^bb0(%[[EB:.+]]: tensor<256xf32>, %[[EM:.+]]: tensor<8x256xf32>)
// CHECK-NEXT:        %[[BC:.+]] = llmc.broadcast %[[EB]]
// CHECK-NEXT:        %[[S:.+]] = llmc.add %[[EM]], %[[BC]]
// CHECK-NEXT:        %[[G:.+]] = llmc.gelu %[[S]] tanh
// CHECK-NEXT:        llmc.yield %[[G]]
// CHECK-NEXT:      }
// CHECK-NEXT:      llmc.yield %[[E]]
// CHECK-NEXT:    }
// LOC-LABEL:   func.func @matmul_epilogue
// LOC:           } loc("h.0.mlp.c_fc")
// CHECK-NEXT:    return %[[F]]
// REPORT: fusion of @matmul_epilogue: kernels 4 -> 1, regions 0 elementwise, 0 row_reduction, 1 matmul_epilogue, 0 classifier_loss (with 1 elementwise runs nested in them)
func.func @matmul_epilogue(%x: tensor<8x64xf32>, %w: tensor<64x256xf32>, %b: tensor<256xf32>) -> tensor<8x256xf32> {
  %m = llmc.matmul %x, %w : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32> loc("h.0.mlp.c_fc")
  %bb = llmc.broadcast %b dims [1] : tensor<256xf32> -> tensor<8x256xf32> loc("h.0.mlp.c_fc.bias")
  %s = llmc.add %m, %bb : tensor<8x256xf32> loc("h.0.mlp.c_fc")
  %g = llmc.gelu %s tanh : tensor<8x256xf32> loc("h.0.mlp.act")
  return %g : tensor<8x256xf32>
}

// -----

// A residual add and the layer norm after it: one row_reduction region
// with two results, since the residual stream is also returned.
// CHECK-LABEL: func.func @residual_norm
// CHECK:         %[[F:.+]]:2 = llmc.fused row_reduction
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[R:.+]] = llmc.add
// CHECK-NEXT:      %[[N:.+]] = llmc.layer_norm %[[R]]
// CHECK-NEXT:      llmc.yield %[[R]], %[[N]]
// CHECK-NEXT:    }
// LOC-LABEL:   func.func @residual_norm
// LOC:           } loc("h.1.ln_1")
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1
// The residual is still written (it is returned) but not read back: 2048.
// REPORT: fusion of @residual_norm: kernels 2 -> 1, regions 0 elementwise, 1 row_reduction, 0 matmul_epilogue, 0 classifier_loss (with 0 elementwise runs nested in them); device-memory bytes removed 2048
func.func @residual_norm(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %r = llmc.add %x, %y : tensor<8x64xf32> loc("h.0.residual")
  %n = llmc.layer_norm %r, %g, %b epsilon 1.0e-05 : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32> loc("h.1.ln_1")
  return %r, %n : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// The classifier and its loss: the logits are read only inside the region
// (the loss, and softmax - onehot of its gradient), so they are never
// stored; the loss and the logits' gradient are the results. The iota, the
// broadcast targets and the one-hot's 0/1 splats (broadcasts of
// one-element constants to each reader, since a splat of the whole shape
// would be a tensor in memory) are pulled in. The one-hot, computed
// from inputs and constants alone, moves down to its reader, and with the
// subtraction makes one nested elementwise region after the softmax: one
// kernel that stores only the gradient.
// CHECK-LABEL: func.func @classifier
// CHECK:         %[[ONE:.+]] = llmc.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ZERO:.+]] = llmc.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[F:.+]]:2 = llmc.fused classifier_loss (%{{.+}}, %{{.+}}, %{{.+}}, %[[ONE]], %[[ZERO]])
// CHECK-NEXT:    ^bb0({{.*}}, %[[IONE:.+]]: tensor<f32>, %[[IZERO:.+]]: tensor<f32>)
// CHECK-NEXT:      %[[L:.+]] = llmc.matmul
// CHECK-NEXT:      %[[CE:.+]] = llmc.cross_entropy %[[L]]
// CHECK-NEXT:      %[[P:.+]] = llmc.softmax %[[L]]
// CHECK-NEXT:      %[[D:.+]] = llmc.fused elementwise (%[[IZERO]], %[[IONE]], %{{.+}}, %[[P]])
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        llmc.broadcast
// CHECK-NEXT:        llmc.broadcast
// CHECK-NEXT:        llmc.broadcast
// CHECK-NEXT:        llmc.iota
// CHECK-NEXT:        llmc.compare
// CHECK-NEXT:        llmc.select
// CHECK-NEXT:        llmc.sub
// CHECK-NEXT:        llmc.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      llmc.yield %[[CE]], %[[D]]
// CHECK-NEXT:    }
// LOC-LABEL:   func.func @classifier
// LOC:           } loc("lm_head")
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1
// REPORT: fusion of @classifier: kernels 8 -> 1, regions 0 elementwise, 0 row_reduction, 0 matmul_epilogue, 1 classifier_loss (with 1 elementwise runs nested in them)
func.func @classifier(%h: tensor<4x8x32xf32>, %wte: tensor<128x32xf32>, %t: tensor<4x8xi32>) -> (tensor<f32>, tensor<4x8x128xf32>) {
  %logits = llmc.matmul %h, %wte transpose_b : tensor<4x8x32xf32>, tensor<128x32xf32> -> tensor<4x8x128xf32> loc("lm_head")
  %loss = llmc.cross_entropy %logits, %t reduction mean : (tensor<4x8x128xf32>, tensor<4x8xi32>) -> tensor<f32> loc("loss")
  %classes = llmc.iota dim 2 : tensor<4x8x128xi32> loc("loss")
  %wide = llmc.broadcast %t dims [0, 1] : tensor<4x8xi32> -> tensor<4x8x128xi32> loc("loss")
  %hit = llmc.compare eq %classes, %wide : (tensor<4x8x128xi32>, tensor<4x8x128xi32>) -> tensor<4x8x128xi1> loc("loss")
  %one = llmc.constant dense<1.0> : tensor<4x8x128xf32> loc("loss")
  %zero = llmc.constant dense<0.0> : tensor<4x8x128xf32> loc("loss")
  %onehot = llmc.select %hit, %one, %zero : (tensor<4x8x128xi1>, tensor<4x8x128xf32>, tensor<4x8x128xf32>) -> tensor<4x8x128xf32> loc("loss")
  %p = llmc.softmax %logits dim 2 : tensor<4x8x128xf32> loc("loss")
  %d = llmc.sub %p, %onehot : tensor<4x8x128xf32> loc("loss")
  return %loss, %d : tensor<f32>, tensor<4x8x128xf32>
}

// -----

// The same with the loss gradient as one op (what autodiff emits): the
// matmul, the loss and cross_entropy_grad make one classifier region with
// nothing nested; only the loss and dlogits (bf16, as the logits) leave
// it, and no [B, T, V] value besides the logits exists in it.
// CHECK-LABEL: func.func @classifier_grad
// CHECK:         %[[F:.+]]:2 = llmc.fused classifier_loss
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[L:.+]] = llmc.matmul
// CHECK-NEXT:      %[[CE:.+]] = llmc.cross_entropy %[[L]]
// CHECK-NEXT:      %[[D:.+]] = llmc.cross_entropy_grad %[[L]], %{{.+}}, %{{.+}} reduction mean : (tensor<4x8x128xbf16>, tensor<4x8xi32>, tensor<f32>) -> tensor<4x8x128xbf16>
// CHECK-NEXT:      llmc.yield %[[CE]], %[[D]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1
// REPORT: fusion of @classifier_grad: kernels 3 -> 1, regions 0 elementwise, 0 row_reduction, 0 matmul_epilogue, 1 classifier_loss (with 0 elementwise runs nested in them)
func.func @classifier_grad(%h: tensor<4x8x32xbf16>, %wte: tensor<128x32xbf16>, %t: tensor<4x8xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x8x128xbf16>) {
  %logits = llmc.matmul %h, %wte transpose_b : tensor<4x8x32xbf16>, tensor<128x32xbf16> -> tensor<4x8x128xbf16> loc("lm_head")
  %loss = llmc.cross_entropy %logits, %t reduction mean : (tensor<4x8x128xbf16>, tensor<4x8xi32>) -> tensor<f32> loc("loss")
  %d = llmc.cross_entropy_grad %logits, %t, %g reduction mean : (tensor<4x8x128xbf16>, tensor<4x8xi32>, tensor<f32>) -> tensor<4x8x128xbf16> loc("loss")
  return %loss, %d : tensor<f32>, tensor<4x8x128xbf16>
}

// -----

// Must not change: a matmul whose product has two readers keeps it in
// memory anyway, so it takes no epilogue; the lone add stays alone too.
// CHECK-LABEL: func.func @matmul_two_users
// CHECK-NOT:     llmc.fused
// REPORT: fusion of @matmul_two_users: kernels 2 -> 2, regions 0 elementwise, 0 row_reduction, 0 matmul_epilogue, 0 classifier_loss (with 0 elementwise runs nested in them); device-memory bytes removed 0
func.func @matmul_two_users(%x: tensor<8x64xf32>, %w: tensor<64x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %m = llmc.matmul %x, %w : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
  %s = llmc.add %m, %x : tensor<8x64xf32>
  return %m, %s : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// Must not change: attention stays one op; the elementwise ops on either
// side of it are each alone (one op is no group).
// CHECK-LABEL: func.func @attention_alone
// CHECK-NOT:     llmc.fused
// CHECK:         llmc.attention
// CHECK-NOT:     llmc.fused
// REPORT: fusion of @attention_alone: kernels 3 -> 3, {{.*}} bytes removed 0
func.func @attention_alone(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %qs = llmc.exp %q : tensor<1x2x8x16xf32>
  %o = llmc.attention %qs, %k, %v causal : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %r = llmc.neg %o : tensor<1x2x8x16xf32>
  return %r : tensor<1x2x8x16xf32>
}

// -----

// Must not change: attention_grad (attention's derivative) stays one op as
// well, and the elementwise ops around it stay alone.
// CHECK-LABEL: func.func @attention_grad_alone
// CHECK-NOT:     llmc.fused
// CHECK:         llmc.attention_grad
// CHECK-NOT:     llmc.fused
// REPORT: fusion of @attention_grad_alone: kernels 3 -> 3, {{.*}} bytes removed 0
func.func @attention_grad_alone(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x2x8x16xf32>, %g: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %gs = llmc.exp %g : tensor<1x2x8x16xf32>
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %v, %o, %gs causal : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  %r = llmc.neg %dq : tensor<1x2x8x16xf32>
  return %r : tensor<1x2x8x16xf32>
}

// -----

// Must not change: %a feeds both %t (a transpose, not fusible) and %c, and
// %c also reads %t. Joining %a and %c would put the region after %t, which
// reads %a: the chain is not fused across the transpose.
// CHECK-LABEL: func.func @across_non_fusible
// CHECK-NOT:     llmc.fused
// REPORT: fusion of @across_non_fusible: kernels 3 -> 3, {{.*}} bytes removed 0
func.func @across_non_fusible(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = llmc.exp %x : tensor<8x8xf32>
  %t = llmc.transpose %a perm [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %c = llmc.add %a, %t : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// A matmul takes its epilogue, never its prologue: the chain that makes its
// input is a region of its own, and the matmul stays alone.
// CHECK-LABEL: func.func @prologue_stays_apart
// CHECK:         %[[F:.+]] = llmc.fused elementwise
// CHECK:         llmc.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[M:.+]] = llmc.matmul %[[F]]
// CHECK-NEXT:    return %[[M]]
func.func @prologue_stays_apart(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = llmc.exp %x : tensor<8x8xf32>
  %b = llmc.add %a, %y : tensor<8x8xf32>
  %m = llmc.matmul %b, %w : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

// A run inside a row reduction ends where an op reads it: the product
// the reduce_sum reads is the nested region's result (stored once, read by
// the reduction and by the region after it). The tail after the reduction
// is an elementwise region of its own.
// CHECK-LABEL: func.func @runs_in_row_reduction
// CHECK:         %[[F:.+]]:2 = llmc.fused row_reduction
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %[[R1:.+]] = llmc.fused elementwise
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        llmc.broadcast
// CHECK-NEXT:        llmc.mul
// CHECK-NEXT:        llmc.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[S:.+]] = llmc.reduce_sum %[[R1]]
// CHECK-NEXT:      llmc.yield %[[R1]], %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    llmc.fused elementwise (%[[F]]#1, %{{.+}}, %[[F]]#0)
// REPORT: fusion of @runs_in_row_reduction: kernels 6 -> 2, regions 1 elementwise, 1 row_reduction, 0 matmul_epilogue, 0 classifier_loss (with 1 elementwise runs nested in them)
func.func @runs_in_row_reduction(%x: tensor<8x64xf32>, %g: tensor<64xf32>) -> tensor<8x64xf32> {
  %gb = llmc.broadcast %g dims [1] : tensor<64xf32> -> tensor<8x64xf32>
  %d = llmc.mul %x, %gb : tensor<8x64xf32>
  %s = llmc.reduce_sum %d dims [1] : tensor<8x64xf32> -> tensor<8xf32>
  %sb = llmc.broadcast %s dims [0] : tensor<8xf32> -> tensor<8x64xf32>
  %t = llmc.mul %sb, %x : tensor<8x64xf32>
  %r = llmc.sub %d, %t : tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// A broadcast two groups read (CSE shares one across layers) is copied for
// each elementwise reader, so that each group expands it in its kernel
// instead of reading a stored [8, 64] tensor; a splat constant of the whole
// shape becomes a broadcast of one element for each reader.
// CHECK-LABEL: func.func @shared_broadcast
// CHECK-NOT:     llmc.broadcast
// CHECK:         llmc.fused elementwise
// CHECK:           llmc.broadcast
// CHECK:           llmc.mul
// CHECK:         llmc.reduce_sum
// CHECK:         llmc.fused elementwise
// CHECK:           llmc.broadcast
// CHECK:           llmc.add
// CHECK-NOT:     dense<2.000000e+00> : tensor<8x64xf32>
func.func @shared_broadcast(%x: tensor<8x64xf32>, %s: tensor<f32>) -> (tensor<64xf32>, tensor<8x64xf32>) {
  %b = llmc.broadcast %s dims [] : tensor<f32> -> tensor<8x64xf32>
  %two = llmc.constant dense<2.0> : tensor<8x64xf32>
  %m = llmc.mul %x, %b : tensor<8x64xf32>
  %m2 = llmc.mul %m, %two : tensor<8x64xf32>
  %r = llmc.reduce_sum %m2 dims [0] : tensor<8x64xf32> -> tensor<64xf32>
  %a = llmc.add %x, %b : tensor<8x64xf32>
  %a2 = llmc.add %a, %two : tensor<8x64xf32>
  return %r, %a2 : tensor<64xf32>, tensor<8x64xf32>
}

// -----

// A softmax of a widening cast reads the bf16 values itself (the result
// stays f32): no f32 copy of the logits is stored.
// CHECK-LABEL: func.func @softmax_of_cast
// CHECK-NOT:     llmc.cast
// CHECK:         llmc.softmax %{{.+}} dim 1 : tensor<4x64xbf16> -> tensor<4x64xf32>
func.func @softmax_of_cast(%x: tensor<4x64xbf16>) -> tensor<4x64xf32> {
  %w = llmc.cast %x : tensor<4x64xbf16> -> tensor<4x64xf32>
  %p = llmc.softmax %w dim 1 : tensor<4x64xf32>
  return %p : tensor<4x64xf32>
}

// -----

// The gradient norm's term of a weight gradient: mul(g, g) read only by a
// reduce_sum of every dimension starts a region of its own, which codegen
// lowers to one SumSquares kernel reading g (docs/cuda.md). Joined to the
// matmul's epilogue it would make the epilogue store the squares.
// CHECK-LABEL: func.func @sum_of_squares_alone
// CHECK:         %[[EPI:.+]] = llmc.fused matmul_epilogue
// CHECK:           llmc.matmul
// CHECK-NEXT:      llmc.cast
// CHECK-NEXT:      llmc.yield
// CHECK:         llmc.fused row_reduction (%[[EPI]]) : (tensor<8x4xf32>) -> tensor<f32> {
// CHECK-NEXT:    ^bb0(%[[G:.+]]: tensor<8x4xf32>):
// CHECK-NEXT:      %[[SQ:.+]] = llmc.mul %[[G]], %[[G]] : tensor<8x4xf32>
// CHECK-NEXT:      %[[S:.+]] = llmc.reduce_sum %[[SQ]] dims [0, 1] : tensor<8x4xf32> -> tensor<f32>
// CHECK-NEXT:      llmc.yield %[[S]]
func.func @sum_of_squares_alone(%a: tensor<16x8xbf16>, %b: tensor<16x4xbf16>) -> (tensor<8x4xf32>, tensor<f32>) {
  %m = llmc.matmul %a, %b transpose_a : tensor<16x8xbf16>, tensor<16x4xbf16> -> tensor<8x4xbf16>
  %g = llmc.cast %m : tensor<8x4xbf16> -> tensor<8x4xf32>
  %sq = llmc.mul %g, %g : tensor<8x4xf32>
  %s = llmc.reduce_sum %sq dims [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %g, %s : tensor<8x4xf32>, tensor<f32>
}

// -----

// A square reduced over some dimensions only (a row statistic) is no
// gradient-norm term: it joins its producer's chain as any pointwise op.
// CHECK-LABEL: func.func @row_squares_join
// CHECK:         llmc.fused row_reduction
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      llmc.fused elementwise
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        llmc.add
// CHECK-NEXT:        llmc.mul
// CHECK:           llmc.reduce_sum %{{.+}} dims [1]
func.func @row_squares_join(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8xf32> {
  %a = llmc.add %x, %y : tensor<8x64xf32>
  %sq = llmc.mul %a, %a : tensor<8x64xf32>
  %s = llmc.reduce_sum %sq dims [1] : tensor<8x64xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}
