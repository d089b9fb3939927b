// llmc-partition on a one-layer GPT-2 (test/frontend/Inputs/gpt2-1layer.toml:
// 16 parameter tensors) under each strategy, through the whole pipeline up to
// the partition (`--emit=llmc-partition`). Each collective names what it
// finishes, the axis, and the model part that needs it.

// Data parallelism: the loss's and the gradients' all-reduces go in one
// bucket in the order they are computed (one all-reduce of their
// concatenation, issued after the last of them); wpe's sum is read in the
// backward, before wte's gradient exists, so wte's gradient cannot join that
// bucket and is summed alone: 2 all-reduces. No gathers (weights are whole on
// every rank).
// RUN: printf '%%s\n[parallel]\ndevices = "cpu"\ndp = 2\n' "$(cat %S/../frontend/Inputs/gpt2-1layer.toml)" > %t.dp.toml
// RUN: llmc compile %t.dp.toml --emit=llmc-partition | FileCheck %s --check-prefix=DP
// RUN: llmc compile %t.dp.toml --emit=llmc-partition | grep -c "shard.all_reduce" | FileCheck %s --check-prefix=DPCOUNT
// DP:      module attributes {llmc.mesh_axes = ["dp"]}
// DP-NEXT:   shard.grid @mesh(shape = 2)
// DP:      %arg{{[0-9]+}}: tensor<1x8xi32> {{.*}}llmc.name = "tokens"
// DP:      shard.all_reduce {{.*}}"bucket of 16 all-reduces: pending loss (forward): sum over dp, for loss (optimizer), ..."} : tensor<13025xf32>
// DP:      shard.all_reduce {{.*}}"pending transformer.wte (backward): sum over dp, for loss (optimizer)"} : tensor<64x32xf32>
// DP-NOT:  shard.all_gather
// DPCOUNT: 2

// ZeRO-1: the moments are split over dp; each gradient is reduce-scattered
// onto its moment's half and each new weight all-gathered.
// RUN: sed 's/dp = 2/dp = 2\nzero = 1/' %t.dp.toml > %t.zero1.toml
// RUN: llmc compile %t.zero1.toml --emit=llmc-partition | grep -c "shard.reduce_scatter" | FileCheck %s --check-prefix=ZERO1
// RUN: llmc compile %t.zero1.toml --emit=llmc-partition | FileCheck %s --check-prefix=ZERO1M
// ZERO1:   16
// ZERO1M:  tensor<16x128xf32> {{.*}}llmc.name = "optimizer.m.transformer.h.0.mlp.c_fc.weight"{{.*}}llmc.sharding = {{\[\["dp"\], \[\]\]}}
// ZERO1M:  shard.all_gather {{.*}}"value of transformer.h.0.mlp.c_fc.weight (optimizer): gather dim 0 over dp, for {{.*}}"{{.*}} : tensor<16x128xf32> -> tensor<32x128xf32>

// ZeRO-3: the weights are split too, gathered for the forward use and again
// for the backward one.
// RUN: sed 's/dp = 2/dp = 2\nzero = 3/' %t.dp.toml > %t.zero3.toml
// RUN: llmc compile %t.zero3.toml --emit=llmc-partition | FileCheck %s --check-prefix=ZERO3
// ZERO3:   tensor<16x128xf32> {{.*}}llmc.name = "transformer.h.0.mlp.c_fc.weight"{{.*}}llmc.sharding = {{\[\["dp"\], \[\]\]}}
// ZERO3:   shard.all_gather %arg{{[0-9]+}} {{.*}}"value of transformer.h.0.mlp.c_fc.weight (forward): gather dim 0 over dp, for transformer.h.0.mlp.c_fc (forward)"
// ZERO3:   shard.all_gather %arg{{[0-9]+}} {{.*}}"value of transformer.h.0.mlp.c_fc.weight (forward): gather dim 0 over dp, for transformer.h.0.mlp.c_fc (backward)"

// Tensor parallelism (Megatron): q/k/v in 3 blocks of heads, an all-reduce
// after each row-parallel projection in the forward and before each norm's
// gradient (llmc.layer_norm_grad wants a complete cotangent) in the backward,
// and the vocabulary-parallel loss. Nothing is gathered.
// RUN: printf '%%s\n[parallel]\ndevices = "cpu"\ntp = 2\n' "$(cat %S/../frontend/Inputs/gpt2-1layer.toml)" > %t.tp.toml
// RUN: llmc compile %t.tp.toml --emit=llmc-partition | FileCheck %s --check-prefix=TP
// TP:      tensor<32x48xf32> {{.*}}llmc.name = "transformer.h.0.attn.c_attn.weight"{{.*}}llmc.shard_groups = array<i64: 1, 3>, llmc.sharding = {{\[\[\], \["tp"\]\]}}
// TP:      llmc.axis_offset axes [0] stride 32 : tensor<i32>
// TP:      shard.all_reduce {{.*}}"pending transformer.h.0.attn.c_proj (forward): sum over tp, for transformer.h.0.attn.c_proj (forward)"
// TP:      shard.all_reduce {{.*}}"pending transformer.h.0.mlp.c_proj (forward): sum over tp, for transformer.h.0.mlp.c_proj (forward)"
// TP:      shard.all_reduce {{.*}} reduction = max {{.*}}"row maximum of a vocabulary-parallel softmax: max over tp, for loss (forward)"
// TP:      shard.all_reduce {{.*}}"target logit of a vocabulary-parallel cross-entropy: sum over tp, for loss (forward)"
// TP:      shard.all_reduce {{.*}}"pending lm_head (backward): sum over tp, for transformer.ln_f (backward)"
// TP:      shard.all_reduce {{.*}}"pending transformer.h.0.mlp.c_fc (backward): sum over tp, for transformer.h.0.ln_2 (backward)"
// TP:      shard.all_reduce {{.*}}"pending transformer.h.0.attn.c_attn (backward): sum over tp, for transformer.h.0.ln_1 (backward)"
// TP-NOT:  shard.all_gather

// Sequence parallelism: the row-parallel sums are reduce-scattered along the
// sequence, and the sequence is gathered before the column-parallel matmuls.
// RUN: sed 's/tp = 2/tp = 2\nsp = true/' %t.tp.toml > %t.sp.toml
// RUN: llmc compile %t.sp.toml --emit=llmc-partition | FileCheck %s --check-prefix=SP
// SP:      shard.all_gather {{.*}}"value of transformer.h.0.ln_1 (forward): gather dim 1 over tp, for transformer.h.0.attn.c_attn (forward)"
// SP:      shard.reduce_scatter {{.*}}"pending transformer.h.0.attn.c_proj (forward): sum over tp, scattered along dim 1, for transformer.h.0.attn.c_proj (forward)"
// SP:      shard.all_gather {{.*}}"value of transformer.h.0.ln_2 (forward): gather dim 1 over tp, for transformer.h.0.mlp.c_fc (forward)"
// SP:      shard.reduce_scatter {{.*}}"pending transformer.h.0.mlp.c_proj (forward): sum over tp, scattered along dim 1, for transformer.h.0.mlp.c_proj (forward)"

// One device: the pass leaves the program alone.
// RUN: llmc compile %S/../frontend/Inputs/gpt2-1layer.toml --emit=llmc-optimizer | FileCheck %s --check-prefix=ONE
// ONE-NOT: shard.
// ONE-NOT: llmc.sharding
