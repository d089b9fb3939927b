// The LLaMA builder: RMSNorm, rope on q and k, grouped-query attention,
// SwiGLU, untied head.

// RUN: llmc compile %S/Inputs/llama-1layer.toml --emit=loss --locations | FileCheck %s

// CHECK-LABEL: func.func @loss(
// CHECK-SAME:    llmc.name = "model.embed_tokens.weight"
// CHECK-SAME:    tensor<32x32xf32> {{{.*}}llmc.name = "model.layers.0.self_attn.q_proj.weight"
// k and v project to 2 kv heads of 8: [16, 32], stored [out, in].
// CHECK-SAME:    tensor<16x32xf32> {{{.*}}llmc.name = "model.layers.0.self_attn.k_proj.weight"
// CHECK-SAME:    tensor<16x32xf32> {{{.*}}llmc.name = "model.layers.0.self_attn.v_proj.weight"
// CHECK-SAME:    tensor<48x32xf32> {{{.*}}llmc.name = "model.layers.0.mlp.gate_proj.weight"
// CHECK-SAME:    tensor<32x48xf32> {{{.*}}llmc.name = "model.layers.0.mlp.down_proj.weight"
// CHECK-SAME:    llmc.name = "model.norm.weight"
// CHECK-SAME:    %[[HEAD:arg[0-9]+]]: tensor<64x32xf32> {{{.*}}llmc.name = "lm_head.weight"
// CHECK:         llmc.rms_norm {{.*}} epsilon 9.9999999999999995E-7 {{.*}} loc("model.layers.0.input_layernorm")
// CHECK:         %[[Q:.+]] = llmc.matmul {{.*}} transpose_b {{.*}} loc("model.layers.0.self_attn.q_proj")
// CHECK:         %[[QR:.+]] = llmc.rope %{{.+}} theta 5.000000e+05 : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> loc("model.layers.0.self_attn")
// CHECK:         %[[KR:.+]] = llmc.rope %{{.+}} theta 5.000000e+05 : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32> loc("model.layers.0.self_attn")
// CHECK:         llmc.attention %[[QR]], %[[KR]], %{{.+}} causal : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x4x8x8xf32>
// CHECK:         loc("model.layers.0.self_attn.o_proj")
// CHECK:         llmc.swiglu {{.*}} : tensor<2x8x48xf32> loc("model.layers.0.mlp")
// CHECK:         llmc.matmul %{{.+}}, %[[HEAD]] transpose_b {{.*}} loc("lm_head")
// CHECK:         llmc.cross_entropy {{.*}} loc("loss")

// V*D + L*(2D + D*H*hd + 2*D*KV*hd + H*hd*D + 3*D*F) + D + V*D
// = 2048 + (64 + 1024 + 1024 + 1024 + 4608) + 32 + 2048 = 11872
// RUN: llmc inspect %S/Inputs/llama-1layer.toml | FileCheck %s --check-prefix=COUNT
// COUNT: total  12  11,872
