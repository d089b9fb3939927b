// llmc plan's predicted step time (analysis/CostModel.h, docs/planning.md):
// the profile it used, the total, and the breakdown by kernel group, checked
// against the closed forms of the model rather than copied numbers.

// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 2\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\n[parallel]\ndevices = "cpu"\ndp = 4\n' > %t.dp4.toml
// RUN: llmc plan %t.dp4.toml | FileCheck %s
// CHECK: predicted step time on device profile 'cpu' ({{.*}}; data/devices.toml; the default for these devices, --device-profile picks another):
// CHECK-NEXT: {{[0-9.]+}} ms without overlap ({{[0-9.]+}} ms kernels + {{[0-9.]+}} ms communication), {{[0-9.]+}} ms with the communication fully overlapped
// CHECK-NEXT: group kernels flops bytes ms share
// CHECK-NEXT: matmul
// CHECK: collectives dp (memory) 2
// The 4 ranks are threads that share the host's 2 cores (host_cores); their
// one dp group of 4 drains the 2 cores at each collective.
// CHECK-NEXT: predicted step: {{[0-9.]+}} ms (the larger of the critical path {{[0-9.]+}} ms and 4 ranks' {{[0-9.]+}} ms of work on 2 shared cores, 13.7% of them idle (100% of the collective time in groups that drain them): {{[0-9.]+}} ms)
// CHECK-NEXT: memory: arena {{[0-9.]+}} MiB of 16.0 GB per device (fits)

// The collectives of the cpu profile (26 us per call, 0.2 us per ring step,
// 4 GB/s; data/devices.toml): each of the 2 all-reduces over N = 4 ranks
// takes 2(N-1) steps, and the bytes sent are the communication table's, so
// the dp row is ops * (26e-6 + 6 * 0.2e-6) s + sent / 4e9 s. The kernel rows add up to the kernels'
// time, kernels + communication is the no-overlap total, and the overlapped
// bound is the larger of the two; the predicted step is the larger of one
// rank's time and the 4 ranks' work over the 2 shared cores. awk recomputes
// each (to the printed rounding of 0.001 ms per row).
// RUN: llmc plan %t.dp4.toml | tr -d ',()' | awk -f %S/Inputs/plan-cost-forms.awk | FileCheck %s --check-prefix=FORMS
// FORMS: collectives ok, kernels ok, totals ok, shared cores ok

// Another built-in profile by name, and a user profile by path.
// RUN: llmc plan %t.dp4.toml --device-profile h100 | FileCheck %s --check-prefix=H100
// H100: predicted step time on device profile 'h100' (NVIDIA H100 SXM 80 GB (datasheet figures, not calibrated); data/devices.toml):
// H100: collectives dp (nvlink)
// RUN: printf '[mygpu]\nmemory_gb = 24\nhbm_gbs = 900\nlaunch_us = 3\nvector_tflops = 40\ndevices_per_node = 2\nmatmul_tflops = { bf16 = 160, f16 = 160, f32 = 40, f64 = 1 }\n[mygpu.intra_node]\nname = "pcie"\nbandwidth_gbs = 25\nlatency_us = 8\n[mygpu.inter_node]\nname = "ethernet"\nbandwidth_gbs = 12.5\nlatency_us = 30\n' > %t.mygpu.toml
// RUN: llmc plan %t.dp4.toml --device-profile %t.mygpu.toml | FileCheck %s --check-prefix=USER
// USER: predicted step time on device profile 'mygpu' ({{.*}}mygpu.toml):
// 4 ranks do not fit a node of 2: the dp all-reduces cross nodes.
// USER: collectives dp (ethernet)

// Errors: an unknown name, a bad key (file, line, column, the key, the fix).
// RUN: not llmc plan %t.dp4.toml --device-profile h300 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: llmc plan: unknown device profile 'h300'; the built-in ones are a100, cpu, h100, h200, or give the path of a .toml file with one profile
// RUN: sed 's/hbm_gbs = 900/hbm_gbs = "fast"/' %t.mygpu.toml > %t.bad.toml
// RUN: not llmc plan %t.dp4.toml --device-profile %t.bad.toml 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: llmc plan: {{.*}}bad.toml:3:11: error: key 'mygpu.hbm_gbs' must be a positive number; write e.g. hbm_gbs = 100

// A pipeline (pp = 2, GPipe, 4 microbatches): each stage's busy time, and the
// step as the compiled schedule simulated with each stage's time
// (planner::simulatePipeline). awk checks it against its bounds from the
// printed numbers: no shorter than the busiest stage (a stage runs its units
// one at a time), no longer than the stages' sum (some stage is always
// running: a unit waits only for a finished unit).
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 4\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\nmicrobatches = 4\n[parallel]\ndevices = "cpu"\npp = 2\npipeline_schedule = "gpipe"\n' > %t.pp2.toml
// RUN: llmc plan %t.pp2.toml | FileCheck %s --check-prefix=PP
// PP: pipeline: gpipe, 4 microbatches; stages busy {{[0-9.]+}}, {{[0-9.]+}} ms; the schedule simulated with each stage's time: {{[0-9.]+}} ms, bubble 0.{{[0-9]+}} (the rows: stage {{[01]}})
// PP: collectives pp (memory)
// PP: predicted step: [[STEP:[0-9.]+]] ms (the larger of the critical path [[STEP]] ms
// RUN: llmc plan %t.pp2.toml | tr -d ',()' | awk '$1 == "pipeline:" { for (i = 1; i <= NF && $i != "busy"; i++); for (i++; i <= NF && $i != "ms;"; i++) { sum += $i; if ($i > most) most = $i } for (; i <= NF; i++) if ($i == "time:") step = $(i + 1); print (step >= most - 0.001 && step <= sum + 0.001 && most > 0) ? "pipeline ok" : "pipeline wrong: " step " most " most " sum " sum }' | FileCheck %s --check-prefix=PPFORM
// PPFORM: pipeline ok
