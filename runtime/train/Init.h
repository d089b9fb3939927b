//===- Init.h - initial values of parameters and optimizer state -*- C++ -*-===//
//
// Training from scratch needs each parameter filled from its initializer
// (llmc.init, carried in the Executable's argument table) and the AdamW
// moments set to zero. The draw depends only on the seed and the argument's
// position, so two runs with one seed start from the same weights.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_INIT_H
#define LLMC_RUNTIME_TRAIN_INIT_H

#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <cstdint>
#include <vector>

namespace llmc::rt {

/// The bytes of argument `index` of `executable` drawn from its initializer
/// with `seed` (zeros for optimizer state): the GLOBAL tensor (shape
/// argumentGlobalShape), the same for any mesh the program runs on. Fails, naming the argument, for
/// a parameter without an initializer or a non-float argument.
Status initialArgumentBytes(const Executable &executable, size_t index,
                            uint64_t seed, std::vector<uint8_t> &bytes);

/// The start of argument `index`'s SplitMix64 stream for `seed`: the one
/// initialArgumentBytes draws from (and the device draw, CudaSession).
uint64_t initialStream(uint64_t seed, size_t index);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_INIT_H
