// RUN: llmc-opt %s --split-input-file --llmc-autodiff --verify-diagnostics | FileCheck %s
// RUN: llmc-opt %s --split-input-file --llmc-autodiff="function=loss result=grads" --verify-diagnostics | FileCheck %s --check-prefix=NAMED
// RUN: llmc-opt %s --split-input-file --llmc-autodiff --verify-diagnostics --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// A linear layer: the bias gradient sums the broadcast rows, the weight
// gradient is xᵀ·dy, and the input x gets none (its matmul is not built).
// @loss stays as it was, and the arguments keep their attributes.
// CHECK-LABEL: func.func @loss
// CHECK:         return %{{.+}} : tensor<f32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xf32> {llmc.name = "x", llmc.role = "input"}, %[[W:.+]]: tensor<3x4xf32> {llmc.name = "fc.weight", llmc.role = "parameter"}, %[[B:.+]]: tensor<4xf32> {llmc.name = "fc.bias", llmc.role = "parameter"})
// CHECK-SAME:    -> (tensor<f32> {llmc.name = "loss"}, tensor<3x4xf32> {llmc.name = "grad.fc.weight"}, tensor<4xf32> {llmc.name = "grad.fc.bias"})
// CHECK:         %[[Y:.+]] = llmc.matmul %[[X]], %[[W]]
// CHECK:         %[[BB:.+]] = llmc.broadcast %[[B]] dims [1]
// CHECK:         %[[Z:.+]] = llmc.add %[[Y]], %[[BB]]
// CHECK:         %[[LOSS:.+]] = llmc.reduce_sum %[[Z]] dims [0, 1]
// CHECK-NEXT:    %[[ONE:.+]] = llmc.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ONE2:.+]] = llmc.reshape %[[ONE]] : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT:    %[[DZ:.+]] = llmc.broadcast %[[ONE2]] dims [0, 1] : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[DBK:.+]] = llmc.reduce_sum %[[DZ]] dims [0] keep_dims : tensor<2x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[DB:.+]] = llmc.reshape %[[DBK]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %[[DW:.+]] = llmc.matmul %[[X]], %[[DZ]] transpose_a : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    return %[[LOSS]], %[[DW]], %[[DB]] : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>
// NAMED-LABEL: func.func @grads
// NAMED-SAME:    -> (tensor<f32> {llmc.name = "loss"}, tensor<3x4xf32> {{.*}}, tensor<4xf32> {{.*}})
// The gradient ops keep the forward op's location (the model part), tagged
// as the backward program (ir/Phase.h); the forward copy is untagged.
// LOC-LABEL: func.func @train_step
// LOC:         llmc.matmul %{{.+}}, %{{.+}} : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32> loc(#[[FWD:.+]])
// LOC:         llmc.reduce_sum %{{.+}} dims [0] keep_dims : tensor<2x4xf32> -> tensor<1x4xf32> loc(#[[BIAS:.+]])
// LOC:         llmc.matmul %{{.+}}, %{{.+}} transpose_a : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<3x4xf32> loc(#[[FC:.+]])
// LOC-DAG:     #[[FWD]] = loc("fc")
// LOC-DAG:     #[[BIASNAME:.+]] = loc("fc.bias")
// LOC-DAG:     #[[BIAS]] = loc(fused<"backward">[#[[BIASNAME]]])
// LOC-DAG:     #[[FC]] = loc(fused<"backward">[#[[FWD]]])
func.func @loss(%x: tensor<2x3xf32> {llmc.name = "x", llmc.role = "input"},
                %w: tensor<3x4xf32> {llmc.name = "fc.weight", llmc.role = "parameter"},
                %b: tensor<4xf32> {llmc.name = "fc.bias", llmc.role = "parameter"}) -> tensor<f32> {
  %y = llmc.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32> loc("fc")
  %bb = llmc.broadcast %b dims [1] : tensor<4xf32> -> tensor<2x4xf32> loc("fc.bias")
  %z = llmc.add %y, %bb : tensor<2x4xf32> loc("fc")
  %r = llmc.reduce_sum %z dims [0, 1] : tensor<2x4xf32> -> tensor<f32> loc("sum")
  return %r : tensor<f32>
}

// -----

