//===- Init.cuh - the initial values drawn on the device ------------------===//
//
// The initial parameters drawn where they live: the same values as the
// host's draw (runtime/train/Init.cpp), computed on the device, so that the
// start of a run does not wait for 124 M host draws and their copy (1.3 to
// 3.0 s of GPT-2 124M's start on the H200's host, docs/cuda.md
// "Start-up"). Element i takes the outputs of the argument's SplitMix64
// stream (runtime/Random.h) at the positions the host uses, and the same
// double arithmetic: Box-Muller on the pair (i & ~1, (i & ~1) + 1) for a
// normal draw (the even element the cosine, the odd one the sine), output
// 2i for a uniform one. The stored value is the double rounded to the
// argument's type as the host rounds it. The only possible difference
// from the host is in the last bits of the device's double log, sin and
// cos (within 2 ulp of double, against glibc's), which reach a stored
// f32 or bf16 only when the double lies that close to a rounding
// boundary; CudaInitTest bounds it.
// Also the widening of an f16 checkpoint's tensors into f32 parameters
// (bf16 uses the device unit's llmc_widen_bf16_f32): both exact.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_INIT_INIT_CUH
#define LLMC_CUDA_INIT_INIT_CUH

#include "common/Prelude.cuh"

// ---- Initial values ---------------------------------------------------------

// SplitMix64 (runtime/Random.h): output k of the stream that starts at
// `seed`, and its top 53 bits as a double in [0, 1).
__device__ __forceinline__ unsigned long long initSplitMixAt(
    unsigned long long seed, unsigned long long k) {
  unsigned long long z = seed + (k + 1ull) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__device__ __forceinline__ double initUnit(unsigned long long bits) {
  return (double)(bits >> 11) * (1.0 / 9007199254740992.0); // 2^-53
}

// One element of the draw, rounded to the argument's type:
// 0 f32, 1 f64, 2 bf16 (storeValue's rounding, as the host's).
__device__ __forceinline__ void initStore(void *out, int type, long long i,
                                          double value) {
  if (type == 0)
    ((float *)out)[i] = (float)value;
  else if (type == 1)
    ((double *)out)[i] = value;
  else
    ((Bf16 *)out)[i] = storeValue<Bf16>(value);
}

// `n` elements of one argument. kind: 0 normal(0, scale), 1 uniform(-scale,
// scale), 2 the constant `scale` (ones are the constant 1). One thread per
// pair of elements (a normal draw's Box-Muller pair), grid-strided.
extern "C" __global__ void llmc_init_draw(void *out, int type, long long n,
                                          unsigned long long stream, int kind,
                                          double scale) {
  const long long pairs = (n + 1) / 2;
  for (long long p = globalThread(); p < pairs;
       p += gridThreads()) {
    const long long i = 2 * p;
    double first, second;
    if (kind == 0) {
      double u1 = 1.0 - initUnit(initSplitMixAt(stream, (unsigned long long)i));
      double u2 = initUnit(initSplitMixAt(stream, (unsigned long long)i + 1));
      double radius = scale * sqrt(-2.0 * log(u1));
      double angle = 2.0 * 3.141592653589793 * u2;
      first = radius * cos(angle);
      second = radius * sin(angle);
    } else if (kind == 1) {
      first = scale * (2.0 * initUnit(initSplitMixAt(
                                 stream, 2ull * (unsigned long long)i)) -
                       1.0);
      second = scale * (2.0 * initUnit(initSplitMixAt(
                                  stream, 2ull * (unsigned long long)(i + 1))) -
                        1.0);
    } else {
      first = second = scale;
    }
    initStore(out, type, i, first);
    if (i + 1 < n)
      initStore(out, type, i + 1, second);
  }
}

// ---- Weights converted where they live (CudaSession::setArgumentConverting)

// An f16 checkpoint's tensor into f32 parameters.
extern "C" __global__ void llmc_widen_f16_f32(const unsigned short *in,
                                              float *out, long long count) {
  for (long long i = globalThread(); i < count; i += gridThreads())
    out[i] = f16BitsToFloat(in[i]); // the prelude's, exact
}

#endif // LLMC_CUDA_INIT_INIT_CUH
