//===- MultiTensor.h - one launch for many tensors' independent work -*- C++ -*-===//
//
// A training step ends with the same small piece of work for every
// parameter: GPT-2 124M runs 148 sums of squares (the gradient norm), 148
// AdamW updates (one elementwise region each), and begins with 98 casts of
// the f32 weights to bf16. Launched one by one, most of them are a few
// microseconds of launch and tail for a [768] vector. This file finds the
// runs of such commands that one launch can do together (a multi-tensor
// launch, as apex's multi_tensor_apply): "members" of one kind
//
//   - elementwise: FusedElementwise regions whose generated bodies are the
//     same text (AdamW of every parameter of one decay class), or lone Cast
//     commands of one signature; the body must not depend on the element's
//     index (no iota, only broadcasts of one element), since a block runs a
//     chunk of kMultiTensorChunk elements of one member;
//   - SumSquares commands (f32).
//
// A group runs at the place of its first member: every later member moves
// up to it. Between two members of a group there may only be members of
// other groups (AdamW alternates between parameters with and without weight
// decay, two bodies); any other command ends every open group, and so do
// collectives and host steps. A member joins its group only if moving it up
// changes nothing: it reads no byte that a member of the group or a command
// it moves past writes, and writes no byte that one of them reads or writes
// (byte ranges in the arena, since the buffer plan reuses the bytes of dead
// values); otherwise it starts a new group. Each element is computed by the
// same code as in the member's own kernel, so an elementwise group gives
// the same bits; a SumSquares group cuts each tensor into the same chunks
// as the lone kernel (runtime/cuda/kernels/reduce/ReduceKernels.h), so it
// does too.
//
// This file only plans (no device), when codegen writes the Executable
// (planCudaKernels: the plan carries the groups, CudaMultiTensorPlan, and
// their units); checkCudaCoverage compiles their kernels, and CudaSession
// launches the carried groups (runtime/cuda/kernels/optimizer/
// MultiTensorLaunch.h).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_OPTIMIZER_MULTITENSOR_H
#define LLMC_CODEGEN_CUDA_OPTIMIZER_MULTITENSOR_H

#include "runtime/Executable.h"
#include "runtime/cuda/kernels/optimizer/MultiTensorGroup.h"

#include <vector>

namespace llmc::rt::cuda {

/// The groups of two or more members of `program`, in the order of their
/// first commands.
std::vector<MultiTensorGroup> planMultiTensorGroups(const RankProgram &program);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_OPTIMIZER_MULTITENSOR_H
