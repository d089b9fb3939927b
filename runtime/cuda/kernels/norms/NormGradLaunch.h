//===- NormGradLaunch.h - the chunks of the norm gradients ------*- C++ -*-===//
//
// The geometry of layer_norm_grad and rms_norm_grad that the selection (its
// scratch) and the launch (norms/NormsLaunch.cpp) share; the CPU reference
// (runtime/cpu/NormGrads.cpp) cuts the rows into the same chunks.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_NORMS_NORMGRADLAUNCH_H
#define LLMC_RUNTIME_CUDA_KERNELS_NORMS_NORMGRADLAUNCH_H

#include "runtime/Kernel.h"

#include <cstddef>

namespace llmc::rt::cuda {

/// The launch geometry of layer_norm_grad / rms_norm_grad
/// (norms/NormGrad.cuh) shared by the selection (its scratch) and
/// the launch: rows of `dim` elements in `chunks` chunks of kChunkRows rows
/// (a block each; the CPU reference's chunks too).
struct NormGradLaunch {
  static constexpr long long kChunkRows = 32;
  long long rows = 0, dim = 0, chunks = 0;
  /// dgamma's and dbeta's partial sums per chunk, double.
  size_t scratchBytes() const {
    return static_cast<size_t>(2 * chunks * dim) * sizeof(double);
  }
};
NormGradLaunch normGradLaunch(const TensorRef &x);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_NORMS_NORMGRADLAUNCH_H
