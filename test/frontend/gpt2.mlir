// The GPT-2 builder: one layer traced from a run description. Pins the
// structure of the forward program, the Hugging Face parameter names and the
// locations of the ops.

// RUN: llmc compile %S/Inputs/gpt2-1layer.toml --emit=loss --locations | FileCheck %s

// CHECK-LABEL: func.func @loss(
// CHECK-SAME:    %[[WTE:arg[0-9]+]]: tensor<64x32xf32> {{{.*}}llmc.name = "transformer.wte.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// CHECK-SAME:    %[[WPE:arg[0-9]+]]: tensor<16x32xf32> {{{.*}}llmc.name = "transformer.wpe.weight"
// CHECK-SAME:    tensor<32x96xf32> {{{.*}}llmc.name = "transformer.h.0.attn.c_attn.weight"
// CHECK-SAME:    tensor<96xf32> {llmc.init = {kind = "zeros"}, llmc.name = "transformer.h.0.attn.c_attn.bias"
// CHECK-SAME:    tensor<32x128xf32> {{{.*}}llmc.name = "transformer.h.0.mlp.c_fc.weight"
// CHECK-SAME:    llmc.name = "transformer.ln_f.bias"
// CHECK-SAME:    %[[TOKENS:arg[0-9]+]]: tensor<2x8xi32> {llmc.name = "tokens", llmc.role = "input"}
// CHECK-SAME:    %[[TARGETS:arg[0-9]+]]: tensor<2x8xi32> {llmc.name = "targets", llmc.role = "input"}
// CHECK-SAME:    -> tensor<f32>
// CHECK:         %[[TOK:.+]] = llmc.embedding %[[WTE]][%[[TOKENS]]] {{.*}} loc("transformer.wte")
// CHECK:         %[[POS:.+]] = llmc.iota dim 0 : tensor<8xi32> loc("transformer.wpe")
// CHECK:         llmc.embedding %[[WPE]][%[[POS]]] : (tensor<16x32xf32>, tensor<8xi32>) -> tensor<8x32xf32> loc("transformer.wpe")
// CHECK:         llmc.layer_norm {{.*}} epsilon 1.000000e-05 {{.*}} loc("transformer.h.0.ln_1")
// Conv1D weights are [in, out]: no transpose.
// CHECK:         llmc.matmul %{{.+}}, %{{.+}} : tensor<2x8x32xf32>, tensor<32x96xf32> -> tensor<2x8x96xf32> loc("transformer.h.0.attn.c_attn")
// CHECK:         llmc.slice {{.*}} starts [0, 0, 64] limits [2, 8, 96] {{.*}} loc("transformer.h.0.attn")
// CHECK:         llmc.attention {{.*}} causal : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> loc("transformer.h.0.attn")
// CHECK:         loc("transformer.h.0.attn.c_proj")
// CHECK:         llmc.gelu %{{.+}} tanh : tensor<2x8x128xf32> loc("transformer.h.0.mlp")
// CHECK:         loc("transformer.ln_f")
// The head is the token embedding, transposed: tied weights.
// CHECK:         %[[LOGITS:.+]] = llmc.matmul %{{.+}}, %[[WTE]] transpose_b : tensor<2x8x32xf32>, tensor<64x32xf32> -> tensor<2x8x64xf32> loc("lm_head")
// CHECK:         %[[LOSS:.+]] = llmc.cross_entropy %[[LOGITS]], %[[TARGETS]] reduction mean {{.*}} loc("loss")
// CHECK:         return %[[LOSS]] : tensor<f32>

// The parameter count: V*C + P*C + L*(12C^2 + 13C) + 2C with V=64, P=16,
// C=32, L=1: 2048 + 512 + 12704 + 64.
// RUN: llmc inspect %S/Inputs/gpt2-1layer.toml | FileCheck %s --check-prefix=COUNT
// COUNT:      parameters of {{.*}}gpt2-1layer.toml (gpt2)
// COUNT:      transformer.wte  1  2,048
// COUNT:      transformer.h.*.attn.c_attn  2  3,168
// COUNT:      total  16  15,328
