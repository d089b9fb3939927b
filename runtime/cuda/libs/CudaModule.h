//===- CudaModule.h - load cubins, launch elementwise kernels ---*- C++ -*-===//
//
// The device half of the elementwise kernels: a cubin loaded with
// cudaLibraryLoadData (context-independent, no driver-API context
// juggling), its kernels looked up by name, and the launcher that chooses
// the scalar or the vectorized entry and the grid, and checks the launch.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_CUDAMODULE_H
#define LLMC_RUNTIME_CUDA_CUDAMODULE_H

#include "runtime/Status.h"
#include "runtime/cuda/kernels/elementwise/ElementwiseUnit.h"

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// Internal "<what> failed: <cuda error name>: <description>", or ok.
Status cudaStatus(cudaError_t error, const std::string &what);

#define LLMC_CUDA_CHECK(call, what)                                            \
  LLMC_RETURN_IF_ERROR(::llmc::rt::cuda::cudaStatus((call), (what)))

/// A loaded cubin; unloads on destruction.
class CudaLibrary {
public:
  static Status load(const std::vector<char> &cubin,
                     std::unique_ptr<CudaLibrary> &library);
  ~CudaLibrary();
  CudaLibrary(const CudaLibrary &) = delete;
  CudaLibrary &operator=(const CudaLibrary &) = delete;

  /// The kernel `name` (an extern "C" entry); NotFound when absent.
  Status kernel(const std::string &name, cudaKernel_t &kernel) const;

private:
  explicit CudaLibrary(cudaLibrary_t library) : library_(library) {}
  cudaLibrary_t library_;
};

/// Whether the vectorized entry applies: every pointer aligned to
/// vectorWidth times its element size, and at least one whole vector.
bool canVectorize(const ElementwiseSource &source,
                  const std::vector<const void *> &pointers, int64_t n);

/// Runs the elementwise kernel of `source` (loaded as `library`) on
/// `inputs` (device pointers, operand order) writing `result`, n elements,
/// on `stream`; `vectorize` chooses the _vec entry when canVectorize.
/// Checks the launch (not the kernel's completion).
enum class Vectorize { IfAligned, Never };
Status launchElementwise(const ElementwiseSource &source,
                         const CudaLibrary &library,
                         const std::vector<const void *> &inputs, void *result,
                         int64_t n, cudaStream_t stream,
                         Vectorize vectorize = Vectorize::IfAligned);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_CUDAMODULE_H
