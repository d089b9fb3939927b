// The config.json features that change the numerics, as the builders trace
// them (docs/frontend.md, "Hugging Face models"). The inverse frequencies
// are transformers' _compute_llama3_parameters for theta 500000, head_dim
// 16, factor 8, low/high frequency factors 1 and 4 and an original context
// of 16 (test/hf/hf_files.py's numpy transcription gives 0.5760564,
// 0.02424034, 0.004700754, ...): the first two pairs interpolated, the rest
// divided by 8.

// RUN: llmc compile %S/Inputs/llama3-config.json --emit=loss --batch-size 2 --seq-len 8 --locations | FileCheck %s --check-prefix=LLAMA
// head_dim 16 (not 32 / 4): q and o are [64, 32] and [32, 64], with biases.
// LLAMA-LABEL: func.func @loss(
// LLAMA-SAME:    tensor<64x32xf32> {{{.*}}llmc.name = "model.layers.0.self_attn.q_proj.weight"
// LLAMA-SAME:    tensor<64xf32> {{{.*}}llmc.name = "model.layers.0.self_attn.q_proj.bias"
// LLAMA-SAME:    tensor<32x64xf32> {{{.*}}llmc.name = "model.layers.0.self_attn.o_proj.weight"
// LLAMA-SAME:    tensor<32xf32> {{{.*}}llmc.name = "model.layers.0.self_attn.o_proj.bias"
// LLAMA-SAME:    tensor<48xf32> {{{.*}}llmc.name = "model.layers.0.mlp.gate_proj.bias"
// LLAMA-SAME:    tensor<32xf32> {{{.*}}llmc.name = "model.layers.0.mlp.down_proj.bias"
// LLAMA:         llmc.rope %{{.+}} theta 5.000000e+05 inv_freq [5.760564e-01, 2.424034e-02, 4.700754e-03, 9.115831e-04, 1.767767e-04, 3.428102e-05, 6.647870e-06, 1.289173e-06] : (tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> loc("model.layers.0.self_attn")
// LLAMA:         llmc.rope %{{.+}} theta 5.000000e+05 inv_freq [5.760564e-01, {{.*}}] : (tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> loc("model.layers.0.self_attn")

// GPT-2's scale_attn_by_inverse_layer_idx: 1/sqrt(8) in layer 0, halved in
// layer 1; activation_function "gelu" is the erf GELU.
// RUN: llmc compile %S/Inputs/gpt2-scaled-config.json --emit=loss --batch-size 2 --seq-len 8 --locations | FileCheck %s --check-prefix=GPT2
// GPT2-LABEL: func.func @loss(
// GPT2:         llmc.attention {{.*}} causal scale 0.35355339059327373 : {{.*}} loc("transformer.h.0.attn")
// GPT2:         llmc.gelu %{{.+}} erf : tensor<2x8x128xf32> loc("transformer.h.0.mlp")
// GPT2:         llmc.attention {{.*}} causal scale 0.17677669529663687 : {{.*}} loc("transformer.h.1.attn")

// The plain rope keeps theta alone: no inv_freq without rope_scaling.
// RUN: llmc compile %S/Inputs/llama-1layer.toml --emit=loss | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: inv_freq
