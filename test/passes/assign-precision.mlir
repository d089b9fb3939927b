// RUN: llmc-opt %s --split-input-file --llmc-assign-precision=policy=bf16 | FileCheck %s
// RUN: llmc-opt %s --split-input-file --llmc-assign-precision=policy=fp16 | FileCheck %s --check-prefix=F16
// RUN: llmc-opt %s --split-input-file --llmc-assign-precision=policy=fp32 | FileCheck %s --check-prefix=FP32
// RUN: llmc-opt %s --split-input-file --llmc-assign-precision=policy=fp32 > %t.fp32
// RUN: llmc-opt %s --split-input-file > %t.none
// RUN: diff %t.fp32 %t.none
// RUN: not llmc-opt %s --split-input-file --llmc-assign-precision=policy=fp4 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: unknown precision policy 'fp4'; expected fp32, bf16, fp16 or fp8

// A tiny GPT-like step: one cast per parameter (the tied wte gets one, read
// by the embedding and the head), the norm keeps its f32 gamma and beta,
// matmuls, gelu and the residual in bf16 (the 0.5 splat rebuilt in bf16, no
// cast), the loss f32.
// CHECK-LABEL: func.func @loss
// CHECK-SAME:    (%[[WTE:[^:]+]]: tensor<16x8xf32> {{.*}}, %[[G:[^:]+]]: tensor<8xf32> {{.*}}, %[[B:[^:]+]]: tensor<8xf32> {{.*}}, %[[W:[^:]+]]: tensor<8x8xf32> {{.*}}, %[[TOK:[^:]+]]: tensor<2x4xi32> {{.*}}, %[[TGT:[^:]+]]: tensor<2x4xi32> {{.*}})
// CHECK-SAME:    attributes {llmc.precision = "bf16"}
// CHECK-NEXT:    %[[WTE16:.+]] = llmc.cast %[[WTE]] : tensor<16x8xf32> -> tensor<16x8xbf16>
// CHECK-NEXT:    %[[W16:.+]] = llmc.cast %[[W]] : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK-NOT:     llmc.cast
// CHECK:         %[[H:.+]] = llmc.embedding %[[WTE16]][%[[TOK]]] : (tensor<16x8xbf16>, tensor<2x4xi32>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[N:.+]] = llmc.layer_norm %[[H]], %[[G]], %[[B]] epsilon {{.*}} : (tensor<2x4x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.matmul %[[N]], %[[W16]] : tensor<2x4x8xbf16>, tensor<8x8xbf16> -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[A:.+]] = llmc.gelu %[[Y]] tanh : tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[HALF:.+]] = llmc.constant dense<5.000000e-01> : tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[S:.+]] = llmc.mul %[[A]], %[[HALF]] : tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[R:.+]] = llmc.add %[[S]], %[[N]] : tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[LOGITS:.+]] = llmc.matmul %[[R]], %[[WTE16]] transpose_b : tensor<2x4x8xbf16>, tensor<16x8xbf16> -> tensor<2x4x16xbf16>
// CHECK-NEXT:    %[[L:.+]] = llmc.cross_entropy %[[LOGITS]], %[[TGT]] reduction mean : (tensor<2x4x16xbf16>, tensor<2x4xi32>) -> tensor<f32>
// CHECK-NEXT:    return %[[L]] : tensor<f32>
// F16-LABEL: func.func @loss
// F16:         llmc.matmul %{{.+}}, %{{.+}} : tensor<2x4x8xf16>, tensor<8x8xf16> -> tensor<2x4x8xf16>
// F16:         llmc.cross_entropy %{{.+}}, %{{.+}} reduction mean : (tensor<2x4x16xf16>, tensor<2x4xi32>) -> tensor<f32>
// FP32-LABEL: func.func @loss
// FP32-NOT:     llmc.cast
// FP32-NOT:     llmc.precision
func.func @loss(%wte: tensor<16x8xf32> {llmc.name = "wte", llmc.role = "parameter"},
                %g: tensor<8xf32> {llmc.name = "ln.weight", llmc.role = "parameter"},
                %b: tensor<8xf32> {llmc.name = "ln.bias", llmc.role = "parameter"},
                %w: tensor<8x8xf32> {llmc.name = "fc.weight", llmc.role = "parameter"},
                %tokens: tensor<2x4xi32> {llmc.name = "tokens", llmc.role = "input"},
                %targets: tensor<2x4xi32> {llmc.name = "targets", llmc.role = "input"}) -> tensor<f32> {
  %h = llmc.embedding %wte[%tokens] : (tensor<16x8xf32>, tensor<2x4xi32>) -> tensor<2x4x8xf32>
  %n = llmc.layer_norm %h, %g, %b epsilon 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %y = llmc.matmul %n, %w : tensor<2x4x8xf32>, tensor<8x8xf32> -> tensor<2x4x8xf32>
  %a = llmc.gelu %y tanh : tensor<2x4x8xf32>
  %half = llmc.constant dense<0.5> : tensor<2x4x8xf32>
  %s = llmc.mul %a, %half : tensor<2x4x8xf32>
  %r = llmc.add %s, %n : tensor<2x4x8xf32>
  %logits = llmc.matmul %r, %wte transpose_b : tensor<2x4x8xf32>, tensor<16x8xf32> -> tensor<2x4x16xf32>
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<2x4x16xf32>, tensor<2x4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Reductions accumulate into f32; the f32 tail after them (the scaled loss)
// stays f32, and a float input is cast once like a parameter. A reduction
// result read by a low op gets one cast where the low op reads it (here after
// the broadcast, which reads only f32), no f32 -> bf16 -> f32 chain.
// CHECK-LABEL: func.func @loss
// CHECK-SAME:    (%[[W:[^:]+]]: tensor<4x4xf32> {{.*}}, %[[X:[^:]+]]: tensor<2x4xf32> {{.*}})
// CHECK-NEXT:    %[[X16:.+]] = llmc.cast %[[X]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT:    %[[W16:.+]] = llmc.cast %[[W]] : tensor<4x4xf32> -> tensor<4x4xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.matmul %[[X16]], %[[W16]] : tensor<2x4xbf16>, tensor<4x4xbf16> -> tensor<2x4xbf16>
// CHECK-NEXT:    %[[M:.+]] = llmc.reduce_mean %[[Y]] dims [1] keep_dims : tensor<2x4xbf16> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[MB:.+]] = llmc.broadcast %[[M]] dims [0, 1] : tensor<2x1xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[MB16:.+]] = llmc.cast %[[MB]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT:    %[[D:.+]] = llmc.sub %[[Y]], %[[MB16]] : tensor<2x4xbf16>
// CHECK-NEXT:    %[[SQ:.+]] = llmc.mul %[[D]], %[[D]] : tensor<2x4xbf16>
// CHECK-NEXT:    %[[SUM:.+]] = llmc.reduce_sum %[[SQ]] dims [0, 1] : tensor<2x4xbf16> -> tensor<f32>
// CHECK-NEXT:    %[[C:.+]] = llmc.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %[[L:.+]] = llmc.mul %[[SUM]], %[[C]] : tensor<f32>
// CHECK-NEXT:    return %[[L]] : tensor<f32>
func.func @loss(%w: tensor<4x4xf32> {llmc.name = "w", llmc.role = "parameter"},
                %x: tensor<2x4xf32> {llmc.name = "x", llmc.role = "input"}) -> tensor<f32> {
  %y = llmc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %m = llmc.reduce_mean %y dims [1] keep_dims : tensor<2x4xf32> -> tensor<2x1xf32>
  %mb = llmc.broadcast %m dims [0, 1] : tensor<2x1xf32> -> tensor<2x4xf32>
  %d = llmc.sub %y, %mb : tensor<2x4xf32>
  %sq = llmc.mul %d, %d : tensor<2x4xf32>
  %sum = llmc.reduce_sum %sq dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %c = llmc.constant dense<0.25> : tensor<f32>
  %l = llmc.mul %sum, %c : tensor<f32>
  return %l : tensor<f32>
}

// -----

// Must not apply: a program already in bf16 (its widening matmul keeps its
// f32 result) and integer work are left exactly as they are.
// CHECK-LABEL: func.func @loss
// CHECK-NOT:     llmc.cast
// CHECK:         llmc.add %{{.+}}, %{{.+}} : tensor<4xi32>
// CHECK:         llmc.matmul %{{.+}}, %{{.+}} : tensor<2x4xbf16>, tensor<4x4xbf16> -> tensor<2x4xf32>
// CHECK:         llmc.reduce_sum %{{.+}} dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
// CHECK-NOT:     llmc.cast
func.func @loss(%w: tensor<4x4xbf16> {llmc.name = "w", llmc.role = "parameter"},
                %x: tensor<2x4xbf16> {llmc.name = "x", llmc.role = "input"},
                %i: tensor<4xi32> {llmc.name = "i", llmc.role = "input"}) -> tensor<f32> {
  %j = llmc.add %i, %i : tensor<4xi32>
  %y = llmc.matmul %x, %w : tensor<2x4xbf16>, tensor<4x4xbf16> -> tensor<2x4xf32>
  %l = llmc.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
