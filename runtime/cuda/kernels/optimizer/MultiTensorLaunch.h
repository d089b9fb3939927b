//===- MultiTensorLaunch.h - run the multi-tensor groups on a GPU -*- C++ -*-===//
//
// The device side of the multi-tensor groups (MultiTensorGroup.h; codegen
// plans them, codegen/cuda/optimizer/MultiTensor.h): for each group of a
// session's program,
// its kernel loaded and its table of tensors in device memory, built once
// when the session is created. The pointers in a table are fixed places of
// the arena, so the table never changes and a captured CUDA graph stays
// valid. A launch is then one kernel for an elementwise group (a block per
// chunk of a member) and two for a group of sums of squares (a block per
// chunk, then a block per tensor folding its chunks in order).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_MULTITENSORLAUNCH_H
#define LLMC_RUNTIME_CUDA_MULTITENSORLAUNCH_H

#include "runtime/Executable.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorGroup.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace llmc::rt::cuda {

class CudaKernels;

class MultiTensorLaunches {
public:
  /// Loads the kernels of `groups` (the carried plan's, of `program`)
  /// through `kernels` and uploads their tables, with the values at `arena`
  /// + their offsets.
  static Status create(const RankProgram &program,
                       const std::vector<MultiTensorGroup> &groups,
                       uint8_t *arena,
                       CudaKernels &kernels,
                       std::unique_ptr<MultiTensorLaunches> &launches);
  ~MultiTensorLaunches();
  MultiTensorLaunches(const MultiTensorLaunches &) = delete;
  MultiTensorLaunches &operator=(const MultiTensorLaunches &) = delete;

  /// The index of the group that launches at `command` (its first
  /// member's first command), or -1.
  int groupAt(size_t command) const;
  /// Whether `command` belongs to a member of a group: it does not run on
  /// its own (its group's launch does its work).
  bool covered(size_t command) const {
    return command < covered_.size() && covered_[command];
  }
  const MultiTensorGroup &group(int index) const {
    return launches_[index].group;
  }
  size_t size() const { return launches_.size(); }
  /// Enqueues group `index` on `stream`; checks the launches.
  Status launch(int index, cudaStream_t stream) const;

private:
  MultiTensorLaunches(CudaKernels &kernels) : kernels_(kernels) {}
  struct Launch {
    MultiTensorGroup group;
    cudaKernel_t kernel = nullptr; ///< elementwise: the generated entry
    void *table = nullptr;         ///< device memory
    double *partials = nullptr;    ///< sums of squares: a double per chunk
    unsigned blocks = 0;           ///< of the (first) kernel
  };
  CudaKernels &kernels_;
  std::vector<Launch> launches_;
  std::vector<int> groupOfCommand_; ///< -1 where no group starts
  std::vector<bool> covered_;
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_MULTITENSORLAUNCH_H
