//===- IntegerCompare.cuh - compare on i32 and i64 ------------------------===//
//
// llmc_compare_<i32|i64>: the integer compares (the float ones are
// generated per signature, codegen/cuda/elementwise/ElementwiseKernels.h). Launched by
// elementwise/ElementwiseLaunch.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ELEMENTWISE_INTEGERCOMPARE_CUH
#define LLMC_CUDA_ELEMENTWISE_INTEGERCOMPARE_CUH

#include "common/Prelude.cuh"

// Direction: eq=0 ne=1 lt=2 le=3 gt=4 ge=5; the result is i1 (one byte).
#define LLMC_COMPARE_KERNEL(T, SUFFIX)                                         \
  extern "C" __global__ void llmc_compare_##SUFFIX(                            \
      const T *lhs, const T *rhs, unsigned char *out, long long count,         \
      int direction) {                                                         \
    for (long long i = globalThread(); i < count; i += gridThreads()) {        \
      T a = lhs[i];                                                            \
      T b = rhs[i];                                                            \
      bool result;                                                             \
      switch (direction) {                                                     \
      case 0: result = a == b; break;                                          \
      case 1: result = a != b; break;                                          \
      case 2: result = a < b; break;                                           \
      case 3: result = a <= b; break;                                          \
      case 4: result = a > b; break;                                           \
      default: result = a >= b; break;                                         \
      }                                                                        \
      out[i] = result ? 1 : 0;                                                 \
    }                                                                          \
  }
LLMC_COMPARE_KERNEL(int, i32)
LLMC_COMPARE_KERNEL(long long, i64)

#endif // LLMC_CUDA_ELEMENTWISE_INTEGERCOMPARE_CUH
