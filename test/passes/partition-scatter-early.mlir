// Reduce-scatters issued early (llmc-partition, step 7; docs/sharding.md):
// without a pipeline, a reduce-scatter whose input nothing else reads moves
// up to just after the op that makes that input. ZeRO-2's gradients are
// then summed through the backward (layer 1's while layer 0's backward
// runs) instead of all after it, at the optimizer that reads them; and
// after a norm gradient whose residual add comes next, they go after that
// add, which the CUDA runtime folds into the norm's kernel only when it is
// the next command. GPT-2 with 2 layers, dp2 + ZeRO-2.

// RUN: sed 's/layers = 1/layers = 2/' %S/../frontend/Inputs/gpt2-1layer.toml > %t.toml
// RUN: printf '[parallel]\ndevices = "cpu"\ndp = 2\nzero = 2\n' >> %t.toml
// RUN: llmc compile %t.toml --emit=llmc-partition --locations | FileCheck %s

// Layer 1's weight gradient is scattered right after its matmul, before
// anything of layer 0's backward; its location is the matmul's, its reason
// still names the reader.
// CHECK-LABEL: func.func @train_step
// CHECK:       llmc.matmul {{.*}}-> tensor<32x96xf32> loc(fused<"backward">["transformer.h.1.attn.c_attn"])
// CHECK-NEXT:  shard.reduce_scatter {{.*}}"pending transformer.h.1.attn.c_attn (backward): sum over dp, scattered along dim 0, for loss (optimizer)"} : tensor<32x96xf32> -> tensor<16x96xf32> loc(fused<"backward">["transformer.h.1.attn.c_attn"])
// The norm gradient, its residual add next, then its scatters.
// CHECK-NEXT:  llmc.layer_norm_grad {{.*}}loc(fused<"backward">["transformer.h.1.ln_1"])
// CHECK-NEXT:  llmc.add
// CHECK-NEXT:  shard.reduce_scatter {{.*}}"pending transformer.h.1.ln_1 (backward)
// CHECK-NEXT:  shard.reduce_scatter {{.*}}"pending transformer.h.1.ln_1 (backward)
// CHECK:       loc(fused<"backward">["transformer.h.0.
// The optimizer reads the sums; no reduce-scatter is left there.
// CHECK:       loc(fused<"optimizer">
// CHECK-NOT:   shard.reduce_scatter
// CHECK:       return
