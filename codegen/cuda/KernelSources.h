//===- KernelSources.h - the kernels' .cu/.cuh files, built in --*- C++ -*-===//
//
// The hand-written CUDA kernels are real files under runtime/cuda/kernels/
// (a folder per family, .cuh; the NVRTC units in units/, .cu), embedded into
// llmc_codegen_cuda at build time as data (EmbedKernelSources.cmake), so
// that NVRTC compiles them at run time on a machine that has only the
// library, while editors, clang-format and the CPU emulation tests read the
// files themselves. A unit is declared by its #includes: its NVRTC source
// is the .cu file with every `#include "x"` (x relative to kernels/) replaced
// by x's text, recursively, each file once.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_KERNELSOURCES_H
#define LLMC_CODEGEN_CUDA_KERNELSOURCES_H

#include "runtime/Status.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// One embedded file: its path under runtime/cuda/kernels/ and its text.
struct KernelSourceFile {
  const char *path;
  const char *text;
};

/// Every embedded file, in the order of LLMC_CUDA_KERNEL_SOURCES.
const std::vector<KernelSourceFile> &kernelSourceFiles();

/// The text of the embedded file `path` ("rope/Rope.cuh"), or null.
const char *findKernelSourceFile(const std::string &path);

/// The NVRTC translation unit of the embedded file `path`
/// ("units/Rope.cu"): its text with each `#include "x"` replaced by the
/// expansion of x, a file met a second time replaced by nothing (as its
/// include guard would), and `#line` directives that make NVRTC's messages
/// name the original file and line. NotFound naming the including file and
/// line, and the fix, for an include that is not embedded or uses <...>.
Status expandKernelUnit(const std::string &path, std::string &source);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_KERNELSOURCES_H
