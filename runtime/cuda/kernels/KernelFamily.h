//===- KernelFamily.h - what a kernel family implements ---------*- C++ -*-===//
//
// Private to runtime/cuda/kernels/. Every kind of Kernels.def that runs on
// the GPU has a line in CudaKernels.def naming its family; a family (a
// folder of kernels/) implements two functions, declared here from that
// table:
//
//   Status family::select<F>(const KernelCall &, KernelChoice &);
//     which entries (or generated unit, or GEMM) run the call, from its
//     kind, attributes and operand types and shapes alone (no device); or
//     the refusal "no CUDA kernel for <launch> yet: <why>";
//   Status family::launch<F>(LaunchContext &, const KernelCall &,
//                            const KernelChoice &);
//     the launch parameters of the chosen entries from the operands (device
//     pointers), and the launches, each checked.
//
// selectKernel (KernelSelection.h) and CudaKernels::launch (DeviceKernels.h)
// dispatch through the table; nothing else names a family.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_KERNELFAMILY_H
#define LLMC_RUNTIME_CUDA_KERNELS_KERNELFAMILY_H

#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/KernelSelection.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

class CudaKernels;
class CudaLibrary;

/// One launch as the families see it.
struct KernelCall {
  KernelKind kind;
  const KernelAttrs &attrs;
  const std::vector<TensorRef> &inputs;
  const std::vector<TensorRef> &outputs;

  /// Unimplemented "no CUDA kernel for <launch> yet[: why]".
  Status refuse(const std::string &why) const;
  /// InvalidArgument unless there are minInputs..maxInputs inputs, one
  /// output, and at least `ints` and `floats` attributes (Kernels.def's
  /// layout of the kind).
  Status expect(size_t minInputs, size_t maxInputs, size_t ints,
                size_t floats) const;
};

/// The most dimensions the hand-written kernels index (LLMC_MAX_RANK of
/// common/Prelude.cuh).
constexpr int kMaxRank = 8;
/// Threads of the warp-per-row kernels: 4 warps, 4 rows per block.
constexpr unsigned kRowThreads = 128;
/// Kernels.def's kinds.
constexpr size_t kNumKernels = static_cast<size_t>(KernelKind::Count);

/// A dimension of a row-major shape viewed as [outer, size, inner].
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};
AxisView viewAround(const Shape &shape, int64_t dim);

/// "f32" / "bf16" of the float kernels' entry names, or "" for other types.
std::string floatSuffix(DType dtype);
/// "i32" / "i64", or "".
std::string indexSuffix(DType dtype);
/// "b<bytes per element>": the entries that only move elements.
std::string bytesSuffix(DType dtype);
/// `choice` runs `entries` of the hand-written units (in launch order, or
/// the candidates the launch picks from by alignment).
Status runEntries(KernelChoice &choice, std::vector<std::string> entries);
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
  Status select##Family(const KernelCall &call, KernelChoice &choice);         \
  Status launch##Family(LaunchContext &context, const KernelCall &call,        \
                        const KernelChoice &choice);
#include "runtime/cuda/kernels/CudaKernels.def"
} // namespace family

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_KERNELFAMILY_H
