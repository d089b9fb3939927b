// Programs compiled for fused kernels (docs/buffers.md): the buffer plan
// gives an elementwise region's intermediates no storage, which only a
// backend that runs each region as one kernel (CUDA) can run. Chosen by
// [parallel] devices = "cuda" (or --fused-kernels); the CPU refuses such a
// program with a message that says how to compile one it can run.

// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %S/Inputs/train-tiny.toml %t/cuda.toml
// RUN: printf '\n[parallel]\ndevices = "cuda"\n' >> %t/cuda.toml

// devices = "auto" (train-tiny.toml says nothing): every value stored.
// RUN: llmc compile %S/Inputs/train-tiny.toml -o %t/auto.llmcx
// RUN: llmc inspect %t/auto.llmcx | FileCheck %s --check-prefix=STORED
// STORED-NOT: fused kernels

// devices = "cuda", or --fused-kernels: fused kernels.
// RUN: llmc compile %t/cuda.toml -o %t/cuda.llmcx
// RUN: llmc inspect %t/cuda.llmcx | FileCheck %s --check-prefix=FUSED
// RUN: llmc compile %S/Inputs/train-tiny.toml --fused-kernels -o %t/flag.llmcx
// RUN: llmc inspect %t/flag.llmcx | FileCheck %s --check-prefix=FUSED
// FUSED: compiled for fused kernels: {{[1-9][0-9]*}} values of elementwise regions have no storage (runs on the GPU only)
// RUN: llmc compile %t/cuda.toml --fused-kernels=false -o %t/off.llmcx
// RUN: llmc inspect %t/off.llmcx | FileCheck %s --check-prefix=STORED

// The IR records the mode, and llmc plan counts what it saves.
// RUN: llmc compile %t/cuda.toml | FileCheck %s --check-prefix=IR
// IR: func.func @train_step
// IR-SAME: llmc.fused_kernels
// IR: array<i64: -1>
// RUN: llmc plan %t/cuda.toml | FileCheck %s --check-prefix=PLAN
// PLAN: fused kernels: {{[1-9][0-9]*}} values of elementwise regions have no storage

// The CPU refuses it (exit 1, the run failed), naming the fix.
// RUN: sh -c 'llmc-run %t/cuda.llmcx --device cpu --steps 1; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: llmc-run: {{.*}}cuda.toml: @train_step was compiled for fused kernels (devices = "cuda": each elementwise region runs as one GPU kernel, and its intermediates have no storage), so the CPU cannot run it; compile it again with devices = "cpu" (or "auto", or llmc compile --fused-kernels=false) to run it on the CPU
// CPU-NEXT: exit 1
// RUN: llmc-run %t/off.llmcx --device cpu --steps 1 | FileCheck %s --check-prefix=RUNS
// RUNS: step 1/8

// llmc train --device cpu compiles for the CPU whatever the run says.
// RUN: llmc train %t/cuda.toml --device cpu --steps 1 --checkpoint-dir %t/ck | FileCheck %s --check-prefix=RUNS
