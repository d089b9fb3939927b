// ZeRO-3's prefetch (llmc-partition, step 6; docs/sharding.md): without a
// pipeline, each weight's all-gather is issued at the start of the model
// part before its reader's, so that the communication stream gathers layer
// l's weights while the compute stream runs layer l - 1 forward (l + 1
// backward). GPT-2 with 2 layers, dp2 + ZeRO-3.

// RUN: sed 's/layers = 1/layers = 2/' %S/../frontend/Inputs/gpt2-1layer.toml > %t.toml
// RUN: printf '[parallel]\ndevices = "cpu"\ndp = 2\nzero = 3\n' >> %t.toml
// RUN: llmc compile %t.toml --emit=llmc-partition --locations | FileCheck %s

// Forward: layer 0's gathers come at the start of the part before it (the
// position embedding's), layer 1's before layer 0's first op.
// CHECK-LABEL: func.func @train_step
// CHECK:       llmc.embedding {{.*}}loc("transformer.wte")
// CHECK:       shard.all_gather {{.*}}"value of transformer.h.0.attn.c_attn.weight (forward): gather dim 0 over dp, for transformer.h.0.attn.c_attn (forward)"
// CHECK:       loc("transformer.wpe")
// CHECK:       shard.all_gather {{.*}}"value of transformer.h.1.attn.c_attn.weight (forward): gather dim 0 over dp, for transformer.h.1.attn.c_attn (forward)"
// CHECK-NOT:   llmc.layer_norm {{.*}}loc("transformer.h.1.
// CHECK:       loc("transformer.h.0.ln_1")
// CHECK:       loc("transformer.h.1.ln_1")

// Backward: layer 0's gathers come while layer 1's backward runs.
// CHECK:       shard.all_gather {{.*}}"value of transformer.h.0.attn.c_attn.weight (forward): gather dim 0 over dp, for transformer.h.0.attn.c_attn (backward)"
// CHECK-NOT:   llmc.matmul {{.*}}loc(fused<"backward">["transformer.h.0.
// CHECK:       llmc.matmul {{.*}}loc(fused<"backward">["transformer.h.1.
// CHECK:       llmc.matmul {{.*}}loc(fused<"backward">["transformer.h.0.

// Nothing moves under a pipeline (llmc-split-pipeline orders the body).
// RUN: sed 's/seq_len = 8/seq_len = 8\nmicrobatches = 2/; s/batch_size = 2/batch_size = 4/' %t.toml > %t.pp.toml
// RUN: printf 'pp = 2\n' >> %t.pp.toml
// RUN: llmc compile %t.pp.toml --emit=llmc-partition --locations | FileCheck %s --check-prefix=PP
// PP-LABEL:    func.func @train_step
// PP:          loc("transformer.h.0.ln_1")
// PP:          shard.all_gather {{.*}}for transformer.h.1.attn.c_attn (forward)"
