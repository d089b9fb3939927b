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
