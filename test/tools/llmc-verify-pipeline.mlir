// llmc verify on a pipeline: pp = 2 with 1F1B over 4 microbatches (GPT-2
// tiny with 4 layers, its embedding tied to the head across the two
// stages) against one device accumulating the same 4 microbatches.
// Tolerances as llmc-verify.mlir: losses 1e-5 relative, gradients and
// parameters 1e-4 relative L2 per tensor. (Measured: 0 — every value is
// computed by the same ops in the same order on one stage or another.)

// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 4\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\nsteps = 10\nlearning_rate = 1e-3\nwarmup_steps = 2\nmicrobatches = 4\n[parallel]\ndevices = "cpu"\npp = 2\npipeline_schedule = "1f1b"\n' > %t/pp2.toml
// RUN: llmc verify %t/pp2.toml --threads 2 | FileCheck %s --check-prefix=PASS
// PASS:      training 3 steps on 2 CPU devices (mesh {pp=2})
// PASS:      part{{ +}}tensors  gradient (m1)  parameters
// PASS-NEXT: transformer.wte{{ +}}1  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS:      transformer.h.3.mlp{{ +}}4  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS-NEXT: transformer.ln_f{{ +}}2  {{[0-9.e+-]+  +[0-9.e+-]+$}}
// PASS:      losses{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// PASS-NEXT: grad norms{{ +}}{{[0-9.e+-]+}} relative, worst step (tolerance 1e-05)  ok
// PASS:      PASS: mesh {pp=2} (2 ranks) matches one device over 3 steps

// A perturbed part of the last stage fails, and (through the loss, the
// gradients sent back and the global gradient norm) so does the first
// stage's embedding: the comparison sees both stages.
// RUN: not llmc verify %t/pp2.toml --threads 2 --steps 1 --perturb-part=transformer.h.3.mlp | FileCheck %s --check-prefix=FAIL
// FAIL:      transformer.wte{{ +}}1  {{.*}}  FAIL
// FAIL:      transformer.h.3.mlp{{ +}}4  {{.*}}  FAIL
// FAIL:      FAIL: mesh {pp=2} differs from one device beyond tolerance in: losses, grad norms, transformer.wte,