// Tied weights: %w is used by the mul and by the add; its gradient is the
// sum of both cotangents. The input %x gets no gradient.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:.+]]: tensor<4xf32> {{.*}}, %[[X:.+]]: tensor<4xf32> {{.*}}) -> (tensor<f32> {{.*}}, tensor<4xf32> {llmc.name = "grad.w"})
// CHECK:         %[[DZ:.+]] = llmc.broadcast
// CHECK-NEXT:    %[[DWMUL:.+]] = llmc.mul %[[DZ]], %[[X]] : tensor<4xf32>
// CHECK-NEXT:    %[[DW:.+]] = llmc.add %[[DZ]], %[[DWMUL]] : tensor<4xf32>
// CHECK-NEXT:    return %{{.+}}, %[[DW]] : tensor<f32>, tensor<4xf32>
func.func @loss(%w: tensor<4xf32> {llmc.name = "w", llmc.role = "parameter"},
                %x: tensor<4xf32> {llmc.name = "x", llmc.role = "input"}) -> tensor<f32> {
  %y = llmc.mul %w, %x : tensor<4xf32> loc("embed")
  %z = llmc.add %y, %w : tensor<4xf32> loc("head")
  %r = llmc.reduce_sum %z dims [0] : tensor<4xf32> -> tensor<f32> loc("sum")
  return %r : tensor<f32>
}

// -----

// A parameter the loss does not depend on gets zeros; the mean scales the
// cotangent by 1/4 before broadcasting it, and exp reuses its result.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    -> (tensor<f32> {{.*}}, tensor<4xf32> {{.*}}, tensor<2x2xf32> {llmc.name = "grad.unused"})
// CHECK:         %[[E:.+]] = llmc.exp
// CHECK:         %[[QUARTER:.+]] = llmc.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %[[S:.+]] = llmc.mul %{{.+}}, %[[QUARTER]] : tensor<f32>
// CHECK-NEXT:    %[[S1:.+]] = llmc.reshape %[[S]] : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT:    %[[DE:.+]] = llmc.broadcast %[[S1]] dims [0] : tensor<1xf32> -> tensor<4xf32>
// CHECK-NEXT:    %[[DW:.+]] = llmc.mul %[[DE]], %[[E]] : tensor<4xf32>
// CHECK-NEXT:    %[[ZEROS:.+]] = llmc.constant dense<0.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT:    return %{{.+}}, %[[DW]], %[[ZEROS]]
func.func @loss(%w: tensor<4xf32> {llmc.name = "w", llmc.role = "parameter"},
                %unused: tensor<2x2xf32> {llmc.name = "unused", llmc.role = "parameter"}) -> tensor<f32> {
  %e = llmc.exp %w : tensor<4xf32> loc("act")
  %r = llmc.reduce_mean %e dims [0] : tensor<4xf32> -> tensor<f32> loc("mean")
  return %r : tensor<f32>
}

// -----

