//===- DeviceKernelsSetup.cpp - compile, load and launch device units ------===//
//
// CudaKernels' life cycle: the hand-written units compiled (side by side,
// compileInParallel) and loaded, the elementwise and fused units compiled on
// first use, scratch, the launch of one entry of a loaded unit, and what
// the families' launches see of it (LaunchContext). The families compute,
// per kernel kind, what to launch (DeviceKernels.cpp dispatches to them).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/KernelFamily.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace llmc::rt::cuda {

CudaKernels::~CudaKernels() {
  if (scratch_)
    (void)cudaFree(scratch_);
}

void compileInParallel(const std::vector<ParallelUnit> &units) {
  if (units.empty())
    return;
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                             device) != cudaSuccess)
    return; // the sequential compiles report it
  std::string arch = "sm_" + std::to_string(major) + std::to_string(minor);
  // The largest units first (the device unit), so that no thread starts it
  // last.
  std::vector<size_t> order(units.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return units[a].source.size() > units[b].source.size();
  });
  std::atomic<size_t> next{0};
  unsigned threads = std::max(1u, std::min<unsigned>(
                                      std::thread::hardware_concurrency(),
                                      static_cast<unsigned>(units.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&]() {
      for (size_t i = next++; i < order.size(); i = next++) {
        const ParallelUnit &unit = units[order[i]];
        if (unit.hasCubin && unit.cubinArch == arch)
          continue;
        NvrtcOptions options;
        options.arch = arch;
        if (unit.noContraction)
          options.extraOptions.push_back("--fmad=false");
        CompiledCuda compiled;
        (void)compileCuda(unit.source, unit.name, options, compiled);
      }
    });
  for (std::thread &thread : pool)
    thread.join();
}

Status CudaKernels::create(const std::vector<CudaUnit> &units,
                           std::unique_ptr<CudaKernels> &kernels) {
  std::unique_ptr<CudaKernels> created(new CudaKernels());
  int device = 0, major = 0, minor = 0, multiprocessors = 0;
  LLMC_CUDA_CHECK(cudaGetDevice(&device), "cudaGetDevice");
  LLMC_CUDA_CHECK(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
      "cudaDeviceGetAttribute(compute capability)");
  LLMC_CUDA_CHECK(
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
      "cudaDeviceGetAttribute(compute capability)");
  LLMC_CUDA_CHECK(cudaDeviceGetAttribute(
                      &multiprocessors, cudaDevAttrMultiProcessorCount, device),
                  "cudaDeviceGetAttribute(multiprocessors)");
  created->multiprocessors_ = static_cast<unsigned>(multiprocessors);
  created->bf16TensorCores_ = major >= 8;
  created->nvrtc_.arch = "sm_" + std::to_string(major) + std::to_string(minor);

  for (const CudaUnit &unit : units) {
    if (unit.flags & CudaUnit::kGenerated) {
      created->generatedUnits_.push_back(unit);
    } else if (unit.flags & CudaUnit::kOnDemand) {
      created->pendingUnits_.push_back(unit);
    } else {
      created->primitives_.emplace_back();
      LLMC_RETURN_IF_ERROR(
          created->loadUnit(unit, created->primitives_.back()));
    }
  }
  LLMC_RETURN_IF_ERROR(CublasLtMatmul::create(created->matmul_));
  LLMC_RETURN_IF_ERROR(
      CudnnAttention::create(created->cudnn_, created->cudnnUnavailable_));
  kernels = std::move(created);
  return Status::ok();
}

Status CudaKernels::loadUnit(const CudaUnit &unit,
                             std::unique_ptr<CudaLibrary> &library) {
  auto begin = std::chrono::steady_clock::now();
  if (!unit.cubin.empty() && unit.arch == nvrtc_.arch) {
    LLMC_RETURN_IF_ERROR(CudaLibrary::load(
        std::vector<char>(unit.cubin.begin(), unit.cubin.end()), library));
  } else {
    if (unit.source.empty())
      return Status::error(StatusCode::Internal,
                           "the kernel unit " + unit.name +
                               " carries no CUDA source" +
                               (unit.cubin.empty()
                                    ? std::string()
                                    : ", and its cubin is for " + unit.arch +
                                          ", not this device's " +
                                          nvrtc_.arch) +
                               ": compile the program again");
    NvrtcOptions options = nvrtc_;
    if (unit.flags & CudaUnit::kNoContraction)
      options.extraOptions.push_back("--fmad=false");
    CompiledCuda compiled;
    LLMC_RETURN_IF_ERROR(
        compileCuda(unit.source, unit.name + ".cu", options, compiled));
    LLMC_RETURN_IF_ERROR(CudaLibrary::load(compiled.cubin, library));
  }
  compileSeconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  return Status::ok();
}

