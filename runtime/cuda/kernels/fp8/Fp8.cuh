//===- Fp8.cuh - amax and the scaled casts of FP8 training ----------------===//
//
// llmc_amax_<f32|bf16|f16>: max |x| into an f32 scalar the launch zeroed,
// by atomicMax on the bits of |x| (non-negative floats order as their bit
// patterns, NaN's above infinity's), so the result does not depend on the
// order of the blocks: the CPU's value (runtime/cpu/Fp8.cpp), NaN if any
// element is.
// llmc_scaled_cast_<in>_<e4m3|e5m2>: fp8(x * scale), the product in f32,
// with encodeFp8 below: the host's floatToF8E4M3FN / floatToF8E5M2
// (runtime/DType.cpp) step for step (rintf rounds to nearest even as the
// host's nearbyint; the scaling by a power of two is exact), so the codes
// are the CPU's bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_FP8_FP8_CUH
#define LLMC_CUDA_FP8_FP8_CUH

#include "common/Prelude.cuh"

template <typename T>
__device__ void amax(const T *x, unsigned *out, long long n) {
  float local = 0.0f;
  for (long long i = globalThread(); i < n; i += gridThreads()) {
    float v = fabsf(loadValue(x[i]));
    local = (isnan(v) || v > local) ? v : local;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    float other = __shfl_down_sync(0xffffffffu, local, offset);
    local = (isnan(other) || other > local) ? other : local;
  }
  if (lane() == 0)
    atomicMax(out, __float_as_uint(local));
}

/// E4M3FN: 3 mantissa bits, bias 7, largest finite code 0x7e; E5M2: 2,
/// 15, 0x7b. Round to nearest even, saturating; NaN -> 0x7f with its sign.
__device__ __forceinline__ unsigned char encodeFp8(float value,
                                                   int mantissaBits, int bias,
                                                   unsigned maxFiniteCode) {
  unsigned word = __float_as_uint(value);
  unsigned sign = (word >> 24) & 0x80u;
  unsigned magnitude = word & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return (unsigned char)(sign | 0x7fu);
  unsigned code;
  if (magnitude < ((unsigned)(128 - bias) << 23)) {
    float steps = ldexpf(fabsf(value), bias - 1 + mantissaBits);
    code = (unsigned)rintf(steps);
  } else {
    int shift = 23 - mantissaBits;
    unsigned half = (1u << (shift - 1)) - 1u + ((magnitude >> shift) & 1u);
    unsigned rounded = (magnitude + half) >> shift;
    code = rounded - ((unsigned)(127 - bias) << mantissaBits);
  }
  if (code > maxFiniteCode)
    code = maxFiniteCode;
  return (unsigned char)(sign | code);
}

template <typename T, int MantissaBits, int Bias, unsigned MaxCode>
__device__ void scaledCast(const T *x, const float *scale, unsigned char *out,
                           long long n) {
  float s = scale[0];
  for (long long i = globalThread(); i < n; i += gridThreads())
    out[i] = encodeFp8(loadValue(x[i]) * s, MantissaBits, Bias, MaxCode);
}

#define LLMC_FP8_ENTRIES(suffix, T)                                            \
  extern "C" __global__ void llmc_amax_##suffix(const T *x, unsigned *out,     \
                                                long long n) {                 \
    amax(x, out, n);                                                           \
  }                                                                            \
  extern "C" __global__ void llmc_scaled_cast_##suffix##_e4m3(                 \
      const T *x, const float *scale, unsigned char *out, long long n) {       \
    scaledCast<T, 3, 7, 0x7eu>(x, scale, out, n);                              \
  }                                                                            \
  extern "C" __global__ void llmc_scaled_cast_##suffix##_e5m2(                 \
      const T *x, const float *scale, unsigned char *out, long long n) {       \
    scaledCast<T, 2, 15, 0x7bu>(x, scale, out, n);                             \
  }
LLMC_FP8_ENTRIES(f32, float)
LLMC_FP8_ENTRIES(bf16, Bf16)
LLMC_FP8_ENTRIES(f16, F16)
#undef LLMC_FP8_ENTRIES

#endif // LLMC_CUDA_FP8_FP8_CUH
