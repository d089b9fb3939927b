//===- FusedKernels.h - one CUDA kernel per fused region --------*- C++ -*-===//
//
// Codegen announces each elementwise llmc.fused region with a
// FusedElementwise marker command before the region's own commands
// (Kernels.def). This generates one CUDA C++ kernel for the region: a
// grid-stride loop whose body evaluates the region's ops per element, in
// order, each rounded to its result type exactly as its own kernel would
// store it (bf16 round-to-nearest-even on every bf16 result), so a fused
// region computes the same bits as its commands run one by one. Only the
// region's results are written; the intermediates never touch memory.
//
// Covered: the elementwise kinds of ElementwiseKernels.h on the region's
// common shape (integer compares included), iotas, and broadcasts of region
// inputs (constants inside the region are inputs too) into that shape.
// Anything else (a reshape inside the region, a broadcast of an
// intermediate) is refused with the reason, and the session runs the
// region's commands one by one, unless the program was compiled for fused
// kernels and the region's intermediates have no storage: then the session
// refuses the program at creation (regionNeedsOneKernel).
//
// planCudaKernels runs it when the Executable is written: the plan carries
// each region's entry (CudaFusedPlan) or the refusal, and the unit's
// source; the multi-tensor groups (optimizer/MultiTensor.h) reuse its
// region code.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_ELEMENTWISE_FUSEDKERNELS_H
#define LLMC_CODEGEN_CUDA_ELEMENTWISE_FUSEDKERNELS_H

#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

struct FusedSource {
  std::string source; ///< the CUDA C++ translation unit
  std::string entry;  ///< its kernel: (inputs..., outputs..., long long n)
  int64_t elements = 0;
};

/// How a generated body indexes: over a whole tensor (a region's own kernel)
/// or over a chunk of one (a multi-tensor launch, MultiTensor.h), where `i`
/// is not the tensor's index, so that nothing may depend on it but the
/// region-shaped loads and stores.
enum class IndexMode { Tensor, Chunk };

/// The per-element code of an elementwise computation: commands
/// [firstCommand, firstCommand + count) of a program reading `inputs` (in
/// order: in0, in1, ...) and yielding `outputs` (out0, ...), all of one
/// shape except inputs that broadcasts read.
struct RegionCode {
  std::string functions; ///< the ops' __device__ functions
  /// Statements computing every value of element `i` (named v1, v2, ...)
  /// from in<k>[i] (an input of the region's shape) or a broadcast index.
  std::string body;
  std::vector<std::string> results; ///< the value each output stores
  std::vector<DType> inputTypes, outputTypes;
  std::vector<bool> fullInputs; ///< input k has the region's shape
  bool anyHalf = false;
  bool small = true;      ///< 32-bit indices (`Index` is unsigned int)
  bool usesIndex = false; ///< an iota or a broadcast of several elements
  int64_t elements = 0;
  size_t commands = 0;
  size_t width = 1; ///< elements per packed (16-byte) move
};

/// Builds the code of those commands; Unimplemented, naming `owner`'s model
/// part and the reason, for what the generator does not cover (and, in
/// IndexMode::Chunk, for a body that depends on the element's index).
Status buildRegionCode(const RankProgram &program, const Command &owner,
                       const std::vector<int32_t> &inputs,
                       const std::vector<int32_t> &outputs, size_t firstCommand,
                       size_t count, IndexMode mode, RegionCode &code);
/// The Pack template, the bf16 helpers when needed, and the functions.
std::string regionPrelude(const RegionCode &code);
/// The loops over elements [0, count) of pointers in<k> and out<k>, thread
/// `first` of `stride`, with `Index`, `count`, `first` and `stride` defined
/// before: 16-byte packed moves when every region-shaped pointer is
/// aligned, then a scalar loop.
std::string regionLoop(const RegionCode &code);

/// Generates the kernel of the region whose marker is command `marker` of
/// `program`. Unimplemented, with the reason, when the region has something
/// the generator does not cover.
Status generateFusedKernel(const RankProgram &program, size_t marker,
                           FusedSource &out);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_ELEMENTWISE_FUSEDKERNELS_H
