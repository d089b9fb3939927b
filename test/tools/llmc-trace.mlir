// --trace: a Chrome/Perfetto trace of chosen steps (docs/training.md,
// "Traces"). A dp = 2 run on the CPU's virtual devices: one process per
// rank, the host phases on their own track, every command of both ranks on
// its rank's track inside the step's run phase. Then the steps chosen by
// the environment, llmc-run, the refusals, and `llmc trace merge`.

// RUN: rm -rf %t && mkdir -p %t
// RUN: llmc train %S/Inputs/train-tiny-dp2.toml --device cpu --steps 5 --trace %t/t.json -o %t/run.llmcx | FileCheck %s --check-prefix=TRAIN
// TRAIN:      step 4/8
// TRAIN-NEXT: trace of steps 3-4: {{.*}}t.json ({{[0-9]+}} events; open it in ui.perfetto.dev)
// TRAIN-NEXT: step 5/8
// RUN: python3 %S/Inputs/check_trace.py %t/t.json | FileCheck %s --check-prefix=DP2
// DP2:      traced steps: 3-4
// DP2-NEXT: process 0: rank 0 (cpu)
// DP2-NEXT:   track 0: host phases (the training loop)
// DP2-NEXT:   track 1: commands (the rank's device thread)
// DP2-NEXT: process 1: rank 1 (cpu)
// DP2-NEXT:   track 1: commands (the rank's device thread)
// DP2-NEXT: host phases: data: the batch, bound, outputs: loss and feedback, run: the compiled step, step 3, step 4
// DP2-NEXT: rank 0: [[N:[0-9]+]] commands
// DP2-NEXT: rank 1: [[N]] commands
// DP2-NEXT: commands inside a run phase: True
// DP2-NEXT: commands name part and op: True
// DP2-NEXT: ops include: Matmul all_reduce

// The environment chooses the file and the steps; a checkpoint save is a
// phase of its step.
// RUN: env LLMC_TRACE=%t/env.json LLMC_TRACE_STEPS=2 llmc train %S/Inputs/train-tiny.toml --steps 4 --checkpoint-dir %t/ckpt | FileCheck %s --check-prefix=ENV
// ENV: trace of steps 2-2: {{.*}}env.json
// RUN: python3 %S/Inputs/check_trace.py %t/env.json | FileCheck %s --check-prefix=ENVTRACE
// ENVTRACE:      traced steps: 2-2
// ENVTRACE-NEXT: process 0: rank 0 (cpu)
// ENVTRACE-NEXT:   track 0: host phases (the training loop)
// ENVTRACE-NEXT:   track 1: commands (the calling thread)
// ENVTRACE-NEXT: host phases: data: the batch, bound, outputs: loss and feedback, run: the compiled step, step 2
// ENVTRACE:      commands inside a run phase: True
// RUN: env LLMC_TRACE=%t/save.json LLMC_TRACE_STEPS=4:4 llmc train %S/Inputs/train-tiny.toml --steps 4 --checkpoint-dir %t/ckpt2 > /dev/null
// RUN: python3 %S/Inputs/check_trace.py %t/save.json | FileCheck %s --check-prefix=SAVE
// SAVE: host phases: checkpoint save, data: the batch, bound, outputs: loss and feedback, run: the compiled step, step 4

// llmc-run: the default of a 3-step run is its last two steps; the flag
// wins over the environment.
// RUN: env LLMC_TRACE=%t/ignored.json llmc-run %t/run.llmcx --device cpu --steps 3 --trace %t/run.json | FileCheck %s --check-prefix=RUNTRACE
// RUNTRACE: trace of steps 2-3: {{.*}}run.json
// RUN: not ls %t/ignored.json
// RUN: python3 %S/Inputs/check_trace.py %t/run.json | FileCheck %s --check-prefix=RUNFILE
// RUNFILE: traced steps: 2-3
// RUNFILE: host phases: data: the batch, bound, outputs: loss and feedback, run: the compiled step, step 2, step 3

// Steps past the run's end: a note, no file.
// RUN: llmc train %S/Inputs/train-tiny.toml --steps 2 --trace %t/late.json --trace-steps 5:6 | FileCheck %s --check-prefix=LATE
// LATE: note: --trace: steps 5-6 are past the run's last step 2; no trace is written
// RUN: not ls %t/late.json

// Refusals.
// RUN: not llmc train %S/Inputs/train-tiny.toml --trace %t/x.json --trace-steps 4:3 2>&1 | FileCheck %s --check-prefix=BADFLAG
// BADFLAG: llmc train: --trace-steps expects A:B, the first and last step to trace (1 <= A <= B), or one step A, got '4:3'
// RUN: not llmc-run %t/run.llmcx --trace %t/x.json --trace-steps 0 2>&1 | FileCheck %s --check-prefix=BADSTEP
// BADSTEP: llmc-run: --trace-steps expects A:B, the first and last step to trace (1 <= A <= B), or one step A, got '0'
// RUN: env LLMC_TRACE=%t/x.json LLMC_TRACE_STEPS=two not llmc-run %t/run.llmcx --device cpu --steps 2 2>&1 | FileCheck %s --check-prefix=BADENV
// BADENV: LLMC_TRACE_STEPS expects A:B, the first and last step to trace (1 <= A <= B), or one step A, got 'two'
// RUN: not llmc train %S/Inputs/train-tiny.toml --trace %S/Inputs/train-tiny.toml 2>&1 | FileCheck %s --check-prefix=OVERWRITE
// OVERWRITE: llmc train: --trace '{{.*}}train-tiny.toml' is the same file as the input

// llmc trace merge: the dp = 2 trace's two ranks keep pids 0 and 1; the
// one-rank trace's pid 0 becomes 2.
// RUN: llmc trace merge %t/merged.json %t/t.json %t/env.json | FileCheck %s --check-prefix=MERGE
// MERGE: merged 2 traces into {{.*}}merged.json
// RUN: python3 %S/Inputs/check_trace.py %t/merged.json | FileCheck %s --check-prefix=MERGED
// MERGED:      process 0: rank 0 (cpu)
// MERGED:      process 1: rank 1 (cpu)
// MERGED:      process 2: rank 0 (cpu) ({{.*}}env.json)
// MERGED:      rank 0: [[M:[0-9]+]] commands
// MERGED-NEXT: rank 1: [[M]] commands
// MERGED-NEXT: rank 2: {{[0-9]+}} commands
// RUN: not llmc trace merge %t/bad.json %t/run.llmcx 2>&1 | FileCheck %s --check-prefix=NOTRACE
// NOTRACE: llmc trace merge: error: {{.*}}run.llmcx: expected a Chrome trace (a JSON object with a "traceEvents" array), as --trace writes
// RUN: not llmc trace merge %t/only.json 2>&1 | FileCheck %s --check-prefix=NOINPUT
// NOINPUT: llmc trace merge: expected an output and at least one input trace, got 1 file(s)
// RUN: not llmc trace split %t/a.json 2>&1 | FileCheck %s --check-prefix=NOVERB
// NOVERB: llmc trace: expected `llmc trace merge OUT.json IN.json...`, got 'split'
