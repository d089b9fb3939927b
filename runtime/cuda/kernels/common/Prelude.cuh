//===- Prelude.cuh - the types and helpers every kernel unit starts with ===//
//
// Bf16 and F16 as raw 16-bit storage with the CPU's rounding (floatToBf16,
// floatToF16: round to nearest even, NaN kept quiet, f16 subnormals and
// overflow to infinity as the host's), loads to f32, stores from f32 and
// double,
// the grid-stride and warp helpers. Free of shared memory and of warp-wide
// instructions other than shuffles, so that the CPU emulations of the kernels
// (test/runtime/cuda/*EmulationTest.cpp) include it as it is.
//
// Numerics of every hand-written kernel follow the CPU kernels: reductions
// and composites (but attention and the loss) accumulate in double and round
// once to the result type, so an f32 result differs from the CPU's by the
// order of the double additions and the device's f64 libm only.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_COMMON_PRELUDE_CUH
#define LLMC_CUDA_COMMON_PRELUDE_CUH

#define LLMC_MAX_RANK 8

struct Bf16 {
  unsigned short bits;
};
// IEEE binary16 (fp16) bits. Not cuda_fp16.h's __half: the conversions below
// are the host's bit for bit (NaN becomes 0x7e00 with its sign, as
// floatToF16), and NVRTC then needs no include path.
struct F16 {
  unsigned short bits;
};

__device__ __forceinline__ float loadValue(float value) { return value; }
__device__ __forceinline__ float loadValue(Bf16 value) {
  return __uint_as_float(((unsigned int)value.bits) << 16);
}

// An f32 value stored as T: bf16 rounds to nearest even, keeping NaN quiet
// (the CPU's floatToBf16).
// f16 bits as f32, exactly (the host's f16ToFloat): subnormals are
// mantissa * 2^-24, which f32 holds exactly. On the device the hardware's
// cvt.f32.f16 (exact for every number; a NaN keeps its payload through the
// select, as on the host); the branchy integer form below, which the host
// emulation tests compile, made fp16 GPT-2's own kernels 1.5-3x slower than
// their bf16 twins (docs/precision.md, "Measured").
__device__ __forceinline__ float f16BitsToFloat(unsigned short bits) {
  unsigned int sign = ((unsigned int)bits & 0x8000u) << 16;
  unsigned int exponent = ((unsigned int)bits >> 10) & 0x1fu;
  unsigned int mantissa = (unsigned int)bits & 0x3ffu;
#if defined(__CUDA_ARCH__)
  float widened;
  asm("cvt.f32.f16 %0, %1;" : "=f"(widened) : "h"(bits));
  return exponent == 0x1f && mantissa != 0
             ? __uint_as_float(sign | 0x7f800000u | (mantissa << 13))
             : widened;
#else
  if (exponent == 0 && mantissa != 0) {
    float value = (float)mantissa * 5.9604644775390625e-8f; // 2^-24
    return sign ? -value : value;
  }
  unsigned int word = exponent == 0x1f ? (sign | 0x7f800000u | (mantissa << 13))
                      : exponent != 0  ? (sign | ((exponent + 112) << 23) |
                                         (mantissa << 13))
                                       : sign;
  return __uint_as_float(word);
#endif
}
// f32 to f16 bits, the host's floatToF16: round to nearest even, 65520 and
// beyond to infinity, below 2^-14 to a subnormal (scaled by 2^24, exact,
// then rounded to an integer, to even). On the device cvt.rn.f16.f32 (IEEE
// round to nearest even, subnormals kept, overflow to infinity), a NaN set
// to the host's 0x7e00 with its sign.
__device__ __forceinline__ unsigned short floatToF16Bits(float value) {
  unsigned int word = __float_as_uint(value);
  unsigned short sign = (unsigned short)((word >> 16) & 0x8000u);
  unsigned int magnitude = word & 0x7fffffffu;
#if defined(__CUDA_ARCH__)
  unsigned short narrowed;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(narrowed) : "f"(value));
  return magnitude > 0x7f800000u ? (unsigned short)(sign | 0x7e00u) : narrowed;
#else
  if (magnitude > 0x7f800000u)
    return sign | 0x7e00u;
  if (magnitude >= 0x477ff000u)
    return sign | 0x7c00u;
  if (magnitude < 0x38800000u) {
    float scaled = fabsf(value) * 16777216.0f; // 2^24
    return sign | (unsigned short)rintf(scaled);
  }
  unsigned int rebased = magnitude - (112u << 23);
  unsigned int rounding = 0xfffu + ((rebased >> 13) & 1u);
  return sign | (unsigned short)((rebased + rounding) >> 13);
#endif
}
__device__ __forceinline__ float loadValue(F16 value) {
  return f16BitsToFloat(value.bits);
}

template <typename T> __device__ __forceinline__ T storeFloat(float value);
template <> __device__ __forceinline__ float storeFloat<float>(float value) {
  return value;
}
template <> __device__ __forceinline__ Bf16 storeFloat<Bf16>(float value) {
  unsigned int word = __float_as_uint(value);
  Bf16 result;
  if ((word & 0x7fffffffu) > 0x7f800000u) {
    result.bits = (unsigned short)((word >> 16) | 0x40u);
    return result;
  }
  unsigned int rounding = 0x7fffu + ((word >> 16) & 1u);
  result.bits = (unsigned short)((word + rounding) >> 16);
  return result;
}

template <> __device__ __forceinline__ F16 storeFloat<F16>(float value) {
  F16 result;
  result.bits = floatToF16Bits(value);
  return result;
}

// A double value stored as T: rounded to f32 once, then (bf16, f16) as
// storeFloat.
template <typename T> __device__ __forceinline__ T storeValue(double value) {
  return storeFloat<T>((float)value);
}

__device__ __forceinline__ double negativeInfinity() {
  return -__longlong_as_double(0x7ff0000000000000ll);
}

__device__ __forceinline__ long long globalThread() {
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long gridThreads() {
  return (long long)gridDim.x * blockDim.x;
}

__device__ __forceinline__ double warpSum(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}
__device__ __forceinline__ double warpMax(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmax(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ int lane() { return threadIdx.x % 32; }
// The row of a warp-per-row kernel: warp w of the grid takes row w.
__device__ __forceinline__ long long warpRow() {
  return ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
}

// V consecutive elements moved by one load (16 bytes when V * sizeof(T) is).
template <typename T, int V> struct __align__(sizeof(T) * V) RowPack {
  T v[V];
};

#endif // LLMC_CUDA_COMMON_PRELUDE_CUH
