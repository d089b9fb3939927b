// llmc plan on a mesh: each rank's memory (the buffer plan of the
// partitioned program, the same on every rank) and the communication of one
// step per mesh axis and collective kind.

// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 2\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\n[parallel]\ndevices = "cpu"\ndp = 4\n' > %t.dp4.toml
// RUN: llmc plan %t.dp4.toml | FileCheck %s --check-prefix=DP4
// DP4:      memory plan of @train_step ({{.*}}dp4.toml; 8 x 16 tokens per step), per rank, on each of 4 ranks of mesh {dp=4}:
// Data parallelism replicates the weights and the moments (as one device).
// DP4:        weights                                441,344 bytes
// DP4-NEXT:   optimizer state                        882,688 bytes
// The 28 gradients and the loss in one bucket, wpe's gradient (summed in the
// backward) alone: 2 all-reduces of 437,252 bytes in all (the weights' bytes
// without wpe's, plus wpe's [16, 64] positions used, plus the loss).
// DP4:        axes    kind               ops     payload bytes        sent bytes
// DP4-NEXT:   dp      all-reduce           2           437,252
// DP4-NOT:    all-gather
// DP4-NOT:    reduce-scatter

// ZeRO-2 splits the moments four ways (a quarter of 882,688) and turns each
// gradient's all-reduce into a reduce-scatter and an all-gather of the new
// weights.
// RUN: sed 's/dp = 4/dp = 4\nzero = 2/' %t.dp4.toml > %t.zero2.toml
// RUN: llmc plan %t.zero2.toml | FileCheck %s --check-prefix=ZERO2
// ZERO2:      optimizer state                        220,672 bytes
// ZERO2:      dp      all-gather          29
// ZERO2:      dp      reduce-scatter      29

// The bytes follow the closed forms of ring algorithms for N = 4 ranks:
// an all-reduce of S bytes sends 2(N-1)/N*S per rank, an all-gather or a
// reduce-scatter (N-1)/N*S; a local slice sends nothing. awk recomputes each
// row from its payload (columns: axes kind ops payload sent).
// RUN: llmc plan %t.zero2.toml | tr -d , | awk '$2 == "all-reduce" { n++; if ($5 != int(2*3*$4/4)) bad++ } $2 == "all-gather" || $2 == "reduce-scatter" { n++; if ($5 != int(3*$4/4)) bad++ } $2 == "slice" { if ($6 != 0) bad++ } END { print n " rows, " bad+0 " wrong" }' | FileCheck %s --check-prefix=FORMS
// RUN: llmc plan %t.dp4.toml | tr -d , | awk '$2 == "all-reduce" { n++; if ($5 != int(2*3*$4/4)) bad++ } END { print n " rows, " bad+0 " wrong" }' | FileCheck %s --check-prefix=FORMS1
// FORMS: 3 rows, 0 wrong
// FORMS1: 1 rows, 0 wrong

// Expert parallelism: MoE tiny (2 layers, 8 experts, top-2) under ep = 4.
// Each layer's dispatch and combine exchange [E, C/4, D] slot buffers by an
// all-to-all over ep, forward (2 per layer) and backward (2 per layer: the
// expert outputs' gradient out, the slots' gradient back; the router
// weights' gradient reads the forward's combined outputs again): 8
// all-to-alls, each rank sending (N-1)/N of each.
// RUN: printf '[model]\nfamily = "moe"\nvocab_size = 256\nlayers = 2\nwidth = 64\nheads = 4\nkv_heads = 2\nffn_width = 96\nexperts = 8\nexperts_per_token = 2\ncapacity_factor = 4.0\n[train]\nbatch_size = 8\nseq_len = 16\n[parallel]\ndevices = "cpu"\nep = 4\n' > %t.ep4.toml
// RUN: llmc plan %t.ep4.toml | FileCheck %s --check-prefix=EP4
// EP4:      on each of 4 ranks of mesh {ep=4}:
// EP4:      ep      all-to-all           8
// RUN: llmc plan %t.ep4.toml | tr -d , | awk '$2 == "all-to-all" { n++; if ($5 != int(3*$4/4)) bad++ } END { print n " rows, " bad+0 " wrong" }' | FileCheck %s --check-prefix=FORMS1
