//===- DeviceKernels.h - launch any Kernels.def kernel on a GPU -*- C++ -*-===//
//
// The device counterpart of runCpuKernel: CudaKernels::launch takes a
// kernel kind, its attributes (laid out as Kernels.def says) and operands
// whose TensorRefs point at device memory, and enqueues the work on a
// stream. The elementwise kernels are generated units (one NVRTC unit per
// signature, compiled on first use), Matmul runs on cuBLASLt, the rest on
// the units of hand-written kernels; every unit's source comes with the
// plan (codegen/cuda/PlanKernels.h).
//
// What runs is decided before, by codegen's selectKernel
// (codegen/cuda/KernelSelection.h), which needs no device: the choice a plan carries, or one made on the spot for the
// kernel tests (codegen/cuda/LaunchSelected.h); CudaKernels never selects.
// The kind's family (CudaKernels.def, KernelFamily.h) computes the launch
// parameters and launches.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_DEVICEKERNELS_H
#define LLMC_RUNTIME_CUDA_KERNELS_DEVICEKERNELS_H

#include "runtime/CudaPlan.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/libs/CublasLt.h"
#include "runtime/cuda/libs/CudnnAttention.h"
#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/elementwise/ElementwiseUnit.h"
#include "runtime/cuda/kernels/KernelChoice.h"
#include "runtime/cuda/libs/Nvrtc.h"

#include <cuda_runtime.h>

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// Whether bf16 attention will run through cuDNN in a session created now
/// (CudnnAttention can load), so that the on-demand tensor-core units need
/// not be compiled ahead.
bool cudnnAttentionLikely();
/// One NVRTC unit to compile ahead: its source, its name, and whether it
/// is a fused region's (compiled with --fmad=false, as CudaKernels::fused).
struct ParallelUnit {
  std::string source;
  std::string name;
  bool noContraction = false;
  /// A carried cubin's architecture: such a unit is not compiled for a
  /// device of that architecture (it loads the cubin).
  std::string cubinArch;
  bool hasCubin = false;
};

/// Compiles `units` for the current device on a thread each (up to the
/// hardware's threads) into the kernel cache, so that the sequential
/// compiles of a session's creation find them there. Errors are left to
/// those compiles, which report them with their context.
void compileInParallel(const std::vector<ParallelUnit> &units);

class CudaKernels {
public:
  /// Loads `units` (a carried plan's, runtime/CudaPlan.h): the hand-written
  /// ones that are always needed now (from their cubin where it is for this
  /// device's architecture, else compiled through the kernel cache), the
  /// on-demand and generated ones when a launch first names one of their
  /// entries; creates cuBLASLt.
  static Status create(const std::vector<CudaUnit> &units,
                       std::unique_ptr<CudaKernels> &kernels);
  ~CudaKernels();
  CudaKernels(const CudaKernels &) = delete;
  CudaKernels &operator=(const CudaKernels &) = delete;

  /// Loads what `choice` (a carried plan's, or selectKernel's) needs, its
  /// units and its scratch memory, without launching; for Attention and
  /// AttentionGrad first asks cuDNN, which then runs the launch instead.
  Status prepare(const KernelChoice &choice, KernelKind kind,
                 const KernelAttrs &attrs, const std::vector<TensorRef> &inputs,
                 const std::vector<TensorRef> &outputs);

  /// Enqueues `choice` for the kernel on `stream` (operands in device
  /// memory); checks the launch, not the kernel's completion.
  /// `residualAddend` (not null: LayerNormGrad and RmsNormGrad only) is a
  /// tensor of dx's type and shape that dx is stored plus, exactly as an Add
  /// of the two would store it: the residual gradient's add that
  /// CudaSession folds into the norm's backward.
  Status launch(const KernelChoice &choice, KernelKind kind,
                const KernelAttrs &attrs, const std::vector<TensorRef> &inputs,
                const std::vector<TensorRef> &outputs, cudaStream_t stream,
                const void *residualAddend = nullptr);

  /// A generated unit's entry (a fused region's or a multi-tensor group's
  /// kernel), its unit loaded on first use.
  Status fused(const std::string &entry, cudaKernel_t &kernel);
  /// Launches a fused region's kernel over `elements` elements: the
  /// region's inputs, then its outputs, then the count.
  Status launchFused(cudaKernel_t kernel, int64_t elements,
                     const std::vector<TensorRef> &inputs,
                     const std::vector<TensorRef> &outputs,
                     cudaStream_t stream);

