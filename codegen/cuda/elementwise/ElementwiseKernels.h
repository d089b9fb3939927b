//===- ElementwiseKernels.h - CUDA C++ of elementwise kernels ---*- C++ -*-===//
//
// Generates one readable CUDA C++ translation unit per (kernel, dtypes) of
// the elementwise entries of Kernels.def: neg ... rsqrt, add ... min, cast,
// compare, select, gelu (tanh and erf), silu and swiglu, for f32 and bf16;
// neg, abs, add, sub, mul, max and min also for i32 and i64 (wrapping, as
// the CPU's integer arithmetic). Codegen's selection runs it when the
// Executable is written (ElementwiseSelect.cpp, planCudaKernels), and the
// plan carries each unit's source; the runtime only compiles and launches
// it (runtime/cuda/kernels/elementwise/ElementwiseUnit.h).
//
// Numerics follow the CPU kernels (docs/runtime.md, "Precision"): bf16
// loads to f32, computes in f32 and rounds to nearest even on store with
// the same bit manipulation as floatToBf16 (so NaN stays a quiet NaN);
// max/min propagate NaN with the CPU's expression; rsqrt is 1/sqrt, two
// correctly rounded steps. The activations compute in f32 (the CPU
// reference computes them in f64): gelu-tanh as x * sigmoid(2u), which
// equals 0.5 x (1 + tanh u) without its cancellation for x << 0.
//
// Each unit has two entry points, `<entry>` and `<entry>_vec`, both
// grid-stride loops (ElementwiseUnit.h says how they are called).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_ELEMENTWISE_ELEMENTWISEKERNELS_H
#define LLMC_CODEGEN_CUDA_ELEMENTWISE_ELEMENTWISEKERNELS_H

#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cuda/kernels/elementwise/ElementwiseUnit.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// Whether `kind` is one this file generates.
bool isCudaElementwiseKernel(KernelKind kind);

/// The pieces of one op for a kernel that composes several (a fused region,
/// codegen/cuda/elementwise/FusedKernels.h), with exactly the numerics of the op's own
/// kernel: a __device__ function `name` from compute values to the result's
/// compute value; the storage type of a dtype; and the expressions that
/// convert an operand's storage value to compute and the result back.
/// elementwiseFunction checks the signature as generateElementwiseKernel.
Status elementwiseFunction(const ElementwiseSignature &signature,
                           const std::string &name, std::string &code);
const char *elementwiseStorageType(DType dtype);
std::string elementwiseLoad(const ElementwiseSignature &signature,
                            size_t operand, const std::string &value);
std::string elementwiseStore(const ElementwiseSignature &signature,
                             const std::string &value);
/// The bf16 conversion helpers every unit with a bf16 operand includes.
const char *elementwiseHalfHelpers();

/// The source of `signature`; InvalidArgument (naming what is unsupported)
/// for a kind, dtype combination or attribute this generator does not
/// cover.
Status generateElementwiseKernel(const ElementwiseSignature &signature,
                                 ElementwiseSource &source);

/// Every signature the generator covers (for the compile check and tests).
std::vector<ElementwiseSignature> allElementwiseSignatures();

/// "Add(f32, f32) -> f32", "Compare[lt](bf16, bf16) -> i1".
std::string describe(const ElementwiseSignature &signature);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_ELEMENTWISE_ELEMENTWISEKERNELS_H
