// Sequence parallelism at Megatron's minimum: the collectives of one whole
// training step (forward, backward, optimizer) of GPT-2 tiny and LLaMA tiny
// under tp = 2, sp = true, counted by kind and by the phase of the op that
// needs them (the end of `llmc.reason`).
//
// Per layer: the sequence is gathered before the attention and the MLP
// (column-parallel) and the row-parallel sums are reduce-scattered after
// them; the backward mirrors this (the cotangent is gathered before the
// row-parallel input gradient, the column-parallel input gradient is
// reduce-scattered). The weight gradients read the forward's gathered
// activation and the backward's gathered cotangent and keep the weight's
// split: nothing is gathered for them and they are never summed over tp.
// Outside the layers: the vocabulary-parallel embedding's sum is
// reduce-scattered, the final norm's output gathered for the head, and the
// embedding's input gradient gathered in the backward.

// GPT-2 tiny (2 layers): 5 + 5 forward and 5 + 5 backward, the minimum.
// The position embedding's gradient (the cotangent summed over the batch) is
// computed from the embedding's gathered cotangent, the gather the token
// embedding's vocabulary-parallel gradient reads too: one gather for both.
// The all-reduces: 3 + 2 of the vocabulary-parallel loss (one number per
// position), 5 buckets of the norms' weight and bias gradients and the
// biases' of the row-parallel projections (partial sums over the rows each
// rank holds) and 8 of one number (the grad norm's sums of squares of the
// tp-split gradients, one by one).
// RUN: printf '%%s\ntp = 2\nsp = true\n' "$(cat %llmc_src_root/examples/gpt2-tiny.toml)" > %t.gpt2.toml
// RUN: llmc compile %t.gpt2.toml --emit=llmc-partition > %t.gpt2.mlir
// RUN: grep -oE 'shard\.(all_gather|reduce_scatter|all_reduce) ' %t.gpt2.mlir | sort | uniq -c | awk '{print $2, $1}' | FileCheck %s --check-prefix=GPT2COUNT
// GPT2COUNT:      shard.all_gather 10{{$}}
// GPT2COUNT-NEXT: shard.all_reduce 18{{$}}
// GPT2COUNT-NEXT: shard.reduce_scatter 10{{$}}
// RUN: sed -nE 's/.*shard\.(all_gather|reduce_scatter) .*\((forward|backward)\)".*/\1 \2/p' %t.gpt2.mlir | sort | uniq -c | awk '{print $2, $3, $1}' | FileCheck %s --check-prefix=GPT2PHASE
// GPT2PHASE:      all_gather backward 5{{$}}
// GPT2PHASE-NEXT: all_gather forward 5{{$}}
// GPT2PHASE-NEXT: reduce_scatter backward 5{{$}}
// GPT2PHASE-NEXT: reduce_scatter forward 5{{$}}
// RUN: FileCheck %s --check-prefix=GPT2WHY < %t.gpt2.mlir
// GPT2WHY:     shard.all_gather {{.*}}"value of transformer.ln_f (backward): gather dim 1 over tp, for transformer.h.1.mlp.c_proj (backward)"
// GPT2WHY-NOT: shard.all_gather {{.*}}for transformer.h.1.mlp.c_proj (backward)"
// GPT2WHY:     shard.reduce_scatter {{.*}}"pending transformer.h.1.mlp.c_fc (backward): sum over tp, scattered along dim 1, for transformer.h.1.ln_2 (backward)"
// GPT2WHY:     shard.all_gather {{.*}}"value of transformer.h.0.ln_1 (backward): gather dim 1 over tp, for transformer.wpe (backward)"
// GPT2WHY-NOT: shard.all_gather
// The weight gradients are never summed over tp: no bucket holds a matrix.
// RUN: FileCheck %s --check-prefix=GPT2BUCKETS < %t.gpt2.mlir
// GPT2BUCKETS-NOT: shard.all_reduce {{.*}} : tensor<{{[0-9][0-9][0-9][0-9]+}}xf32>

// LLaMA tiny (2 layers, rms norm, rope, 2 microbatches): the same 10 + 10
// per microbatch; it has no position table, so nothing else is gathered.
// RUN: printf '%%s\ntp = 2\nsp = true\n' "$(cat %llmc_src_root/examples/llama-tiny.toml)" > %t.llama.toml
// RUN: llmc compile %t.llama.toml --emit=llmc-partition > %t.llama.mlir
// RUN: grep -oE 'shard\.(all_gather|reduce_scatter) ' %t.llama.mlir | sort | uniq -c | awk '{print $2, $1}' | FileCheck %s --check-prefix=LLAMA
// LLAMA:      shard.all_gather 20{{$}}
// LLAMA-NEXT: shard.reduce_scatter 20{{$}}

// GPT-2 124M (12 layers, vocabulary padded to 50304 so that tp divides it):
// 25 + 25 forward (2 per layer and region, the embedding's reduce-scatter and
// the head's gather) and 25 + 25 backward.
// RUN: sed -e 's/^vocab_size = 50257/vocab_size = 50304/' -e 's/^\[parallel\]/[parallel]\ntp = 2\nsp = true/' %llmc_src_root/examples/gpt2-124m.toml > %t.124m.toml
// RUN: llmc compile %t.124m.toml --emit=llmc-partition | sed -nE 's/.*shard\.(all_gather|reduce_scatter) .*\((forward|backward)\)".*/\1 \2/p' | sort | uniq -c | awk '{print $2, $3, $1}' | FileCheck %s --check-prefix=GPT2124M
// GPT2124M:      all_gather backward 25{{$}}
// GPT2124M-NEXT: all_gather forward 25{{$}}
// GPT2124M-NEXT: reduce_scatter backward 25{{$}}
// GPT2124M-NEXT: reduce_scatter forward 25{{$}}
