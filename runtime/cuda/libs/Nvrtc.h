//===- Nvrtc.h - CUDA C++ to cubin with NVRTC, cached on disk ---*- C++ -*-===//
//
// The one place the runtime compiles CUDA C++: NVRTC turns a source string
// into a cubin (machine code for one architecture) and its PTX. NVRTC is a
// library, not a driver call, so this works on a machine without a GPU
// (codegen on the build machine, CI's compile check).
//
// Results are cached on disk by content: the key hashes the source, the
// architecture, the options and the NVRTC version, so a changed kernel, flag
// or toolkit never hits a stale entry. The cache directory is
// $LLMC_KERNEL_CACHE, else $HOME/.cache/llmc/kernels.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_NVRTC_H
#define LLMC_RUNTIME_CUDA_NVRTC_H

#include "runtime/Status.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

enum class KernelCache { Use, Bypass };

struct NvrtcOptions {
  /// A real architecture ("sm_90"): the cubin runs on exactly that family.
  std::string arch = "sm_90";
  /// Passed to NVRTC after the defaults (-std=c++17, --arch, -lineinfo).
  std::vector<std::string> extraOptions;
  /// Empty: defaultKernelCacheDir().
  std::string cacheDir;
  KernelCache cache = KernelCache::Use;
};

/// A compiled translation unit.
struct CompiledCuda {
  std::vector<char> cubin;
  std::string ptx;
  /// NVRTC's log (warnings) of the compile, empty on a cache hit.
  std::string log;
  /// The content hash (32 hex digits) naming the cache entry.
  std::string key;
  bool fromCache = false;
};

/// Compiles `source` (a translation unit whose kernels are `extern "C"`)
/// for options.arch. `name` is the file name in NVRTC's messages. A
/// compile error returns InvalidArgument with NVRTC's log in the message;
/// an unwritable cache is not an error (the result is simply not cached).
Status compileCuda(const std::string &source, const std::string &name,
                   const NvrtcOptions &options, CompiledCuda &result);

/// $LLMC_KERNEL_CACHE, else $HOME/.cache/llmc/kernels, else
/// /tmp/llmc-kernels.
std::string defaultKernelCacheDir();

/// NVRTC's version as major * 1000 + minor * 10 (13000 for 13.0).
int nvrtcVersion();

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_NVRTC_H
