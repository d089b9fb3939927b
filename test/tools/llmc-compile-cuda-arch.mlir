// llmc compile --cuda-arch: codegen compiles every CUDA unit the artifact
// carries with NVRTC and stores the cubins (docs/cuda.md, "Kernels made by
// codegen"), so that a GPU of that architecture starts without NVRTC.
// Needs NVRTC, no GPU.
// REQUIRES: cuda-backend

// Without the option: the plan and its sources, no cubins.
// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.toml --forward -o %t.llmcx
// RUN: llmc inspect %t.llmcx | FileCheck %s --check-prefix=SOURCES
// SOURCES: CUDA kernels: {{[0-9]+}} units ({{[0-9]+}} generated), {{[0-9]+}} fused regions, 0 commands without a CUDA kernel{{$}}

// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.toml --forward -o %t-sm90.llmcx --cuda-arch=sm_90
// RUN: llmc inspect %t-sm90.llmcx | FileCheck %s --check-prefix=CUBINS
// CUBINS: CUDA kernels: [[UNITS:[0-9]+]] units ({{[0-9]+}} generated), {{[0-9]+}} fused regions, 0 commands without a CUDA kernel, [[UNITS]] cubins for sm_90

// An architecture that is not sm_<digits> is refused, and nothing is written.
// RUN: not llmc compile %llmc_src_root/examples/gpt2-tiny.toml --forward -o %t-bad.llmcx --cuda-arch=compute_90 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: llmc compile: error: --cuda-arch=compute_90: expected a real architecture such as sm_90
// RUN: not test -e %t-bad.llmcx

// Older GPUs (docs/precision.md, "What runs where"): a bf16 program for an
// architecture below sm_80 is refused with the fix, and nothing is written.
// RUN: cat %llmc_src_root/examples/gpt2-tiny.toml > %t-bf16.toml
// RUN: printf '\n[precision]\npolicy = "bf16"\n' >> %t-bf16.toml
// RUN: not llmc compile %t-bf16.toml --forward -o %t-bf16-sm75.llmcx --cuda-arch=sm_75 2>&1 | FileCheck %s --check-prefix=TURING
// TURING: llmc compile: error: {{.*}}computes in bf16{{.*}}needs compute capability 8.0 (sm_80){{.*}}the GPU sm_75 has none: compile with [precision] policy = "fp16"
// RUN: not test -e %t-bf16-sm75.llmcx

// An fp8 program (FP8 tensor cores: sm_89 and later) for Ampere is refused
// with the fix; for Hopper every unit compiles, the fp8 unit included.
// RUN: cat %llmc_src_root/examples/gpt2-tiny.toml > %t-fp8.toml
// RUN: printf '\n[precision]\npolicy = "fp8"\n' >> %t-fp8.toml
// RUN: not llmc compile %t-fp8.toml -o %t-fp8-sm80.llmcx --cuda-arch=sm_80 2>&1 | FileCheck %s --check-prefix=AMPERE
// AMPERE: llmc compile: error: the program computes its linear layers in FP8 ([precision] policy = "fp8"), which needs compute capability 8.9 (sm_89) or later (FP8 tensor cores, cuBLASLt's FP8 GEMMs); the GPU sm_80 has none: compile with [precision] policy = "bf16"
// RUN: not test -e %t-fp8-sm80.llmcx
// RUN: llmc compile %t-fp8.toml -o %t-fp8-sm90.llmcx --cuda-arch=sm_90
// RUN: llmc inspect %t-fp8-sm90.llmcx | FileCheck %s --check-prefix=HOPPER
// HOPPER: CUDA kernels: [[UNITS:[0-9]+]] units ({{[0-9]+}} generated), {{[0-9]+}} fused regions, 0 commands without a CUDA kernel, [[UNITS]] cubins for sm_90
