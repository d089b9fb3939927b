//===- Sample.h - generate text from a compiled logits program --*- C++ -*-===//
//
// The end of `llmc train`: a few hundred tokens sampled from the model, one
// run of a compiled `@logits(params..., tokens: [1, T] i32) -> [1, T, V] f32`
// program per token (frontend: buildLogitsModule). Sampling is deterministic
// on every platform: its own PRNG (splitmix64) and an inverse-CDF draw, no
// std distributions, whose algorithms the standard leaves to the library.
// See docs/runtime.md, "Generation".
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_SAMPLE_H
#define LLMC_RUNTIME_TRAIN_SAMPLE_H

#include "runtime/Random.h"
#include "runtime/Session.h"
#include "runtime/Status.h"

#include <cstdint>
#include <vector>

namespace llmc::rt {

struct SampleOptions {
  /// How many tokens to generate (>= 0).
  int64_t tokens = 200;
  /// Softmax temperature (>= 0); 0 is greedy: the arg max, lowest id on ties.
  double temperature = 0.8;
  /// Sample among the k most likely tokens only (>= 0); 0: all of them.
  int64_t topK = 0;
  /// The PRNG seed: the same seed, prompt and weights give the same tokens.
  uint64_t seed = 1;
};

/// Sampling's generator (runtime/Random.h): SplitMix64, a few lines, passes
/// BigCrush, and any seed (0 included) is a good one.
using SampleRng = SplitMix64;

/// Picks a token from `vocab` logits: the arg max when `temperature` is 0 or
/// `topK` is 1 (lowest id on ties), else a draw from softmax(logits /
/// temperature) restricted to the `topK` largest logits (all when 0), by one
/// uniform() of `rng` walked along the cumulative distribution. Options must
/// be valid (generate checks them); non-finite logits are never picked
/// unless all are.
int32_t sampleToken(const float *logits, int64_t vocab, double temperature,
                    int64_t topK, SampleRng &rng);

/// Generates `options.tokens` tokens after `prompt` with `session`, which
/// runs a compiled logits program with batch 1 and whose parameter arguments
/// the caller has bound. Each step binds argument "tokens" [1, T] (T from the
/// program) with the last min(n, T) tokens of prompt + generated so far at
/// positions 0.. and token 0 after them, runs, and samples from output 0's
/// ([1, T, V] f32) logits at the last real position; causal attention makes
/// the padding irrelevant there. `generated` receives the new tokens only.
/// Fails, naming what is wrong, on an empty prompt, a prompt token outside
/// [0, V), bad options, or a program without a [1, T] i32 "tokens" argument
/// or a [1, T, V] f32 output 0.
Status generate(Session &session, const std::vector<int32_t> &prompt,
                const SampleOptions &options, std::vector<int32_t> &generated);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_SAMPLE_H
