// The Megatron tensor-parallel layout the model builders declare
// (llmc.tp_split = array<i64: dim, groups>, docs/frontend.md): on @loss's
// parameters, on @train_step's parameters after llmc-autodiff, and on each
// parameter's AdamW moments after llmc-optimizer. Replicated parameters
// (norms, wpe, row-parallel biases) have no llmc.tp_split.

// RUN: llmc compile %S/Inputs/gpt2-1layer.toml --emit=loss | FileCheck %s --check-prefix=GPT2
// GPT2-LABEL: func.func @loss(
// GPT2-SAME:    tensor<64x32xf32> {{{[^}]*}}}, llmc.name = "transformer.wte.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// GPT2-SAME:    tensor<16x32xf32> {{{[^}]*}}}, llmc.name = "transformer.wpe.weight", llmc.role = "parameter"}
// GPT2-SAME:    {llmc.init = {kind = "ones"}, llmc.name = "transformer.h.0.ln_1.weight", llmc.role = "parameter"}
// GPT2-SAME:    tensor<32x96xf32> {{{[^}]*}}}, llmc.name = "transformer.h.0.attn.c_attn.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 3>}
// GPT2-SAME:    tensor<96xf32> {{{[^}]*}}}, llmc.name = "transformer.h.0.attn.c_attn.bias", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 3>}
// GPT2-SAME:    tensor<32x32xf32> {{{[^}]*}}}, llmc.name = "transformer.h.0.attn.c_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// GPT2-SAME:    tensor<32xf32> {{{[^}]*}}}, llmc.name = "transformer.h.0.attn.c_proj.bias", llmc.role = "parameter"}
// GPT2-SAME:    tensor<32x128xf32> {{{[^}]*}}}, llmc.name = "transformer.h.0.mlp.c_fc.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 1>}
// GPT2-SAME:    tensor<128xf32> {{{[^}]*}}}, llmc.name = "transformer.h.0.mlp.c_fc.bias", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// GPT2-SAME:    tensor<128x32xf32> {{{[^}]*}}}, llmc.name = "transformer.h.0.mlp.c_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// GPT2-SAME:    tensor<32xf32> {{{[^}]*}}}, llmc.name = "transformer.h.0.mlp.c_proj.bias", llmc.role = "parameter"}
// GPT2-SAME:    {{{[^}]*}}}, llmc.name = "transformer.ln_f.bias", llmc.role = "parameter"}

// RUN: llmc compile %S/Inputs/llama-1layer.toml --emit=loss | FileCheck %s --check-prefix=LLAMA
// LLAMA-LABEL: func.func @loss(
// LLAMA-SAME:    tensor<64x32xf32> {{{[^}]*}}}, llmc.name = "model.embed_tokens.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// LLAMA-SAME:    {llmc.init = {kind = "ones"}, llmc.name = "model.layers.0.input_layernorm.weight", llmc.role = "parameter"}
// LLAMA-SAME:    tensor<32x32xf32> {{{[^}]*}}}, llmc.name = "model.layers.0.self_attn.q_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// LLAMA-SAME:    tensor<16x32xf32> {{{[^}]*}}}, llmc.name = "model.layers.0.self_attn.k_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// LLAMA-SAME:    tensor<16x32xf32> {{{[^}]*}}}, llmc.name = "model.layers.0.self_attn.v_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// LLAMA-SAME:    tensor<32x32xf32> {{{[^}]*}}}, llmc.name = "model.layers.0.self_attn.o_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 1>}
// LLAMA-SAME:    {llmc.init = {kind = "ones"}, llmc.name = "model.layers.0.post_attention_layernorm.weight", llmc.role = "parameter"}
// LLAMA-SAME:    tensor<48x32xf32> {{{[^}]*}}}, llmc.name = "model.layers.0.mlp.gate_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// LLAMA-SAME:    tensor<48x32xf32> {{{[^}]*}}}, llmc.name = "model.layers.0.mlp.up_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// LLAMA-SAME:    tensor<32x48xf32> {{{[^}]*}}}, llmc.name = "model.layers.0.mlp.down_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 1>}
// LLAMA-SAME:    {llmc.init = {kind = "ones"}, llmc.name = "model.norm.weight", llmc.role = "parameter"}
// LLAMA-SAME:    tensor<64x32xf32> {{{[^}]*}}}, llmc.name = "lm_head.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}

// MoE: attention as LLaMA's; the router replicated; the stacked experts
// split per expert as LLaMA's MLP (w1/w3 column-, w2 row-parallel), and over
// ep by their first dimension.
// RUN: llmc compile %S/Inputs/moe-1layer.toml --emit=loss | FileCheck %s --check-prefix=MOE
// MOE-LABEL: func.func @loss(
// MOE-SAME:    llmc.name = "model.layers.0.self_attn.q_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>}
// MOE-SAME:    llmc.name = "model.layers.0.self_attn.o_proj.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 1>}
// MOE-SAME:    llmc.name = "model.layers.0.block_sparse_moe.gate.weight", llmc.role = "parameter"}
// MOE-SAME:    llmc.name = "model.layers.0.block_sparse_moe.experts.w1.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 1>}
// MOE-SAME:    llmc.name = "model.layers.0.block_sparse_moe.experts.w2.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 2, 1>}

// After the optimizer: the parameter and both moments carry the split.
// RUN: llmc compile %S/Inputs/gpt2-1layer.toml --emit=llmc-optimizer | FileCheck %s --check-prefix=STEP
// STEP-LABEL: func.func @train_step(
// STEP-SAME:    llmc.name = "transformer.h.0.attn.c_attn.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 3>}
// STEP-SAME:    llmc.name = "transformer.h.0.attn.c_proj.bias", llmc.role = "parameter"}
// STEP-SAME:    {llmc.name = "optimizer.m.transformer.wte.weight", llmc.role = "optimizer_state", llmc.tp_split = array<i64: 0, 1>}
// STEP-SAME:    {llmc.name = "optimizer.v.transformer.wte.weight", llmc.role = "optimizer_state", llmc.tp_split = array<i64: 0, 1>}
// STEP-SAME:    {llmc.name = "optimizer.m.transformer.wpe.weight", llmc.role = "optimizer_state"}
// STEP-SAME:    {llmc.name = "optimizer.m.transformer.h.0.attn.c_attn.weight", llmc.role = "optimizer_state", llmc.tp_split = array<i64: 1, 3>}
// STEP-SAME:    {llmc.name = "optimizer.v.transformer.h.0.attn.c_attn.weight", llmc.role = "optimizer_state", llmc.tp_split = array<i64: 1, 3>}
// STEP-SAME:    {llmc.name = "optimizer.m.transformer.h.0.attn.c_attn.bias", llmc.role = "optimizer_state", llmc.tp_split = array<i64: 0, 3>}
// STEP-SAME:    {llmc.name = "optimizer.m.transformer.h.0.mlp.c_proj.weight", llmc.role = "optimizer_state", llmc.tp_split = array<i64: 0, 1>}
// STEP-SAME:    {llmc.name = "optimizer.step", llmc.role = "input"}
