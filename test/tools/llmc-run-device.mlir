// llmc-run --device on a machine without a GPU: `cuda` fails with a message
// that says why and what to do (exit 1), `auto` (the default of a run
// description without [parallel] devices) trains on the CPU after a one-line
// notice, and the artifact records the run description's choice.
// UNSUPPORTED: cuda

// RUN: rm -rf %t && mkdir -p %t
// RUN: llmc compile %S/Inputs/train-tiny.toml -o %t/train.llmcx
// RUN: llmc inspect %t/train.llmcx | FileCheck %s --check-prefix=INSPECT
// INSPECT: setting train.devices = auto

// The exit code is 1 (the run failed), not 2 (bad usage).
// RUN: sh -c 'llmc-run %t/train.llmcx --device cuda; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=CUDA
// CUDA:      llmc-run: devices = "cuda": {{no CUDA device on this machine \(cudaGetDeviceCount found none\); train with --device cpu or --device auto|this build has no CUDA backend}}
// CUDA-NEXT: exit 1

// RUN: llmc-run %t/train.llmcx --device auto --steps 1 | FileCheck %s --check-prefix=AUTO
// RUN: llmc-run %t/train.llmcx --steps 1 | FileCheck %s --check-prefix=AUTO
// AUTO:      devices = "auto": {{no CUDA device|this build has no CUDA backend}}; training on the CPU
// AUTO-NEXT: ready in {{.*}} s: cpu session {{.*}} s, data {{.*}} s, initial state {{.*}} s (0.{{[0-9]+}} s of it drawn on the host)
// AUTO-NEXT: training {{.*}}train-tiny.toml: steps 1-1 of 8, {{.*}}, on cpu
// AUTO-NEXT: MFU: {{.*}} over cpu's dense f32 peak
// AUTO-NEXT: step 1/8

// RUN: llmc-run %t/train.llmcx --device cpu --steps 1 | FileCheck %s --check-prefix=CPU
// CPU-NOT:   devices =
// CPU:       training {{.*}}, on cpu

// RUN: not llmc-run %t/train.llmcx --device tpu 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: llmc-run: --device expects cpu, cuda or auto, got 'tpu'
