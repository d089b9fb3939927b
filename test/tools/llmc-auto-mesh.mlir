// [parallel] mesh = "auto" (planner/Search.h, docs/planning.md "The
// search"): GPT-2 tiny on 4 devices under two memory budgets. The profile is
// a fixed copy of the h100 figures (Inputs/search-gpu.toml), so that a
// recalibration of the built-in profiles does not move the choice.

// Unlimited memory (the profile's 80 GB): pure data parallelism is the
// fastest (one bucketed all-reduce of the gradients per step, no
// per-layer collectives). The choice is recorded on the module, every
// argument is replicated and every collective is over dp.
// RUN: cp %S/Inputs/search-tiny.toml %t.large.toml
// RUN: llmc compile %t.large.toml --device-profile %S/Inputs/search-gpu.toml --dump-ir=%t.large.dumps 2>%t.large.err | FileCheck %s --check-prefix=LARGE
// RUN: FileCheck %s --check-prefix=LARGE-ERR < %t.large.err
// LARGE: module attributes {llmc.auto_mesh = {budget_gib = 74.5{{[0-9]+}} : f64, candidates = 720 : i64, cp = 1 : i64, devices = 4 : i64, dp = 4 : i64, ep = 1 : i64, evaluated = {{[0-9]+}} : i64, microbatches = 1 : i64, pp = 1 : i64, predicted_memory_gib = {{.*}} : f64, predicted_step_ms = {{.*}} : f64, profile = "litgpu", remat = "none", tp = 1 : i64, virtual_stages = 1 : i64, zero = 0 : i64}, llmc.mesh_axes = ["dp"]}
// LARGE-NEXT: shard.grid @mesh(shape = 4)
// LARGE: llmc.name = "transformer.wte.weight"
// LARGE-NOT: llmc.sharding = {{.*}}"tp"
// LARGE: shard.all_reduce {{.*}} on @mesh grid_axes = [0] {{.*}}llmc.reason = "bucket of {{[0-9]+}} all-reduces
// LARGE-NOT: grid_axes = [1]
// LARGE-ERR: llmc: mesh = "auto": dp4 for 4 devices on 'litgpu' (predicted {{[0-9.]+}} ms per step, {{[0-9.]+}} MiB per rank; 720 candidates searched in {{.*}}

// The dumps show the choice from the first file on.
// RUN: FileCheck %s --check-prefix=DUMP < %t.large.dumps/00-input.mlir
// DUMP: module attributes {llmc.auto_mesh = {{{.*}}dp = 4 : i64

// 2 MiB per rank: dp4 (3.35 MiB, every rank holds every weight and both
// AdamW moments) does not fit; the search halves each rank's weights by a
// pipeline instead: a 2x2 mesh of pp and dp, two microbatches, the first
// layer's activations sent to the second stage. (It chose dp2 x tp2 before
// each update's gradient buckets kept to one layer: every gradient then
// travelled to the last stage for its dp all-reduce and back, docs/
// sharding.md.)
// RUN: cp %S/Inputs/search-tiny.toml %t.small.toml
// RUN: printf '[memory]\nbudget_gib = 0.002\n' >> %t.small.toml
// RUN: llmc compile %t.small.toml --device-profile %S/Inputs/search-gpu.toml 2>%t.small.err | FileCheck %s --check-prefix=SMALL
// SMALL: module attributes {llmc.auto_mesh = {budget_gib = 2.000000e-03 : f64, candidates = 720 : i64, cp = 1 : i64, devices = 4 : i64, dp = 2 : i64, ep = 1 : i64, evaluated = {{[0-9]+}} : i64, microbatches = 2 : i64, pp = 2 : i64, predicted_memory_gib = {{.*}} : f64, predicted_step_ms = {{.*}} : f64, profile = "litgpu", remat = "none", tp = 1 : i64, virtual_stages = 1 : i64, zero = 0 : i64}, llmc.mesh_axes = ["pp", "dp"]}
// SMALL-NEXT: shard.grid @mesh(shape = 2x2)
// SMALL: llmc.send {{.*}} axis 0 from 0 to 1 {{.*}}llmc.reason = "activation transformer.h.0 (forward, microbatch 0): stage 0 -> 1

