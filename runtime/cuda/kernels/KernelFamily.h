//===- KernelFamily.h - what a kernel family launches -----------*- C++ -*-===//
//
// Private to runtime/cuda/kernels/. Every kind of Kernels.def that runs on
// the GPU has a line in CudaKernels.def naming its family; a family (a
// folder of kernels/) launches the choice codegen made for it, declared
// here from that table:
//
//   Status family::launch<F>(LaunchContext &, const KernelCall &,
//                            const KernelChoice &);
//     the launch parameters of the chosen entries from the operands (device
//     pointers), and the launches, each checked.
//
// Its selection, family::select<F>, is codegen's
// (codegen/cuda/<family>/<F>Select.cpp, codegen/cuda/FamilySelect.h).
// CudaKernels::launch (DeviceKernels.h) dispatches through the table;
// nothing else names a family.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_KERNELFAMILY_H
#define LLMC_RUNTIME_CUDA_KERNELS_KERNELFAMILY_H

#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/KernelChoice.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

class CudaKernels;
class CudaLibrary;

/// Threads of the warp-per-row kernels: 4 warps, 4 rows per block.
constexpr unsigned kRowThreads = 128;

/// A dimension of a row-major shape viewed as [outer, size, inner].
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};
AxisView viewAround(const Shape &shape, int64_t dim);

/// Whether every pointer is 16-byte aligned.
bool aligned16(std::initializer_list<const void *> pointers);

/// What a family's launch may use of the CudaKernels that runs it.
class LaunchContext {
public:
  LaunchContext(CudaKernels &kernels, cudaStream_t stream,
                const void *residualAddend)
      : kernels_(kernels), stream_(stream), residualAddend_(residualAddend) {}

  /// Launches `entry` of the loaded hand-written units on `blocks` of
  /// `threads` with `sharedBytes` of dynamic shared memory (raising the
  /// kernel's limit past 48 KiB once), and checks the launch.
  Status launch(const std::string &entry, dim3 blocks, unsigned threads,
                size_t sharedBytes, std::vector<void *> &args) const;
  /// Blocks of `threads` for `items` grid-stride items: one item per
  /// thread, at most 8 blocks per multiprocessor.
  unsigned gridFor(int64_t items, unsigned threads) const;
  unsigned multiprocessors() const;
  /// The device scratch prepare() reserved (KernelChoice::scratchBytes).
  void *scratch() const;
  /// Compute capability 8.0 or later: bf16 mma.sync.
  bool bf16TensorCores() const;
  cudaStream_t stream() const { return stream_; }
  /// LayerNormGrad / RmsNormGrad: the residual gradient dx is stored plus
  /// (null: none; DeviceKernels.h).
  const void *residualAddend() const { return residualAddend_; }

  /// The generated unit of an Elementwise choice, loaded on first use.
  Status elementwiseUnit(const KernelChoice &choice,
                         const ElementwiseSource *&source,
                         const CudaLibrary *&library) const;
  CublasLtMatmul &matmul() const;
  /// Whether cuBLASLt has been found to lack the bias-gradient epilogue of
  /// `problem`, and to record that it does.
  bool lacksBiasGradient(const MatmulProblem &problem) const;
  void markLacksBiasGradient(const MatmulProblem &problem) const;

private:
  CudaKernels &kernels_;
  cudaStream_t stream_;
  const void *residualAddend_;
};

/// ReduceSum / ReduceMax / ReduceMean of `in` over `dims` into `out`
/// through `entries` of the selection, on the path planReduceLaunch picks
/// (reduce/ReduceLaunch.cpp); the bias-gradient fallback of
/// MatmulEpilogue runs it too.
Status launchReduction(LaunchContext &context, KernelKind kind,
                       const std::vector<std::string> &entries,
                       const std::vector<int64_t> &dims, const TensorRef &in,
                       const TensorRef &out);

namespace family {
#define LLMC_CUDA_FAMILY(Family)                                               \
  Status launch##Family(LaunchContext &context, const KernelCall &call,        \
                        const KernelChoice &choice);
#include "runtime/cuda/kernels/CudaKernels.def"
} // namespace family

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_KERNELFAMILY_H