// Nothing to differentiate: with no parameters @train_step is a copy of
// @loss that returns only the loss, with no backward ops at all.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[X:.+]]: tensor<4xf32> {llmc.name = "x", llmc.role = "input"}) -> (tensor<f32> {llmc.name = "loss"})
// CHECK-NEXT:    %[[E:.+]] = llmc.exp %[[X]] : tensor<4xf32>
// CHECK-NEXT:    %[[L:.+]] = llmc.reduce_sum %[[E]] dims [0] : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT:    return %[[L]] : tensor<f32>
// CHECK-NEXT:  }
func.func @loss(%x: tensor<4xf32> {llmc.name = "x", llmc.role = "input"}) -> tensor<f32> {
  %e = llmc.exp %x : tensor<4xf32>
  %r = llmc.reduce_sum %e dims [0] : tensor<4xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A cast is differentiated by casting the cotangent back; reduce_max splits
// the cotangent evenly over the maxima of each row.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xf32> {{.*}}) -> (tensor<f32> {{.*}}, tensor<2x3xf32> {llmc.name = "grad.arg0"})
// CHECK:         %[[H:.+]] = llmc.cast %[[X]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK:         %[[M:.+]] = llmc.reduce_max %[[H]] dims [1] : tensor<2x3xbf16> -> tensor<2xbf16>
// CHECK:         %[[MB:.+]] = llmc.broadcast %{{.+}} dims [0, 1] : tensor<2x1xbf16> -> tensor<2x3xbf16>
// CHECK-NEXT:    %[[HIT:.+]] = llmc.compare eq %[[H]], %[[MB]]
// CHECK:         %[[HITS:.+]] = llmc.select %[[HIT]]
// CHECK-NEXT:    %[[COUNT:.+]] = llmc.reduce_sum %[[HITS]] dims [1] : tensor<2x3xbf16> -> tensor<2xbf16>
// CHECK-NEXT:    %[[SHARE:.+]] = llmc.div %{{.+}}, %[[COUNT]] : tensor<2xbf16>
// CHECK:         %[[DH:.+]] = llmc.mul %[[HITS]], %{{.+}} : tensor<2x3xbf16>
// CHECK-NEXT:    %[[DX:.+]] = llmc.cast %[[DH]] : tensor<2x3xbf16> -> tensor<2x3xf32>
// CHECK-NEXT:    return %{{.+}}, %[[DX]]
func.func @loss(%x: tensor<2x3xf32> {llmc.role = "parameter"}) -> tensor<f32> {
  %h = llmc.cast %x : tensor<2x3xf32> -> tensor<2x3xbf16>
  %m = llmc.reduce_max %h dims [1] : tensor<2x3xbf16> -> tensor<2xbf16>
  %f = llmc.cast %m : tensor<2xbf16> -> tensor<2xf32>
  %r = llmc.reduce_sum %f dims [0] : tensor<2xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A composite rule: layer_norm with bf16 data and f32 gamma/beta is one
// llmc.layer_norm_grad of x, gamma and the cotangent (cast to the result's
// bf16), which recomputes the row statistics itself: no reduction or
// elementwise op of the old expansion is built. dx comes out bf16 (unused:
// x is data), dγ and dβ f32.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8xbf16> {{.+}}, %[[GAMMA:.+]]: tensor<8xf32> {{.+}}, %[[BETA:.+]]: tensor<8xf32> {{.+}})
// CHECK:         %[[DY:.+]] = llmc.cast %{{.+}} : tensor<2x8xf32> -> tensor<2x8xbf16>
// CHECK-NEXT:    %{{.+}}, %[[DGAMMA:.+]], %[[DBETA:.+]] = llmc.layer_norm_grad %[[X]], %[[GAMMA]], %[[DY]] epsilon 1.000000e-05 : (tensor<2x8xbf16>, tensor<8xf32>, tensor<2x8xbf16>) -> (tensor<2x8xbf16>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT:     llmc.reduce_sum
// CHECK-NOT:     llmc.rsqrt
// CHECK:         return %{{.+}}, %[[DGAMMA]], %[[DBETA]] : tensor<f32>, tensor<8xf32>, tensor<8xf32>
func.func @loss(%x: tensor<2x8xbf16> {llmc.role = "input"},
                %g: tensor<8xf32> {llmc.role = "parameter"},
                %b: tensor<8xf32> {llmc.role = "parameter"}) -> tensor<f32> {
  %y = llmc.layer_norm %x, %g, %b epsilon 1.0e-05
      : (tensor<2x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xbf16>
  %c = llmc.cast %y : tensor<2x8xbf16> -> tensor<2x8xf32>
  %r = llmc.reduce_sum %c dims [0, 1] : tensor<2x8xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// layer_norm without beta: the op's dbeta result is left unused.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[X:.+]]: tensor<4x6xf32> {{.+}}, %[[GAMMA:.+]]: tensor<6xf32> {{.+}})
// CHECK:         %{{.+}}, %[[DGAMMA:.+]], %{{.+}} = llmc.layer_norm_grad %[[X]], %[[GAMMA]], %{{.+}} epsilon 1.000000e-05 : (tensor<4x6xf32>, tensor<6xf32>, tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>, tensor<6xf32>)
// CHECK:         return %{{.+}}, %[[DGAMMA]] : tensor<f32>, tensor<6xf32>
func.func @loss(%x: tensor<4x6xf32> {llmc.role = "input"},
                %g: tensor<6xf32> {llmc.role = "parameter"}) -> tensor<f32> {
  %y = llmc.layer_norm %x, %g epsilon 1.0e-05
      : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %y2 = llmc.mul %y, %y : tensor<4x6xf32>
  %r = llmc.reduce_sum %y2 dims [0, 1] : tensor<4x6xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// rms_norm: one llmc.rms_norm_grad; its dx flows on to the parameter that
// made x.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:.+]]: tensor<4x6xf32> {{.+}}, %[[GAMMA:.+]]: tensor<6xf32> {{.+}})
// CHECK:         %[[X:.+]] = llmc.tanh %[[W]]
// CHECK:         %[[DX:.+]], %[[DGAMMA:.+]] = llmc.rms_norm_grad %[[X]], %[[GAMMA]], %{{.+}} epsilon 9.9999999999999995E-7 : (tensor<4x6xf32>, tensor<6xf32>, tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<6xf32>)
// CHECK-NOT:     llmc.reduce_sum
// CHECK:         llmc.mul %[[DX]]
// CHECK:         return
func.func @loss(%w: tensor<4x6xf32> {llmc.role = "parameter"},
                %g: tensor<6xf32> {llmc.role = "parameter"}) -> tensor<f32> {
  %x = llmc.tanh %w : tensor<4x6xf32>
  %y = llmc.rms_norm %x, %g epsilon 1.0e-06
      : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %y2 = llmc.mul %y, %y : tensor<4x6xf32>
  %r = llmc.reduce_sum %y2 dims [0, 1] : tensor<4x6xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// An op without a derivative rule on the path from a parameter is an error
// at the op, and the pass builds nothing. Calls are not differentiated
// through (every llmc op has a rule, or never has an active result).
func.func @double(%a: tensor<8xf32>) -> tensor<8xf32> {
  %b = llmc.add %a, %a : tensor<8xf32>
  return %b : tensor<8xf32>
}
func.func @loss(%x: tensor<8xf32> {llmc.role = "parameter"}) -> tensor<f32> {
  // expected-error @+1 {{no derivative rule for 'func.call'}}
  %y = func.call @double(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %r = llmc.reduce_sum %y dims [0] : tensor<8xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// The same op off the path (it reads only inputs) needs no rule.
// CHECK-LABEL: func.func @train_step
// CHECK:         call @double
// CHECK-NOT:     call @double
// CHECK:         return
func.func @double(%a: tensor<8xf32>) -> tensor<8xf32> {
  %b = llmc.add %a, %a : tensor<8xf32>
  return %b : tensor<8xf32>
}
func.func @loss(%w: tensor<8xf32> {llmc.role = "parameter"},
                %x: tensor<8xf32> {llmc.role = "input"}) -> tensor<f32> {
  %y = func.call @double(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %p = llmc.mul %y, %w : tensor<8xf32>
  %r = llmc.reduce_sum %p dims [0] : tensor<8xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Strided slices have no rule yet.
func.func @loss(%x: tensor<8xf32> {llmc.role = "parameter"}) -> tensor<f32> {
  // expected-error @+1 {{no derivative rule for strided slices yet}}
  %e = llmc.slice %x starts [0] limits [8] strides [2] : tensor<8xf32> -> tensor<4xf32>
  %r = llmc.reduce_sum %e dims [0] : tensor<4xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Attention's derivative is one llmc.attention_grad (a flash backward
// kernel) reading the forward operands, the forward result, its cotangent
// and the forward's log-sum-exp (the rule gives the forward op that second
// result and erases the op it replaces), with the forward's causal and
// scale: no [B, H, T, S] scores.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x4x8x16xbf16> {{.*}}, %[[K:.+]]: tensor<1x2x8x16xbf16> {{.*}}, %[[V:.+]]: tensor<1x2x8x16xbf16> {{.*}})
// CHECK-NOT:     llmc.attention
// CHECK:         %[[O:.+]], %[[L:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] causal scale 2.500000e-01 : ({{.*}}) -> (tensor<1x4x8x16xbf16>, tensor<1x4x8xf32>)
// CHECK-NOT:     llmc.attention %
// CHECK:         %[[G:.+]] = llmc.broadcast
// CHECK-NEXT:    %[[D:.+]]:3 = llmc.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[G]] lse %[[L]] causal scale 2.500000e-01
// CHECK-NOT:     llmc.softmax
// CHECK-NOT:     llmc.matmul
// CHECK:         return %{{.+}}, %[[D]]#0, %[[D]]#1, %[[D]]#2
func.func @loss(%q: tensor<1x4x8x16xbf16> {llmc.role = "parameter"},
                %k: tensor<1x2x8x16xbf16> {llmc.role = "parameter"},
                %v: tensor<1x2x8x16xbf16> {llmc.role = "parameter"}) -> tensor<bf16> {
  %o = llmc.attention %q, %k, %v causal scale 0.25 : (tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) -> tensor<1x4x8x16xbf16>
  %r = llmc.reduce_sum %o dims [0, 1, 2, 3] : tensor<1x4x8x16xbf16> -> tensor<bf16>
  return %r : tensor<bf16>
}

// -----

// Packed q/k/v (one value read three times): one attention_grad in the
// packed layout, whose one gradient is the packed value's (no sum of three).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[P:.+]]: tensor<1x8x8x16xf32> {{.*}})
// CHECK:         %[[O:.+]], %[[L:.+]] = llmc.attention %[[P]], %[[P]], %[[P]] causal layout packed : ({{.*}}) -> (tensor<1x8x4x16xf32>, tensor<1x4x8xf32>)
// CHECK:         %[[G:.+]] = llmc.broadcast
// CHECK-NEXT:    %[[D:.+]] = llmc.attention_grad %[[P]], %[[P]], %[[P]], %[[O]], %[[G]] lse %[[L]] causal layout packed : {{.*}} -> tensor<1x8x8x16xf32>
// CHECK-NEXT:    return %{{.+}}, %[[D]]
func.func @loss(%p: tensor<1x8x8x16xf32> {llmc.role = "parameter"}) -> tensor<f32> {
  %o = llmc.attention %p, %p, %p causal layout packed : (tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) -> tensor<1x8x4x16xf32>
  %r = llmc.reduce_sum %o dims [0, 1, 2, 3] : tensor<1x8x4x16xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Only attention's result has a derivative rule: a loss that reads the
// log-sum-exp result is refused at the op.
func.func @loss(%q: tensor<1x2x4x8xf32> {llmc.role = "parameter"},
                %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'llmc.attention' op cannot differentiate through the log-sum-exp result; only the attention result has a rule}}
  %o, %lse = llmc.attention %q, %k, %v : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %r = llmc.reduce_sum %lse dims [0, 1, 2] : tensor<1x2x4xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// attention_grad has no derivative rule: differentiating through it (a
// second derivative of attention) is refused at the op.
func.func @loss(%q: tensor<1x2x4x8xf32> {llmc.role = "parameter"},
                %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>,
                %o: tensor<1x2x4x8xf32>, %g: tensor<1x2x4x8xf32>) -> tensor<f32> {
  // expected-error @+1 {{no derivative rule for 'llmc.attention_grad'}}
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %v, %o, %g : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
  %r = llmc.reduce_sum %dq dims [0, 1, 2, 3] : tensor<1x2x4x8xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// cross_entropy's derivative is one llmc.cross_entropy_grad (one kernel
// that recomputes the row statistics) with the forward's ignore_index and
// reduction; dlogits has the logits' type (bf16), and no softmax, one-hot
// or f32 copy of the [B, T, V] logits is built.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[L:.+]]: tensor<2x4x16xbf16> {{.*}}, %[[T:.+]]: tensor<2x4xi32> {{.*}})
// CHECK:         %[[LOSS:.+]] = llmc.cross_entropy %[[L]], %[[T]] ignore_index -100 reduction mean
// CHECK:         %[[D:.+]] = llmc.cross_entropy_grad %[[L]], %[[T]], %{{.+}} ignore_index -100 reduction mean : (tensor<2x4x16xbf16>, tensor<2x4xi32>, tensor<f32>) -> tensor<2x4x16xbf16>
// CHECK-NOT:     llmc.softmax
// CHECK-NOT:     llmc.iota
// CHECK:         return %[[LOSS]], %[[D]]
func.func @loss(%logits: tensor<2x4x16xbf16> {llmc.role = "parameter"},
                %t: tensor<2x4xi32> {llmc.role = "input"}) -> tensor<f32> {
  %l = llmc.cross_entropy %logits, %t ignore_index -100 reduction mean : (tensor<2x4x16xbf16>, tensor<2x4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// cross_entropy_grad has no derivative rule (no second derivative of the
// loss).
func.func @loss(%logits: tensor<2x16xf32> {llmc.role = "parameter"},
                %t: tensor<2xi32>, %g: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{no derivative rule for 'llmc.cross_entropy_grad'}}
  %d = llmc.cross_entropy_grad %logits, %t, %g reduction sum : (tensor<2x16xf32>, tensor<2xi32>, tensor<f32>) -> tensor<2x16xf32>
  %r = llmc.reduce_sum %d dims [0, 1] : tensor<2x16xf32> -> tensor<f32>
  return %r : tensor<f32>
}