// `llmc plan` prints why: dp4 would be faster but does not fit.
// RUN: llmc plan %t.small.toml --device-profile %S/Inputs/search-gpu.toml 2>/dev/null | FileCheck %s --check-prefix=WHY
// WHY: mesh search: 4 devices (1 node(s) of 8) on device profile 'litgpu', budget 2.05 MiB per rank
// WHY: 1  dp2 pp2 mb2
// WHY: does not fit {{[0-9]+}} {{.*}}: does not fit: needs {{.*}} per rank, has 2.05 MiB (over by
// WHY: why:
// WHY-NEXT: dp2 pp2 mb2 wins: {{[0-9.]+}} ms per step
// WHY: dp4 would take {{[0-9.]+}} ms ({{[0-9.]+}} ms less) but does not fit by {{[0-9.]+}} {{KiB|MiB}} (needs {{[0-9.]+}} MiB per rank)
// WHY: memory plan of @train_step ({{.*}}), per rank, on each of 4 ranks of mesh {pp=2, dp=2}:

// A mesh search needs the number of devices.
// RUN: sed 's/cpu:4/cpu/' %S/Inputs/search-tiny.toml > %t.nocount.toml
// RUN: not llmc compile %t.nocount.toml 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: error: mesh = "auto" needs the number of devices, got devices = "cpu"; write devices = "cuda:N" (or "cpu:N"), or pass llmc plan --gpus N

// --search-only stops after the report; --gpus searches whatever [parallel]
// says (here a fixed dp2 x tp2 mesh is replaced by the search's).
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 6\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\n[parallel]\ndevices = "cpu:4"\ndp = 2\ntp = 2\n' > %t.fixed.toml
// RUN: llmc plan %t.fixed.toml --gpus 4 --search-only --device-profile %S/Inputs/search-gpu.toml 2>/dev/null | FileCheck %s --check-prefix=ONLY
// ONLY: mesh search: 4 devices (1 node(s) of 8) on device profile 'litgpu', budget 74.51 GiB per rank
// ONLY: 1 {{dp|tp|pp|cp}}
// ONLY: why:
// ONLY-NOT: memory plan of

// --probe: the run's own mesh from two probes (3 and 4 of its 6 layers).
// RUN: llmc plan %t.fixed.toml --probe --device-profile %S/Inputs/search-gpu.toml | FileCheck %s --check-prefix=PROBE
// PROBE: probe prediction of dp2 tp2 on 4 devices (8 per node) of profile 'litgpu' (2 probe compiles, {{[0-9.]+}} s):
// PROBE-NEXT: step {{[0-9.]+}} ms ({{[0-9.]+}} ms kernels + {{[0-9.]+}} ms communication of the busiest stage 0, {{[0-9.]+}} ms of it hidden behind kernels; bubble 0.0%), MFU {{[0-9.]+}}% ({{.*}} model flops per step)
// PROBE-NEXT: memory: {{[0-9.]+}} MiB per rank (the largest stage's arena) of 74.51 GiB (fits)
// PROBE-NEXT: communication dp: {{[0-9.]+}} ms
// PROBE: communication tp: {{[0-9.]+}} ms

// --probe of an interleaved pipeline (pp2, 3 virtual stages of one layer
// each, 4 microbatches): probes compiled 1F1B, the chunks applied after.
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 6\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\nmicrobatches = 4\n[parallel]\ndevices = "cpu:4"\ndp = 2\npp = 2\npipeline_schedule = "interleaved"\nvirtual_stages = 3\n' > %t.inter.toml
// RUN: llmc plan %t.inter.toml --probe --device-profile %S/Inputs/search-gpu.toml | FileCheck %s --check-prefix=INTER
// INTER: probe prediction of dp2 pp2 mb4 v3 on 4 devices
// INTER: pipeline: interleaved with 3 virtual stages over 2 stages, 4 microbatches (probes compiled 1F1B, the chunks applied after; the schedule simulated with each stage's time)
// RUN: sed 's/layers = 6/layers = 8/' %t.inter.toml > %t.inter4.toml
// RUN: not llmc plan %t.inter4.toml --probe --device-profile %S/Inputs/search-gpu.toml 2>&1 | FileCheck %s --check-prefix=INTER4
// INTER4: error: dp2 pp2 mb4 v3: layers (8) not divisible by pp*v=6 (interleaved chunks of equal whole layers)

// The help names the search.
// RUN: llmc plan --help | FileCheck %s --check-prefix=HELP
// HELP: --gpus=<N> {{.*}}- Search the mesh for N devices (as [parallel] mesh = "auto" does)
// HELP: --nodes=<M> {{.*}}- With --gpus: the devices are M nodes of N / M
