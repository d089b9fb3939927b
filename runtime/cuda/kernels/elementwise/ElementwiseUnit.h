//===- ElementwiseUnit.h - a generated elementwise unit ---------*- C++ -*-===//
//
// What the launch of an elementwise kernel needs of its generated unit
// (codegen/cuda/elementwise/ElementwiseKernels.h writes the unit; the plan
// carries its source): the signature it was made for, its entries and
// their operands' layout, and the grid. Each unit has two entry points
// with the same parameters (inputs in operand order, then the result, then
// the element count n as long long):
//   <entry>      one element per thread-iteration, any alignment;
//   <entry>_vec  vectorWidth elements per iteration through 16-byte (or
//                narrower, for the narrower operands) loads and stores; every
//                pointer must be aligned to vectorWidth * its element size.
//                Handles any n (a tail shorter than a vector goes scalar).
// Both are grid-stride loops, so any grid covers the tensor.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_KERNELS_ELEMENTWISE_ELEMENTWISEUNIT_H
#define LLMC_RUNTIME_CUDA_KERNELS_ELEMENTWISE_ELEMENTWISEUNIT_H

#include "runtime/Kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// One elementwise kernel instance: the kind, its operand and result
/// types, and its integer attributes as Kernels.def lists them (compare's
/// direction, gelu's approximation).
struct ElementwiseSignature {
  KernelKind kind = KernelKind::Add;
  std::vector<DType> inputs;
  DType result = DType::F32;
  std::vector<int64_t> ints;
};

struct ElementwiseSource {
  /// The CUDA C++ translation unit (empty in a choice read from a carried
  /// plan: the plan's units hold it).
  std::string source;
  /// The scalar entry point; the vectorized one is entry + "_vec".
  std::string entry;
  /// Elements per vector iteration: 16 bytes of the widest operand.
  int vectorWidth = 1;
  /// Bytes per element of each input, then of the result.
  std::vector<int> elementBytes;
};

/// The launch shape of an elementwise kernel over `units` iterations
/// (elements, or vectors for the _vec entry): 256 threads, and blocks
/// enough for one unit per thread, capped at `maxBlocks` (the grid-stride
/// loop does the rest).
struct LaunchShape {
  unsigned blocks = 1;
  unsigned threads = 256;
};
LaunchShape elementwiseLaunchShape(int64_t units, unsigned maxBlocks);

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_KERNELS_ELEMENTWISE_ELEMENTWISEUNIT_H
