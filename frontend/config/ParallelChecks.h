//===- ParallelChecks.h - whether a mesh can split a model and batch -*- C++ -*-===//
//
// The divisibility rules of tensor, data and expert parallelism, as the
// run description's [parallel] check states them; public so that the
// planner's search (planner/Candidate.cpp) rejects a candidate mesh with the
// same message a user would get for it.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_CONFIG_PARALLELCHECKS_H
#define LLMC_FRONTEND_CONFIG_PARALLELCHECKS_H

#include "frontend/config/RunDescription.h"

#include <cstdint>
#include <string>

namespace llmc {

/// Why `tp` cannot split `model` the Megatron way, or "" when it can: tensor
/// parallelism splits the attention heads, the kv heads (llama/moe), the
/// vocabulary and the MLP width (per expert for moe) over the tp ranks, so tp
/// must divide each. The message names the sizes it does not divide, the tp
/// values that divide all of them, and the padded vocab_size when the
/// vocabulary is in the way.
std::string tensorParallelError(const ModelConfig &model, int64_t tp);

/// The vocab_size to pad `vocab` to for tensor parallelism over `tp` ranks:
/// a multiple of kVocabPadMultiple x tp, so that each rank's slice of the
/// vocabulary (its logits' rows) stays 16-byte aligned for the GEMMs, as
/// the classifier pads without tp (Megatron-LM pads to 128 x tp).
int64_t paddedVocabulary(int64_t vocab, int64_t tp);

/// Why `dp` cannot split the batch, or "" when it can: each microbatch's
/// batch_size / microbatches sequences are split over the dp ranks.
std::string dataParallelError(const TrainConfig &train, int64_t dp);

/// Why `ep` cannot split `model` and `train` with `dp` data-parallel ranks,
/// or "" when it can: expert parallelism needs a moe model whose experts ep
/// divides (expert e lives on rank e / (E / ep)), a microbatch whose
/// sequences dp x ep divides (the ep ranks split the tokens like dp), and an
/// expert capacity that dp x ep divides (each rank's tokens get an equal
/// share of every expert's slots; docs/sharding.md).
std::string expertParallelError(const ModelConfig &model,
                                const TrainConfig &train, int64_t dp,
                                int64_t ep);

} // namespace llmc

#endif // LLMC_FRONTEND_CONFIG_PARALLELCHECKS_H
