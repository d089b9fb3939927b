// llmc verify: a few AdamW steps of the run's [parallel] mesh against the
// same run on one device (both on CPU virtual devices, same initial
// parameters and data), compared per model part. Tolerances (f32): losses
// 1e-5 relative (the mesh adds the same numbers in another order: a few
// float32 roundings, ~1e-7), gradients and parameters 1e-4 relative L2 per
// tensor.

// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 2\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\nsteps = 10\nlearning_rate = 1e-3\nwarmup_steps = 2\n[parallel]\ndevices = "cpu"\ndp = 2\ntp = 2\n' > %t/dp2tp2.toml
// RUN: llmc verify %t/dp2tp2.toml --threads 2 --keep %t/keep | FileCheck %s --check-prefix=PASS
// PASS:      compiling the mesh program
// PASS-NEXT: compiling the single-device program
// PASS-NEXT: training 3 steps on 4 CPU devices (mesh {dp=2, tp=2})
// PASS-NEXT: training 3 steps on 1 CPU device
// PASS:      step  loss (mesh)   loss (1 device)  rel. diff   grad norm rel. diff
// PASS-NEXT: {{^ +1 +[0-9.]+ +[0-9.]+ }}
// PASS-NEXT: {{^ +2 +[0-9.]+ +[0-9.]+ }}
// PASS-NEXT: {{^ +3 +[0-9.]+ +[0-9.]+ }}
// The parts, in the program's parameter order, each within tolerance (no
// FAIL in its row).
// PASS:      part{{ +}}tensors  gradient (m1)  parameters
// PASS-NEXT: transformer.wte{{ +}}1  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS-NEXT: transformer.wpe{{ +}}1  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS-NEXT: transformer.h.0.ln_1{{ +}}2  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS-NEXT: transformer.h.0.attn{{ +}}4  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS:      transformer.h.1.mlp{{ +}}4  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS-NEXT: transformer.ln_f{{ +}}2  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS:      losses{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// PASS-NEXT: grad norms{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// PASS-NEXT: gradients{{ +}}{{[0-9.e+-]+}} relative L2, worst tensor (tolerance 1e-04)  ok
// PASS-NEXT: parameters{{ +}}{{[0-9.e+-]+}} relative L2, worst tensor (tolerance 1e-04)  ok
// PASS-NEXT: gradients: AdamW's first moment after step 1, m1 = (1 - beta1) * clipped g1
// PASS-NEXT: note: the key third of 2 attn.c_attn.bias tensor(s) is left out
// PASS-NEXT: kept the checkpoints and metrics of both runs in {{.*}}keep
// PASS-NEXT: PASS: mesh {dp=2, tp=2} (4 ranks) matches one device over 3 steps

// --keep: the initial parameters, a checkpoint per step and the metrics of
// both runs.
// RUN: ls %t/keep %t/keep/mesh %t/keep/mesh/checkpoints %t/keep/single/checkpoints | FileCheck %s --check-prefix=KEEP
// KEEP:      initial.safetensors
// KEEP:      checkpoints
// KEEP-NEXT: metrics.jsonl
// KEEP:      step-00000001
// KEEP-NEXT: step-00000002
// KEEP-NEXT: step-00000003
// KEEP:      step-00000003

// A perturbed mesh run (a hidden option, for this test) fails, naming the
// parts beyond tolerance, with exit 1.
// RUN: not llmc verify %t/dp2tp2.toml --threads 2 --steps 1 --perturb-part=transformer.h.1.mlp | FileCheck %s --check-prefix=FAIL
// FAIL:      perturbing the mesh run's initial transformer.h.1.mlp
// FAIL:      transformer.h.1.mlp{{ +}}4  {{.*}}  FAIL
// FAIL:      grad norms{{ .*}}FAIL
// FAIL:      transformer.h.1.mlp: worst gradient transformer.h.1.mlp.{{[a-z_.]+}} ({{.*}}) parameter transformer.h.1.mlp.{{[a-z_.]+}} ({{.*}})
// FAIL:      FAIL: mesh {dp=2, tp=2} differs from one device beyond tolerance in: {{(losses, )?}}grad norms, {{.*}}transformer.h.1.mlp

// One device: nothing to verify, exit 0.
// RUN: sed 's/dp = 2/dp = 1/; s/tp = 2/tp = 1/' %t/dp2tp2.toml > %t/one.toml
// RUN: llmc verify %t/one.toml | FileCheck %s --check-prefix=ONE
// ONE: one.toml: [parallel] asks for one device (dp = 1, cp = 1, tp = 1, ep = 1, pp = 1): nothing to verify

// Usage errors.
// RUN: not llmc verify %t/dp2tp2.toml --steps 0 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: llmc verify: --steps expects 1 to 1099511627776, got 0
// RUN: not llmc verify %S/Inputs/does-not-matter.mlir 2>&1 | FileCheck %s --check-prefix=MLIR
// MLIR: llmc verify: expected a run description (.toml) with a [parallel] mesh

// An expert-parallel mesh (MoE tiny, dp 2 x ep 2): the same check passes.
// RUN: printf '[model]\nfamily = "moe"\nvocab_size = 256\nlayers = 2\nwidth = 64\nheads = 4\nkv_heads = 2\nffn_width = 96\nexperts = 8\nexperts_per_token = 2\ncapacity_factor = 4.0\n[train]\nbatch_size = 8\nseq_len = 16\nsteps = 10\nlearning_rate = 1e-3\nwarmup_steps = 2\n[parallel]\ndevices = "cpu"\ndp = 2\nep = 2\n' > %t/ep.toml
// RUN: llmc verify %t/ep.toml --threads 2 | FileCheck %s --check-prefix=EP
// EP:      training 3 steps on 4 CPU devices (mesh {dp=2, ep=2})
// EP:      model.layers.0.block_sparse_moe{{ +}}4  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// EP:      losses{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// EP:      mesh {dp=2, ep=2} (4 ranks) matches one device over 3 steps
