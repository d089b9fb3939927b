//===- CpuKernels.h - the CPU reference kernels ------------------*- C++ -*-===//
//
// One reference kernel per KernelKind, for every element type the op
// allows: f32 and f64 computed in their own precision, bf16 and f16
// computed in f32 and rounded to nearest even on store, integers exact.
// GEMMs go through OpenBLAS. Kernels split their work over the thread pool.
//
// These are the reference every other backend and every sharded program
// is checked against: clarity first, then speed.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CPU_CPUKERNELS_H
#define LLMC_RUNTIME_CPU_CPUKERNELS_H

#include "runtime/Kernel.h"
#include "runtime/Status.h"

#include <functional>
#include <vector>

namespace llmc::rt {

class ThreadPool;

/// Runs kernel `kind` on `inputs`, writing `outputs` (already allocated
/// with their dtype and shape). Checks the number, dtypes and shapes of the
/// operands it relies on and returns InvalidArgument with a message naming
/// the kernel on a mismatch; never crashes on a malformed launch.
Status runCpuKernel(KernelKind kind, const KernelAttrs &attrs,
                    const std::vector<TensorRef> &inputs,
                    const std::vector<TensorRef> &outputs, ThreadPool &pool);

/// Sets the threads of OpenBLAS, a process-wide setting (0: every core).
/// A session of several ranks runs each rank on one device thread and asks
/// for 1: OpenBLAS 0.3's own threads spin while they wait, and 8 ranks
/// calling sgemm at once on 2 cores each with 2 BLAS threads ran a GPT-2
/// tiny step 3.8x slower than with 1 (docs/planning.md, "CPU meshes").
void setBlasThreads(unsigned threads);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_CPU_CPUKERNELS_H
