// llmc plan: the memory of the training step by kind, from the buffer plan;
// its arena is the one llmc compile writes into the Executable.

// RUN: llmc plan %llmc_src_root/examples/gpt2-tiny.toml | FileCheck %s
// CHECK:      memory plan of @train_step ({{.*}}gpt2-tiny.toml; 2 x 16 tokens per step), one device:
// CHECK-NEXT:   at the peak (step {{[0-9]+}} of the program):
// The weights: 128*64 + 32*64 + 2 * (4*64 + 64*192 + 192 + 64*64 + 64
// + 64*256 + 256 + 256*64 + 64) + 2*64 floats, each buffer rounded up to 64 bytes.
// CHECK-NEXT:   weights                                441,344 bytes
// The moments: twice the weights.
// CHECK-NEXT:   optimizer state                        882,688 bytes
// CHECK-NEXT:   gradients
// CHECK-NEXT:   activations kept for backward
// CHECK-NEXT:   inputs and constants
// CHECK-NEXT:   temporaries
// CHECK-NEXT:   peak (live)                          [[PEAK:[0-9,]+]] bytes
// CHECK-NEXT:   arena (with alignment holes)         [[ARENA:[0-9,]+]] bytes
// CHECK-NEXT:   remat none: nothing recomputed
// CHECK-NEXT:  {{ *}}{{[0-9]+}} ops write over an operand in place; 84 new parameters and moments are written into their own arguments' buffers

// The kernels per step, counted as the step-time table's rows count them
// (llmc-plan-search-report.mlir checks that they agree).
// RUN: llmc plan %llmc_src_root/examples/gpt2-tiny.toml | FileCheck %s --check-prefix=KERNELS
// KERNELS:      memory: arena
// KERNELS-NEXT: {{[1-9][0-9]*}} kernels per step (the rows' sum: {{[0-9]+}} of them fused regions run as one kernel each, any other region counted op by op), {{[1-9][0-9]*}} launches

// On a GPU's profile, the memory in use: the arena and the runtime's own,
// which the H200's profile gives (runtime_gib, measured); the H100's does
// not.
// RUN: llmc plan %llmc_src_root/examples/gpt2-tiny.toml --device-profile h200 | FileCheck %s --check-prefix=INUSE
// INUSE:      memory: arena
// INUSE-NEXT: memory in use: 1.04 GiB per process (the arena 0.00 GiB + 1.04 GiB for the CUDA context, libraries and scratch, measured on the profile's device;
// RUN: llmc plan %llmc_src_root/examples/gpt2-tiny.toml --device-profile h100 | FileCheck %s --check-prefix=NOTMEASURED
// NOTMEASURED: memory in use: not predicted (the profile has no runtime_gib

// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.toml -o %t.llmcx 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: llmc plan %llmc_src_root/examples/gpt2-tiny.toml | sed -n 's/.*arena (with alignment holes) *\([0-9,]*\) bytes.*/\1/p' | tr -d , > %t.arena
// RUN: llmc inspect %t.llmcx | sed -n 's/.*constants, \([0-9,]*\) bytes of buffers/\1/p' | tr -d , | diff - %t.arena
// COMPILE: wrote {{.*}}: @train_step

// The forward program alone: no optimizer state, no donations.
// RUN: llmc plan %llmc_src_root/examples/gpt2-tiny.toml --forward | FileCheck %s --check-prefix=FORWARD
// FORWARD: memory plan of @loss
// FORWARD: optimizer state                              0 bytes
// FORWARD: 0 new parameters and moments
