//===- CollectiveSupport.h - what the CPU collectives share -----*- C++ -*-===//
//
// Internal to runtime/cpu: the elementwise reduction that all-reduce and
// reduce-scatter share, byte copies and the pieces of error messages used
// by both the group collectives (Collectives.cpp) and send/recv
// (PointToPoint.cpp). Kept apart from the rendezvous logic so that each
// reads on its own.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CPU_COLLECTIVESUPPORT_H
#define LLMC_RUNTIME_CPU_COLLECTIVESUPPORT_H

#include "runtime/DType.h"
#include "runtime/Status.h"
#include "runtime/cpu/Collectives.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt {

/// Whether reduceElements supports `dtype` (every dtype but i1).
bool isReducible(DType dtype);

/// dst[i] = op(inputs[0][first + i], inputs[1][first + i], ...) for i in
/// [0, count), combined strictly in the order of `inputs` so that the result
/// is the same bit for bit on every run and for every split of the range.
/// f32/f64 compute in their own precision; bf16/f16 load to f32, combine in
/// f32 and round to nearest even once on store; integer sums wrap around.
/// Max propagates NaN. `dst` must not overlap any input range it reads.
void reduceElements(DType dtype, ReduceOp op,
                    const std::vector<const uint8_t *> &inputs, int64_t first,
                    int64_t count, uint8_t *dst);

/// InvalidArgument with `message`.
Status invalidArgument(std::string message);

/// "60 s", "0.1 s"
std::string formatSeconds(std::chrono::milliseconds duration);

/// "12 elements of f32"
std::string describeElements(int64_t count, DType dtype);

/// memcpy that allows an empty range (with null pointers) and skips a copy
/// onto itself.
void copyBytes(uint8_t *dst, const uint8_t *src, size_t bytes);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_CPU_COLLECTIVESUPPORT_H
