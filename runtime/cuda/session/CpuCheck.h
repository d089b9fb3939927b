//===- CpuCheck.h - every GPU command against the CPU kernel ----*- C++ -*-===//
//
// LLMC_CHECK_CPU=1 (or CudaSessionOptions::checkAgainstCpu) makes
// CudaSession::run() check each kernel it launches against the CPU
// reference kernel of the same command: before the launch the command's
// inputs (and outputs, for kernels that accumulate into them) are copied to
// the host; after it, runCpuKernel computes the command on those copies and
// the GPU's outputs are compared element by element. Fused regions run op
// by op in this mode, so every command of the program is checked, except a
// region whose intermediates have no storage (a program compiled for fused
// kernels): it runs as its one kernel and is checked as a whole against its
// commands run one by one on the host (afterRegion).
//
// Tolerance per element, |gpu - cpu| <= atol + rtol * |cpu|: f32/f64 rtol
// 1e-3, atol 1e-5 (cuBLASLt and OpenBLAS sum in other orders, the GPU's
// transcendental functions differ in the last bits); bf16/f16 rtol 2e-2,
// atol 1e-3 (one or two roundings of 2^-8); integers and i1 exactly.
// NaN must match NaN. Each command with elements outside the tolerance is
// reported (its index, kind, model part, shapes, how many elements, the
// worst one); the run goes on, so one pass lists every disagreement, and
// run() fails at the end naming the first.
//
// Slow (every command is synchronized and copied both ways): a debugging
// tool for a program that trains differently on the GPU than on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_CPUCHECK_H
#define LLMC_RUNTIME_CUDA_CPUCHECK_H

#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llmc::rt {
class ThreadPool;
} // namespace llmc::rt

namespace llmc::rt::cuda {

class CpuCheck {
public:
  CpuCheck();
  ~CpuCheck();

  /// Copies the command's inputs and current outputs to the host
  /// (synchronizes `stream` first).
  Status before(const std::vector<TensorRef> &inputs,
                const std::vector<TensorRef> &outputs, cudaStream_t stream);

  /// Runs the CPU kernel of `command` on the copies and compares the GPU's
  /// `outputs` with its results; a disagreement is printed to stderr and
  /// remembered, not returned (the run goes on).
  Status after(size_t index, const Command &command,
               const std::vector<TensorRef> &inputs,
               const std::vector<TensorRef> &outputs, cudaStream_t stream);

  /// The same for the elementwise region whose FusedElementwise marker is
  /// command `index` of `program`, launched as one kernel on the marker's
  /// `inputs` and `outputs` (copied by `before`): the region's commands run
  /// one by one on the host copies, their intermediates in host buffers.
  Status afterRegion(size_t index, const RankProgram &program,
                     const std::vector<TensorRef> &inputs,
                     const std::vector<TensorRef> &outputs,
                     cudaStream_t stream);

  /// Ok when every checked command agreed; else the first disagreement.
  Status result() const;
  size_t checked() const { return checked_; }

private:
  /// Compares the GPU's `outputs` with the CPU's results `cpu` (host
  /// bytes, one per output); disagreements are printed and remembered.
  Status compare(size_t index, const Command &command,
                 const std::vector<TensorRef> &inputs,
                 const std::vector<TensorRef> &outputs,
                 const std::vector<std::vector<uint8_t>> &cpu);

  std::unique_ptr<ThreadPool> pool_;
  std::vector<std::vector<uint8_t>> inputs_, outputs_;
  size_t checked_ = 0, failed_ = 0;
  std::string first_;
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_CPUCHECK_H
