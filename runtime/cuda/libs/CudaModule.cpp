//===- CudaModule.cpp - load cubins and launch elementwise kernels --------===//
#include "runtime/cuda/libs/CudaModule.h"

#include <cstdint>

namespace llmc::rt::cuda {

Status cudaStatus(cudaError_t error, const std::string &what) {
  if (error == cudaSuccess)
    return Status::ok();
  return Status::error(StatusCode::Internal,
                       what + " failed: " + cudaGetErrorName(error) + ": " +
                           cudaGetErrorString(error));
}

Status CudaLibrary::load(const std::vector<char> &cubin,
                         std::unique_ptr<CudaLibrary> &library) {
  if (cubin.empty())
    return Status::error(StatusCode::InvalidArgument,
                         "cannot load an empty cubin");
  cudaLibrary_t handle = nullptr;
  LLMC_CUDA_CHECK(cudaLibraryLoadData(&handle, cubin.data(), nullptr, nullptr,
                                      0, nullptr, nullptr, 0),
                  "cudaLibraryLoadData");
  library.reset(new CudaLibrary(handle));
  return Status::ok();
}

CudaLibrary::~CudaLibrary() { (void)cudaLibraryUnload(library_); }

Status CudaLibrary::kernel(const std::string &name,
                           cudaKernel_t &kernel) const {
  cudaError_t error = cudaLibraryGetKernel(&kernel, library_, name.c_str());
  if (error != cudaSuccess) {
    (void)cudaGetLastError(); // not sticky: clear it
    return Status::error(StatusCode::NotFound, "no kernel '" + name +
                                                   "' in the loaded cubin: " +
                                                   cudaGetErrorString(error));
  }
  return Status::ok();
}

bool canVectorize(const ElementwiseSource &source,
                  const std::vector<const void *> &pointers, int64_t n) {
  if (n < source.vectorWidth || pointers.size() != source.elementBytes.size())
    return false;
  for (size_t i = 0; i < pointers.size(); ++i) {
    uintptr_t alignment =
        static_cast<uintptr_t>(source.vectorWidth * source.elementBytes[i]);
    if (reinterpret_cast<uintptr_t>(pointers[i]) % alignment != 0)
      return false;
  }
  return true;
}

Status launchElementwise(const ElementwiseSource &source,
                         const CudaLibrary &library,
                         const std::vector<const void *> &inputs, void *result,
                         int64_t n, cudaStream_t stream, Vectorize vectorize) {
  if (inputs.size() + 1 != source.elementBytes.size())
    return Status::error(StatusCode::InvalidArgument,
                         source.entry + ": expected " +
                             std::to_string(source.elementBytes.size() - 1) +
                             " inputs, got " + std::to_string(inputs.size()));
  if (n < 0)
    return Status::error(StatusCode::InvalidArgument,
                         source.entry + ": expected n >= 0, got " +
                             std::to_string(n));
  if (n == 0)
    return Status::ok();
  std::vector<const void *> pointers = inputs;
  pointers.push_back(result);
  for (size_t i = 0; i < pointers.size(); ++i)
    if (!pointers[i])
      return Status::error(StatusCode::InvalidArgument,
                           source.entry + ": operand #" + std::to_string(i) +
                               " has no buffer");

  bool vector =
      vectorize == Vectorize::IfAligned && canVectorize(source, pointers, n);
  cudaKernel_t kernel;
  LLMC_RETURN_IF_ERROR(
      library.kernel(source.entry + (vector ? "_vec" : ""), kernel));

  // 8 blocks of 256 threads per multiprocessor keep an H100/H200 full; the
  // grid-stride loop covers the rest.
  int device = 0, multiprocessors = 0;
  LLMC_CUDA_CHECK(cudaGetDevice(&device), "cudaGetDevice");
  LLMC_CUDA_CHECK(cudaDeviceGetAttribute(
                      &multiprocessors, cudaDevAttrMultiProcessorCount, device),
                  "cudaDeviceGetAttribute(multiprocessors)");
  int64_t units = vector ? n / source.vectorWidth : n;
  LaunchShape shape = elementwiseLaunchShape(
      units, static_cast<unsigned>(multiprocessors) * 8u);

  long long count = n;
  std::vector<void *> args;
  for (const void *&pointer : pointers)
    args.push_back(&pointer);
  args.push_back(&count);
  LLMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(kernel),
                                   dim3(shape.blocks), dim3(shape.threads),
                                   args.data(), 0, stream),
                  "launching " + source.entry + (vector ? "_vec" : ""));
  LLMC_CUDA_CHECK(cudaGetLastError(), "launching " + source.entry);
  return Status::ok();
}

} // namespace llmc::rt::cuda