Status CudaKernels::loadUnitsFor(const std::vector<std::string> &entries) {
  for (size_t i = 0; i < pendingUnits_.size();) {
    bool needed = false;
    const std::vector<std::string> &defined = pendingUnits_[i].entries;
    for (const std::string &entry : entries)
      needed |= std::find(defined.begin(), defined.end(), entry) !=
                defined.end();
    if (!needed) {
      ++i;
      continue;
    }
    primitives_.emplace_back();
    LLMC_RETURN_IF_ERROR(loadUnit(pendingUnits_[i], primitives_.back()));
    pendingUnits_.erase(pendingUnits_.begin() + static_cast<long>(i));
  }
  return Status::ok();
}

bool cudnnAttentionLikely() {
  std::unique_ptr<CudnnAttention> probe;
  std::string why;
  return CudnnAttention::create(probe, why) && probe != nullptr;
}

unsigned CudaKernels::gridFor(int64_t items, unsigned threads) const {
  int64_t blocks = (items + threads - 1) / threads;
  int64_t cap = static_cast<int64_t>(multiprocessors_) * 8;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

Status CudaKernels::reserveScratch(size_t bytes) {
  if (bytes <= scratchBytes_)
    return Status::ok();
  if (scratch_) {
    LLMC_CUDA_CHECK(cudaFree(scratch_), "cudaFree(scratch)");
    scratch_ = nullptr;
    scratchBytes_ = 0;
  }
  LLMC_CUDA_CHECK(cudaMalloc(&scratch_, bytes),
                  "cudaMalloc(" + std::to_string(bytes) + " bytes of scratch)");
  scratchBytes_ = bytes;
  return Status::ok();
}

Status CudaKernels::generated(const std::string &entry,
                              const std::string &source,
                              const CudaLibrary *&library) {
  const CudaUnit *unit = nullptr;
  for (const CudaUnit &carried : generatedUnits_)
    if (std::find(carried.entries.begin(), carried.entries.end(), entry) !=
        carried.entries.end())
      unit = &carried;
  CudaUnit onTheSpot;
  if (!unit) {
    if (source.empty())
      return Status::error(StatusCode::Internal,
                           "no carried CUDA unit defines " + entry +
                               ": compile the program again");
    onTheSpot.name = entry;
    onTheSpot.source = source;
    onTheSpot.flags = CudaUnit::kGenerated;
    unit = &onTheSpot;
  }
  auto found = generated_.find(unit->name);
  if (found == generated_.end()) {
    std::unique_ptr<CudaLibrary> loaded;
    LLMC_RETURN_IF_ERROR(loadUnit(*unit, loaded));
    found = generated_.emplace(unit->name, std::move(loaded)).first;
  }
  library = found->second.get();
  return Status::ok();
}

Status CudaKernels::fused(const std::string &entry, cudaKernel_t &kernel) {
  const CudaLibrary *library = nullptr;
  LLMC_RETURN_IF_ERROR(generated(entry, std::string(), library));
  return library->kernel(entry, kernel);
}

Status CudaKernels::launchFused(cudaKernel_t kernel, int64_t elements,
                                const std::vector<TensorRef> &inputs,
                                const std::vector<TensorRef> &outputs,
                                cudaStream_t stream) {
  std::vector<const void *> pointers;
  for (const TensorRef &t : inputs)
    pointers.push_back(t.data);
  for (const TensorRef &t : outputs)
    pointers.push_back(t.data);
  long long n = elements;
  std::vector<void *> args;
  for (const void *&p : pointers)
    args.push_back(&p);
  args.push_back(&n);
  LLMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(kernel),
                                   dim3(gridFor(elements, 256)), dim3(256),
                                   args.data(), 0, stream),
                  "launching a fused region");
  LLMC_CUDA_CHECK(cudaGetLastError(), "launching a fused region");
  return Status::ok();
}