  /// Launches `entry` of the hand-written units (deviceKernelUnits()) on
  /// blocks of 256 threads (the multi-tensor sums of squares,
  /// MultiTensorLaunch.h).
  Status launchDeviceEntry(const std::string &entry, unsigned blocks,
                           std::vector<void *> &args, cudaStream_t stream) {
    return launchPrimitive(entry, dim3(blocks), 256, 0, args, stream);
  }

  /// NVRTC units loaded, counted as before the plan: the hand-written ones
  /// as one, one per elementwise signature, and one per distinct fused
  /// region or multi-tensor kernel.
  size_t loadedUnits() const { return 1 + generated_.size(); }
  /// Which kernels run bf16 and f16 attention: "cuDNN 9.14.0", or llmc's flash
  /// kernels and why not cuDNN (CudnnAttention.h).
  std::string attentionPath() const;
  /// Seconds spent compiling (or reading from the cache) so far.
  double compileSeconds() const { return compileSeconds_; }

private:
  friend class LaunchContext;
  CudaKernels() = default;
  /// The choice's units loaded and its scratch reserved.
  Status prepareChosen(const KernelChoice &choice);
  Status launchChosen(const KernelChoice &choice, KernelKind kind,
                      const KernelAttrs &attrs,
                      const std::vector<TensorRef> &inputs,
                      const std::vector<TensorRef> &outputs,
                      cudaStream_t stream, const void *residualAddend);
  /// The library of the generated unit that defines `entry`: a carried
  /// unit, else (a choice made on the spot) `source` itself.
  Status generated(const std::string &entry, const std::string &source,
                   const CudaLibrary *&library);
  Status reserveScratch(size_t bytes);
  Status launchPrimitive(const std::string &entry, dim3 blocks,
                         unsigned threads, size_t sharedBytes,
                         std::vector<void *> &args, cudaStream_t stream);
  unsigned gridFor(int64_t items, unsigned threads) const;
  NvrtcOptions nvrtc_;
  /// The loaded hand-written units, searched in order for an entry.
  std::vector<std::unique_ptr<CudaLibrary>> primitives_;
  /// The on-demand hand-written units not loaded yet (CudaUnit::kOnDemand).
  std::vector<CudaUnit> pendingUnits_;
  /// The generated units, loaded on first use into generated_ (by name).
  std::vector<CudaUnit> generatedUnits_;
  std::map<std::string, std::unique_ptr<CudaLibrary>> generated_;
  /// Compiles and loads the pending units that define one of `entries`.
  Status loadUnitsFor(const std::vector<std::string> &entries);
  /// `unit`'s cubin where it is for this device's architecture, else its
  /// source compiled through the kernel cache.
  Status loadUnit(const CudaUnit &unit, std::unique_ptr<CudaLibrary> &library);
  /// The dynamic shared memory each primitive entry ("entry@device") was
  /// allowed past the default 48 KiB
  /// (cudaFuncAttributeMaxDynamicSharedMemorySize).
  std::map<std::string, size_t> sharedLimits_;
  std::unique_ptr<CublasLtMatmul> matmul_;
  /// Attention through cuDNN (null where it cannot: cudnnUnavailable_).
  std::unique_ptr<CudnnAttention> cudnn_;
  std::string cudnnUnavailable_;
  /// The attention problems cuDNN refused, with why (attentionPath()).
  std::vector<std::string> cudnnRefusals_;
  /// The cuDNN problems of an Attention / AttentionGrad launch: false when
  /// cuDNN does not take it (then llmc's kernels run).
  bool cudnnProblems(KernelKind kind, const KernelAttrs &attrs,
                     const std::vector<TensorRef> &inputs,
                     const std::vector<TensorRef> &outputs,
                     SdpaProblem &forward, SdpaProblem &backward) const;
  Status prepareCudnn(KernelKind kind, const KernelAttrs &attrs,
                      const std::vector<TensorRef> &inputs,
                      const std::vector<TensorRef> &outputs, bool &taken);
  Status launchCudnn(KernelKind kind, const KernelAttrs &attrs,
                     const std::vector<TensorRef> &inputs,
                     const std::vector<TensorRef> &outputs,
                     cudaStream_t stream, bool &taken);
  /// Bias-gradient GEMMs that cuBLASLt could not run with BGRADA: they run
  /// as the plain GEMM and ReduceSum from then on.
  std::set<decltype(MatmulProblem().key())> biasGradientFallback_;
  void *scratch_ = nullptr;
  size_t scratchBytes_ = 0;
  unsigned multiprocessors_ = 1;
  /// Compute capability 8.0 or later: mma.sync on bf16, so the tensor-core
  /// flash attention runs.
  bool bf16TensorCores_ = false;
  double compileSeconds_ = 0.0;
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_DEVICEKERNELS_H
