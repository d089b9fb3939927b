//===- Random.h - the runtime's one random number generator -----*- C++ -*-===//
//
// SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit state advanced by a
// fixed odd constant and a bijective mix of it as the output. Its state
// after k steps is seed + k·γ, so any position of a stream can be read
// directly, which is what lets initial weights be drawn in parallel and
// still not depend on the number of threads (runtime/train/Init.cpp). The
// built-in corpus and sampling use it too. Not for anything cryptographic.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_RANDOM_H
#define LLMC_RUNTIME_RANDOM_H

#include <cstdint>

namespace llmc::rt {

/// The constant SplitMix64 adds to its state at every step.
inline constexpr uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ULL;

/// SplitMix64's output function: a bijective mix of 64 bits.
inline uint64_t splitMix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Output `k` (from 0) of the SplitMix64 stream that starts at `seed`.
inline uint64_t splitMixAt(uint64_t seed, uint64_t k) {
  return splitMix(seed + (k + 1) * kSplitMixGamma);
}

/// The top 53 bits of `bits` as a double in [0, 1).
inline double unitInterval(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

/// The SplitMix64 stream as a generator.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  /// The next 64 random bits.
  uint64_t next() { return splitMix(state_ += kSplitMixGamma); }
  /// A double uniform in [0, 1), from the top 53 bits of next().
  double uniform() { return unitInterval(next()); }

private:
  uint64_t state_;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_RANDOM_H
