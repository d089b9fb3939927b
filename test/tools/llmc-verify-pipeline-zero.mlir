// llmc verify on pipelines with ZeRO, the meshes the CPU mesh check found
// broken (GPT-2 tiny as the check ran it: 2 layers, 16 x 32 tokens in 2
// microbatches, 8 CPU virtual devices).
// ZeRO-3: llmc-fold-attention-layout runs after llmc-split-pipeline and left
// the ops it created without llmc.stage, so codegen ran them on every stage:
// on the last stage they read the first argument in place of the first
// stage's values. dp4 x pp2 failed to compile (a view of [2, 32, 192] at the
// 2-D embedding's offset, outside the arena); dp2 x tp2 x pp2 compiled, and
// on the last stage a transpose of the attention's result read the [32, 64]
// embedding shard.
// ZeRO-2 with cp: the cp sums of every layer's per-microbatch gradients made
// one bucket at the embedding's backward (first stage), which the last
// stage's reduce-scatters read before the first stage's backward ran
// ("pipeline schedule 1f1b runs this op before a value it reads"); under pp
// the forward's and backward's buckets now keep to one layer.
// Tolerances as llmc-verify.mlir (the sharded-training bounds): losses and
// grad norms 1e-5 relative, gradients and parameters 1e-4 relative L2 per
// tensor.

// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 2\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 16\nseq_len = 32\nsteps = 10\nmicrobatches = 2\n[parallel]\ndevices = "cpu:8"\n' > %t/base.toml
// RUN: cp %t/base.toml %t/dp4pp2.toml && printf 'dp = 4\npp = 2\nzero = 3\n' >> %t/dp4pp2.toml
// RUN: cp %t/base.toml %t/dp2tp2pp2.toml && printf 'dp = 2\ntp = 2\npp = 2\nzero = 3\n' >> %t/dp2tp2pp2.toml

// RUN: llmc compile %t/dp4pp2.toml -o %t/dp4pp2.llmcx 2>&1 | FileCheck %s --check-prefix=COMPILE
// COMPILE: wrote {{.*}}dp4pp2.llmcx: @train_step, 87 arguments, 87 outputs
// RUN: llmc verify %t/dp4pp2.toml --threads 2 --steps 2 | FileCheck %s --check-prefix=DP4
// DP4:      training 2 steps on 8 CPU devices (mesh {pp=2, dp=4})
// DP4:      losses{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// DP4-NEXT: grad norms{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// DP4-NEXT: gradients{{ +}}{{[0-9.e+-]+}} relative L2, worst tensor (tolerance 1e-04)  ok
// DP4-NEXT: parameters{{ +}}{{[0-9.e+-]+}} relative L2, worst tensor (tolerance 1e-04)  ok
// DP4:      PASS: mesh {pp=2, dp=4} (8 ranks) matches one device over 2 steps

// RUN: llmc verify %t/dp2tp2pp2.toml --threads 2 --steps 2 | FileCheck %s --check-prefix=TP
// TP:      training 2 steps on 8 CPU devices (mesh {pp=2, dp=2, tp=2})
// TP:      losses{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// TP-NEXT: grad norms{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// TP-NEXT: gradients{{ +}}{{[0-9.e+-]+}} relative L2, worst tensor (tolerance 1e-04)  ok
// TP-NEXT: parameters{{ +}}{{[0-9.e+-]+}} relative L2, worst tensor (tolerance 1e-04)  ok
// TP:      PASS: mesh {pp=2, dp=2, tp=2} (8 ranks) matches one device over 2 steps

// RUN: cp %t/base.toml %t/dp2pp2cp2.toml && printf 'dp = 2\npp = 2\ncp = 2\nzero = 2\n' >> %t/dp2pp2cp2.toml
// RUN: llmc verify %t/dp2pp2cp2.toml --threads 2 --steps 2 | FileCheck %s --check-prefix=CP
// CP:      training 2 steps on 8 CPU devices (mesh {pp=2, dp=2, cp=2})
// CP:      losses{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// CP-NEXT: grad norms{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// CP-NEXT: gradients{{ +}}{{[0-9.e+-]+}} relative L2, worst tensor (tolerance 1e-04)  ok
// CP-NEXT: parameters{{ +}}{{[0-9.e+-]+}} relative L2, worst tensor (tolerance 1e-04)  ok
// CP:      PASS: mesh {pp=2, dp=2, cp=2} (8 ranks) matches one device over 2 steps