Status CudaKernels::prepare(const KernelChoice &choice, KernelKind kind,
                            const KernelAttrs &attrs,
                            const std::vector<TensorRef> &inputs,
                            const std::vector<TensorRef> &outputs) {
  bool cudnn = false;
  LLMC_RETURN_IF_ERROR(prepareCudnn(kind, attrs, inputs, outputs, cudnn));
  if (cudnn)
    return Status::ok();
  return prepareChosen(choice);
}

Status CudaKernels::prepareChosen(const KernelChoice &choice) {
  if (!pendingUnits_.empty())
    LLMC_RETURN_IF_ERROR(loadUnitsFor(choice.entries));
  if (choice.route == KernelChoice::Route::Elementwise) {
    const CudaLibrary *library = nullptr;
    return generated(choice.unit.entry, choice.unit.source, library);
  }
  return reserveScratch(choice.scratchBytes);
}

Status CudaKernels::launchPrimitive(const std::string &entry, dim3 blocks,
                                    unsigned threads, size_t sharedBytes,
                                    std::vector<void *> &args,
                                    cudaStream_t stream) {
  cudaKernel_t kernel;
  Status found = Status::ok();
  for (const std::unique_ptr<CudaLibrary> &library : primitives_)
    if ((found = library->kernel(entry, kernel)))
      break;
  LLMC_RETURN_IF_ERROR(found);
  // Over the default 48 KiB of dynamic shared memory (the tensor-core
  // flash attention): raise the kernel's limit once per entry, device and
  // size.
  if (sharedBytes > 48 * 1024) {
    int device = 0;
    LLMC_CUDA_CHECK(cudaGetDevice(&device), "cudaGetDevice");
    std::string key = entry + "@" + std::to_string(device);
    auto raised = sharedLimits_.find(key);
    if (raised == sharedLimits_.end() || raised->second < sharedBytes) {
      LLMC_CUDA_CHECK(cudaKernelSetAttributeForDevice(
                          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          static_cast<int>(sharedBytes), device),
                      "raising the shared memory of " + entry);
      sharedLimits_[key] = sharedBytes;
    }
  }
  LLMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(kernel),
                                   blocks, dim3(threads), args.data(),
                                   sharedBytes, stream),
                  "launching " + entry);
  LLMC_CUDA_CHECK(cudaGetLastError(), "launching " + entry);
  return Status::ok();
}

// ---- LaunchContext: what a family's launch uses ----------------------------

Status LaunchContext::launch(const std::string &entry, dim3 blocks,
                             unsigned threads, size_t sharedBytes,
                             std::vector<void *> &args) const {
  return kernels_.launchPrimitive(entry, blocks, threads, sharedBytes, args,
                                  stream_);
}

unsigned LaunchContext::gridFor(int64_t items, unsigned threads) const {
  return kernels_.gridFor(items, threads);
}

unsigned LaunchContext::multiprocessors() const {
  return kernels_.multiprocessors_;
}

void *LaunchContext::scratch() const { return kernels_.scratch_; }

bool LaunchContext::bf16TensorCores() const {
  return kernels_.bf16TensorCores_;
}

Status LaunchContext::elementwiseUnit(const KernelChoice &choice,
                                      const ElementwiseSource *&source,
                                      const CudaLibrary *&library) const {
  source = &choice.unit;
  return kernels_.generated(choice.unit.entry, choice.unit.source, library);
}

CublasLtMatmul &LaunchContext::matmul() const { return *kernels_.matmul_; }

bool LaunchContext::lacksBiasGradient(const MatmulProblem &problem) const {
  return kernels_.biasGradientFallback_.count(problem.key()) != 0;
}

void LaunchContext::markLacksBiasGradient(const MatmulProblem &problem) const {
  kernels_.biasGradientFallback_.insert(problem.key());
}

} // namespace llmc::rt::cuda
