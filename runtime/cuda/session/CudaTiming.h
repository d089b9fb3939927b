//===- CudaTiming.h - CUDA events for the commands of a traced step -*- C++ -*-===//
//
// The event pool behind the CUDA session's --trace (docs/training.md,
// "Traces"): a traced run records one event before and one after each
// launch on the stream it goes to, reads them back after the run has
// synchronized, and turns them into microseconds since an origin event
// recorded on an idle stream. The events are made once and reused, so a
// traced step after the first allocates nothing; an untraced run never
// touches the pool. The CudaSession's trace methods, which use it, are in
// CudaTiming.cpp too.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_SESSION_CUDATIMING_H
#define LLMC_RUNTIME_CUDA_SESSION_CUDATIMING_H

#include "runtime/Status.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace llmc::rt::cuda {

class CudaTiming {
public:
  CudaTiming() = default;
  ~CudaTiming();
  CudaTiming(const CudaTiming &) = delete;
  CudaTiming &operator=(const CudaTiming &) = delete;

  /// The next event of the pool, not recorded (for a caller that records
  /// it itself, as NcclWorld::enqueue does); `index` names it.
  Status reserve(cudaEvent_t &event, size_t &index);
  /// The next event, recorded on `stream` now.
  Status mark(cudaStream_t stream, size_t &index);
  /// Every event is free again (a new run).
  void reset() { used_ = 0; }
  /// Microseconds from event `from` to event `to`, both complete.
  Status elapsedUs(size_t from, size_t to, double &us) const;

private:
  std::vector<cudaEvent_t> events_;
  size_t used_ = 0;
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_SESSION_CUDATIMING_H
